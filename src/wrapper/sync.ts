// The wrapper's upstream side: informers on Services, EndpointSlices, Endpoints and Nodes feed the topology
// index; every object whose served form may have changed is marked dirty, and one drain loop writes the
// served forms into the wrapper's own store (the watch cache serves clients from there). A write happens
// only when the served form differs from what the store holds, so clients see an event only when what
// they are served changed: a relist after the upstream comes back, or a restart of the wrapper, emits
// exactly the differences.
//
// Until every informer has synced once, nothing is written: the store keeps serving the last good views
// (from before a restart, or before the upstream went away).
import type { KObject } from '../api/object.js';
import { mustFindResource, type ResourceInfo } from '../api/resources.js';
import { TopologyIndex } from '../core/topology/index.js';
import { servedEndpoints, servedSlice } from '../core/topology/served.js';
import { encodeObject, objectKey, resourcePrefix } from '../api/codec.js';
import type { Store } from '../storage/store.js';
import { isStoreError } from '../storage/store.js';
import type { Client } from '../runtime/client.js';
import {
  SharedInformerFactory,
  controllerTransform,
  objectKeyOf,
  type Informer,
} from '../runtime/informer.js';

export const SERVICES = mustFindResource('', 'services');
export const ENDPOINTS = mustFindResource('', 'endpoints');
export const ENDPOINTSLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
export const NODES = mustFindResource('', 'nodes');
export const SERVED: readonly ResourceInfo[] = [SERVICES, ENDPOINTS, ENDPOINTSLICES, NODES];

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** A 53-bit hash of a string (cyrb53): what the store holds for a key, without keeping a second copy. */
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** What the store holds for a key. */
interface Held {
  readonly revision: number;
  readonly hash: number;
}

interface Dirty {
  readonly r: ResourceInfo;
  readonly namespace: string;
  readonly name: string;
}

/** The Service with its traffic policies left out: kube-proxy applies those itself, from the Service. */
function withoutPolicies(svc: KObject): KObject {
  const spec = (svc as { spec?: Record<string, unknown> }).spec;
  if (spec === undefined) return svc;
  const { internalTrafficPolicy: _i, externalTrafficPolicy: _e, ...rest } = spec;
  return { ...svc, spec: rest };
}

/** The stored form: no resourceVersion (the store assigns it) and no managedFields. */
function storedForm(obj: KObject): string {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = obj.metadata;
  return JSON.stringify({ ...obj, metadata: meta });
}

export interface WrapperSyncMetrics {
  recomputeSeconds(seconds: number): void;
  wrote(kind: 'put' | 'delete'): void;
}

export class WrapperSync {
  readonly index: TopologyIndex;
  private readonly factory: SharedInformerFactory;
  private readonly informers: Record<'services' | 'endpoints' | 'slices' | 'nodes', Informer>;
  private readonly held = new Map<string, Held>();
  private readonly dirty = new Map<string, Dirty>();
  private draining: Promise<void> | undefined;
  private synced = false;
  private stopped = false;
  /** Writes the drain loop has made (puts and deletes). */
  writes = 0;

  constructor(
    private readonly client: Client,
    private readonly store: Store,
    readonly hostname: string,
    private readonly log: Logger,
    private readonly metrics?: WrapperSyncMetrics,
  ) {
    this.index = new TopologyIndex(hostname);
    this.factory = new SharedInformerFactory(client, {
      transform: (r) => controllerTransform(r),
      // One line when the upstream goes away and one when every informer is watching again.
      reflector: {
        onState: () => queueMicrotask(() => this.noteUpstream()),
        onError: (err) => this.noteUpstream(err),
      },
    });
    this.informers = {
      services: this.factory.informer(SERVICES),
      endpoints: this.factory.informer(ENDPOINTS),
      slices: this.factory.informer(ENDPOINTSLICES, {
        indexers: {
          service: (o) => {
            const s = o.metadata.labels?.[SERVICE_NAME_LABEL];
            return s === undefined ? [] : [`${o.metadata.namespace ?? ''}/${s}`];
          },
        },
      }),
      nodes: this.factory.informer(NODES),
    };
  }

  /** Whether every informer is watching (in sync with the upstream). */
  inSync(): boolean {
    return this.synced && Object.values(this.informers).every((i) => i.reflector.state === 'Watching');
  }

  private upstreamUp: boolean | undefined;

  private lastUpstreamError = 0;

  private noteUpstream(err?: unknown): void {
    if (this.stopped || !this.synced) return;
    if (err !== undefined) {
      this.lastUpstreamError = Date.now();
      if (this.upstreamUp === false) return;
      this.upstreamUp = false;
      this.log.warn('upstream unreachable: serving the last good views', { error: String(err) });
      return;
    }
    if (this.upstreamUp !== false || !this.inSync() || this.backCheck !== undefined) return;
    // A reflector reports Watching before its watch has connected: call it back only after a quiet second.
    const check = (): void => {
      this.backCheck = undefined;
      if (this.stopped || this.upstreamUp !== false || !this.inSync()) return;
      if (Date.now() - this.lastUpstreamError < 1000) {
        this.backCheck = setTimeout(check, 1000).unref();
        return;
      }
      this.upstreamUp = true;
      this.log.info('upstream back: watching again; only the differences are served', {});
    };
    this.backCheck = setTimeout(check, 1000).unref();
  }

  private backCheck: NodeJS.Timeout | undefined;

  /** Objects waiting to be re-served (the drain loop's queue depth). */
  pending(): number {
    return this.dirty.size;
  }

  /** Relists done by the informers since the start (the first list of each included). */
  relists(): number {
    return Object.values(this.informers).reduce((n, i) => n + i.reflector.relists, 0);
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
          const obj = JSON.parse(new TextDecoder().decode(kv.value)) as KObject;
          this.held.set(kv.key, { revision: kv.modRevision, hash: hash53(storedForm(obj)) });
        }
        cont = page.continue;
      } while (cont !== undefined);
    }
    this.wire();
    this.factory.start();
    void this.factory.waitForSync().then(() => {
      if (this.stopped) return;
      this.synced = true;
      // Everything upstream, and everything held that may no longer be upstream.
      for (const inf of Object.values(this.informers))
        for (const o of inf.indexer.list()) this.mark(inf.resource, o);
      for (const key of this.held.keys()) {
        const d = this.fromKey(key);
        if (d !== undefined) this.dirty.set(key, d);
      }
      this.log.info('upstream in sync', { objects: this.dirty.size, held: this.held.size });
      this.upstreamUp = true;
      this.kick();
    });
  }

  /** Resolves once the initial sync has been written to the store. */
  async waitForSync(): Promise<void> {
    await this.factory.waitForSync();
    while (!this.synced) await new Promise((r) => setTimeout(r, 10));
    await this.settled();
  }

  /** Resolves when nothing is left to write. */
  async settled(): Promise<void> {
    while (this.dirty.size > 0 || this.draining !== undefined) await (this.draining ?? Promise.resolve());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.factory.stop();
    await this.draining;
  }

  private fromKey(key: string): Dirty | undefined {
    for (const r of SERVED) {
      const prefix = resourcePrefix(r);
      if (!key.startsWith(prefix)) continue;
      const rest = key.slice(prefix.length).split('/');
      return r.namespaced
        ? { r, namespace: rest[0] ?? '', name: rest.slice(1).join('/') }
        : { r, namespace: '', name: rest.join('/') };
    }
    return undefined;
  }

  private mark(r: ResourceInfo, o: KObject): void {
    const namespace = r.namespaced ? (o.metadata.namespace ?? '') : '';
    const name = o.metadata.name ?? '';
    this.dirty.set(objectKey(r, namespace, name), { r, namespace, name });
  }

  /** Marks every served object of these Services (their slices and Endpoints). */
  private markServices(keys: readonly string[]): void {
    for (const key of keys) {
      for (const s of this.informers.slices.indexer.byIndex('service', key)) this.mark(ENDPOINTSLICES, s);
      const ep = this.informers.endpoints.indexer.get(key);
      if (ep !== undefined) this.mark(ENDPOINTS, ep);
    }
  }

  private timed(f: () => string[]): string[] {
    const t = performance.now();
    const changed = f();
    this.metrics?.recomputeSeconds((performance.now() - t) / 1000);
    return changed;
  }

  private wire(): void {
    const on = (inf: Informer, apply: (o: KObject, gone: boolean) => string[]) =>
      inf.addHandlers({
        onAdd: (o) => this.changed(inf.resource, o, apply(o, false)),
        onUpdate: (_old, o) => this.changed(inf.resource, o, apply(o, false)),
        onDelete: (o) => this.changed(inf.resource, o, apply(o, true)),
      });
    on(this.informers.services, (o, gone) =>
      this.timed(() => this.index.setService(objectKeyOf(o), gone ? undefined : withoutPolicies(o))),
    );
    on(this.informers.endpoints, (o, gone) =>
      this.timed(() => this.index.setEndpoints(objectKeyOf(o), gone ? undefined : o)),
    );
    const sliceService = (o: KObject): string | undefined => {
      const svc = o.metadata.labels?.[SERVICE_NAME_LABEL];
      return svc === undefined ? undefined : `${o.metadata.namespace ?? ''}/${svc}`;
    };
    on(this.informers.slices, (o, gone) => {
      const key = sliceService(o);
      if (key === undefined) return [];
      return this.timed(() => this.index.setSlice(key, o.metadata.name ?? '', gone ? undefined : o));
    });
    // A slice relabelled to another Service leaves its old Service's view.
    this.informers.slices.addHandlers({
      onUpdate: (old, o) => {
        const was = sliceService(old);
        if (was === undefined || was === sliceService(o)) return;
        this.changed(
          ENDPOINTSLICES,
          o,
          this.timed(() => this.index.setSlice(was, old.metadata.name ?? '', undefined)),
        );
      },
    });
    on(this.informers.nodes, (o, gone) =>
      this.timed(() =>
        this.index.setNode(o.metadata.name ?? '', gone ? undefined : (o.metadata.labels ?? {})),
      ),
    );
  }

  private changed(r: ResourceInfo, o: KObject, services: readonly string[]): void {
    this.mark(r, o);
    this.markServices(services);
    this.kick();
  }

  private kick(): void {
    if (!this.synced || this.stopped || this.draining !== undefined) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.dirty.size > 0) this.kick();
    });
  }

  /** The served form of one object now, or undefined when it is not upstream. */
  private desired(d: Dirty): KObject | undefined {
    const key = d.r.namespaced ? `${d.namespace}/${d.name}` : d.name;
    switch (d.r) {
      case SERVICES:
        return this.informers.services.indexer.get(key);
      case NODES:
        return this.informers.nodes.indexer.get(key);
      case ENDPOINTS: {
        const ep = this.informers.endpoints.indexer.get(key);
        return ep === undefined ? undefined : servedEndpoints(ep, this.index.view(key));
      }
      default: {
        const slice = this.informers.slices.indexer.get(key);
        if (slice === undefined) return undefined;
        const svc = slice.metadata.labels?.[SERVICE_NAME_LABEL];
        return servedSlice(slice, svc === undefined ? undefined : this.index.view(`${d.namespace}/${svc}`));
      }
    }
  }

  /** Milliseconds to wait before the next drain after a failed write (doubling, up to 5 s). */
  private backoffMs = 0;

  private async drain(): Promise<void> {
    while (this.dirty.size > 0 && !this.stopped) {
      if (this.backoffMs > 0) await new Promise((r) => setTimeout(r, this.backoffMs).unref());
      // Slices and Endpoints before Services: a client never sees a Service with its slice unfiltered.
      const order = (d: Dirty) => (d.r === ENDPOINTSLICES || d.r === ENDPOINTS ? 0 : 1);
      const batch = [...this.dirty].sort(([, a], [, b]) => order(a) - order(b));
      this.dirty.clear();
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
      this.dirty.set(key, d);
      return false;
    }
  }

  private async writeOnce(key: string, d: Dirty): Promise<void> {
    const want = this.desired(d);
    const held = this.held.get(key);
    try {
      if (want === undefined) {
        if (held === undefined) return;
        await this.store.delete(key, held.revision);
        this.held.delete(key);
        this.writes++;
        this.metrics?.wrote('delete');
        return;
      }
      const form = storedForm(want);
      const h = hash53(form);
      if (held?.hash === h) return;
      const value = encodeObject(JSON.parse(form) as KObject);
      const kv =
        held === undefined
          ? await this.store.create(key, value)
          : await this.store.update(key, value, held.revision);
      this.held.set(key, { revision: kv.modRevision, hash: h });
      this.writes++;
      this.metrics?.wrote('put');
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
        this.dirty.set(key, d);
        return;
      }
      throw err;
    }
  }
}
