// Watches for the etcd store. One etcd watch per store (the hub) feeds an in-memory ring that every
// local watcher reads as a cursor, so a write is received and decoded once however many watchers there
// are (kube-apiserver's cacher does the same per resource). A watcher that starts before the hub's
// floor, or falls behind the ring, gets a private etcd watch from its own revision instead.
import { cursorLoop, untilAborted, type ChangeLog } from '../cursor-watch.js';
import { StoreError, type WatchEvent } from '../store.js';
import { deferred, TailRing } from '../tail-ring.js';

export interface RawWatchHandlers {
  /** Events of one etcd watch response, in revision order. */
  events(batch: WatchEvent[]): void;
  /** The watch ended: Compacted, Unavailable (stream lost) or another StoreError. */
  failed(err: StoreError): void;
}

/** Opens an etcd watch on a (logical) prefix delivering changes after `after`. */
export type OpenRawWatch = (
  prefix: string,
  after: number,
  h: RawWatchHandlers,
) => Promise<{ cancel(): Promise<void> }>;

/** The shared watch: one etcd watch on the whole store, and the ring it fills. */
export class WatchHub implements ChangeLog {
  private ring: TailRing | undefined;
  private failed: StoreError | undefined;
  private cancel: (() => Promise<void>) | undefined;
  private starting: Promise<void> | undefined;
  private isClosed = false;
  /** Number of etcd watches the hub has opened (tests check that watchers share one). */
  opened = 0;

  constructor(
    private readonly openRaw: OpenRawWatch,
    private readonly capacity: number,
  ) {}

  /** Makes sure a healthy hub runs, starting it at `from` if none does. */
  async ensure(from: number): Promise<void> {
    while (this.starting !== undefined) await this.starting;
    if (this.ring !== undefined && this.failed === undefined) return;
    await this.cancel?.().catch(() => undefined);
    this.starting = this.start(from);
    try {
      await this.starting;
    } finally {
      this.starting = undefined;
    }
  }

  private async start(from: number): Promise<void> {
    const ring = new TailRing(this.capacity, from);
    this.ring = undefined;
    this.failed = undefined;
    const raw = await this.openRaw('/', from, {
      events: (batch) => {
        if (this.ring !== ring) return;
        for (const ev of batch) ring.push(ev);
        ring.wake();
      },
      failed: (err) => {
        if (this.ring !== ring) return;
        this.failed = err;
        ring.wake();
      },
    });
    this.opened++;
    this.ring = ring;
    this.cancel = () => raw.cancel();
  }

  /** True while the hub runs and has not failed. */
  running(): boolean {
    return this.ring !== undefined && this.failed === undefined;
  }

  /** True when the running hub holds every change after `after`. */
  covers(after: number): boolean {
    return this.ring !== undefined && this.failed === undefined && this.ring.covers(after);
  }

  head(): number {
    return this.ring?.through ?? 0;
  }
  compacted(): number {
    return 0; // the ring is in memory: etcd compaction cannot reach it
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

  async close(): Promise<void> {
    this.isClosed = true;
    this.ring?.wake();
    await this.cancel?.().catch(() => undefined);
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
    cursor = stoppedAt; // fell behind the ring
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
  let wake = deferred();
  const notify = (): void => {
    const w = wake;
    wake = deferred();
    w.resolve();
  };
  const raw = await openRaw(prefix, from, {
    events: (batch) => {
      if (failure !== undefined) return; // overflowed: the consumer resumes from what it took
      queue.push(batch);
      queued += batch.length;
      if (queued > maxBacklog) {
        failure ??= new StoreError(
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
  });
  try {
    while (!signal.aborted) {
      const batch = queue.shift();
      if (batch !== undefined) {
        queued -= batch.length;
        yield batch;
        continue;
      }
      if (failure !== undefined) throw failure;
      await untilAborted(wake.promise, signal);
    }
  } finally {
    await raw.cancel().catch(() => undefined);
  }
}
