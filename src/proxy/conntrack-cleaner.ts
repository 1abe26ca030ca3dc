// After a sync: deletes the UDP flows that would keep going to removed endpoints, or stay stuck from the
// time a port had none (core/proxy/conntrack.ts decides which, as kube-proxy's conntrack clean-up does).
// Shared by the iptables and nftables modes. A failure is logged, never thrown: the rules are right, and
// the flows end when their clients pause.
import { errText } from '../api/err-text.js';
import { conntrackArgs, conntrackDeletes } from '../core/proxy/conntrack.js';
import type { ProxyState, ServicePortState } from '../core/proxy/types.js';
import type { ConntrackTool } from './conntrack-tool.js';
import type { SyncLog } from './sync.js';

export class ConntrackCleaner {
  /** The state the rules were last written from; undefined before the first sync of this process. */
  private last: Map<string, ServicePortState> | undefined;
  private warned = false;

  constructor(
    private readonly tool: ConntrackTool,
    private readonly family: 4 | 6,
    private readonly log: SyncLog,
  ) {}

  /** The state a sync just applied, and the service ports it changed: how many deletes it ran. */
  async clear(state: ProxyState, changed: Iterable<string>, signal?: AbortSignal): Promise<number> {
    // The first sync knows nothing of what the flows were NATed to before this process: it leaves them.
    const deletes = this.last === undefined ? [] : conntrackDeletes(this.last, state, changed, this.family);
    this.last = new Map(state);
    if (deletes.length === 0) return 0;
    if (!this.tool.hasConntrack()) {
      if (!this.warned)
        this.log.warn(
          'conntrack (package conntrack) not found: UDP flows to removed endpoints are not cleared',
        );
      this.warned = true;
      return 0;
    }
    for (const d of deletes) {
      try {
        await this.tool.conntrack(conntrackArgs(d, this.family), signal);
      } catch (err) {
        this.log.warn('conntrack clean-up failed', { ...d, error: errText(err) });
      }
    }
    return deletes.length;
  }

  /** Every service port of the last state and of `state`: what a full sync hands to clear(). */
  everything(state: ProxyState): Set<string> {
    return new Set([...(this.last?.keys() ?? []), ...state.keys()]);
  }
}
