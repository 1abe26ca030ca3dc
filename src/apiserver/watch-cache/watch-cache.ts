// The watch cache: every object of every served resource, held in memory, fed by ONE store watch over
// the whole keyspace, so the cache has a single global revision (every bookmark and every LIST knows
// exactly which changes it includes). It keeps a bounded history of events for resuming watches.
//
// Each object is decoded and serialized once per change (CachedObject.json); watchers share those
// bytes. Registration and dispatch are synchronous, so a watcher never misses or repeats an event
// between its replay (history or initial state) and the live stream, and whenever a watcher is not
// inside deliver() it has been given every change up to `revision` (what a BOOKMARK may claim).
//
// Behaves like kube-apiserver's cacher (staging/src/k8s.io/apiserver/pkg/storage/cacher): LIST at
// resourceVersion "" waits until the cache has caught up with the store's current revision (consistent
// reads from cache, KEP-2340); a watch from a revision older than the history gets 410 Expired.
import type { KObject } from '../../api/object.js';
import { RESOURCES, type ResourceInfo } from '../../api/resources.js';
import type { Store, WatchEvent } from '../../storage/store.js';
import { isStoreError } from '../../storage/store.js';
import { decodeObject } from '../codec.js';
import { restamp, toCached, type Cached, type CachedObject } from './cached-object.js';
import { DictionaryPacker, type JsonPacker } from '../../api/json-packer.js';
import { PackQueue } from './pack-queue.js';
import { RevisionWaiters } from './revision-waiters.js';
import { compareKeys, lowerBound } from './sorted-keys.js';
import { EventHistory } from './history.js';
import {
  deliverTo,
  matches,
  type CacheEvent,
  type Watcher,
  type WatchFilter,
  type WatchSink,
} from './delivery.js';

interface ResourceState {
  readonly info: ResourceInfo;
  readonly objects: Map<string, Cached>;
  /** Packs this resource's objects once handed out (packObjects). */
  readonly packer: JsonPacker | undefined;
  sorted: string[] | undefined;
  /** Revision of the last change to any object of this resource. */
  lastChange: number;
  readonly watchers: Set<Watcher>;
}

export class CacheError extends Error {
  constructor(
    readonly code: 'Expired' | 'TooLargeResourceVersion' | 'Stopped',
    message: string,
    readonly details: { requested?: number; current?: number; oldest?: number } = {},
  ) {
    super(message);
  }
}

export interface WatchCacheOptions {
  /** Events kept for resuming watches (all resources together). */
  readonly historySize?: number;
  /**
   * At most this many bytes of JSON in the kept events (each counts its object and the version it
   * replaced): a superseded version stays in memory for as long as an event holds it, so under churn the
   * history, not the live objects, sets the cache's size. Default: no limit beyond historySize.
   */
  readonly historyBytes?: number;
  /**
   * Keep each object's JSON packed (deflated against a per-resource dictionary) once its event has been
   * handed out: about a tenth of the memory, for an unpack on every LIST, GET or replay that reads it.
   * For a cache that must be small rather than fast (the wrapper). Default: plain JSON.
   */
  readonly packObjects?: boolean;
  /** How long a request waits for the cache to reach a resourceVersion before 504 (kube: 3 s). */
  readonly waitTimeoutMs?: number;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class WatchCache {
  private readonly states = new Map<string, ResourceState>();
  private readonly byPrefix: { prefix: string; state: ResourceState }[] = [];
  private readonly history: EventHistory;
  private rev = 0;
  private readonly waiters: RevisionWaiters;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private readyResolve!: () => void;
  readonly ready: Promise<void>;
  private healthy = false;
  private readonly log: (msg: string, fields?: Record<string, unknown>) => void;
  /** Called after each applied batch, for metrics. */
  onBatch: ((events: readonly CacheEvent[]) => void) | undefined;
  private readonly toPack = new PackQueue();

  constructor(
    private readonly store: Store,
    opts: WatchCacheOptions = {},
    resources: readonly ResourceInfo[] = RESOURCES,
  ) {
    this.history = new EventHistory(opts.historySize ?? 10_000, opts.historyBytes ?? Infinity);
    this.waiters = new RevisionWaiters(opts.waitTimeoutMs ?? 3_000);
    this.log = opts.log ?? (() => {});
    for (const info of resources) {
      const state: ResourceState = {
        info,
        objects: new Map(),
        packer: opts.packObjects === true ? new DictionaryPacker() : undefined,
        sorted: undefined,
        lastChange: 0,
        watchers: new Set(),
      };
      this.states.set(stateKey(info), state);
      this.byPrefix.push({ prefix: `/${info.storagePath}/`, state });
    }
    // Longest prefix first, so `/services/specs/` never swallows a longer sibling.
    this.byPrefix.sort((a, b) => b.prefix.length - a.prefix.length);
    this.ready = new Promise((r) => (this.readyResolve = r));
  }

  get revision(): number {
    return this.rev;
  }
  get isHealthy(): boolean {
    return this.healthy;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.toPack.stop();
    await this.loop?.catch(() => {});
    this.waiters.releaseAll();
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let backoff = 100;
    let needLoad = true;
    while (!signal.aborted) {
      try {
        if (needLoad) {
          await this.load();
          needLoad = false;
          this.healthy = true;
          this.readyResolve();
        }
        for await (const batch of this.store.watch('/', this.rev, signal)) {
          this.apply(batch);
          backoff = 100;
        }
      } catch (err) {
        if (signal.aborted || isStoreError(err, 'Closed')) break;
        this.healthy = false;
        if (isStoreError(err, 'Compacted')) {
          // We fell behind compaction: start over from a fresh list, and every watcher must relist.
          this.log('watch cache fell behind compaction; reloading', { revision: this.rev });
          needLoad = true;
        } else {
          this.log('watch cache lost the store watch; retrying', { error: String(err), revision: this.rev });
        }
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 5_000);
        if (!needLoad) this.healthy = true;
      }
    }
  }

  private async load(): Promise<void> {
    const fresh = new Map<ResourceState, Map<string, Cached>>();
    for (const s of this.states.values()) fresh.set(s, new Map());
    let cont: string | undefined;
    let revision: number;
    do {
      const page = await this.store.list('/', {
        limit: 5_000,
        ...(cont !== undefined ? { continue: cont } : {}),
      });
      revision = page.revision;
      for (const kv of page.items) {
        const state = this.stateForKey(kv.key);
        if (state === undefined) continue;
        const obj = this.cached(state.info, kv.key, kv.value, kv.modRevision);
        if (obj !== undefined) fresh.get(state)!.set(kv.key, obj);
      }
      cont = page.continue;
    } while (cont !== undefined);
    const wasLoaded = this.rev !== 0;
    for (const [s, objects] of fresh) {
      s.objects.clear();
      for (const [k, v] of objects) {
        s.objects.set(k, v);
        this.queuePack(s, v);
      }
      s.sorted = undefined;
      s.lastChange = revision;
      if (wasLoaded) {
        for (const w of s.watchers) w.sink.expire('the watch cache was re-initialised; relist');
        s.watchers.clear();
      }
    }
    this.history.reset(revision);
    this.setRevision(revision);
  }

  private stateForKey(key: string): ResourceState | undefined {
    for (const p of this.byPrefix) if (key.startsWith(p.prefix)) return p.state;
    return undefined;
  }

  private cached(r: ResourceInfo, key: string, value: Uint8Array, rev: number): Cached | undefined {
    let obj: KObject;
    try {
      obj = decodeObject(value, rev);
    } catch (err) {
      this.log('undecodable object in store; skipped', { key, revision: rev, error: String(err) });
      return undefined;
    }
    return toCached(r, key, obj);
  }

  private apply(batch: readonly WatchEvent[]): void {
    const events: CacheEvent[] = [];
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i]!;
      const state = this.stateForKey(e.key);
      if (state !== undefined) {
        const prev = state.objects.get(e.key);
        let cur: Cached | undefined;
        if (e.type === 'PUT') {
          cur = this.cached(state.info, e.key, e.value, e.revision);
          if (cur === undefined) continue;
          if (prev === undefined) state.sorted = undefined;
          state.objects.set(e.key, cur);
        } else {
          if (prev === undefined) continue;
          state.objects.delete(e.key);
          state.sorted = undefined;
          cur = restamp(state.info, prev, e.revision);
        }
        state.lastChange = e.revision;
        const ev: CacheEvent = { revision: e.revision, resource: state.info, type: e.type, cur, prev };
        events.push(ev);
        this.history.push(ev);
        this.dispatch(state, ev, i < batch.length - 1);
        // A deletion's last state lives on in the history, as the version an object replaced does.
        this.queuePack(state, cur);
      }
    }
    const last = batch[batch.length - 1];
    if (last !== undefined) this.setRevision(last.revision);
    if (events.length > 0) this.onBatch?.(events);
    for (const ev of events) {
      ev.cur.memo = undefined;
      if (ev.prevAtRevision !== undefined) {
        ev.prevAtRevision.memo = undefined;
        this.queuePack(this.state(ev.resource), ev.prevAtRevision as Cached);
      }
    }
  }

  private queuePack(s: ResourceState, o: Cached): void {
    if (s.packer !== undefined) this.toPack.add(o, s.packer);
  }

  /** Events held for resuming watches, their JSON bytes, and the limits on both (for metrics and tests). */
  historyStats(): { events: number; bytes: number; floor: number; maxEvents: number; maxBytes: number } {
    return this.history.stats();
  }

  private dispatch(state: ResourceState, ev: CacheEvent, more: boolean): void {
    for (const w of state.watchers) deliverTo(w, ev, more);
  }

  private setRevision(rev: number): void {
    if (rev > this.rev) this.rev = rev;
    this.waiters.advance(this.rev);
  }

  /**
   * Resolves once the cache has applied every change up to `rev`; CacheError after the wait timeout. An
   * abort of `signal` rejects it at once with the signal's reason, and forgets the waiter.
   */
  async waitFor(rev: number, signal?: AbortSignal): Promise<void> {
    await this.ready;
    if (rev <= this.rev) return;
    const tooLarge = (): CacheError =>
      new CacheError('TooLargeResourceVersion', `Too large resource version: ${rev}, current: ${this.rev}`, {
        requested: rev,
        current: this.rev,
      });
    await this.waiters.wait(rev, tooLarge, signal);
  }

  /** Requests waiting for a revision the cache has not reached (tests). */
  get pendingWaits(): number {
    return this.waiters.size;
  }

  /** Waits until the cache reflects every write the store has acknowledged (a consistent read). */
  async waitFresh(signal?: AbortSignal): Promise<void> {
    await this.ready;
    await this.waitFor(await this.store.currentRevision(), signal);
  }

  /** Whether the cached state of `r` is exactly its state at `rev` (no change to it after rev). */
  unchangedSince(r: ResourceInfo, rev: number): boolean {
    const s = this.state(r);
    return s.lastChange <= rev && this.rev >= rev;
  }

  get(r: ResourceInfo, key: string): CachedObject | undefined {
    return this.state(r).objects.get(key);
  }

  count(r: ResourceInfo): number {
    return this.state(r).objects.size;
  }

  /** Matching objects in key order, starting after `afterKey`, at most `limit` (0 = all). */
  list(
    r: ResourceInfo,
    filter: WatchFilter,
    opts: { afterKey?: string; limit?: number } = {},
  ): { revision: number; items: CachedObject[]; lastKey?: string; more: boolean } {
    const s = this.state(r);
    s.sorted ??= [...s.objects.keys()].sort(compareKeys);
    const keys = s.sorted;
    let i = 0;
    const prefix =
      r.namespaced && filter.namespace !== undefined && filter.namespace !== ''
        ? `/${r.storagePath}/${filter.namespace}/`
        : undefined;
    const start = opts.afterKey ?? prefix;
    if (start !== undefined) i = lowerBound(keys, start, opts.afterKey !== undefined);
    const limit = opts.limit ?? 0;
    const items: CachedObject[] = [];
    let lastKey: string | undefined;
    for (; i < keys.length; i++) {
      const k = keys[i]!;
      if (prefix !== undefined && !k.startsWith(prefix)) break;
      const o = s.objects.get(k)!;
      if (!matches(filter, o)) continue;
      if (limit > 0 && items.length === limit)
        return { revision: this.rev, items, lastKey: lastKey!, more: true };
      items.push(o);
      lastKey = k;
    }
    return { revision: this.rev, items, more: false };
  }

  /**
   * Registers a watcher from `fromRevision` (events after it are replayed from history), or, with
   * `initial`, after replaying the current state as ADDED events. Returns an unregister function.
   * Throws CacheError Expired when history no longer reaches back to fromRevision.
   */
  watch(
    r: ResourceInfo,
    filter: WatchFilter,
    sink: WatchSink,
    start: { fromRevision: number } | { initial: true },
  ): { revision: number; stop: () => void } {
    const s = this.state(r);
    const w: Watcher = { resource: r, filter, sink };
    if ('initial' in start) {
      for (const k of (s.sorted ??= [...s.objects.keys()].sort(compareKeys))) {
        const o = s.objects.get(k)!;
        if (matches(filter, o)) {
          sink.deliver('ADDED', o);
          o.memo = undefined; // one watcher: nothing to share
        }
      }
    } else {
      const from = start.fromRevision;
      const floor = this.history.floor;
      if (from < floor) {
        throw new CacheError('Expired', `too old resource version: ${from} (${floor})`, {
          requested: from,
          oldest: floor,
        });
      }
      // History is in revision order: start at the first event after `from` rather than scanning it all
      // (a thousand watchers resuming at the current revision would otherwise read it a thousand times).
      for (const ev of this.history.after(from)) {
        if (ev.resource !== r) continue;
        deliverTo(w, ev);
        ev.cur.memo = undefined;
        if (ev.prevAtRevision !== undefined) {
          ev.prevAtRevision.memo = undefined;
          this.queuePack(s, ev.prevAtRevision as Cached);
        }
      }
    }
    s.watchers.add(w);
    return { revision: this.rev, stop: () => s.watchers.delete(w) };
  }

  watcherCount(r?: ResourceInfo): number {
    if (r !== undefined) return this.state(r).watchers.size;
    let n = 0;
    for (const s of this.states.values()) n += s.watchers.size;
    return n;
  }

  private state(r: ResourceInfo): ResourceState {
    const s = this.states.get(stateKey(r));
    if (s === undefined) throw new Error(`resource ${r.group}/${r.resource} is not cached`);
    return s;
  }
}

const stateKey = (r: ResourceInfo): string => `${r.group}/${r.resource}`;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
