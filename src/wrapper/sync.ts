// The wrapper's upstream side: reflectors on Services, EndpointSlices, Endpoints and Nodes feed the
// topology index (runtime/topology-feed.ts); every object whose served form may have changed is marked
// dirty, and one drain loop writes the served forms into the wrapper's own store (the watch cache serves
// clients from there). A write happens only when the served form differs from what the store holds (a
// slice's or Endpoints' generation and trigger time aside: see contentHash), so clients see an event only
// when what they are served changed: a relist after the upstream comes back, or a restart of the
// wrapper, emits exactly the differences.
//
// The upstream objects are not kept the way an informer keeps them (mirror.ts): a node agent is judged
// by its memory. Until every reflector has synced once, nothing is written: the store keeps serving the
// last good views (from before a restart, or before the upstream went away).
//
// Offline (--kubelet-url): while the upstream is away (before the first sync too), the served slices
// and Endpoints of the Services with an endpoint on this node, or selecting one of its pods, are
// rewritten from the node's kubelet (core/offline): the rewrite is part of each object's served form, so
// writes still happen only when that form differs, and when the upstream is back every rewritten object
// is recomputed from the upstream's (docs/wrapper.md, "Offline: the node's own pods").
import type { KObject } from '../api/object.js';
import type { ResourceInfo } from '../api/resources.js';
import { servedEndpoints, type ServeOptions } from '../core/topology/served.js';
import { servedSliceText, sliceText } from '../core/topology/served-text.js';
import { rewriteEndpoints } from '../core/offline/endpoints.js';
import { rewriteServiceSlices } from '../core/offline/slices.js';
import { podLabelsSignature } from '../core/offline/pod-list.js';
import { selectsPod } from '../core/endpoints/endpoints.js';
import type { Pod, Service } from '../core/endpoints/types.js';
import { KubeletPoller } from './kubelet-poller.js';
import type { KubeletRead } from './kubelet-client.js';
import { OfflineState } from './offline-state.js';
import { objectKey, resourcePrefix } from '../api/codec.js';
import type { Store } from '../storage/store.js';
import { isStoreError } from '../storage/store.js';
import type { Client } from '../runtime/client.js';
import { Reflector, type ReflectorOptions } from '../runtime/reflector.js';
import { DirtyQueue } from './dirty-queue.js';
import { Mirror, storedForm, storedObject } from './mirror.js';
import { DictionaryPacker } from '../api/json-packer.js';
import type { Logger } from '../runtime/logger.js';
import { TopologyFeed } from '../runtime/topology-feed.js';
import { splitKey, withoutPolicies } from './objects.js';
import { LABEL_SERVICE_NAME } from '../core/endpointslices/types.js';
import {
  ENDPOINTS,
  ENDPOINTSLICES,
  NODES,
  RESOURCE_OF,
  SERVED,
  SERVICES,
  contentHash,
  dirtyOf,
  type Dirty,
  type Held,
  type Kind,
} from './served-keys.js';

export type { Logger };

export { SERVED };

export interface WrapperSyncMetrics {
  recomputeSeconds(seconds: number): void;
  wrote(kind: 'put' | 'delete'): void;
  /** A poll of the kubelet, and whether it got a usable answer. */
  kubeletPoll?(ok: boolean): void;
}

/** --kubelet-url and its flags: the node's kubelet, read while the upstream is away. */
export interface WrapperKubelet {
  readonly read: KubeletRead;
  /** For the log lines. */
  readonly url: string;
  readonly intervalMs: number;
}

/** Writes a drain round has in flight at most. */
const DRAIN_BATCH = 500;

/** What a drain computes for one dirty object. */
type Desired = { readonly form: string } | { readonly gone: true } | { readonly unchanged: true };

export class WrapperSync {
  private readonly feed: TopologyFeed;
  private readonly mirrors: Record<Kind, Mirror>;
  private readonly reflectors: Record<Kind, Reflector>;
  private readonly held = new Map<string, Held>();
  private readonly dirty = new DirtyQueue<Dirty>((d) => d.r === ENDPOINTSLICES || d.r === ENDPOINTS);
  /** Before the first sync: the slices and Endpoints the offline rewrite marked (nothing else is written). */
  private readonly offlineDirty = new DirtyQueue<Dirty>(() => true);
  private readonly offline: OfflineState;
  private readonly kubelet: KubeletPoller | undefined;
  /**
   * Between the upstream's going away and its coming back (as the log says): after the first sync, or
   * before it from its first failure.
   */
  private upstreamDown = false;
  /**
   * Services and Nodes: the stored form to write, packed (null: to delete), until it has been written.
   * Packed because the initial sync holds every one of them until the last reflector has listed.
   */
  private readonly outgoing = new Map<string, string | null>();
  /**
   * EndpointSlices by `namespace/name`: their stored form as sliceText(), packed. The Service each belongs
   * to is the feed's serviceOf().
   */
  private readonly slices = new Map<string, string>();
  /** Endpoints by `namespace/name`: their stored form, packed. */
  private readonly endpoints = new Map<string, string>();
  /**
   * What the forms above are packed with, one per kind (each kind's objects share most of their text): a
   * 1 KiB slice is about 60 bytes packed, against 300 deflated alone.
   */
  private readonly packers = {
    slices: new DictionaryPacker(),
    endpoints: new DictionaryPacker(),
    services: new DictionaryPacker(),
    nodes: new DictionaryPacker(),
  };
  private draining: Promise<void> | undefined;
  private synced = false;
  private stopped = false;
  /** Writes the drain loop has made (puts and deletes). */
  writes = 0;

  constructor(
    client: Client,
    private readonly store: Store,
    readonly hostname: string,
    private readonly log: Logger,
    private readonly metrics?: WrapperSyncMetrics,
    private readonly serve: ServeOptions = {},
    kubelet?: WrapperKubelet,
  ) {
    this.feed = new TopologyFeed({
      node: hostname,
      log,
      inSync: () => this.inSync(),
      synced: () => this.synced,
      stopped: () => this.stopped,
      recomputeSeconds: (seconds) => this.metrics?.recomputeSeconds(seconds),
      onUpstream: (up) => this.upstreamChanged(up),
    });
    this.offline = new OfflineState(hostname);
    this.kubelet =
      kubelet === undefined
        ? undefined
        : new KubeletPoller({
            read: kubelet.read,
            url: kubelet.url,
            node: hostname,
            intervalMs: kubelet.intervalMs,
            needed: () => this.offlineWanted(),
            onPods: (pods) =>
              void this.kubeletPods(pods).catch((err: unknown) =>
                this.log.error('rewriting from the kubelet failed', { error: String(err) }),
              ),
            log,
            ...(metrics?.kubeletPoll === undefined ? {} : { onPoll: (ok) => metrics.kubeletPoll!(ok) }),
          });
    // While a relist is under way nothing is written: clients never see half of one.
    const relisting = (active: boolean): void => {
      if (!active) this.kick();
    };
    this.mirrors = {
      services: new Mirror({
        relisting,
        put: (key, o, form) =>
          this.putServed(SERVICES, key, form, () => this.feed.service(key, withoutPolicies(o))),
        remove: (key) => this.putServed(SERVICES, key, null, () => this.feed.service(key, undefined)),
      }),
      nodes: new Mirror({
        relisting,
        put: (key, o, form) => this.putServed(NODES, key, form, () => this.feed.node(key, o)),
        remove: (key) => this.putServed(NODES, key, null, () => this.feed.node(key, undefined)),
      }),
      slices: new Mirror({
        relisting,
        // A slice's text holds everything its stored form does: hashed once, and kept (packed).
        form: (o) => sliceText(storedObject(o)),
        put: (key, o, text) => this.putSlice(key, o, text),
        remove: (key) => this.putSlice(key, undefined, undefined),
      }),
      endpoints: new Mirror({
        relisting,
        put: (key, o, form) => {
          this.offline.sawForm(key, form);
          this.endpoints.set(key, this.packers.endpoints.pack(form));
          this.changed(ENDPOINTS, key, this.feed.endpoints(key, o));
        },
        remove: (key) => {
          this.endpoints.delete(key);
          this.changed(ENDPOINTS, key, this.feed.endpoints(key, undefined));
        },
      }),
    };
    // One line when the upstream goes away and one when every reflector is watching again.
    const options: ReflectorOptions = this.feed.reflectorOptions;
    const reflector = (kind: Kind): Reflector =>
      new Reflector(
        {
          list: (o, signal) => client.list(RESOURCE_OF[kind], o, signal),
          watch: (o, signal) => client.watch(RESOURCE_OF[kind], o, signal),
        },
        this.mirrors[kind],
        options,
      );
    this.reflectors = {
      services: reflector('services'),
      endpoints: reflector('endpoints'),
      slices: reflector('slices'),
      nodes: reflector('nodes'),
    };
  }

  /** Whether every reflector is watching (in sync with the upstream). */
  inSync(): boolean {
    return this.synced && Object.values(this.reflectors).every((r) => r.state === 'Watching');
  }

  /** Objects waiting to be re-served (the drain loop's queue depth). */
  pending(): number {
    return this.dirty.size + this.offlineDirty.size;
  }

  /** Served objects that carry the offline mark (rewritten from the kubelet). */
  offlineRewritten(): number {
    return this.offline.marked.size;
  }

  /** Whether the served views are being rewritten from the kubelet now. */
  offlineActive(): boolean {
    return this.offline.pods !== undefined && this.offlineWanted();
  }

  /** Polls the kubelet now, if the wrapper needs it; resolves once its answer has been taken in. */
  async pollKubelet(): Promise<void> {
    await this.kubelet?.wake();
  }

  /** Relists done by the reflectors since the start (the first list of each included). */
  relists(): number {
    return Object.values(this.reflectors).reduce((n, r) => n + r.relists, 0);
  }

  /** The topology index the upstream feeds. */
  get index(): TopologyFeed['index'] {
    return this.feed.index;
  }

  async start(): Promise<void> {
    // What the store already holds: the served forms of a previous run.
    for (const r of SERVED) {
      let cont: string | undefined;
      do {
        const page = await this.store.list(resourcePrefix(r), {
          limit: 1000,
          ...(cont !== undefined ? { continue: cont } : {}),
        });
        for (const kv of page.items) {
          const text = Buffer.from(kv.value).toString('utf8');
          this.held.set(kv.key, { revision: kv.modRevision, hash: contentHash(r, text) });
          const d = dirtyOf(kv.key);
          if (d !== undefined && (r === ENDPOINTSLICES || r === ENDPOINTS))
            this.offline.sawStored(kv.key, d, text, r === ENDPOINTSLICES);
        }
        cont = page.continue;
      } while (cont !== undefined);
    }
    for (const r of Object.values(this.reflectors)) r.start();
    this.kubelet?.start();
    void Promise.all(Object.values(this.reflectors).map((r) => r.waitForSync())).then(() => {
      if (this.stopped) return;
      this.synced = true;
      // Every upstream object was marked as its reflector listed it; what is held and no longer upstream
      // is removed.
      for (const key of this.held.keys()) {
        const d = dirtyOf(key);
        if (d === undefined || this.upstreamHas(d)) continue;
        if (d.r === SERVICES || d.r === NODES) this.outgoing.set(key, null);
        this.dirty.set(key, d);
      }
      this.log.info('upstream in sync', { objects: this.dirty.size, held: this.held.size });
      this.feed.initialSyncDone();
      for (const [key, d] of this.offlineDirty.take(Infinity)) this.dirty.set(key, d);
      this.offline.storedSlices = undefined;
      this.upstreamDown = false;
      this.offlineEnds();
      this.kick();
    });
  }

  private upstreamHas(d: Dirty): boolean {
    const kind = (Object.keys(RESOURCE_OF) as Kind[]).find((k) => RESOURCE_OF[k] === d.r)!;
    return this.mirrors[kind].has(d.r.namespaced ? `${d.namespace}/${d.name}` : d.name);
  }

  /** Resolves once the initial sync has been written to the store. */
  async waitForSync(): Promise<void> {
    await Promise.all(Object.values(this.reflectors).map((r) => r.waitForSync()));
    while (!this.synced) await new Promise((r) => setTimeout(r, 10));
    await this.settled();
  }

  /** Resolves when nothing is left to write. */
  async settled(): Promise<void> {
    while ((this.queue().size > 0 && !this.stopped) || this.draining !== undefined)
      await (this.draining ?? new Promise((r) => setTimeout(r, 10)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.kubelet?.stop();
    await Promise.all(Object.values(this.reflectors).map((r) => r.stop()));
    await this.draining;
  }

  /**
   * A node's verdict from the health source (edge autonomy): false leaves its endpoints out of every
   * Service's view, undefined is no opinion. Only the views with endpoints on the node are re-served.
   */
  setNodeHealth(node: string, healthy: boolean | undefined): void {
    this.markServices(this.feed.health(node, healthy));
    this.kick();
  }

  /** Marks one object by its `namespace/name` (or name). */
  private mark(r: ResourceInfo, key: string, queue = this.dirty): void {
    const slash = r.namespaced ? key.indexOf('/') : -1;
    const namespace = slash < 0 ? '' : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    queue.set(objectKey(r, namespace, name), { r, namespace, name });
  }

  /** The queue the drain takes from: before the first sync only the offline rewrite's marks. */
  private queue(): DirtyQueue<Dirty> {
    return this.synced ? this.dirty : this.offlineDirty;
  }

  /** Whether the kubelet is wanted: the upstream away (since the start, or since the last sync). */
  private offlineWanted(): boolean {
    return !this.stopped && this.upstreamDown;
  }

  private upstreamChanged(up: boolean): void {
    this.upstreamDown = !up;
    if (up) this.offlineEnds();
    else void this.kubelet?.wake();
  }

  /** The kubelet's pods of this node, changed (or the first answer since the upstream went away). */
  private async kubeletPods(pods: Map<string, Pod>): Promise<void> {
    if (!this.offlineWanted()) return;
    if (this.offline.pods === undefined) {
      this.offline.since = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      this.log.info(
        "upstream away: rewriting the served endpoints of this node's pods from the kubelet until it is back",
        { pods: pods.size },
      );
    }
    this.offline.pods = pods;
    const labels = podLabelsSignature(pods);
    if (labels !== this.offline.selectingFor) {
      const selecting = await this.servicesSelecting(pods);
      if (this.offline.pods !== pods) return;
      this.offline.selecting = selecting;
      this.offline.selectingFor = labels;
    }
    const queue = this.queue();
    for (const service of this.offline.services()) {
      const namespace = service.slice(0, service.indexOf('/') + 1);
      const names = this.synced
        ? this.index.sliceNames(service)
        : (this.offline.storedSlices?.get(service) ?? []);
      let any = false;
      for (const name of names) {
        this.mark(ENDPOINTSLICES, namespace + name, queue);
        any = true;
      }
      // A Service without a slice: rewriting none may create one (marked as it is found).
      if (!any)
        this.rewriteSlices(
          service,
          await this.storedService(service),
          await this.serviceSlices(service, '', undefined),
        );
      if (!this.synced || this.endpoints.has(service)) this.mark(ENDPOINTS, service, queue);
    }
    for (const [slice, service] of this.offline.created)
      if (this.offline.touches(service)) this.mark(ENDPOINTSLICES, slice, queue);
    this.kick();
  }

  /** The Services (as the store holds them) that select one of the pods. */
  private async servicesSelecting(pods: Map<string, Pod>): Promise<Set<string>> {
    const out = new Set<string>();
    const namespaces = new Set([...pods.keys()].map((k) => k.slice(0, k.indexOf('/'))));
    for (const namespace of namespaces) {
      let cont: string | undefined;
      do {
        const page = await this.store.list(`${resourcePrefix(SERVICES)}${namespace}/`, {
          limit: 1000,
          ...(cont !== undefined ? { continue: cont } : {}),
        });
        for (const kv of page.items) {
          const svc = JSON.parse(Buffer.from(kv.value).toString('utf8')) as Service;
          if ([...pods.values()].some((p) => selectsPod(svc, p)))
            out.add(`${namespace}/${svc.metadata.name ?? ''}`);
        }
        cont = page.continue;
      } while (cont !== undefined);
    }
    return out;
  }

  /** Rewriting stops (the upstream is back, or synced): every rewritten object is served as upstream has it. */
  private offlineEnds(): void {
    this.kubelet?.forget();
    if (this.offline.pods === undefined) return;
    this.offline.pods = undefined;
    this.offline.selecting = new Set();
    this.offline.selectingFor = undefined;
    this.log.info(
      'upstream back: the endpoints rewritten from the kubelet are served as the upstream has them',
      {
        objects: this.offline.marked.size,
      },
    );
    for (const [key, d] of this.offline.marked) this.dirty.set(key, d);
    for (const slice of this.offline.created.keys()) this.mark(ENDPOINTSLICES, slice);
    this.kick();
  }

  /** Marks every served object of these Services (their slices and Endpoints). */
  private markServices(keys: readonly string[]): void {
    for (const key of keys) {
      // A slice belongs to a Service of its own namespace; the index knows which it holds.
      const namespace = key.slice(0, key.indexOf('/') + 1);
      for (const name of this.index.sliceNames(key)) this.mark(ENDPOINTSLICES, namespace + name);
      if (this.endpoints.has(key)) this.mark(ENDPOINTS, key);
    }
  }

  private packerOf(r: ResourceInfo): DictionaryPacker {
    return r === SERVICES ? this.packers.services : this.packers.nodes;
  }

  /** A Service or Node: served as it is upstream (form), or removed (null). */
  private putServed(r: ResourceInfo, key: string, form: string | null, apply: () => string[]): void {
    this.outgoing.set(
      r.namespaced ? objectKey(r, ...splitKey(key)) : objectKey(r, '', key),
      form === null ? null : this.packerOf(r).pack(form),
    );
    this.changed(r, key, apply());
  }

  private putSlice(key: string, o: KObject | undefined, text: string | undefined): void {
    // A slice relabelled to another Service (or removed) leaves its old Service's view.
    const changed = this.feed.slice(key, o);
    if (o === undefined || text === undefined) this.slices.delete(key);
    else {
      this.offline.sawForm(this.feed.serviceOf(key), text);
      this.slices.set(key, this.packers.slices.pack(text));
    }
    this.changed(ENDPOINTSLICES, key, changed);
  }

  private changed(r: ResourceInfo, key: string, services: readonly string[]): void {
    this.mark(r, key);
    this.markServices(services);
    this.kick();
  }

  private relisting(): boolean {
    return Object.values(this.mirrors).some((m) => m.relisting);
  }

  /**
   * Whether writes wait: during a relist, after the first sync (a client never sees half of one). Before
   * it, only the offline rewrite writes, from the store's forms: a list under way has no say on them.
   */
  private blocked(): boolean {
    return this.synced && this.relisting();
  }

  private kick(): void {
    if (this.stopped || this.draining !== undefined || this.blocked()) return;
    if (!this.synced && this.offlineDirty.size === 0) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue().size > 0) this.kick();
    });
  }

  /** The stored form one object should have now. */
  private async desired(key: string, d: Dirty): Promise<Desired> {
    const id = d.r.namespaced ? `${d.namespace}/${d.name}` : d.name;
    if (d.r === SERVICES || d.r === NODES) {
      const form = this.outgoing.get(key);
      return form === undefined
        ? { unchanged: true }
        : form === null
          ? { gone: true }
          : { form: this.packerOf(d.r).unpack(form) };
    }
    const base = await this.baseForm(key, d, id);
    const service = d.r === ENDPOINTS ? id : await this.sliceOwner(id, base);
    if (this.offlineActive() && service !== undefined && this.offline.touches(service)) {
      const rewritten = await this.rewritten(d, id, service, base);
      if (rewritten !== undefined) return rewritten;
    }
    // Before the first sync nothing is written but what the rewrite changes: the store has the rest.
    if (!this.synced) return { unchanged: true };
    return base === undefined ? { gone: true } : { form: base };
  }

  /**
   * An EndpointSlice's or Endpoints' served form before any offline rewrite: from the upstream (after the
   * first sync), else as the store holds it; undefined when there is none.
   */
  private async baseForm(key: string, d: Dirty, id: string): Promise<string | undefined> {
    if (!this.synced) {
      const kv = await this.store.get(key);
      return kv === undefined ? undefined : Buffer.from(kv.value).toString('utf8');
    }
    if (d.r === ENDPOINTS) {
      const raw = this.endpoints.get(id);
      if (raw === undefined) return undefined;
      const endpoints = JSON.parse(this.packers.endpoints.unpack(raw)) as KObject;
      return storedForm(servedEndpoints(endpoints, this.index.view(id), this.serve));
    }
    const raw = this.slices.get(id);
    if (raw === undefined) return undefined;
    const svc = this.feed.serviceOf(id);
    const view = svc === undefined ? undefined : this.index.view(svc);
    return servedSliceText(this.packers.slices.unpack(raw), view, this.serve);
  }

  /** The Service (`ns/name`) a slice belongs to. */
  private async sliceOwner(id: string, base: string | undefined): Promise<string | undefined> {
    const created = this.offline.created.get(id);
    if (created !== undefined || this.synced) return created ?? this.feed.serviceOf(id);
    if (base === undefined) return undefined;
    const owner = (JSON.parse(base) as KObject).metadata.labels?.[LABEL_SERVICE_NAME];
    return owner === undefined ? undefined : `${id.slice(0, id.indexOf('/'))}/${owner}`;
  }

  /** The offline rewrite of one slice or Endpoints of `service`; undefined: it has no say on the object. */
  private async rewritten(
    d: Dirty,
    id: string,
    service: string,
    base: string | undefined,
  ): Promise<Desired | undefined> {
    const svc = await this.storedService(service);
    const ctx = this.offline.context();
    if (d.r === ENDPOINTS) {
      if (base === undefined) return undefined;
      const obj = JSON.parse(base) as KObject;
      const out = rewriteEndpoints(obj, svc, ctx);
      return { form: out === obj ? base : JSON.stringify(out) };
    }
    const slices = await this.serviceSlices(service, id, base);
    const out = this.rewriteSlices(service, svc, slices);
    const mine = out.get(d.name);
    if (mine === undefined) return undefined;
    if (mine === null) return { gone: true };
    const same = slices.find((s) => s.metadata.name === d.name);
    return { form: mine === same && base !== undefined ? base : JSON.stringify(mine) };
  }

  /** The Service as the store holds it (served unchanged), or undefined. */
  private async storedService(service: string): Promise<Service | undefined> {
    const kv = await this.store.get(objectKey(SERVICES, ...splitKey(service)));
    return kv === undefined ? undefined : (JSON.parse(Buffer.from(kv.value).toString('utf8')) as Service);
  }

  /** The rewrite of the Service's slices; a slice it creates is noted and marked to be written too. */
  private rewriteSlices(
    service: string,
    svc: Service | undefined,
    slices: KObject[],
  ): Map<string, KObject | null> {
    const [namespace, name] = splitKey(service);
    const out = rewriteServiceSlices(
      { namespace, service: name, object: svc, slices },
      this.offline.context(),
    );
    for (const [created, form] of out)
      if (
        form !== null &&
        !this.offline.created.has(`${namespace}/${created}`) &&
        !slices.some((s) => s.metadata.name === created)
      ) {
        this.offline.created.set(`${namespace}/${created}`, service);
        this.mark(ENDPOINTSLICES, `${namespace}/${created}`, this.queue());
      }
    return out;
  }

  /** Every served slice of the Service before the rewrite (`id`'s from `base`), created ones included. */
  private async serviceSlices(service: string, id: string, base: string | undefined): Promise<KObject[]> {
    const namespace = service.slice(0, service.indexOf('/') + 1);
    const names = new Set<string>(
      this.synced ? this.index.sliceNames(service) : (this.offline.storedSlices?.get(service) ?? []),
    );
    for (const [slice, owner] of this.offline.created)
      if (owner === service) names.add(slice.slice(namespace.length));
    const out: KObject[] = [];
    for (const name of names) {
      const sliceId = namespace + name;
      const key = objectKey(ENDPOINTSLICES, ...splitKey(sliceId));
      const text =
        // A created slice has no upstream form: the store holds its last one.
        sliceId === id && base !== undefined
          ? base
          : this.synced && this.slices.has(sliceId)
            ? await this.baseForm(
                key,
                { r: ENDPOINTSLICES, namespace: namespace.slice(0, -1), name },
                sliceId,
              )
            : await this.store
                .get(key)
                .then((kv) => (kv === undefined ? undefined : Buffer.from(kv.value).toString('utf8')));
      if (text !== undefined) out.push(JSON.parse(text) as KObject);
    }
    return out;
  }

  /** Milliseconds to wait before the next drain after a failed write (doubling, up to 5 s). */
  private backoffMs = 0;

  private async drain(): Promise<void> {
    const blocked = () => this.stopped || this.blocked();
    while (this.queue().size > 0 && !blocked()) {
      if (this.backoffMs > 0) {
        await new Promise((r) => setTimeout(r, this.backoffMs).unref());
        if (blocked()) break;
      }
      // At most DRAIN_BATCH writes in flight: the initial sync's tens of thousands would otherwise all be
      // rendered and queued at once, and the process would keep that peak as its size.
      const batch = this.queue().take(DRAIN_BATCH);
      const failed = (await Promise.all(batch.map(([key, d]) => this.write(key, d)))).some((ok) => !ok);
      this.backoffMs = failed ? Math.min(Math.max(this.backoffMs * 2, 50), 5_000) : 0;
    }
  }

  /** Writes one object's served form; false when it failed and was put back to retry. */
  private async write(key: string, d: Dirty): Promise<boolean> {
    try {
      await this.writeOnce(key, d);
      return true;
    } catch (err) {
      this.log.error('writing a served object failed; retrying', { key, error: String(err) });
      this.queue().set(key, d);
      return false;
    }
  }

  private async writeOnce(key: string, d: Dirty): Promise<void> {
    const want = await this.desired(key, d);
    if ('unchanged' in want) return;
    const out = this.outgoing.get(key);
    // A Service's or Node's form is dropped once written, unless a newer one came in meanwhile.
    const done = () => {
      if (out !== undefined && this.outgoing.get(key) === out) this.outgoing.delete(key);
    };
    const held = this.held.get(key);
    try {
      if ('gone' in want) {
        if (held !== undefined) {
          await this.store.delete(key, held.revision);
          this.held.delete(key);
          this.offline.wrote(key, d, null);
          this.writes++;
          this.metrics?.wrote('delete');
        }
        done();
        return;
      }
      const h = contentHash(d.r, want.form);
      if (held?.hash === h) {
        done();
        return;
      }
      const value = Buffer.from(want.form, 'utf8');
      const kv =
        held === undefined
          ? await this.store.create(key, value)
          : await this.store.update(key, value, held.revision);
      this.held.set(key, { revision: kv.modRevision, hash: h });
      this.offline.wrote(key, d, want.form);
      this.writes++;
      this.metrics?.wrote('put');
      done();
    } catch (err) {
      // Only this loop writes the store, so a conflict means our bookkeeping is off: re-read and retry.
      if (
        isStoreError(err, 'Conflict') ||
        isStoreError(err, 'NotFound') ||
        isStoreError(err, 'AlreadyExists')
      ) {
        const kv = await this.store.get(key);
        if (kv === undefined) this.held.delete(key);
        else this.held.set(key, { revision: kv.modRevision, hash: -1 });
        this.queue().set(key, d);
        return;
      }
      throw err;
    }
  }
}
