// Watch for stores that own their change log (memory and sqlite). A watcher is only a cursor, the last
// revision it has seen; it pulls batches from the shared log and sleeps on one shared "changed" signal.
// No per-watcher queue exists, so a slow consumer costs nothing and can never overflow: when it falls
// behind it reads older batches (from the log's own storage) until it catches up, or gets Compacted.
import { compactedError, futureRevisionError } from './revisions.js';
import type { WatchEvent } from './store.js';

export interface ChangeLog {
  /** Newest revision written. */
  head(): number;
  /** Oldest revision a watch may start from. */
  compacted(): number;
  /** True once the store is closed. */
  closed(): boolean;
  /**
   * Events under `prefix` with revision > `after`, scanning at most `max` revisions. `through` is the
   * last revision scanned (>= after), so the cursor advances past revisions that matched nothing.
   * Undefined when this log can no longer serve `after` (a watcher fell behind an in-memory ring).
   */
  readAfter(
    prefix: string,
    after: number,
    max: number,
  ): { events: WatchEvent[]; through: number } | undefined;
  /** Resolves after the next commit (or close). */
  nextChange(): Promise<void>;
  /** Set when the log itself failed (e.g. its upstream was lost); every watcher then fails with it. */
  failure?(): Error | undefined;
}

const BATCH = 1000;

/**
 * A watch from `from` delivers changes from revision from+1 on, so it needs from+1 >= the compacted
 * revision: exactly etcd's rule for a watch whose start revision is from+1.
 */
export function checkWatchStart(log: ChangeLog, from: number): void {
  if (from + 1 < log.compacted()) throw compactedError(from, log.compacted());
  if (from > log.head()) {
    throw futureRevisionError(from, log.head());
  }
}

/** Resolves when `p` settles or `signal` aborts, whichever is first; never rejects on abort. */
export function untilAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

export async function* cursorWatch(
  log: ChangeLog,
  prefix: string,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent[], void, undefined> {
  checkWatchStart(log, from);
  yield* cursorLoop(log, prefix, from, signal);
}

/**
 * The watch loop itself, without the start checks. Returns the cursor (the last revision delivered
 * or skipped) if the log stops being able to serve it, so the caller can continue elsewhere.
 */
export async function* cursorLoop(
  log: ChangeLog,
  prefix: string,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent[], number | undefined, undefined> {
  let cursor = from;
  while (!signal.aborted && !log.closed()) {
    // Subscribe before reading so a commit between the read and the wait is not missed.
    const changed = log.nextChange();
    if (cursor + 1 < log.compacted()) throw compactedError(cursor, log.compacted());
    const read = log.readAfter(prefix, cursor, BATCH);
    if (read === undefined) return cursor;
    cursor = read.through;
    if (read.events.length > 0) {
      yield read.events;
    } else if (cursor >= log.head()) {
      const failed = log.failure?.();
      if (failed !== undefined) throw failed;
      await untilAborted(changed, signal);
    }
  }
  return undefined;
}
