// Informers: a reflector feeding an indexed in-memory cache, with handlers told of every change.
// A relist swaps the cache in one step and tells the handlers what the swap changed (adds, updates
// and deletes for objects that vanished while the watch was down), so handlers never miss a delete.
// The cache is written first and completely; only then is each change queued to every handler, each
// handler on its own queue (handler-queue.ts, as client-go's shared_informer.go does), so a slow
// handler never holds up the cache, the watch or another handler.
// SharedInformerFactory keeps one informer (one reflector, one watch) per resource and selector.
import type { KObject } from '../api/object.js';
import type { ResourceInfo } from '../api/resources.js';
import type { Json } from '../core/patch/merge-patch.js';
import { project, type Projection } from '../core/projection/projection.js';
import type { Client } from './client.js';
import { HandlerQueue, type EventHandlers, type HandlerRegistration } from './handler-queue.js';
import { Reflector, type ReflectorOptions, type ReflectorStore } from './reflector.js';

export const objectKeyOf = (o: KObject): string =>
  o.metadata.namespace !== undefined && o.metadata.namespace !== ''
    ? `${o.metadata.namespace}/${o.metadata.name ?? ''}`
    : (o.metadata.name ?? '');

export type IndexFunc = (obj: KObject) => string[];

/**
 * What an informer keeps of each object it receives (client-go's TransformFunc). It may return a new
 * object; it must not change what it was given.
 */
export type TransformFunc = (obj: KObject) => KObject;

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * What svcplane's controllers keep of a `resource`, as kube-controller-manager's informers strip
 * managedFields: no controller reads them, and on an object written by server-side apply they are a large
 * share of it. Pods also lose kubectl's last-applied annotation (a copy of the whole manifest), and with
 * `podView` every field no running controller reads (see ControllerManager): controllers never write a
 * pod from the cache (the garbage collector reads pods live before it edits them), so nothing stripped
 * here can be written back. Other kinds keep their annotations, since controllers update their own
 * Endpoints and EndpointSlices from the cached copy.
 */
export function controllerTransform(resource: ResourceInfo, podView?: Projection): TransformFunc {
  const pods = resource.group === '' && resource.resource === 'pods';
  const view = pods ? podView : undefined;
  return (obj) => {
    const meta = obj.metadata;
    const lastApplied = pods && meta.annotations?.[LAST_APPLIED] !== undefined;
    if (meta.managedFields === undefined && !lastApplied && view === undefined) return obj;
    const { managedFields: _managedFields, ...rest } = meta;
    if (lastApplied) {
      const { [LAST_APPLIED]: _lastApplied, ...annotations } = meta.annotations!;
      rest.annotations = annotations;
    }
    const out = { ...obj, metadata: rest };
    return view === undefined ? out : (project(out as unknown as Json, view) as unknown as KObject);
  };
}

/** The indexed cache an informer keeps; read-only to everyone but the informer. */
export class Indexer implements ReflectorStore {
  private items = new Map<string, KObject>();
  private indices = new Map<string, Map<string, Set<string>>>();
  private readonly queues: HandlerQueue[] = [];
  /** Whether a full list (replace) has been written: what a handler added later sees first is then its initial list. */
  private listed = false;
  private stopped = false;
  resourceVersion = '';

  private readonly indexers: Record<string, IndexFunc>;

  /** `onHandlerError` hears of every handler that throws (or rejects); the handler's queue goes on. */
  constructor(
    indexers: Record<string, IndexFunc> = {},
    private readonly transform: TransformFunc = (o) => o,
    private readonly onHandlerError: (err: unknown) => void = () => {},
  ) {
    this.indexers = { ...indexers };
    for (const name of Object.keys(indexers)) this.indices.set(name, new Map());
  }

  /** Adds indices (client-go's AddIndexers), built over what is cached already; a name in use is an error. */
  addIndexers(more: Record<string, IndexFunc>): void {
    for (const [name, fn] of Object.entries(more)) {
      const existing = this.indexers[name];
      if (existing === fn) continue;
      if (existing !== undefined) throw new Error(`indexer "${name}" already exists`);
      this.indexers[name] = fn;
      const idx = new Map<string, Set<string>>();
      this.indices.set(name, idx);
      for (const [key, obj] of this.items) {
        for (const v of fn(obj)) {
          let set = idx.get(v);
          if (set === undefined) idx.set(v, (set = new Set()));
          set.add(key);
        }
      }
    }
  }

  /**
   * Adds a handler with its own queue: it is first told of every object cached now (as adds), then of
   * every change after. Its registration's hasSynced says when it has seen its initial list.
   */
  addHandlers(h: EventHandlers): HandlerRegistration {
    const q = new HandlerQueue(h, this.onHandlerError);
    if (this.stopped) return q;
    this.queues.push(q);
    for (const obj of this.items.values()) q.add(obj);
    if (this.listed) q.initialListQueued();
    return q;
  }

  /** Resolves once every handler added so far has seen its initial list (after the first replace). */
  async handlersSynced(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.synced()));
  }

  /** Stops telling handlers: what is still queued is dropped; resolves when no handler is running. */
  async stopHandlers(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.queues.map((q) => q.stop()));
  }

  get(key: string): KObject | undefined {
    return this.items.get(key);
  }

  list(): KObject[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** How many objects index `name` holds under `value` (no copy is made). */
  indexCount(name: string, value: string): number {
    return this.indices.get(name)?.get(value)?.size ?? 0;
  }

  /** Objects whose index `name` yields `value` (e.g. byNamespace → "default"). */
  byIndex(name: string, value: string): KObject[] {
    const keys = this.indices.get(name)?.get(value);
    if (keys === undefined) return [];
    return [...keys].flatMap((k) => {
      const o = this.items.get(k);
      return o === undefined ? [] : [o];
    });
  }

  private index(key: string, obj: KObject | undefined, old: KObject | undefined): void {
    for (const [name, fn] of Object.entries(this.indexers)) {
      const idx = this.indices.get(name)!;
      if (old !== undefined) {
        for (const v of fn(old)) {
          const set = idx.get(v);
          set?.delete(key);
          if (set?.size === 0) idx.delete(v);
        }
      }
      if (obj !== undefined) {
        for (const v of fn(obj)) {
          let set = idx.get(v);
          if (set === undefined) idx.set(v, (set = new Set()));
          set.add(key);
        }
      }
    }
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', received: KObject): void {
    const obj = this.transform(received);
    const key = objectKeyOf(obj);
    const old = this.items.get(key);
    this.resourceVersion = obj.metadata.resourceVersion ?? this.resourceVersion;
    if (type === 'DELETED') {
      if (old === undefined) return;
      this.items.delete(key);
      this.index(key, undefined, old);
      for (const q of this.queues) q.delete(obj);
      return;
    }
    this.items.set(key, obj);
    this.index(key, obj, old);
    for (const q of this.queues) {
      if (old === undefined) q.add(obj);
      else q.update(old, obj);
    }
  }

  replace(items: KObject[], resourceVersion: string): void {
    const next = new Map<string, KObject>();
    this.transformInto(next, items);
    this.swap(next, resourceVersion);
  }

  /** A relist being read page by page: each page transformed as it comes (see `paged`). */
  private relist: Map<string, KObject> | undefined;

  /**
   * The reflector hands a relist over page by page: each page is transformed at once, so what a list
   * response held beyond the transform's result is freed page by page rather than held for the whole
   * list. The cache is swapped only at the end, as replace() does.
   */
  readonly paged = {
    beginReplace: (): void => {
      this.relist = new Map();
    },
    replacePage: (items: KObject[]): void => {
      if (this.relist !== undefined) this.transformInto(this.relist, items);
    },
    endReplace: (resourceVersion: string): void => {
      const next = this.relist;
      this.relist = undefined;
      if (next !== undefined) this.swap(next, resourceVersion);
    },
    abortReplace: (): void => {
      this.relist = undefined;
    },
  };

  private transformInto(into: Map<string, KObject>, items: readonly KObject[]): void {
    for (const received of items) {
      const o = this.transform(received);
      into.set(objectKeyOf(o), o);
    }
  }

  private swap(next: Map<string, KObject>, resourceVersion: string): void {
    const before = this.items;
    this.items = next;
    this.indices = new Map(Object.keys(this.indexers).map((n) => [n, new Map()]));
    for (const [k, o] of next) this.index(k, o, undefined);
    this.resourceVersion = resourceVersion;
    for (const [k, o] of before) if (!next.has(k)) for (const q of this.queues) q.delete(o);
    for (const [k, o] of next) {
      const old = before.get(k);
      for (const q of this.queues) {
        if (old === undefined) q.add(o);
        else if (old.metadata.resourceVersion !== o.metadata.resourceVersion) q.update(old, o);
      }
    }
    this.listed = true;
    for (const q of this.queues) q.initialListQueued();
  }
}

export const byNamespace: IndexFunc = (o) => [o.metadata.namespace ?? ''];

/** One value per label, `namespace/key=value`: the objects of a namespace carrying one label pair. */
export const byNamespaceLabel: IndexFunc = (o) => {
  const labels = o.metadata.labels;
  if (labels === undefined || labels === null) return [];
  const ns = o.metadata.namespace ?? '';
  return Object.entries(labels).map(([k, v]) => namespaceLabelKey(ns, k, String(v)));
};

export const namespaceLabelKey = (namespace: string, key: string, value: string): string =>
  `${namespace}/${key}=${value}`;

export interface InformerOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly indexers?: Record<string, IndexFunc>;
  readonly reflector?: ReflectorOptions;
  /** Applied to every object before it is cached and handed to handlers. */
  readonly transform?: TransformFunc;
}

export class Informer {
  readonly indexer: Indexer;
  readonly reflector: Reflector;

  constructor(
    client: Client,
    readonly resource: ResourceInfo,
    opts: InformerOptions = {},
  ) {
    // The informer reports failures in one place: a handler's throw goes where the watch's errors go.
    this.indexer = new Indexer(
      { namespace: byNamespace, ...opts.indexers },
      opts.transform,
      opts.reflector?.onError,
    );
    const scope = {
      ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
      ...(opts.labelSelector === undefined ? {} : { labelSelector: opts.labelSelector }),
      ...(opts.fieldSelector === undefined ? {} : { fieldSelector: opts.fieldSelector }),
    };
    this.reflector = new Reflector(
      {
        list: (o, signal) => client.list(resource, { ...scope, ...o }, signal),
        watch: (o, signal) => client.watch(resource, { ...scope, ...o }, signal),
      },
      this.indexer,
      opts.reflector,
    );
  }

  addHandlers(h: EventHandlers): HandlerRegistration {
    return this.indexer.addHandlers(h);
  }

  start(): void {
    this.reflector.start();
  }

  /**
   * Stops the watch and the handlers at once (what is still queued for them is dropped); resolves once
   * the watch has ended and no handler is running, as client-go's informer Run waits for its listeners.
   */
  async stop(): Promise<void> {
    const handlers = this.indexer.stopHandlers();
    await this.reflector.stop();
    await handlers;
  }

  /**
   * Resolves once the first full list is in the cache and every handler added so far has been handed
   * it (each registration's hasSynced), so a caller that waits sees what its handlers made of it.
   */
  async waitForSync(): Promise<void> {
    await this.reflector.waitForSync();
    await this.indexer.handlersSynced();
  }
}

/** One informer per resource (and scope), shared by every controller that asks for it. */
export class SharedInformerFactory {
  private readonly informers = new Map<string, Informer>();
  private started = false;

  constructor(
    private readonly client: Client,
    private readonly defaults: {
      readonly reflector?: ReflectorOptions;
      /** The transform for each resource's informer (e.g. controllerTransform). */
      readonly transform?: (resource: ResourceInfo) => TransformFunc;
    } = {},
  ) {}

  informer(resource: ResourceInfo, opts: Omit<InformerOptions, 'reflector' | 'transform'> = {}): Informer {
    const id = `${resource.group}/${resource.resource}|${opts.namespace ?? ''}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}`;
    let inf = this.informers.get(id);
    if (inf === undefined) {
      const { reflector, transform } = this.defaults;
      inf = new Informer(this.client, resource, {
        ...opts,
        ...(reflector === undefined ? {} : { reflector }),
        ...(transform === undefined ? {} : { transform: transform(resource) }),
      });
      this.informers.set(id, inf);
      if (this.started) inf.start();
    } else if (opts.indexers !== undefined) {
      inf.indexer.addIndexers(opts.indexers);
    }
    return inf;
  }

  start(): void {
    this.started = true;
    for (const inf of this.informers.values()) inf.start();
  }

  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
