// The Store on etcd v3, for when one machine is not enough: several apiservers share one etcd cluster,
// and etcd's revision is the resourceVersion for all of them.
//
// - Keys live under a prefix (default /registry), as kube-apiserver lays them out.
// - Every write is one txn whose compares carry the precondition (mod_revision for CAS).
// - While etcd fails over, safe requests are retried within a budget (etcd-retry.ts): reads, creates and
//   compare-and-swap writes. When an earlier attempt of a write may have landed, a retry that fails its
//   compare reads back to tell our own write from another's, so a client never sees a false
//   AlreadyExists for its own create. Other writes are retried only when they provably never reached
//   etcd. A failure that outlasts the budget surfaces as Unavailable.
// - Watch starts at a revision with prev_kv (DELETE events carry the last value). A disconnect ends the
//   watch with Unavailable instead of letting the client library resume on its own: it resumes from
//   the response header revision, which can skip events it had not yet delivered.
import { circuitBreaker, ConsecutiveBreaker, handleWhen, noop, retry } from 'cockatiel';
import { Etcd3, type IKeyValue, type IOptions } from 'etcd3';
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
import { errText } from '../../api/err-text.js';
import { futureRevisionError } from '../revisions.js';
import { mapError, unreachableReason } from './etcd-errors.js';
import {
  DEFAULT_RETRY_BUDGET_MS,
  Retrier,
  transientFailure,
  type RetryReason,
  type Safety,
} from './etcd-retry.js';
import { rawWatchOpener } from './etcd-raw-watch.js';
import { etcdWatch, WatchHub, type OpenRawWatch } from './etcd-watch.js';
import {
  alreadyExistsError,
  conflictError,
  notFoundError,
  StoreError,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Store,
  type StoreRetries,
  type WatchEvent,
} from '../store.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. ["http://127.0.0.1:2379"] (kube-apiserver's --etcd-servers). */
  readonly endpoints: readonly string[];
  /** Prefix for every key (kube-apiserver's --etcd-prefix); default "/registry". */
  readonly prefix?: string;
  /** How long open() waits for etcd to answer, and each request's deadline (default 5000 ms). */
  readonly timeoutMs?: number;
  /** Most events a watch buffers for a slow consumer before ending with WatchOverflow (default 100,000). */
  readonly maxWatchBacklog?: number;
  /** Changes the shared watch keeps in memory for local watchers (default 20,000). */
  readonly watchCacheSize?: number;
  readonly credentials?: { rootCertificate: Buffer; privateKey?: Buffer; certChain?: Buffer };
  readonly auth?: { username: string; password: string };
  /** How long a safe request is retried while etcd fails over (default 15 s; 0: never). */
  readonly retryBudgetMs?: number;
}

/**
 * A call that failed like this never reached etcd (no connection, or a breaker kept it back), so
 * trying it at once on another endpoint is safe even for a write.
 */
const neverSent = (err: Error): boolean => transientFailure(err)?.reason === 'member_down';

/** With several endpoints, a dead one is skipped for 5 s and its never-sent calls go to another. */
function failover(endpoints: number): NonNullable<IOptions['faultHandling']> {
  if (endpoints <= 1) return { global: noop, host: () => noop };
  return {
    global: retry(handleWhen(neverSent), { maxAttempts: endpoints - 1 }),
    host: () =>
      circuitBreaker(handleWhen(neverSent), { halfOpenAfter: 5000, breaker: new ConsecutiveBreaker(1) }),
  };
}

/** kube-apiserver's compactor records the last compaction here, outside any prefix, for every apiserver. */
const COMPACT_REV_KEY = Buffer.from('compact_rev_key');

export class EtcdStore implements Store {
  readonly backend = 'etcd' as const;
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly maxBacklog: number;
  private isClosed = false;
  /** One per open watch; close() aborts them all. */
  private readonly watchControllers = new Set<AbortController>();
  private readonly hub: WatchHub;
  private readonly openRaw: OpenRawWatch;
  private readonly retrier: Retrier;
  private readonly retryCounts = new Map<string, { operation: string; reason: RetryReason; count: number }>();

  /** How many shared etcd watches this store has opened (one, unless one failed and was restarted). */
  get sharedWatchesOpened(): number {
    return this.hub.opened;
  }

  /** Connects and checks that etcd answers within the timeout; rejects with Unavailable otherwise. */
  static async open(opts: EtcdStoreOptions): Promise<EtcdStore> {
    if (opts.endpoints.length === 0) throw new StoreError('InvalidArgument', 'no etcd endpoints given');
    for (const e of opts.endpoints) {
      if (!/^https?:\/\/[^/]+\/?$/.test(e)) {
        throw new StoreError(
          'InvalidArgument',
          `invalid etcd endpoint ${JSON.stringify(e)}: want http(s)://host:port`,
        );
      }
    }
    const store = new EtcdStore(opts);
    try {
      // Once, without retries: an etcd that does not answer fails start-up within the timeout.
      await store.client.kv.range({ key: store.phys('/'), count_only: true });
    } catch (err) {
      await store.close();
      throw new StoreError(
        'Unavailable',
        `etcd at ${opts.endpoints.join(',')} is unreachable: ${unreachableReason(err, store.timeoutMs)}`,
        {},
        { cause: err },
      );
    }
    return store;
  }

  /** A store over a given client (for tests: one that fails on cue), without open()'s first contact. */
  static overClient(client: Etcd3, opts: Omit<EtcdStoreOptions, 'endpoints'>): EtcdStore {
    return new EtcdStore({ ...opts, endpoints: [] }, client);
  }

  private constructor(opts: EtcdStoreOptions, client?: Etcd3) {
    this.prefix = (opts.prefix ?? '/registry').replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.maxBacklog = opts.maxWatchBacklog ?? 100_000;
    this.retrier = new Retrier({
      budgetMs: opts.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS,
      onRetry: (operation, reason) => {
        const id = `${operation} ${reason}`;
        const c = this.retryCounts.get(id) ?? { operation, reason, count: 0 };
        this.retryCounts.set(id, { ...c, count: c.count + 1 });
      },
    });
    const timeoutMs = this.timeoutMs;
    this.client =
      client ??
      new Etcd3({
        hosts: [...opts.endpoints],
        dialTimeout: timeoutMs,
        ...(opts.credentials ? { credentials: opts.credentials } : {}),
        ...(opts.auth ? { auth: opts.auth } : {}),
        // Values may be 1.5 MiB and a watch response carries value and prev_kv for several events.
        grpcOptions: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
        faultHandling: failover(opts.endpoints.length),
        defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeoutMs }),
      });
    this.openRaw = rawWatchOpener({
      client: this.client,
      timeoutMs: this.timeoutMs,
      phys: (key) => this.phys(key),
      logical: (k) => this.logical(k),
      ensureOpen: () => this.ensureOpen(),
    });
    this.hub = new WatchHub(this.openRaw, opts.watchCacheSize ?? 20_000);
  }

  private phys(key: string): Buffer {
    return Buffer.from(this.prefix + key);
  }

  private logical(physKey: Buffer): string {
    return physKey.toString('utf8').slice(this.prefix.length);
  }

  private toKeyValue(kv: IKeyValue, modRevision = Number(kv.mod_revision)): KeyValue {
    return {
      key: this.logical(kv.key),
      value: kv.value,
      createRevision: Number(kv.create_revision),
      modRevision,
    };
  }

  private ensureOpen(): void {
    if (this.isClosed) throw new StoreError('Closed', 'store is closed');
  }

  /** Runs one etcd call, mapping every failure to a StoreError; not retried (a non-safe request). */
  private call<T>(what: string, fn: () => Promise<T>, key?: string): Promise<T> {
    return this.retried('other', 'unsafe', what, () => fn(), key);
  }

  /**
   * Runs `attempt` with retries while etcd fails over (see etcd-retry.ts), mapping every failure to a
   * StoreError. `operation` labels etcd_request_retries_total.
   */
  private async retried<T>(
    operation: string,
    safety: Safety,
    what: string,
    attempt: (ambiguous: boolean) => Promise<T>,
    key?: string,
  ): Promise<T> {
    this.ensureOpen();
    try {
      return await this.retrier.run(operation, safety, async (ambiguous) => {
        this.ensureOpen();
        return attempt(ambiguous);
      });
    } catch (err) {
      throw mapError(what, err, key);
    }
  }

  /** Retried requests by operation and reason, since the store was opened. */
  retries(): StoreRetries {
    return [...this.retryCounts.values()];
  }

  async get(key: string, opts: { revision?: number } = {}): Promise<KeyValue | undefined> {
    checkKey(key);
    if (opts.revision !== undefined) checkRevision('revision', opts.revision);
    const res = await this.retried(
      'get',
      'safe',
      `get ${key}`,
      () => this.client.kv.range({ key: this.phys(key), revision: opts.revision ?? 0 }),
      key,
    );
    const kv = res.kvs[0];
    return kv === undefined ? undefined : this.toKeyValue(kv);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const from = listStart(prefix, opts);
    const revision = from.revision ?? 0;
    const start =
      from.after === undefined ? this.phys(prefix) : Buffer.concat([this.phys(from.after), Buffer.from([0])]);
    checkRevision('revision', revision);
    const limit = opts.limit ?? 0;
    const res = await this.retried('list', 'safe', `list ${prefix}`, () =>
      this.client.kv.range({
        key: start,
        range_end: prefixEnd(this.phys(prefix)),
        revision,
        limit,
      }),
    );
    const at = Number(res.header.revision);
    const readAt = revision === 0 ? at : revision;
    return listPage(
      readAt,
      prefix,
      res.kvs.map((kv) => this.toKeyValue(kv)),
      res.more,
    );
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    checkCreate(key, value);
    const k = this.phys(key);
    const bytes = Buffer.from(value);
    return this.retried(
      'create',
      'safe',
      `create ${key}`,
      async (ambiguous) => {
        const res = await this.client.kv.txn({
          compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: 0 }],
          success: [{ request_put: { key: k, value: bytes } }],
          failure: [{ request_range: { key: k } }],
        });
        if (res.succeeded) {
          const rev = Number(res.header.revision);
          return { key, value, createRevision: rev, modRevision: rev };
        }
        const cur = res.responses[0]?.response_range.kvs[0];
        const ours = ambiguous && cur !== undefined ? await this.createdByUs(k, bytes, cur) : undefined;
        if (ours === undefined) throw alreadyExistsError(key);
        return { key, value, ...ours };
      },
      key,
    );
  }

  /**
   * After a create whose outcome was unknown, the key exists: it is ours when it held exactly our bytes
   * when it was created (an object carries its own uid and creation time, so another's never does).
   */
  private async createdByUs(
    k: Buffer,
    value: Buffer,
    cur: IKeyValue,
  ): Promise<{ createRevision: number; modRevision: number } | undefined> {
    const created = Number(cur.create_revision);
    if (value.equals(cur.value)) return { createRevision: created, modRevision: Number(cur.mod_revision) };
    const then = await this.readBackAt(k, created);
    return then !== undefined && value.equals(then.value)
      ? { createRevision: created, modRevision: created }
      : undefined;
  }

  /** The key as it was at `revision`, for a read-back; undefined when that was compacted away. */
  private async readBackAt(k: Buffer, revision: number): Promise<IKeyValue | undefined> {
    try {
      return (await this.client.kv.range({ key: k, revision })).kvs[0];
    } catch (err) {
      if (errText(err).includes('required revision has been compacted')) return undefined;
      throw err;
    }
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    checkUpdate(key, value, expectedRevision);
    const k = this.phys(key);
    const bytes = Buffer.from(value);
    return this.retried(
      'update',
      'safe',
      `update ${key}`,
      async (ambiguous) => {
        const res = await this.client.kv.txn({
          compare: [
            { key: k, target: 'Version', result: 'Greater', version: 0 },
            { key: k, target: 'Mod', result: 'Equal', mod_revision: expectedRevision },
          ],
          success: [{ request_put: { key: k, value: bytes, prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        });
        if (res.succeeded) {
          const prev = res.responses[0]?.response_put.prev_kv;
          const rev = Number(res.header.revision);
          return { key, value, createRevision: prev ? Number(prev.create_revision) : rev, modRevision: rev };
        }
        const cur = res.responses[0]?.response_range.kvs[0];
        // An earlier attempt landed when the key now holds our bytes, written after the revision we
        // compared against. (When another write followed ours already, the client sees a Conflict and
        // re-reads, as for any conflict.)
        if (ambiguous && cur !== undefined && Number(cur.mod_revision) > expectedRevision) {
          if (bytes.equals(cur.value)) return { ...this.toKeyValue(cur), value };
        }
        throw this.preconditionFailed(key, expectedRevision, res.responses[0]?.response_range.kvs);
      },
      key,
    );
  }

  async delete(key: string, expectedRevision?: number): Promise<KeyValue> {
    checkDelete(key, expectedRevision);
    const k = this.phys(key);
    // Only a compare-and-swap delete is safe to send again: without a precondition, a retry after an
    // unknown outcome could not tell our delete from another's.
    const safety: Safety = expectedRevision === undefined ? 'unsafe' : 'safe';
    return this.retried(
      'delete',
      safety,
      `delete ${key}`,
      async (ambiguous) => {
        const res = await this.client.kv.txn({
          compare: [
            { key: k, target: 'Version', result: 'Greater', version: 0 },
            ...(expectedRevision === undefined
              ? []
              : [
                  {
                    key: k,
                    target: 'Mod' as const,
                    result: 'Equal' as const,
                    mod_revision: expectedRevision,
                  },
                ]),
          ],
          success: [{ request_delete_range: { key: k, prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        });
        if (!res.succeeded) {
          const kvs = res.responses[0]?.response_range.kvs;
          if (ambiguous && expectedRevision !== undefined && kvs?.[0] === undefined) {
            // The key was at expectedRevision when we sent the delete and is gone now: ours landed.
            // Its revision is not known any more; the revision this read saw is the nearest one after it.
            const prev = await this.readBackAt(k, expectedRevision);
            if (prev !== undefined) return this.toKeyValue(prev, Number(res.header.revision));
          }
          throw this.preconditionFailed(key, expectedRevision ?? 0, kvs);
        }
        const prev = res.responses[0]?.response_delete_range.prev_kvs[0];
        if (prev === undefined) throw notFoundError(key);
        return this.toKeyValue(prev, Number(res.header.revision));
      },
      key,
    );
  }

  private preconditionFailed(key: string, expected: number, kvs: IKeyValue[] | undefined): StoreError {
    const cur = kvs?.[0];
    if (cur === undefined) return notFoundError(key);
    return conflictError(key, expected, Number(cur.mod_revision));
  }

  async currentRevision(): Promise<number> {
    const res = await this.retried('currentRevision', 'safe', 'read the current revision', () =>
      this.client.kv.range({ key: this.phys('/'), range_end: prefixEnd(this.phys('/')), count_only: true }),
    );
    return Number(res.header.revision);
  }

  async compactRevision(): Promise<number> {
    const res = await this.retried('compactRevision', 'safe', 'read the compacted revision', () =>
      this.client.kv.range({ key: COMPACT_REV_KEY }),
    );
    const kv = res.kvs[0];
    return kv === undefined ? 0 : Number(kv.value.toString());
  }

  async compact(revision: number): Promise<void> {
    checkRevision('revision', revision);
    const current = await this.currentRevision();
    if (revision > current) {
      throw futureRevisionError(revision, current, 'compaction revision');
    }
    // Record the floor with a CAS, like kube-apiserver's compactor, so apiservers sharing this etcd
    // agree on it and a lower request never lowers it.
    for (;;) {
      const res = await this.call('read the compacted revision', () =>
        this.client.kv.range({ key: COMPACT_REV_KEY }),
      );
      const kv = res.kvs[0];
      const known = kv === undefined ? 0 : Number(kv.value.toString());
      if (revision <= known) break;
      const txn = await this.call('record the compacted revision', () =>
        this.client.kv.txn({
          compare: [
            { key: COMPACT_REV_KEY, target: 'Mod', result: 'Equal', mod_revision: kv?.mod_revision ?? 0 },
          ],
          success: [{ request_put: { key: COMPACT_REV_KEY, value: Buffer.from(String(revision)) } }],
          failure: [],
        }),
      );
      if (txn.succeeded) break;
    }
    try {
      await this.call('compact', () => this.client.kv.compact({ revision, physical: true }));
    } catch (err) {
      if (err instanceof StoreError && err.code === 'Compacted') return; // someone compacted further already
      throw err;
    }
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<WatchEvent[]> {
    this.ensureOpen();
    checkWatch(prefix, fromRevision);
    return this.watchLoop(prefix, fromRevision, signal);
  }

  private async *watchLoop(prefix: string, from: number, outer: AbortSignal): AsyncGenerator<WatchEvent[]> {
    // One controller per watch, aborted by the caller's signal or by close(). (AbortSignal.any would
    // keep a reference per watch on the store's lifetime signal in Node 20.)
    const ac = new AbortController();
    const abort = (): void => ac.abort();
    outer.addEventListener('abort', abort, { once: true });
    if (outer.aborted) ac.abort();
    this.watchControllers.add(ac);
    try {
      const head = await this.currentRevision();
      if (from > head) throw futureRevisionError(from, head);
      if (from < head) {
        // etcd must still have every change after `from` (etcd's rule: from + 1 >= compacted revision),
        // whether or not the shared ring could serve it: the contract is the same for every backend.
        await this.call('watch', () =>
          this.client.kv.range({ key: this.phys(prefix), revision: from + 1, count_only: true }),
        );
      }
      await this.hub.ensure(from);
      yield* etcdWatch(this.hub, this.openRaw, prefix, from, ac.signal, this.maxBacklog);
    } finally {
      outer.removeEventListener('abort', abort);
      this.watchControllers.delete(ac);
    }
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const ac of this.watchControllers) ac.abort();
    this.hub.close();
    this.client.close();
  }
}
