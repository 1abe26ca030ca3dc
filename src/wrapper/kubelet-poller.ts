// Polls the node's kubelet (`GET /pods`) for the offline rewrite (sync.ts, core/offline): only while the
// wrapper needs it (the upstream away: since a failure, before the first sync too), every interval, the
// first at once.
// What happens when, so it can be watched:
//   - a poll that fails (no answer, not 2xx, not a PodList) is logged once per run of failures and
//     counted; the pods of the last answer stay in force (the wrapper serves its last views);
//   - an answer whose pods (of this node) read the same as the last one's is not passed on.
import { nodePods, podsSignature } from '../core/offline/pod-list.js';
import type { Pod } from '../core/endpoints/types.js';
import type { Logger } from '../runtime/logger.js';
import type { KubeletRead } from './kubelet-client.js';

export interface KubeletPollerOptions {
  readonly read: KubeletRead;
  /** For the log lines. */
  readonly url: string;
  readonly node: string;
  readonly intervalMs: number;
  /** Whether to poll now. */
  readonly needed: () => boolean;
  /** The node's pods, when they differ from the last answer's (or after a pause). */
  readonly onPods: (pods: Map<string, Pod>) => void;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Each poll, and whether it got a usable answer (for counters). */
  readonly onPoll?: (ok: boolean) => void;
}

export class KubeletPoller {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private failing = false;
  private last: string | undefined;
  private stopped = false;
  /** Polls made, and those that failed, since the start. */
  polls = 0;
  failures = 0;

  constructor(private readonly o: KubeletPollerOptions) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.inFlight;
  }

  /** Forgets the last answer: the next one is passed on whatever it says (a new offline period). */
  forget(): void {
    this.last = undefined;
  }

  /** Polls now if needed (the wrapper calls it when the upstream goes away); resolves when done. */
  async wake(): Promise<void> {
    if (this.stopped) return;
    if (this.inFlight === undefined) {
      clearTimeout(this.timer);
      this.inFlight = this.tick().finally(() => {
        this.inFlight = undefined;
        this.schedule(this.o.intervalMs);
      });
    }
    await this.inFlight;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.wake(), ms).unref();
  }

  private async tick(): Promise<void> {
    if (!this.o.needed()) {
      // The next time it is needed, the first answer is passed on whatever it says.
      this.last = undefined;
      return;
    }
    this.polls++;
    let pods: Map<string, Pod>;
    try {
      pods = nodePods(await this.o.read(this.abort.signal), this.o.node);
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      this.o.onPoll?.(false);
      if (!this.failing)
        this.o.log.warn('the kubelet does not answer: serving the last views', {
          url: this.o.url,
          error: (err as Error).message,
        });
      this.failing = true;
      return;
    }
    if (this.stopped) return;
    this.o.onPoll?.(true);
    if (this.failing) this.o.log.info('the kubelet answers again', { url: this.o.url });
    this.failing = false;
    const signature = podsSignature(pods);
    if (signature === this.last || !this.o.needed()) return;
    this.last = signature;
    this.o.onPods(pods);
  }
}
