// The write-behind store's queue to the store behind (write-behind-store.ts): writes already applied in
// memory, handed over in order a moment later, one hand-off in flight at a time.
import { ChangeSignal } from '../change-signal.js';
import { StoreError, type Store } from '../store.js';

/** One write, as applied in memory at revision `rev`. */
export type Op =
  | { readonly kind: 'create'; readonly key: string; readonly value: Uint8Array; readonly rev: number }
  | {
      readonly kind: 'update';
      readonly key: string;
      readonly value: Uint8Array;
      readonly expected: number;
      readonly rev: number;
    }
  | { readonly kind: 'delete'; readonly key: string; readonly expected: number; readonly rev: number };

export interface PersistQueueOptions {
  /** How long a write waits in memory before it is handed over (default 20 ms). */
  readonly flushDelayMs?: number;
  /** Writes not yet persisted at most; a writer past it waits (default 1,000). */
  readonly maxPending?: number;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class PersistQueue {
  /** Values of keys whose latest write is not yet persisted (a delete's event carries the last value). */
  private readonly values = new Map<string, { rev: number; value: Uint8Array }>();
  private pending: Op[] = [];
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set when the store behind no longer matches: nothing is persisted any more. */
  private broken: StoreError | undefined;
  /** Why the last hand-off failed, while it waits to be retried. */
  private retrying: StoreError | undefined;
  private readonly spaceFreed = new ChangeSignal();
  private readonly flushDelayMs: number;
  private readonly maxPending: number;
  private readonly log: (msg: string, fields?: Record<string, unknown>) => void;

  constructor(
    private readonly inner: Store,
    /** A revision in memory = the store behind's + offset. */
    private readonly offset: number,
    opts: PersistQueueOptions,
  ) {
    this.flushDelayMs = opts.flushDelayMs ?? 20;
    this.maxPending = opts.maxPending ?? 1_000;
    this.log = opts.log ?? (() => undefined);
  }

  /** The value of a key whose latest write is not yet persisted. */
  unpersisted(key: string): Uint8Array | undefined {
    return this.values.get(key)?.value;
  }

  add(op: Op): void {
    if (this.broken !== undefined) return; // nothing is persisted any more, nor kept for it
    if (op.kind === 'delete') this.values.delete(op.key);
    else this.values.set(op.key, { rev: op.rev, value: op.value });
    this.pending.push(op);
    if (this.pending.length >= this.maxPending) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.flushDelayMs).unref();
  }

  /** Waits while as many writes as allowed are unpersisted. */
  async room(): Promise<void> {
    while (this.pending.length >= this.maxPending && this.broken === undefined) {
      this.flush();
      await this.spaceFreed.next();
    }
  }

  /**
   * Resolves once every write made so far is persisted; throws when that failed (the writes stay queued
   * and are retried, but a reader does not wait for the store behind to come back).
   */
  async persisted(): Promise<void> {
    for (;;) {
      if (this.broken !== undefined) throw this.broken;
      if (this.retrying !== undefined) throw this.retrying;
      if (this.inFlight !== undefined) await this.inFlight;
      else if (this.pending.length > 0) this.flush();
      else return;
    }
  }

  /** Resolves once nothing is pending or in flight, or persisting has failed (never throws). */
  async settled(): Promise<void> {
    while (this.broken === undefined && this.retrying === undefined) {
      if (this.inFlight !== undefined) await this.inFlight;
      else if (this.pending.length > 0) this.flush();
      else return;
    }
  }

  /** Stops persisting for good (logged once); returns the error reads get from now on. */
  diverged(message: string): StoreError {
    if (this.broken === undefined) {
      this.broken = new StoreError('Unavailable', `the served store stopped persisting: ${message}`);
      this.log('the served store diverged from the store behind; writes are no longer persisted', {
        error: message,
      });
      this.pending = [];
      this.spaceFreed.fire();
    }
    return this.broken;
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.spaceFreed.fire();
  }

  /** Hands the pending writes to the store behind, unless a hand-off is still in flight. */
  private flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.inFlight !== undefined || this.pending.length === 0 || this.broken !== undefined) return;
    const batch = this.pending;
    this.pending = [];
    this.spaceFreed.fire();
    this.inFlight = this.persist(batch).finally(() => {
      this.inFlight = undefined;
      if (this.pending.length > 0) this.timer ??= setTimeout(() => this.flush(), this.flushDelayMs).unref();
      this.spaceFreed.fire();
    });
  }

  private async persist(batch: Op[]): Promise<void> {
    // All handed over in one turn, in order: the store behind commits them in that order.
    const results = await Promise.allSettled(batch.map((op) => this.persistOne(op)));
    const failed = results.findIndex((r) => r.status === 'rejected');
    this.retrying = undefined;
    if (failed < 0) return;
    const err = (results[failed] as PromiseRejectedResult).reason as unknown;
    if (err instanceof StoreError && err.code === 'Unavailable' && this.broken === undefined) {
      // Nothing of a failed commit is durable (the sqlite store fails the whole batch): try again later.
      const retry = batch.slice(failed);
      this.pending = [...retry, ...this.pending];
      this.retrying = err;
      this.log('persisting served writes failed; retrying', { error: err.message, writes: retry.length });
      await new Promise((r) => setTimeout(r, 1_000).unref());
      return;
    }
    this.diverged(`a write to the store behind failed: ${String(err)}`);
  }

  private async persistOne(op: Op): Promise<void> {
    const o = this.offset;
    const kv =
      op.kind === 'create'
        ? await this.inner.create(op.key, op.value)
        : op.kind === 'update'
          ? await this.inner.update(op.key, op.value, op.expected - o)
          : await this.inner.delete(op.key, op.expected - o);
    if (kv.modRevision + o !== op.rev)
      throw this.diverged(`${op.key} was written at ${kv.modRevision + o} behind, ${op.rev} here`);
    if (this.values.get(op.key)?.rev === op.rev) this.values.delete(op.key);
  }
}
