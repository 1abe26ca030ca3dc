// Retries of etcd requests while etcd fails over (a leader election, a member down, a reset connection),
// within a time budget, so an API client rarely sees the failover. As etcd's Go client (clientv3) does,
// a request that may already have been applied is retried only when it is safe to: reads, and writes
// whose txn compares make a second application impossible (create, compare-and-swap update and delete).
// Their callers resolve the unknown outcome of an earlier attempt by reading back (`ambiguous`).
import { errText } from '../../api/err-text.js';

/** Why a request is retried: the `reason` label of etcd_request_retries_total. */
export type RetryReason = 'leader_election' | 'member_down' | 'connection_reset' | 'timeout';

export interface TransientFailure {
  readonly reason: RetryReason;
  /** False when etcd certainly did not apply the request; true when it may have. */
  readonly mayHaveApplied: boolean;
}

/**
 * Whether a failure is one etcd recovers from by itself, and whether the request may have been applied.
 * Matched on etcd's stable server messages (rpctypes) and gRPC's and the socket's codes.
 */
export function transientFailure(err: unknown): TransientFailure | undefined {
  const msg = errText(err);
  const name = err instanceof Error ? err.name : '';
  // Never sent: no connection, or the circuit breaker kept it back from a dead member.
  if (
    name === 'BrokenCircuitError' ||
    /No connection established|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/.test(msg)
  ) {
    return { reason: 'member_down', mayHaveApplied: false };
  }
  // Refused before a proposal was made.
  if (/etcdserver: (no leader|not leader|too many requests|server stopped)/.test(msg)) {
    return { reason: 'leader_election', mayHaveApplied: false };
  }
  if (msg.includes('etcdserver: leader changed')) return { reason: 'leader_election', mayHaveApplied: true };
  if (/etcdserver: request timed out|deadline exceeded|DEADLINE_EXCEEDED/i.test(msg)) {
    return { reason: 'timeout', mayHaveApplied: true };
  }
  if (
    /ECONNRESET|EPIPE|Connection dropped|connection closed|Connection lost|UNAVAILABLE|GOAWAY/i.test(msg) ||
    name === 'GRPCUnavailableError'
  ) {
    return { reason: 'connection_reset', mayHaveApplied: true };
  }
  return undefined;
}

export interface RetryOptions {
  /** How long a request may keep being retried, from its first attempt (ms). 0 disables retries. */
  readonly budgetMs: number;
  /** Called before each retry: counts etcd_request_retries_total{operation,reason}. */
  readonly onRetry?: (operation: string, reason: RetryReason) => void;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** The first wait between attempts (doubled per retry up to maxWaitMs, ±10% jitter); default 25 ms. */
  readonly firstWaitMs?: number;
  readonly maxWaitMs?: number;
}

/**
 * How an operation may be retried: `safe` after any transient failure (the attempt is told when an
 * earlier one may have been applied), `unsafe` only when etcd certainly did not apply it.
 */
export type Safety = 'safe' | 'unsafe';

export const DEFAULT_RETRY_BUDGET_MS = 15_000;

export class Retrier {
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: RetryOptions) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /**
   * Runs `attempt` until it succeeds, fails for good, or the budget is spent (then its last failure is
   * thrown). `ambiguous` is true once an earlier attempt may have been applied.
   */
  async run<T>(operation: string, safety: Safety, attempt: (ambiguous: boolean) => Promise<T>): Promise<T> {
    const start = this.now();
    let ambiguous = false;
    for (let n = 0; ; n++) {
      try {
        return await attempt(ambiguous);
      } catch (err) {
        const failure = transientFailure(err);
        if (failure === undefined || (safety === 'unsafe' && failure.mayHaveApplied)) throw err;
        const base = Math.min(this.opts.maxWaitMs ?? 1000, (this.opts.firstWaitMs ?? 25) * 2 ** n);
        const wait = Math.round(base * (0.9 + Math.random() * 0.2));
        if (this.now() + wait - start > this.opts.budgetMs) throw err;
        ambiguous ||= failure.mayHaveApplied;
        this.opts.onRetry?.(operation, failure.reason);
        await this.sleep(wait);
      }
    }
  }
}
