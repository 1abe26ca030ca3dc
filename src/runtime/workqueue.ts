// The controller workqueue, with client-go's contract (k8s.io/client-go/util/workqueue):
// - a key added several times before a worker takes it is processed once (deduplication);
// - a key is never handed to two workers at once: a key added while it is being processed is queued
//   again only when its worker calls done();
// - addRateLimited() backs off per item (exponential) and overall (token bucket), whichever is later;
//   forget() resets an item's backoff after a success;
// - addAfter() delays an add;
// - metrics use client-go's `workqueue_*` names, labelled by queue name.
// Time is injected (a Clock), so tests drive backoffs and delays without sleeping.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** How long to wait before an item is retried. */
export interface RateLimiter<K> {
  /** The delay for this retry of `key` (and counts it). */
  when(key: K): number;
  /** Forgets the item's failures (after a success). */
  forget(key: K): void;
  numRequeues(key: K): number;
}

/** base · 2^failures, capped (client-go's ItemExponentialFailureRateLimiter). */
export class ItemExponentialRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1000_000,
  ) {}
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }
  forget(key: K): void {
    this.failures.delete(key);
  }
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/** An overall token bucket: `qps` refill, `burst` capacity (client-go's BucketRateLimiter). */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;
  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }
  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1; // reserve one, possibly going into debt: the debt is the wait
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
  forget(): void {}
  numRequeues(): number {
    return 0;
  }
}

/** The largest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }
  when(key: K): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }
  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }
  numRequeues(key: K): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/** client-go's DefaultControllerRateLimiter: 5 ms·2^n up to 1000 s per item, and 10 qps / burst 100 overall. */
export const defaultControllerRateLimiter = <K>(clock: Clock = realClock): RateLimiter<K> =>
  new MaxOfRateLimiter<K>(
    new ItemExponentialRateLimiter<K>(5, 1000_000),
    new BucketRateLimiter<K>(10, 100, clock),
  );

/** client-go's workqueue metrics, shared by every queue on one registry. */
export class WorkqueueMetrics {
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly unfinished: Gauge<'name'>;
  readonly longestRunning: Gauge<'name'>;
  readonly retries: Counter<'name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const buckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10];
    this.depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'],
      buckets,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'],
      buckets,
      registers,
    });
    this.unfinished = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name'],
      registers,
    });
    this.longestRunning = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'],
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
  }
}

export interface WorkQueueOptions<K> {
  readonly rateLimiter?: RateLimiter<K>;
  readonly clock?: Clock;
  readonly metrics?: WorkqueueMetrics;
}

export class WorkQueue<K> {
  /** Keys waiting for a worker, in order. */
  private readonly queue: K[] = [];
  /** Keys that need processing: queued, or re-added while being processed. */
  private readonly dirty = new Set<K>();
  /** Keys a worker holds, with when it took them. */
  private readonly processing = new Map<K, number>();
  /** When each dirty key was added (for the queue-duration metric). */
  private readonly addedAt = new Map<K, number>();
  /** Delayed adds: key → its timer (the earliest one wins). */
  private readonly waiting = new Map<K, { at: number; handle: unknown }>();
  private readonly getters: ((k: K | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly limiter: RateLimiter<K>;

  constructor(
    readonly name: string,
    private readonly opts: WorkQueueOptions<K> = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
  }

  get length(): number {
    return this.queue.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.opts.metrics?.adds.inc({ name: this.name });
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    if (this.processing.has(key)) return; // queued again once its worker is done
    this.push(key);
  }

  private push(key: K): void {
    const getter = this.getters.shift();
    if (getter !== undefined) {
      this.hand(key);
      getter(key);
      return;
    }
    this.queue.push(key);
    this.opts.metrics?.depth.set({ name: this.name }, this.queue.length);
  }

  /** Marks a key as taken by a worker. */
  private hand(key: K): void {
    this.dirty.delete(key);
    const now = this.clock.now();
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (added !== undefined)
      this.opts.metrics?.queueDuration.observe({ name: this.name }, (now - added) / 1000);
    this.processing.set(key, now);
  }

  /** Adds the key after `ms`; an earlier pending delayed add of the same key wins. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + ms;
    const pending = this.waiting.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      this.clock.clearTimeout(pending.handle);
    }
    const handle = this.clock.setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { at, handle });
  }

  /** Adds the key once the rate limiters allow it (a retry). */
  addRateLimited(key: K): void {
    this.opts.metrics?.retries.inc({ name: this.name });
    this.addAfter(key, this.limiter.when(key));
  }

  /** The key succeeded: its backoff starts over. */
  forget(key: K): void {
    this.limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.limiter.numRequeues(key);
  }

  /** The next key to process, or undefined once the queue is shut down and drained. */
  get(): Promise<K | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.opts.metrics?.depth.set({ name: this.name }, this.queue.length);
      this.hand(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** The worker is finished with the key; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.opts.metrics?.workDuration.observe({ name: this.name }, (this.clock.now() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
    else if (this.dirty.has(key)) this.dirty.delete(key);
  }

  /** Refreshes the unfinished-work metrics (client-go updates them periodically). */
  updateUnfinishedWork(): void {
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const started of this.processing.values()) {
      const s = (now - started) / 1000;
      total += s;
      longest = Math.max(longest, s);
    }
    this.opts.metrics?.unfinished.set({ name: this.name }, total);
    this.opts.metrics?.longestRunning.set({ name: this.name }, longest);
  }

  /** Stops taking adds; waiting workers get undefined; delayed adds are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { handle } of this.waiting.values()) this.clock.clearTimeout(handle);
    this.waiting.clear();
    this.queue.length = 0;
    this.dirty.clear();
    for (const g of this.getters.splice(0)) g(undefined);
    this.opts.metrics?.depth.set({ name: this.name }, 0);
  }
}
