// A persisted allocator with one store key per allocated value, in the spirit of KEP-1880's
// IPAddress objects: creating the key *is* the allocation (the store's create-if-absent is the
// arbiter, so several apiservers on one etcd never hand out a value twice), deleting it is the
// release, and no write ever touches more than one small key. Upstream's single RangeAllocation
// bitmap is rewritten whole on every allocation (128 KiB at a /12); this writes ~100 bytes.
//
// Each process keeps a bitmap per range as a *hint* of what is taken, primed by a list and kept
// current by a watch on the key prefix. The hint only picks candidates: a stale hint costs a retry
// (AlreadyExists), never a duplicate.
import type { AllocationBitmap, Random } from '../../core/allocator/bitmap.js';
import type { AllocatorError } from '../../core/allocator/errors.js';
import { errFull } from '../../core/allocator/errors.js';
import { isStoreError, type KeyValue, type Store } from '../../storage/store.js';
import type { Logger } from '../../runtime/logger.js';

/** Who holds a value: the Service it was allocated for. */
export interface Owner {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One range of values and its hint bitmap. */
export interface RangeView<V> {
  readonly spec: string;
  readonly bitmap: AllocationBitmap;
  offsetOf(v: V): number | undefined;
  valueAt(offset: number): V;
}

export interface StoredValue<V> {
  readonly key: string;
  /** undefined when the key's name is not a value of this kind (a stray key). */
  readonly value: V | undefined;
  readonly modRevision: number;
  readonly owner: Owner | undefined;
}

export interface KeyedAllocatorOptions<V> {
  readonly store: Store;
  /** Key prefix, ending in "/". */
  readonly prefix: string;
  readonly parse: (name: string) => V | undefined;
  readonly format: (v: V) => string;
  readonly views: readonly RangeView<V>[];
  readonly random: Random;
  readonly log: Logger;
  readonly errNotInRange: (v: V) => AllocatorError;
  readonly errAllocated: () => AllocatorError;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Candidates tried per allocateNext before giving up (each failure means another writer won it). */
const MAX_NEXT_ATTEMPTS = 64;
const LIST_PAGE = 10_000;

export function decodeOwner(value: Uint8Array): Owner | undefined {
  try {
    const o = JSON.parse(decoder.decode(value)) as Partial<Owner>;
    return typeof o.namespace === 'string' && typeof o.name === 'string' && typeof o.uid === 'string'
      ? { namespace: o.namespace, name: o.name, uid: o.uid }
      : undefined;
  } catch {
    return undefined;
  }
}

export class KeyedAllocator<V> {
  private readonly abort = new AbortController();
  private watching: Promise<void> | undefined;
  private revision = 0;

  constructor(private readonly o: KeyedAllocatorOptions<V>) {}

  get views(): readonly RangeView<V>[] {
    return this.o.views;
  }

  keyOf(v: V): string {
    return `${this.o.prefix}${this.o.format(v)}`;
  }

  viewOf(v: V): RangeView<V> | undefined {
    return this.o.views.find((r) => r.offsetOf(v) !== undefined);
  }

  /** Primes the hints from the store and starts following it. */
  async start(): Promise<void> {
    await this.relist();
    this.watching = this.follow();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.watching;
  }

  private async relist(): Promise<void> {
    for (const r of this.o.views) {
      r.bitmap.forEach((i) => r.bitmap.release(i));
    }
    const all = await this.list();
    this.revision = all.revision;
    for (const s of all.items) if (s.value !== undefined) this.mark(s.value, true);
  }

  private async follow(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        for await (const batch of this.o.store.watch(this.o.prefix, this.revision, signal)) {
          for (const ev of batch) {
            const v = this.o.parse(ev.key.slice(this.o.prefix.length));
            if (v !== undefined) this.mark(v, ev.type === 'PUT');
            this.revision = ev.revision;
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        if (isStoreError(err, 'Compacted')) {
          await this.relist().catch(() => undefined);
          continue;
        }
        this.o.log.warn('allocation watch failed; retrying', { prefix: this.o.prefix, err: String(err) });
        await new Promise((r) => setTimeout(r, 1000).unref());
      }
    }
  }

  private mark(v: V, taken: boolean): void {
    const r = this.viewOf(v);
    if (r === undefined) return;
    const off = r.offsetOf(v)!;
    if (taken) {
      if (!r.bitmap.has(off)) r.bitmap.allocate(off);
    } else r.bitmap.release(off);
  }

  /** Every recorded value, read at one revision (the given one, or the current). */
  async list(revision?: number): Promise<{ revision: number; items: StoredValue<V>[] }> {
    const items: StoredValue<V>[] = [];
    let cont: string | undefined;
    let rev = revision;
    do {
      const page = await this.o.store.list(this.o.prefix, {
        limit: LIST_PAGE,
        ...(cont === undefined ? {} : { continue: cont }),
        ...(rev === undefined || cont !== undefined ? {} : { revision: rev }),
      });
      rev = page.revision;
      for (const kv of page.items) items.push(this.stored(kv));
      cont = page.continue;
    } while (cont !== undefined);
    return { revision: rev ?? (await this.o.store.currentRevision()), items };
  }

  private stored(kv: KeyValue): StoredValue<V> {
    return {
      key: kv.key,
      value: this.o.parse(kv.key.slice(this.o.prefix.length)),
      modRevision: kv.modRevision,
      owner: decodeOwner(kv.value),
    };
  }

  /** Takes a specific value. Throws ErrNotInRange or ErrAllocated (AllocatorError). */
  async allocate(v: V, owner: Owner): Promise<void> {
    if (this.viewOf(v) === undefined) throw this.o.errNotInRange(v);
    try {
      await this.o.store.create(this.keyOf(v), encoder.encode(JSON.stringify(owner)));
    } catch (err) {
      if (isStoreError(err, 'AlreadyExists')) {
        this.mark(v, true);
        throw this.o.errAllocated();
      }
      throw err;
    }
    this.mark(v, true);
  }

  /** Takes the next free value of a range (upper block first). Throws ErrFull. */
  async allocateNext(r: RangeView<V>, owner: Owner): Promise<V> {
    for (let attempt = 0; attempt < MAX_NEXT_ATTEMPTS; attempt++) {
      const off = r.bitmap.allocateNext(this.o.random);
      if (off === undefined) throw errFull();
      const v = r.valueAt(off);
      try {
        await this.o.store.create(this.keyOf(v), encoder.encode(JSON.stringify(owner)));
        return v;
      } catch (err) {
        if (isStoreError(err, 'AlreadyExists')) continue; // another writer holds it; the hint now knows
        r.bitmap.release(off);
        throw err;
      }
    }
    throw errFull();
  }

  /** The value allocateNext would try first, taking nothing (dry run). */
  peekNext(r: RangeView<V>): V | undefined {
    const off = r.bitmap.pickNext(this.o.random);
    return off === undefined ? undefined : r.valueAt(off);
  }

  /** For a dry run: would allocate(v) fail? Reads the store, takes nothing. */
  async check(v: V): Promise<void> {
    if (this.viewOf(v) === undefined) throw this.o.errNotInRange(v);
    if ((await this.o.store.get(this.keyOf(v))) !== undefined) throw this.o.errAllocated();
  }

  /**
   * Frees a value. With `uid`, only a record held by that Service (or by nobody known) is freed: a
   * value two Services claim (drift the repair reports) stays with the other one.
   */
  async release(v: V, uid?: string): Promise<void> {
    const key = this.keyOf(v);
    const kv = await this.o.store.get(key);
    if (kv === undefined) return;
    const owner = decodeOwner(kv.value);
    if (uid !== undefined && owner !== undefined && owner.uid !== uid) return;
    try {
      await this.o.store.delete(key, kv.modRevision);
      this.mark(v, false);
    } catch (err) {
      if (isStoreError(err, 'NotFound') || isStoreError(err, 'Conflict')) return;
      throw err;
    }
  }

  /** Records a value for an owner unless it is recorded already (repair). True when it wrote. */
  async record(v: V, owner: Owner | undefined): Promise<boolean> {
    try {
      await this.o.store.create(this.keyOf(v), encoder.encode(JSON.stringify(owner ?? {})));
      this.mark(v, true);
      return true;
    } catch (err) {
      if (isStoreError(err, 'AlreadyExists')) return false;
      throw err;
    }
  }

  /** Deletes a record if it is still the version the caller saw (repair). True when it deleted. */
  async forget(key: string, modRevision: number): Promise<boolean> {
    try {
      await this.o.store.delete(key, modRevision);
      const v = this.o.parse(key.slice(this.o.prefix.length));
      if (v !== undefined) this.mark(v, false);
      return true;
    } catch (err) {
      if (isStoreError(err, 'NotFound') || isStoreError(err, 'Conflict')) return false;
      throw err;
    }
  }
}
