// One log line when the upstream becomes unreachable and one when every reflector is watching again,
// instead of one per failed request: for the wrapper's sync (src/wrapper/sync.ts) and the proxy's
// (src/proxy/sync.ts). Before the initial sync, the first failure is one line too: a process started
// with the upstream away (or a wrong server or credentials in its kubeconfig) says so.
import type { Logger } from './logger.js';

/** What the lines say: the process's behaviour while the upstream is away differs. */
export interface UpstreamMessages {
  /** The first failure before the initial sync. */
  readonly startDown: string;
  /** Unreachable after the initial sync. */
  readonly down: string;
  /** Every reflector watching again. */
  readonly back: string;
}

export const WRAPPER_UPSTREAM_MESSAGES: UpstreamMessages = {
  startDown: 'upstream unreachable for the initial sync: serving what the store holds until it answers',
  down: 'upstream unreachable: serving the last good views',
  back: 'upstream back: watching again; only the differences are served',
};

export class UpstreamLog {
  private isUp: boolean | undefined;
  private lastError = 0;
  private warnedAtStart = false;
  private backCheck: NodeJS.Timeout | undefined;

  /**
   * `inSync`: every reflector is watching; `active`: the initial sync is done and the sync not stopped;
   * `starting`: the initial sync is under way (its first failure is logged; after a stop, nothing is).
   */
  constructor(
    private readonly log: Logger,
    private readonly inSync: () => boolean,
    private readonly active: () => boolean,
    private readonly starting: () => boolean = () => false,
    private readonly messages: UpstreamMessages = WRAPPER_UPSTREAM_MESSAGES,
    /**
     * Told when the upstream goes away (false; before the initial sync too, at its first failure) and when
     * it is back (true), as the lines say it; the initial sync says nothing here.
     */
    private readonly onChange?: (up: boolean) => void,
  ) {}

  /** The initial sync is done: the upstream is up. */
  up(): void {
    this.isUp = true;
  }

  /** A reflector failed (err) or changed state. */
  note(err?: unknown): void {
    if (err !== undefined && !this.warnedAtStart && this.starting()) {
      this.warnedAtStart = true;
      this.log.warn(this.messages.startDown, { error: String(err) });
      this.onChange?.(false);
      return;
    }
    if (!this.active()) return;
    if (err !== undefined) {
      this.lastError = Date.now();
      if (this.isUp === false) return;
      this.isUp = false;
      this.log.warn(this.messages.down, { error: String(err) });
      this.onChange?.(false);
      return;
    }
    if (this.isUp !== false || !this.inSync() || this.backCheck !== undefined) return;
    // A reflector reports Watching before its watch has connected: call it back only after a quiet second.
    const check = (): void => {
      this.backCheck = undefined;
      if (!this.active() || this.isUp !== false || !this.inSync()) return;
      if (Date.now() - this.lastError < 1000) {
        this.backCheck = setTimeout(check, 1000).unref();
        return;
      }
      this.isUp = true;
      this.log.info(this.messages.back, {});
      this.onChange?.(true);
    };
    this.backCheck = setTimeout(check, 1000).unref();
  }
}
