// One log line when the upstream becomes unreachable and one when every reflector is watching again, for
// the wrapper's sync (sync.ts), instead of one per failed request.

export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export class UpstreamLog {
  private isUp: boolean | undefined;
  private lastError = 0;
  private backCheck: NodeJS.Timeout | undefined;

  /**
   * `inSync`: every reflector is watching; `active`: the initial sync is done and the sync not stopped
   * (before and after, nothing is logged).
   */
  constructor(
    private readonly log: Logger,
    private readonly inSync: () => boolean,
    private readonly active: () => boolean,
  ) {}

  /** The initial sync is done: the upstream is up. */
  up(): void {
    this.isUp = true;
  }

  /** A reflector failed (err) or changed state. */
  note(err?: unknown): void {
    if (!this.active()) return;
    if (err !== undefined) {
      this.lastError = Date.now();
      if (this.isUp === false) return;
      this.isUp = false;
      this.log.warn('upstream unreachable: serving the last good views', { error: String(err) });
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
      this.log.info('upstream back: watching again; only the differences are served', {});
    };
    this.backCheck = setTimeout(check, 1000).unref();
  }
}
