// The embedded Store: one SQLite file in WAL mode, opened by exactly one process, written through a
// group-commit queue. Design and trade-offs: docs/design/storage.md.
//
// - The log is append-only; the row id is the revision (AUTOINCREMENT: never reused).
// - Compare-and-swap is enforced by SQLite itself: each write is one INSERT … SELECT whose WHERE holds
//   the precondition, and UNIQUE(name, prev_revision) forbids two successors of one revision.
// - Group commit: every write that arrives before the queue is flushed (one event-loop turn) shares
//   one transaction and so one fsync; a write is acknowledged only after its COMMIT returned.
// - Watch reads an in-memory tail of recent changes, and the table only for watchers that are behind it.
import Database from 'better-sqlite3';
import { cursorWatch, type ChangeLog } from '../cursor-watch.js';
import { futureRevisionError, resolveReadRevision } from '../revisions.js';
import {
  checkCreate,
  checkDelete,
  checkKey,
  checkRevision,
  checkUpdate,
  checkWatch,
  listPage,
  listStart,
  prefixEnd,
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
import { TailRing } from '../tail-ring.js';
import { dbPath, inspectFile, openError, prepareDataDir, validateExisting } from './sqlite-files.js';
import { prepareStatements, SCHEMA_SQL, type Row, type Statements } from './sqlite-sql.js';
import { errText } from '../../api/err-text.js';

export interface SqliteStoreOptions {
  /** Directory holding svcplane.db; created if missing. */
  readonly dataDir: string;
  /** FULL (default) acknowledges a write only once it is on disk; NORMAL may lose the newest writes on OS crash. */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** Run PRAGMA quick_check on an existing file before using it (default true). */
  readonly verify?: boolean;
  /** Most writes one transaction takes (default 1024). */
  readonly maxBatch?: number;
  /** Rows one compaction transaction deletes (default 500), so writers never wait long behind it. */
  readonly compactBatch?: number;
  /** Changes kept in memory for watchers (default 20,000). */
  readonly tailSize?: number;
  /**
   * SQLite's page cache for this connection, at most, in KiB (default: better-sqlite3's build default,
   * 16,000). It fills as the file is read and written and is not given back until the store closes.
   */
  readonly cacheKiB?: number;
}

type Op =
  | { kind: 'create'; key: string; name: Buffer; value: Buffer }
  | { kind: 'update'; key: string; name: Buffer; value: Buffer; expected: number }
  | { kind: 'delete'; key: string; name: Buffer; expected: number | undefined };

interface Pending {
  op: Op;
  resolve: (kv: KeyValue) => void;
  reject: (err: unknown) => void;
}

export class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly file: string;
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private head: number;
  private compacted: number;
  private readonly tail: TailRing;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private isClosed = false;
  private idle: Promise<void> = Promise.resolve();
  private readonly maxBatch: number;
  private readonly compactBatch: number;
  /** The page cache's limit in KiB, as SQLite reports it. */
  get cacheKiB(): number {
    const n = this.db.pragma('cache_size', { simple: true }) as number;
    // Negative: KiB; positive: pages.
    return n < 0 ? -n : (n * (this.db.pragma('page_size', { simple: true }) as number)) / 1024;
  }
  /** Counters for tests and metrics: transactions committed and writes they carried. */
  readonly stats = { commits: 0, writes: 0, compactedRows: 0 };

  static open(opts: SqliteStoreOptions): SqliteStore {
    // SQLite reads the pragma as a 32-bit integer (a larger one would quietly mean no limit at all).
    if (
      opts.cacheKiB !== undefined &&
      (!Number.isSafeInteger(opts.cacheKiB) || opts.cacheKiB < 1 || opts.cacheKiB > 2 ** 31 - 1)
    )
      throw new Error(
        `sqlite store: cacheKiB must be a positive integer up to 2147483647, not ${opts.cacheKiB}`,
      );
    prepareDataDir(opts.dataDir);
    const file = dbPath(opts.dataDir);
    const state = inspectFile(file);
    if (state === 'sqlite') validateExisting(file, opts.verify ?? true, (f, o) => new Database(f, o));
    let db: Database.Database | undefined;
    try {
      db = new Database(file);
      db.pragma('busy_timeout = 200');
      // One process owns the file: a second apiserver on the same file would never see the first
      // one's writes in its watch tail. EXCLUSIVE locking makes the second open fail fast instead.
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
      db.pragma('temp_store = MEMORY');
      db.pragma('journal_size_limit = 67108864');
      if (opts.cacheKiB !== undefined) db.pragma(`cache_size = -${opts.cacheKiB}`);
      // A new file, or an empty SQLite database (validation allowed it only with no tables), gets the
      // schema; BEGIN IMMEDIATE takes the exclusive lock now and keeps it.
      const hasSchema = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kv'`).get();
      db.exec(hasSchema ? 'BEGIN IMMEDIATE; COMMIT;' : `BEGIN IMMEDIATE; ${SCHEMA_SQL}; COMMIT;`);
      return new SqliteStore(file, db, opts);
    } catch (err) {
      db?.close();
      throw openError(file, err);
    }
  }

  private constructor(file: string, db: Database.Database, opts: SqliteStoreOptions) {
    this.file = file;
    this.db = db;
    this.maxBatch = opts.maxBatch ?? 1024;
    this.compactBatch = opts.compactBatch ?? 500;
    this.stmt = prepareStatements(db);
    const seq = db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'kv'`).get() as
      { seq: number } | undefined;
    this.head = seq?.seq ?? 0;
    const meta = db.prepare(`SELECT value FROM meta WHERE key = 'compact_revision'`).get() as {
      value: number;
    };
    this.compacted = meta.value;
    this.tail = new TailRing(opts.tailSize ?? 20_000, this.head);
  }

  // ---- reads ----

  private ensureOpen(): void {
    if (this.isClosed) throw new StoreError('Closed', 'store is closed');
  }

  private readRevision(revision: number | undefined): number {
    return resolveReadRevision(revision, this.head, this.compacted);
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    this.ensureOpen();
    checkKey(key);
    const at = this.readRevision(opts.revision);
    const row = this.stmt.at.get(Buffer.from(key), at);
    return row === undefined || row.deleted === 1 ? undefined : toKeyValue(row);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.ensureOpen();
    const { revision, after } = listStart(prefix, opts);
    const at = this.readRevision(revision);
    const start =
      after === undefined ? Buffer.from(prefix) : Buffer.concat([Buffer.from(after), Buffer.from([0])]);
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : -1;
    const rows = this.stmt.list.all({
      start,
      end: prefixEnd(Buffer.from(prefix)),
      rev: at,
      limit: limit > 0 ? limit + 1 : -1,
    });
    const more = limit > 0 && rows.length > limit;
    return listPage(at, prefix, (more ? rows.slice(0, limit) : rows).map(toKeyValue), more);
  }

  async currentRevision(): Promise<number> {
    this.ensureOpen();
    return this.head;
  }

  async compactRevision(): Promise<number> {
    this.ensureOpen();
    return this.compacted;
  }

  // ---- writes (group commit) ----

  create(key: string, value: Uint8Array): Promise<KeyValue> {
    return this.enqueue(() => {
      checkCreate(key, value);
      return { kind: 'create', key, name: Buffer.from(key), value: asBuffer(value) };
    });
  }

  update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    return this.enqueue(() => {
      checkUpdate(key, value, expectedRevision);
      return {
        kind: 'update',
        key,
        name: Buffer.from(key),
        value: asBuffer(value),
        expected: expectedRevision,
      };
    });
  }

  delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    return this.enqueue(() => {
      checkDelete(key, expectedRevision);
      return { kind: 'delete', key, name: Buffer.from(key), expected: expectedRevision };
    });
  }

  private enqueue(build: () => Op): Promise<KeyValue> {
    return new Promise<KeyValue>((resolve, reject) => {
      this.ensureOpen();
      this.queue.push({ op: build(), resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.idle = new Promise<void>((done) =>
          setImmediate(() => {
            try {
              this.flush();
            } finally {
              done();
            }
          }),
        );
      }
    });
  }

  /** Commits everything queued so far as one transaction (in chunks of maxBatch). */
  private flush(): void {
    this.flushScheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.commitBatch(batch);
    }
  }

  private commitBatch(batch: Pending[]): void {
    const outcomes: Array<{ ok: true; kv: KeyValue; event: WatchEvent } | { ok: false; err: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      for (const p of batch)
        p.reject(new StoreError('Unavailable', `cannot write: ${errText(err)}`, {}, { cause: err }));
      return;
    }
    let failure: unknown;
    for (const p of batch) {
      try {
        outcomes.push({ ok: true, ...this.apply(p.op) });
      } catch (err) {
        // A failed precondition only fails its own write; a storage failure (I/O error, disk full)
        // may have rolled the whole transaction back, so it fails the batch.
        if (err instanceof StoreError && err.code === 'Unavailable') {
          failure = err;
          break;
        }
        outcomes.push({ ok: false, err });
      }
    }
    try {
      if (failure !== undefined) throw failure;
      this.db.exec('COMMIT');
    } catch (err) {
      // Nothing of this batch is durable: roll back and fail every write in it.
      try {
        this.db.exec('ROLLBACK');
      } catch {
        /* already rolled back by SQLite */
      }
      const fail =
        err instanceof StoreError
          ? err
          : new StoreError('Unavailable', `commit failed: ${errText(err)}`, {}, { cause: err });
      for (const p of batch) p.reject(fail);
      return;
    }
    this.stats.commits++;
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) {
        this.stats.writes++;
        this.head = o.kv.modRevision;
        this.tail.push(o.event);
      }
    });
    this.tail.wake();
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.kv);
      else p.reject(o.err);
    });
  }

  /** Applies one write inside the open transaction; throws the StoreError the caller should see. */
  private apply(op: Op): { kv: KeyValue; event: WatchEvent } {
    let info: Database.RunResult;
    try {
      if (op.kind === 'create') info = this.stmt.create.run({ name: op.name, value: op.value });
      else if (op.kind === 'update') {
        info = this.stmt.update.run({ name: op.name, value: op.value, expected: op.expected });
      } else {
        const expected = op.expected ?? this.stmt.latest.get(op.name)?.id ?? 0;
        info = this.stmt.remove.run({ name: op.name, expected });
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw this.explain(op);
      throw new StoreError(
        'Unavailable',
        `write of ${op.key} failed: ${errText(err)}`,
        { key: op.key },
        { cause: err },
      );
    }
    if (info.changes !== 1) throw this.explain(op);
    const row = this.stmt.byId.get(Number(info.lastInsertRowid))!;
    return { kv: toKeyValue(row), event: toEvent(row) };
  }

  /** Why a write's precondition failed, read inside the same transaction. */
  private explain(op: Op): StoreError {
    const cur = this.stmt.latest.get(op.name);
    const live = cur !== undefined && cur.deleted === 0;
    if (op.kind === 'create') {
      return live
        ? alreadyExistsError(op.key)
        : new StoreError('Conflict', `key ${op.key} changed concurrently`, { key: op.key });
    }
    if (!live) return notFoundError(op.key);
    return conflictError(op.key, op.expected ?? 0, cur.id);
  }

  // ---- watch ----

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<WatchEvent[]> {
    this.ensureOpen();
    checkWatch(prefix, fromRevision);
    const log: ChangeLog = {
      head: () => this.head,
      compacted: () => this.compacted,
      closed: () => this.isClosed,
      nextChange: () => this.tail.nextChange(),
      readAfter: (p, after, max) => this.readAfter(p, after, max),
    };
    return cursorWatch(log, prefix, fromRevision, signal);
  }

  private readAfter(prefix: string, after: number, max: number): { events: WatchEvent[]; through: number } {
    if (this.tail.covers(after)) return this.tail.readAfter(prefix, after, max);
    // Behind the in-memory tail: read the table, up to where the tail starts.
    const upto = Math.min(after + max, this.tail.floor, this.head);
    const p = Buffer.from(prefix);
    const rows = this.stmt.range.all({ after, upto, start: p, end: prefixEnd(p) });
    return { events: rows.map(toEvent), through: Math.max(after, upto) };
  }

  // ---- compaction ----

  async compact(revision: number): Promise<void> {
    this.ensureOpen();
    checkRevision('revision', revision);
    await this.idle;
    this.ensureOpen(); // close() may have run while we waited
    if (revision > this.head) {
      throw futureRevisionError(revision, this.head, 'compaction revision');
    }
    if (revision <= this.compacted) return;
    // Record the new floor first: from here on, reads below it fail cleanly instead of seeing holes.
    this.stmt.setCompact.run(revision);
    this.compacted = revision;
    let cursor = 0;
    for (;;) {
      if (this.isClosed) return;
      const ids = this.stmt.compactable.all({ cursor, target: revision, limit: this.compactBatch });
      if (ids.length === 0) return;
      this.db.transaction(() => {
        for (const { id } of ids) this.stmt.deleteId.run(id);
      })();
      this.stats.compactedRows += ids.length;
      cursor = ids[ids.length - 1]!.id;
      // Let queued writes commit between batches.
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    await this.idle;
    if (this.queue.length > 0) this.flush();
    this.isClosed = true;
    this.tail.wake();
    this.db.close();
  }
}

/** A log row as the change it records (a tombstone carries the deleted value). */
function toEvent(row: Row): WatchEvent {
  return {
    type: row.deleted === 1 ? 'DELETE' : 'PUT',
    key: row.name.toString('utf8'),
    value: row.value,
    revision: row.id,
    createRevision: row.create_revision,
  };
}

function toKeyValue(row: Row): KeyValue {
  return {
    key: row.name.toString('utf8'),
    value: row.value,
    createRevision: row.create_revision,
    modRevision: row.id,
  };
}

const asBuffer = (v: Uint8Array): Buffer =>
  Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
