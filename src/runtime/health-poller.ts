// Edge autonomy, the I/O part: polls edge-health's /localinfo and tells the topology index which nodes
// it reports unhealthy (src/core/topology/health-report.ts has the format and the rules).
//
// What happens when, stated so it can be watched:
// - a poll every interval, the first at start, each with a 5 s timeout;
// - an answer replaces the verdicts: only the nodes whose verdict changed are passed on, and each change
//   is one log line;
// - a poll that fails (no answer, not 2xx, not the format) is logged once per run of failures and
//   counted; the last answer stays in force for two intervals plus the timeout after it came (one missed
//   poll is not an outage); then, unless another answer has come, every verdict is dropped, so every node
//   is healthy again, as SuperEdge does at once.
import { decodeLocalInfo, healthChanges } from '../core/topology/health-report.js';
import type { Logger } from './logger.js';

export interface HealthPollerOptions {
  readonly address: string;
  readonly intervalMs: number;
  /** Each verdict that changes: false drops the node's endpoints, undefined is no opinion. */
  readonly apply: (node: string, healthy: boolean | undefined) => void;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Per poll (default 5 s). */
  readonly timeoutMs?: number;
  /** Each answer in force, whole (node → Normal); an empty map when the last one expired. */
  readonly onAnswer?: (verdicts: ReadonlyMap<string, boolean>) => void;
  /** Each poll that got no usable answer (for a counter). */
  readonly onFailure?: () => void;
  readonly fetch?: typeof fetch;
  /**
   * The log lines for a node reported unhealthy and for one no longer reported so; by default they say
   * what a data path does (its endpoints are left out of every Service, then back).
   */
  readonly wording?: { readonly unhealthy: string; readonly back: string };
}

const DATA_PATH_WORDING = {
  unhealthy: 'node reported unhealthy: its endpoints are left out of every Service',
  back: 'node no longer reported unhealthy: its endpoints are back',
} as const;

export class HealthPoller {
  private verdicts = new Map<string, boolean>();
  private failing = false;
  private timer: NodeJS.Timeout | undefined;
  /** Drops the answer in force once it is too old (armed by each answer). */
  private expiry: NodeJS.Timeout | undefined;
  private inFlight: AbortController | undefined;
  private stopped = false;
  /** Polls that failed since the start. */
  failures = 0;

  constructor(private readonly o: HealthPollerOptions) {}

  /** Nodes the last answer in force reports unhealthy. */
  unhealthy(): number {
    let n = 0;
    for (const healthy of this.verdicts.values()) if (!healthy) n++;
    return n;
  }

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.expiry);
    this.inFlight?.abort();
  }

  /** One poll now (tests); the next is an interval after it ends, whatever this one did. */
  async tick(): Promise<void> {
    clearTimeout(this.timer);
    try {
      await this.poll();
    } catch (err) {
      this.o.log.warn('applying the health answer failed', { error: String(err) });
    } finally {
      if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.o.intervalMs).unref();
    }
  }

  /** How long an answer stays in force without another. */
  private get ttlMs(): number {
    return 2 * this.o.intervalMs + (this.o.timeoutMs ?? 5_000);
  }

  private expire(): void {
    if (this.stopped || this.verdicts.size === 0) return;
    this.o.log.warn('the last health answer is too old: every node counts as healthy until one arrives', {
      address: this.o.address,
    });
    this.replace(new Map());
  }

  private async poll(): Promise<void> {
    const ctrl = new AbortController();
    this.inFlight = ctrl;
    let next: Map<string, boolean>;
    try {
      next = await readLocalInfo(this.o.address, {
        timeoutMs: this.o.timeoutMs ?? 5_000,
        signal: ctrl.signal,
        ...(this.o.fetch === undefined ? {} : { fetch: this.o.fetch }),
      });
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      this.o.onFailure?.();
      const error = (err as Error).message;
      if (!this.failing)
        this.o.log.warn('the health source does not answer', { address: this.o.address, error });
      this.failing = true;
      return;
    } finally {
      if (this.inFlight === ctrl) this.inFlight = undefined;
    }
    if (this.stopped) return;
    if (this.failing) this.o.log.info('the health source answers again', { address: this.o.address });
    this.failing = false;
    clearTimeout(this.expiry);
    this.expiry = setTimeout(() => this.expire(), this.ttlMs).unref();
    this.replace(next);
  }

  private replace(next: Map<string, boolean>): void {
    const wording = this.o.wording ?? DATA_PATH_WORDING;
    for (const [node, healthy] of healthChanges(this.verdicts, next)) {
      const was = this.verdicts.get(node);
      if (healthy === false) this.o.log.warn(wording.unhealthy, { node });
      else if (was === false) this.o.log.info(wording.back, { node });
      this.o.apply(node, healthy);
    }
    this.verdicts = next;
    this.o.onAnswer?.(next);
  }
}

/**
 * One answer of edge-health's /localinfo: node name → Normal. Throws an Error whose message says what
 * went wrong: `no answer in N ms`, `no answer (ECONNREFUSED)`, `status 503`, or the format's problem.
 * (The poller's every poll, and `svcplane explain --edge-health`.)
 */
export async function readLocalInfo(
  address: string,
  o: { readonly timeoutMs: number; readonly signal?: AbortSignal; readonly fetch?: typeof fetch },
): Promise<Map<string, boolean>> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), o.timeoutMs);
  const stop = (): void => ctrl.abort();
  o.signal?.addEventListener('abort', stop, { once: true });
  try {
    let body: string;
    let status: number;
    try {
      const res = await (o.fetch ?? fetch)(address, { signal: ctrl.signal });
      status = res.status;
      body = await res.text();
    } catch (err) {
      // fetch's own error says only "fetch failed"; the reason is its cause (ECONNREFUSED, "bad port").
      const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
      const reason =
        typeof cause?.code === 'string'
          ? cause.code
          : typeof cause?.message === 'string'
            ? cause.message
            : String(err);
      const why = ctrl.signal.aborted ? `no answer in ${o.timeoutMs} ms` : `no answer (${reason})`;
      throw new Error(why, { cause: err });
    }
    if (status < 200 || status > 299) throw new Error(`status ${status}`);
    return decodeLocalInfo(body);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', stop);
  }
}
