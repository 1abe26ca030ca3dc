// Fire-and-forget writes with a bound: at most `concurrency` in flight and `maxQueued` waiting; beyond
// that new work is dropped and counted, as client-go's event broadcaster drops events when its queue is
// full. The scheduler's events and PodScheduled conditions go through it, so a burst of thousands of
// pods never opens thousands of requests at once and never slows binding down.
export class BackgroundWriter {
  private readonly waiting: (() => Promise<unknown>)[] = [];
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  dropped = 0;

  constructor(
    private readonly concurrency: number,
    private readonly maxQueued: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  run(task: () => Promise<unknown>): void {
    if (this.inFlight < this.concurrency) {
      this.start(task);
      return;
    }
    if (this.waiting.length >= this.maxQueued) {
      this.dropped++;
      return;
    }
    this.waiting.push(task);
  }

  private start(task: () => Promise<unknown>): void {
    this.inFlight++;
    let p: Promise<unknown>;
    try {
      p = task();
    } catch (err) {
      p = Promise.reject(err);
    }
    p.catch(this.onError).finally(() => {
      this.inFlight--;
      const next = this.waiting.shift();
      if (next !== undefined) this.start(next);
      else if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
