// Edge autonomy, the I/O part: polls edge-health's /localinfo and tells the topology index which nodes
// it reports unhealthy (src/core/topology/health-report.ts has the format and the rules).
//
// What happens when, stated so it can be watched:
// - a poll every interval, the first at start, each with a 5 s timeout;
// - an answer replaces the verdicts: only the nodes whose verdict changed are passed on, and each change
//   is one log line;
// - a poll that fails (no answer, not 2xx, not the format) is logged once per run of failures, and the
//   last answer stays in force until it is older than two intervals plus the timeout (one missed poll is
//   not an outage); then every verdict is dropped, so every node is healthy again, as SuperEdge does.
import { decodeLocalInfo, healthChanges } from '../core/topology/health-report.js';

export interface HealthPollerLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface HealthPollerOptions {
  readonly address: string;
  readonly intervalMs: number;
  /** Each verdict that changes: false drops the node's endpoints, undefined is no opinion. */
  readonly apply: (node: string, healthy: boolean | undefined) => void;
  readonly log: HealthPollerLog;
  /** Per poll (default 5 s). */
  readonly timeoutMs?: number;
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
}

export class HealthPoller {
  private verdicts = new Map<string, boolean>();
  private lastAnswer: number | undefined;
  private failing = false;
  private timer: NodeJS.Timeout | undefined;
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
    this.inFlight?.abort();
  }

  /** One poll now (tests); the next is an interval after it ends. */
  async tick(): Promise<void> {
    clearTimeout(this.timer);
    await this.poll();
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.o.intervalMs).unref();
  }

  private async poll(): Promise<void> {
    const now = this.o.now ?? Date.now;
    const timeoutMs = this.o.timeoutMs ?? 5_000;
    const ctrl = new AbortController();
    this.inFlight = ctrl;
    const timer = setTimeout(() => ctrl.abort(), timeoutMs);
    let next: Map<string, boolean>;
    try {
      const res = await (this.o.fetch ?? fetch)(this.o.address, { signal: ctrl.signal });
      const body = await res.text();
      if (res.status < 200 || res.status > 299) throw new Error(`status ${res.status}`);
      next = decodeLocalInfo(body);
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      const error = ctrl.signal.aborted ? `no answer in ${timeoutMs} ms` : errorText(err);
      if (!this.failing)
        this.o.log.warn('the health source does not answer', { address: this.o.address, error });
      this.failing = true;
      const expired =
        this.lastAnswer !== undefined && now() - this.lastAnswer > 2 * this.o.intervalMs + timeoutMs;
      if (expired && this.verdicts.size > 0) {
        this.o.log.warn('the last health answer is too old: every node counts as healthy until one arrives', {
          address: this.o.address,
        });
        this.replace(new Map());
      }
      return;
    } finally {
      clearTimeout(timer);
      if (this.inFlight === ctrl) this.inFlight = undefined;
    }
    if (this.stopped) return;
    if (this.failing) this.o.log.info('the health source answers again', { address: this.o.address });
    this.failing = false;
    this.lastAnswer = now();
    this.replace(next);
  }

  private replace(next: Map<string, boolean>): void {
    for (const [node, healthy] of healthChanges(this.verdicts, next)) {
      const was = this.verdicts.get(node);
      if (healthy === false)
        this.o.log.warn('node reported unhealthy: its endpoints are left out of every Service', { node });
      else if (was === false)
        this.o.log.info('node no longer reported unhealthy: its endpoints are back', { node });
      this.o.apply(node, healthy);
    }
    this.verdicts = next;
  }
}

const errorText = (err: unknown): string => {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause !== undefined && typeof cause.code === 'string') return `${String(err)} (${cause.code})`;
  return String(err);
};
