// The reference Store: everything in memory, written for obviousness rather than speed. Unit tests of
// higher layers use it; the conformance suite holds the sqlite and etcd backends to its behaviour.
import { cursorWatch, type ChangeLog } from '../cursor-watch.js';
import { futureRevisionError, resolveReadRevision } from '../revisions.js';
import { ChangeSignal } from '../change-signal.js';
import {
  checkCreate,
  checkDelete,
  checkKey,
  checkRevision,
  checkUpdate,
  checkWatch,
  compareKeys,
  listPage,
  listStart,
} from '../keys.js';
import {
  alreadyExistsError,
  conflictError,
  notFoundError,
  StoreError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type WatchEvent,
} from '../store.js';

interface Version {
  readonly revision: number;
  readonly createRevision: number;
  /** undefined marks a delete. */
  readonly value: Uint8Array | undefined;
}

export class MemoryStore implements Store, ChangeLog {
  readonly backend = 'memory' as const;
  private rev = 0;
  private compactedRev = 0;
  /** Every version of every key since the compacted revision, oldest first. */
  private readonly versions = new Map<string, Version[]>();
  /** Keys in UTF-8 byte order (including deleted ones that still have history). */
  private sortedKeys: string[] = [];
  /** The change log: log[i] has revision logBase + i. */
  private log: WatchEvent[] = [];
  private logBase = 1;
  private isClosed = false;
  private readonly changed = new ChangeSignal();

  // ChangeLog, for cursorWatch
  head(): number {
    return this.rev;
  }
  compacted(): number {
    return this.compactedRev;
  }
  closed(): boolean {
    return this.isClosed;
  }
  nextChange(): Promise<void> {
    return this.changed.next();
  }
  readAfter(prefix: string, after: number, max: number): { events: WatchEvent[]; through: number } {
    const events: WatchEvent[] = [];
    const last = Math.min(this.rev, after + max);
    for (let r = after + 1; r <= last; r++) {
      const ev = this.log[r - this.logBase];
      if (ev !== undefined && ev.key.startsWith(prefix)) events.push(ev);
    }
    return { events, through: Math.max(after, last) };
  }

  private ensureOpen(): void {
    if (this.isClosed) throw new StoreError('Closed', 'store is closed');
  }

  private checkReadRevision(revision: number | undefined): number {
    return resolveReadRevision(revision, this.rev, this.compactedRev);
  }

  private versionAt(key: string, revision: number): Version | undefined {
    const vs = this.versions.get(key);
    if (vs === undefined) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) {
      if (vs[i]!.revision <= revision) return vs[i];
    }
    return undefined;
  }

  private latest(key: string): Version | undefined {
    const vs = this.versions.get(key);
    return vs?.[vs.length - 1];
  }

  private append(key: string, v: Version, deletedValue?: Uint8Array): void {
    let vs = this.versions.get(key);
    if (vs === undefined) {
      vs = [];
      this.versions.set(key, vs);
      this.insertSorted(key);
    }
    vs.push(v);
    this.log.push({
      type: v.value === undefined ? 'DELETE' : 'PUT',
      key,
      value: v.value ?? deletedValue ?? new Uint8Array(),
      revision: v.revision,
      createRevision: v.createRevision,
    });
    this.rev = v.revision;
    this.changed.fire();
  }

  private insertSorted(key: string): void {
    let lo = 0;
    let hi = this.sortedKeys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.sortedKeys[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.sortedKeys.splice(lo, 0, key);
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.ensureOpen();
    checkKey(key);
    const at = this.checkReadRevision(opts.revision);
    const v = this.versionAt(key, at);
    if (v?.value === undefined) return undefined;
    return { key, value: v.value, createRevision: v.createRevision, modRevision: v.revision };
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.ensureOpen();
    const { revision, after } = listStart(prefix, opts);
    const at = this.checkReadRevision(revision);
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
    const items: KeyValue[] = [];
    let more = false;
    for (const key of this.sortedKeys) {
      if (!key.startsWith(prefix)) continue;
      if (after !== undefined && compareKeys(key, after) <= 0) continue;
      const v = this.versionAt(key, at);
      if (v?.value === undefined) continue;
      if (items.length >= limit) {
        more = true;
        break;
      }
      items.push({ key, value: v.value, createRevision: v.createRevision, modRevision: v.revision });
    }
    return listPage(at, prefix, items, more);
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    this.ensureOpen();
    checkCreate(key, value);
    const cur = this.latest(key);
    if (cur?.value !== undefined) throw alreadyExistsError(key);
    const revision = this.rev + 1;
    const copy = Uint8Array.from(value);
    this.append(key, { revision, createRevision: revision, value: copy });
    return { key, value: copy, createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    this.ensureOpen();
    checkUpdate(key, value, expectedRevision);
    const cur = this.latest(key);
    if (cur?.value === undefined) throw notFoundError(key);
    if (cur.revision !== expectedRevision) throw conflictError(key, expectedRevision, cur.revision);
    const revision = this.rev + 1;
    const copy = Uint8Array.from(value);
    this.append(key, { revision, createRevision: cur.createRevision, value: copy });
    return { key, value: copy, createRevision: cur.createRevision, modRevision: revision };
  }

  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    this.ensureOpen();
    checkDelete(key, expectedRevision);
    const cur = this.latest(key);
    if (cur?.value === undefined) throw notFoundError(key);
    if (expectedRevision !== undefined && cur.revision !== expectedRevision) {
      throw conflictError(key, expectedRevision, cur.revision);
    }
    const revision = this.rev + 1;
    this.append(key, { revision, createRevision: cur.createRevision, value: undefined }, cur.value);
    return { key, value: cur.value, createRevision: cur.createRevision, modRevision: revision };
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<WatchEvent[]> {
    this.ensureOpen();
    checkWatch(prefix, fromRevision);
    return cursorWatch(this, prefix, fromRevision, signal);
  }

  async currentRevision(): Promise<number> {
    this.ensureOpen();
    return this.rev;
  }

  async compactRevision(): Promise<number> {
    this.ensureOpen();
    return this.compactedRev;
  }

  async compact(revision: number): Promise<void> {
    this.ensureOpen();
    checkRevision('revision', revision);
    if (revision > this.rev) {
      throw futureRevisionError(revision, this.rev, 'compaction revision');
    }
    if (revision <= this.compactedRev) return;
    this.compactedRev = revision;
    for (const [key, vs] of this.versions) {
      // Keep the version visible at `revision` (if live) and everything after it.
      let keepFrom = vs.length;
      for (let i = vs.length - 1; i >= 0; i--) {
        keepFrom = i;
        if (vs[i]!.revision <= revision) break;
      }
      const kept = vs
        .slice(keepFrom)
        .filter((v, i) => i > 0 || v.revision > revision || v.value !== undefined);
      if (kept.length === 0) this.versions.delete(key);
      else this.versions.set(key, kept);
    }
    this.sortedKeys = this.sortedKeys.filter((k) => this.versions.has(k));
    // The change at `revision` itself stays: a watch from revision-1 may still ask for it (etcd's rule).
    const drop = Math.max(0, revision - this.logBase);
    this.log = this.log.slice(drop);
    this.logBase += drop;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.changed.fire();
  }
}
