import type { Logger } from './logger.js';
// The node a wrapper or proxy serves (--hostname, --hostname-override) may be missing upstream: a typo,
// a node not registered yet, or one deleted. Topology rules then keep no endpoint for it, which looks
// like an outage from the node, so the process says so: one warning once the first sync shows the node
// missing, and one line each time it appears or goes later.

export class HostNodePresence {
  private known = false;
  private synced = false;

  constructor(
    private readonly node: string,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
  ) {}

  /** A Node event: `known` is false for a deletion. Other nodes' events are ignored. */
  observe(name: string, known: boolean): void {
    if (name !== this.node || known === this.known) return;
    this.known = known;
    if (this.synced) this.report();
  }

  /** The first sync is done: a node missing now is reported. */
  initialSyncDone(): void {
    if (this.synced) return;
    this.synced = true;
    if (!this.known) this.report();
  }

  private report(): void {
    if (this.known) {
      this.log.info('this node is in the upstream now: topology rules apply to it', { node: this.node });
      return;
    }
    this.log.warn('this node is not in the upstream: Services with topology rules keep no endpoint for it', {
      node: this.node,
      check: `kubectl get node ${this.node}`,
    });
  }
}
