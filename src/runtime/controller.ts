// The controller runner, with controller-runtime's reconcile.Reconciler contract: a reconcile gets a
// key, never an event, and is level-based. It returns { requeueAfter? } to be called again later;
// a throw is retried with the queue's per-item backoff (up to maxRetries, then dropped and logged, as
// kube's controllers do); a TerminalError is not retried. The workqueue keeps one key in flight.
import { WorkQueue, type WorkQueueOptions } from './workqueue.js';

export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

export interface ReconcileResult {
  readonly requeueAfterMs?: number;
}

export type Reconcile = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

export interface ControllerOptions {
  readonly name: string;
  readonly workers: number;
  readonly reconcile: Reconcile;
  /** Retries before a key is dropped (kube's endpoint controller: 15). */
  readonly maxRetries?: number;
  readonly queue?: WorkQueueOptions<string>;
  readonly onError?: (key: string, err: unknown, dropped: boolean) => void;
}

export class Controller {
  readonly queue: WorkQueue<string>;
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];

  constructor(private readonly o: ControllerOptions) {
    this.queue = new WorkQueue<string>(o.name, o.queue);
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  start(): void {
    for (let i = 0; i < this.o.workers; i++) this.workers.push(this.work());
  }

  /** Stops taking keys; waits for the reconciles in flight (their signal is aborted). */
  async stop(): Promise<void> {
    this.abort.abort();
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        const result = await this.o.reconcile(key, this.abort.signal);
        this.queue.forget(key);
        const after = result?.requeueAfterMs;
        if (after !== undefined && after >= 0) this.queue.addAfter(key, after);
      } catch (err) {
        if (this.abort.signal.aborted) {
          // shutting down: nothing to retry
        } else if (err instanceof TerminalError) {
          this.queue.forget(key);
          this.o.onError?.(key, err, true);
        } else if (this.queue.numRequeues(key) < (this.o.maxRetries ?? 15)) {
          this.o.onError?.(key, err, false);
          this.queue.addRateLimited(key);
        } else {
          this.queue.forget(key);
          this.o.onError?.(key, err, true);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }
}
