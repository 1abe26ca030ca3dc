// A Store that applies writes in memory and persists them to the store behind it a moment later, so a
// writer's watchers see a change without waiting for a commit. The wrapper uses it for its served views
// (derived data, rebuilt from the upstream if lost): a relabel's hundred slices reach the wrapper's watch
// cache at once, and SQLite commits them between events instead of in front of them.
//
// How it stays a Store:
//   - Compare-and-swap is checked against the revisions held in memory (one per key; values are not
//     kept, except those not yet persisted). Every write gets the next revision at once, and goes to
//     the store behind in the same order. That store must be written by nobody else and assign
//     consecutive revisions (sqlite and memory do), so each persisted write lands exactly `offset` below
//     its revision here; a write that does not (a bug, or someone else writing) stops persistence and is
//     logged, and reads then fail rather than answer from a diverged store.
//   - Watches are served from a ring of recent changes; one that falls behind the ring continues from the
//     store behind, after everything is persisted. Reads (get, list, compact) persist everything first,
//     then read the store behind, so they see every write made before them and the history it keeps.
//   - Revisions never repeat across a restart, even after a crash that lost writes which watchers had
//     already seen. A lease on revisions is kept durably (`saveLease`): no revision above it is handed
//     out before a higher lease is kept, a step at a time. After a clean close (everything persisted)
//     the next run keeps the offset between the two stores' revisions, so every object keeps its
//     revision and clients resume their watches. After a crash the offset becomes the last lease, so
//     every revision of the new run, and every object's revision as loaded, is above anything the
//     previous run can have served; revisions below the new run's start read as compacted, so a client
//     resuming from one it saw before the crash relists (410). With nothing kept (the first run) the
//     offset is 0: the store behind's own revisions.
import { ChangeSignal } from '../change-signal.js';
import { cursorLoop, checkWatchStart, type ChangeLog } from '../cursor-watch.js';
import {
  checkKey,
  checkLimit,
  checkPrefix,
  checkRevision,
  checkValue,
  decodeContinue,
  encodeContinue,
} from '../keys.js';
import { compactedError, futureRevisionError } from '../revisions.js';
import { PersistQueue, type Op } from './persist-queue.js';
import {
  conflictError,
  StoreError,
  type GetOptions,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type WatchEvent,
} from '../store.js';

export interface WriteBehindOptions {
  /** The store behind: written only through this one, with consecutive revisions (sqlite, memory). */
  readonly inner: Store;
  /** What the previous run kept (undefined when nothing was). */
  readonly loadLease: () => Lease | undefined;
  /** Keeps it durably before it returns (throws if it cannot). */
  readonly saveLease: (lease: Lease) => void;
  /** Revisions leased at a time (default 10,000). */
  readonly leaseStep?: number;
  /** How long a write waits in memory before it is persisted (default 20 ms). */
  readonly flushDelayMs?: number;
  /** Writes not yet persisted at most; a writer past it waits for a flush (default 1,000). */
  readonly maxPending?: number;
  /** Recent changes kept for watches (default 1,024). */
  readonly ringSize?: number;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Start in write-through mode (see `writeThrough`). */
  readonly writeThrough?: boolean;
}

/** What the store keeps across runs. */
export interface Lease {
  /** This store's revision = the store behind's + offset. */
  readonly offset: number;
  /** No revision above it has been handed out. */
  readonly lease: number;
  /** The run closed with everything persisted. */
  readonly clean: boolean;
}

interface Meta {
  readonly create: number;
  readonly mod: number;
}

const shift = (kv: KeyValue, by: number): KeyValue => ({
  key: kv.key,
  value: kv.value,
  createRevision: kv.createRevision + by,
  modRevision: kv.modRevision + by,
});

export class WriteBehindStore implements Store {
  readonly backend: Store['backend'];
  /**
   * While true, a write still reaches watchers at once but resolves only once it is persisted: a bulk
   * load (the wrapper's initial sync) then goes at the pace of the store behind instead of piling up in
   * memory, which also keeps the process's heap from growing to match.
   */
  writeThrough: boolean;
  private readonly meta = new Map<string, Meta>();
  private readonly queue: PersistQueue;
  private readonly ring: WatchEvent[] = [];
  private ringBase: number;
  private head: number;
  private compactedRev: number;
  /** No revision above it is handed out; kept durably. */
  private lease = 0;
  private isClosed = false;
  private readonly changed = new ChangeSignal();
  private readonly ringSize: number;
  private readonly leaseStep: number;
  private readonly saveLease: (lease: Lease) => void;
  private readonly log: (msg: string, fields?: Record<string, unknown>) => void;

  private constructor(
    private readonly inner: Store,
    /** This store's revision = the store behind's + offset. */
    readonly offset: number,
    innerHead: number,
    innerCompacted: number,
    opts: WriteBehindOptions,
  ) {
    this.backend = inner.backend;
    this.writeThrough = opts.writeThrough ?? false;
    this.head = innerHead + offset;
    this.ringBase = this.head + 1;
    this.compactedRev = Math.max(this.head, innerCompacted + offset);
    this.queue = new PersistQueue(inner, offset, opts);
    this.ringSize = opts.ringSize ?? 1_024;
    this.leaseStep = opts.leaseStep ?? 10_000;
    this.saveLease = opts.saveLease;
    this.log = opts.log ?? (() => undefined);
  }

  static async open(opts: WriteBehindOptions): Promise<WriteBehindStore> {
    const previous = opts.loadLease() ?? { offset: 0, lease: 0, clean: true };
    const { offset: before, lease } = previous;
    if (![before, lease].every((n) => Number.isSafeInteger(n) && n >= 0) || lease < before)
      throw new StoreError('Corrupt', `the kept revision lease is not valid: ${JSON.stringify(previous)}`);
    const innerHead = await opts.inner.currentRevision();
    // After a crash: every revision the previous run served is at most its lease, and the lowest
    // revision an object can have here is 1 + offset.
    const offset = previous.clean ? before : lease;
    const store = new WriteBehindStore(
      opts.inner,
      offset,
      innerHead,
      await opts.inner.compactRevision(),
      opts,
    );
    store.renewLease();
    let cont: string | undefined;
    do {
      const page = await opts.inner.list('/', {
        limit: 1_000,
        ...(cont === undefined ? { revision: innerHead } : { continue: cont }),
      });
      for (const kv of page.items)
        store.meta.set(kv.key, { create: kv.createRevision + offset, mod: kv.modRevision + offset });
      cont = page.continue;
    } while (cont !== undefined);
    return store;
  }

  // ---- the change log, for cursorLoop (changeLog below)

  private compacted(): number {
    return this.compactedRev;
  }

  private closed(): boolean {
    return this.isClosed;
  }

  private nextChange(): Promise<void> {
    return this.changed.next();
  }

  private readAfter(
    prefix: string,
    after: number,
    max: number,
  ): { events: WatchEvent[]; through: number } | undefined {
    if (after + 1 < this.ringBase) return undefined;
    const events: WatchEvent[] = [];
    const last = Math.min(this.head, after + max);
    for (let r = after + 1; r <= last; r++) {
      const ev = this.ring[r - this.ringBase]!;
      if (ev.key.startsWith(prefix)) events.push(ev);
    }
    return { events, through: Math.max(after, last) };
  }

  // ---- writes

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    await this.room();
    if (this.meta.has(key)) throw new StoreError('AlreadyExists', `key ${key} already exists`, { key });
    const rev = this.next();
    this.meta.set(key, { create: rev, mod: rev });
    this.apply(
      { kind: 'create', key, value, rev },
      { type: 'PUT', key, value, revision: rev, createRevision: rev },
    );
    if (this.writeThrough) await this.queue.settled();
    return { key, value, createRevision: rev, modRevision: rev };
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    checkRevision('expectedRevision', expectedRevision);
    await this.room();
    const cur = this.meta.get(key);
    if (cur === undefined) throw new StoreError('NotFound', `key ${key} not found`, { key });
    if (cur.mod !== expectedRevision) throw conflictError(key, expectedRevision, cur.mod);
    const rev = this.next();
    this.meta.set(key, { create: cur.create, mod: rev });
    this.apply(
      { kind: 'update', key, value, expected: cur.mod, rev },
      { type: 'PUT', key, value, revision: rev, createRevision: cur.create },
    );
    if (this.writeThrough) await this.queue.settled();
    return { key, value, createRevision: cur.create, modRevision: rev };
  }

  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    checkKey(key);
    if (expectedRevision !== undefined) checkRevision('expectedRevision', expectedRevision);
    await this.room();
    for (;;) {
      const cur = this.meta.get(key);
      if (cur === undefined) throw new StoreError('NotFound', `key ${key} not found`, { key });
      if (expectedRevision !== undefined && cur.mod !== expectedRevision)
        throw conflictError(key, expectedRevision, cur.mod);
      // The DELETE event carries the last value: in memory if not yet persisted, else read back.
      let value = this.queue.unpersisted(key);
      if (value === undefined) {
        await this.queue.persisted();
        value = (await this.inner.get(key))?.value;
        if (this.meta.get(key) !== cur) continue; // changed meanwhile: judge again
        if (value === undefined) throw this.queue.diverged(`key ${key} is not in the store behind`);
      }
      const rev = this.next();
      this.meta.delete(key);
      this.apply(
        { kind: 'delete', key, expected: cur.mod, rev },
        { type: 'DELETE', key, value, revision: rev, createRevision: cur.create },
      );
      if (this.writeThrough) await this.queue.settled();
      return { key, value, createRevision: cur.create, modRevision: rev };
    }
  }

  private next(): number {
    this.ensureUsable();
    if (this.head + 1 > this.lease) this.renewLease();
    return ++this.head;
  }

  /** Keeps a lease a step above the head (a write fails with Unavailable if it cannot be kept). */
  private renewLease(): void {
    const lease = this.head + this.leaseStep;
    try {
      this.saveLease({ offset: this.offset, lease, clean: false });
    } catch (err) {
      throw new StoreError(
        'Unavailable',
        `cannot keep the revision lease: ${String(err)}`,
        {},
        { cause: err },
      );
    }
    this.lease = lease;
  }

  private apply(op: Op, ev: WatchEvent): void {
    this.ring.push(ev);
    if (this.ring.length > this.ringSize) {
      const drop = this.ring.length - this.ringSize;
      this.ring.splice(0, drop);
      this.ringBase += drop;
    }
    this.queue.add(op);
    // Watchers wake at once (a watcher asleep since the last change reads everything written since, in
    // one batch). Waking them later, e.g. once per turn, would let a burst outrun the ring.
    this.changed.fire();
  }

  /** Waits while as many writes as allowed are unpersisted. */
  private async room(): Promise<void> {
    this.ensureUsable();
    await this.queue.room();
    this.ensureUsable();
  }

  private ensureUsable(): void {
    if (this.isClosed) throw new StoreError('Closed', 'store is closed');
  }

  // ---- reads: everything persisted first, then the store behind, in this store's revisions

  private readRevision(revision: number | undefined): number | undefined {
    if (revision === undefined || revision === 0) return undefined;
    checkRevision('revision', revision);
    if (revision > this.head) throw futureRevisionError(revision, this.head);
    if (revision < this.compactedRev) throw compactedError(revision, this.compactedRev);
    return revision - this.offset;
  }

  async get(key: string, opts: GetOptions = {}): Promise<KeyValue | undefined> {
    this.ensureUsable();
    checkKey(key);
    const at = this.readRevision(opts.revision);
    await this.queue.persisted();
    const kv = await this.inner.get(key, at === undefined ? {} : { revision: at });
    return kv === undefined ? undefined : shift(kv, this.offset);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.ensureUsable();
    checkPrefix(prefix);
    checkLimit(opts.limit);
    const o = this.offset;
    let inner: ListOptions = opts.limit === undefined ? {} : { limit: opts.limit };
    if (opts.continue !== undefined && opts.continue !== '') {
      const token = decodeContinue(opts.continue, prefix);
      this.readRevision(token.rev);
      inner = { ...inner, continue: encodeContinue({ ...token, rev: token.rev - o }) };
    } else {
      const at = this.readRevision(opts.revision);
      if (at !== undefined) inner = { ...inner, revision: at };
    }
    await this.queue.persisted();
    const res = await this.inner.list(prefix, inner);
    const out: ListResult = { revision: res.revision + o, items: res.items.map((kv) => shift(kv, o)) };
    if (res.continue === undefined) return out;
    const next = decodeContinue(res.continue, prefix);
    return { ...out, continue: encodeContinue({ ...next, rev: next.rev + o }) };
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<WatchEvent[]> {
    this.ensureUsable();
    checkPrefix(prefix);
    checkRevision('fromRevision', fromRevision);
    checkWatchStart(this.changeLog, fromRevision);
    return this.watchFrom(prefix, fromRevision, signal);
  }

  private async *watchFrom(prefix: string, from: number, signal: AbortSignal): AsyncGenerator<WatchEvent[]> {
    const o = this.offset;
    let cursor = from;
    for (;;) {
      const behind = yield* cursorLoop(this.changeLog, prefix, cursor, signal);
      if (behind === undefined) return;
      cursor = behind;
      // Behind the ring (a burst outran this watcher): catch up from the store behind, once everything
      // is persisted, then go back to the ring.
      await this.queue.persisted();
      if (cursor + 1 < this.ringBase) {
        const inner = new AbortController();
        const stop = (): void => inner.abort();
        signal.addEventListener('abort', stop, { once: true });
        try {
          for await (const batch of this.inner.watch(prefix, cursor - o, inner.signal)) {
            yield batch.map((e) => ({
              ...e,
              revision: e.revision + o,
              createRevision: e.createRevision + o,
            }));
            cursor = batch[batch.length - 1]!.revision + o;
            if (cursor + 1 >= this.ringBase) break;
          }
        } finally {
          inner.abort();
          signal.removeEventListener('abort', stop);
        }
      }
      if (signal.aborted || this.isClosed) return;
    }
  }

  /** The ChangeLog view of this store (its `head` is a method there). */
  private readonly changeLog: ChangeLog = {
    head: () => this.head,
    compacted: () => this.compacted(),
    closed: () => this.closed(),
    nextChange: () => this.nextChange(),
    readAfter: (prefix, after, max) => this.readAfter(prefix, after, max),
  };

  async currentRevision(): Promise<number> {
    this.ensureUsable();
    return this.head;
  }

  async compactRevision(): Promise<number> {
    this.ensureUsable();
    return this.compactedRev;
  }

  async compact(revision: number): Promise<void> {
    this.ensureUsable();
    checkRevision('revision', revision);
    if (revision > this.head) throw futureRevisionError(revision, this.head, 'compaction revision');
    if (revision <= this.compactedRev) return;
    await this.queue.persisted();
    await this.inner.compact(revision - this.offset);
    this.compactedRev = Math.max(this.compactedRev, revision);
  }

  /** Persists what is pending (unless persistence broke), then closes the store behind. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    let clean = true;
    try {
      await this.queue.persisted();
    } catch (err) {
      clean = false;
      this.log('closing with writes not persisted', { error: String(err) });
    }
    this.isClosed = true;
    this.queue.stop();
    this.changed.fire();
    await this.inner.close();
    // The next run may keep this one's revisions.
    if (clean) this.saveLease({ offset: this.offset, lease: this.lease, clean: true });
  }
}
