// Watches for the etcd store. One etcd watch per store (the hub) feeds an in-memory ring that every
// local watcher reads as a cursor, so a write is received and decoded once however many watchers there
// are (kube-apiserver's cacher does the same per resource). A watcher that starts before the hub's
// floor, or falls behind the ring, gets a private etcd watch from its own revision instead.
import { cursorLoop, untilAborted, type ChangeLog } from '../cursor-watch.js';
import { StoreError, type WatchEvent } from '../store.js';
import { ChangeSignal } from '../change-signal.js';
import { TailRing } from '../tail-ring.js';

export interface RawWatchHandlers {
  /** Events of one etcd watch response, in revision order. May be called before open resolves. */
  events(batch: WatchEvent[]): void;
  /** The watch ended after it was established: Compacted, Unavailable (stream lost), … */
  failed(err: StoreError): void;
}

/**
 * Opens an etcd watch on a (logical) prefix delivering changes after `after`. Resolves once etcd has
 * created it, rejects if it could not be (within the store's timeout, or when `signal` aborts).
 * `cancel` never waits for etcd.
 */
export type OpenRawWatch = (
  prefix: string,
  after: number,
  h: RawWatchHandlers,
  signal?: AbortSignal,
) => Promise<{ cancel(): void }>;

/** The shared watch: one etcd watch on the whole store, and the ring it fills. */
export class WatchHub implements ChangeLog {
  private ring: TailRing | undefined;
  private failed: StoreError | undefined;
  private cancelRaw: (() => void) | undefined;
  private starting: Promise<void> | undefined;
  /** Bumped by every (re)start, so callbacks of a replaced etcd watch are ignored. */
  private generation = 0;
  private isClosed = false;
  /** Number of etcd watches the hub has opened (tests check that watchers share one). */
  opened = 0;

  constructor(
    private readonly openRaw: OpenRawWatch,
    private readonly capacity: number,
  ) {}

  /** Makes sure a healthy hub runs, (re)starting it at `from` if none does. Concurrent callers share one start. */
  ensure(from: number): Promise<void> {
    if (this.starting !== undefined) return this.starting;
    if (this.running() || this.isClosed) return Promise.resolve();
    this.starting = this.start(from).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(from: number): Promise<void> {
    const gen = ++this.generation;
    this.cancelRaw?.();
    this.cancelRaw = undefined;
    this.ring = undefined; // watchers of the old ring continue on private watches from their cursor
    this.failed = undefined;
    const ring = new TailRing(this.capacity, from);
    const raw = await this.openRaw('/', from, {
      events: (batch) => {
        if (gen !== this.generation || this.failed !== undefined) return;
        try {
          for (const ev of batch) ring.push(ev);
        } catch (err) {
          // Out-of-order revisions would be an etcd or client bug: fail the hub (watchers relist)
          // rather than throw inside the client library's event emitter.
          this.failed = new StoreError('Unavailable', `shared watch: ${String(err)}`, {}, { cause: err });
        }
        ring.wake();
      },
      failed: (err) => {
        if (gen !== this.generation) return;
        this.failed = err;
        ring.wake();
      },
    });
    if (this.isClosed || gen !== this.generation) {
      raw.cancel();
      return;
    }
    this.opened++;
    this.ring = ring;
    this.cancelRaw = raw.cancel;
  }

  /** True while the hub runs and has not failed. */
  running(): boolean {
    return this.ring !== undefined && this.failed === undefined;
  }

  /** True when the running hub holds every change after `after`. */
  covers(after: number): boolean {
    return this.running() && this.ring!.covers(after);
  }

  head(): number {
    return this.ring?.through ?? 0;
  }
  compacted(): number {
    return 0; // the ring is in memory: etcd compaction cannot reach it (watch() checks the start)
  }
  closed(): boolean {
    return this.isClosed;
  }
  failure(): Error | undefined {
    return this.failed;
  }
  nextChange(): Promise<void> {
    return this.ring?.nextChange() ?? Promise.resolve();
  }
  readAfter(
    prefix: string,
    after: number,
    max: number,
  ): { events: WatchEvent[]; through: number } | undefined {
    const ring = this.ring;
    if (ring === undefined || !ring.covers(after)) return undefined;
    return ring.readAfter(prefix, after, max);
  }

  close(): void {
    this.isClosed = true;
    this.generation++;
    this.ring?.wake();
    this.cancelRaw?.();
    this.cancelRaw = undefined;
  }
}

/**
 * A watch of `prefix` from `from`: through the hub while it can serve it, then (or from the start,
 * for an old revision) through a private etcd watch.
 */
export async function* etcdWatch(
  hub: WatchHub,
  openRaw: OpenRawWatch,
  prefix: string,
  from: number,
  signal: AbortSignal,
  maxBacklog: number,
): AsyncGenerator<WatchEvent[], void, undefined> {
  let cursor = from;
  if (hub.covers(from)) {
    const stoppedAt = yield* cursorLoop(hub, prefix, from, signal);
    if (stoppedAt === undefined) return; // aborted or closed
    cursor = stoppedAt; // fell behind the ring, or the hub was restarted without it
  }
  yield* privateWatch(openRaw, prefix, cursor, signal, maxBacklog);
}

/** One etcd watch for one consumer, buffering at most `maxBacklog` events it has not taken yet. */
async function* privateWatch(
  openRaw: OpenRawWatch,
  prefix: string,
  from: number,
  signal: AbortSignal,
  maxBacklog: number,
): AsyncGenerator<WatchEvent[], void, undefined> {
  const queue: WatchEvent[][] = [];
  let queued = 0;
  let failure: StoreError | undefined;
  const changed = new ChangeSignal();
  const notify = (): void => changed.fire();
  let raw: { cancel(): void };
  try {
    raw = await openRaw(
      prefix,
      from,
      {
        events: (batch) => {
          if (failure !== undefined) return; // overflowed: the consumer resumes from what it took
          queue.push(batch);
          queued += batch.length;
          if (queued > maxBacklog) {
            failure = new StoreError(
              'WatchOverflow',
              `watch on ${prefix} fell more than ${maxBacklog} events behind`,
            );
          }
          notify();
        },
        failed: (err) => {
          failure ??= err;
          notify();
        },
      },
      signal,
    );
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  try {
    while (!signal.aborted) {
      const batch = queue.shift();
      if (batch !== undefined) {
        queued -= batch.length;
        yield batch;
        continue;
      }
      if (failure !== undefined) throw failure;
      await untilAborted(changed.next(), signal);
    }
  } finally {
    raw.cancel();
  }
}
