// Requests waiting for the watch cache to reach a revision (GET, LIST and WATCH with a resourceVersion
// ahead of the cache, and consistent reads). Each waiter ends exactly once: when the cache reaches its
// revision or stops (resolved), when the wait times out or its request's signal aborts (rejected); and it
// is forgotten then, so a request that went away leaves nothing behind.

interface Waiter {
  readonly rev: number;
  /** Ends the wait (idempotent): resolves it without an error, or rejects it with one. */
  readonly end: (err?: unknown) => void;
}

export class RevisionWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Resolves when `advance` reaches `rev` (or `releaseAll`); rejects with `timedOut()` after the timeout,
   * and with the signal's reason when `signal` aborts.
   */
  wait(rev: number, timedOut: () => Error, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => waiter.end(signal?.reason ?? new Error('aborted'));
      const timer = setTimeout(() => waiter.end(timedOut()), this.timeoutMs);
      const waiter: Waiter = {
        rev,
        end: (err?: unknown) => {
          if (!this.waiters.delete(waiter)) return;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (err === undefined) resolve();
          else reject(err instanceof Error ? err : new Error(String(err)));
        },
      };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Ends the waits for `rev` and below. */
  advance(rev: number): void {
    for (const w of this.waiters) if (w.rev <= rev) w.end();
  }

  /** Ends every wait (the cache is stopping). */
  releaseAll(): void {
    for (const w of this.waiters) w.end();
  }

  get size(): number {
    return this.waiters.size;
  }
}
