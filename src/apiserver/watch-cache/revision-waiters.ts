// Requests waiting for the watch cache to reach a revision (GET, LIST and WATCH with a resourceVersion
// ahead of the cache, and consistent reads). Each waiter ends exactly once: when the cache reaches its
// revision, when the wait times out, when its request's signal aborts, or when the cache stops; and it is
// forgotten then, so a client that went away leaves nothing behind.

interface Waiter {
  readonly rev: number;
  /** Ends the wait successfully (the revision was reached, the signal aborted or the cache stopped). */
  readonly done: () => void;
}

export class RevisionWaiters {
  private waiters: Waiter[] = [];

  constructor(private readonly timeoutMs: number) {}

  /**
   * Resolves when `advance` reaches `rev` or `signal` aborts; rejects with `timedOut()` after the timeout.
   */
  wait(rev: number, timedOut: () => Error, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const end = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', waiter.done);
        this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      const timer = setTimeout(() => {
        end();
        reject(timedOut());
      }, this.timeoutMs);
      const waiter: Waiter = {
        rev,
        done: () => {
          end();
          resolve();
        },
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', waiter.done, { once: true });
    });
  }

  /** Ends the waits for `rev` and below. */
  advance(rev: number): void {
    if (this.waiters.length === 0) return;
    for (const w of this.waiters.filter((x) => x.rev <= rev)) w.done();
  }

  /** Ends every wait (the cache is stopping). */
  releaseAll(): void {
    for (const w of [...this.waiters]) w.done();
  }

  get size(): number {
    return this.waiters.length;
  }
}
