// The nftables data plane (kube-proxy's nftables mode, KEP-3866): the renderer's transactions
// (core/proxy/nftables.ts, pure) applied with `nft -f -` (partial ones through the runner's long-lived
// `nft -i`, nft-session.ts) in the network namespace the proxy runs in, one
// table per family (`ip svcplane`, `ip6 svcplane`) and one transaction per sync for both families, which
// the kernel commits whole or not at all.
//
// - The first sync of a process writes each table anew (whatever an earlier run left goes with it).
// - A partial sync touches only the changed service ports: map elements added and deleted, their chains
//   flushed and refilled (renderNftPartial).
// - A periodic full sync rewrites every chain and map in place (renderNftResync), undoing what another
//   writer changed without making ClientIP affinity forget its clients. If nft refuses that (an object of
//   ours was replaced by one of another kind), the table is written anew at once.
// - The backend keeps what renders the table it applied again (NftKept: each port's state, its endpoint
//   ranges, who writes shared elements), not the table, and never lists the ruleset to sync: listing costs
//   more than the sync at tens of thousands of Services (kube-proxy's nftables scaling bug).
// - A failed transaction changed nothing, so the model stays right; the sync loop's next full sync
//   resyncs from it. An aborted one may or may not have been committed: the next sync writes anew.
import {
  NFT_TABLE,
  renderNftFull,
  renderNftPartial,
  renderNftResync,
  type NftChanges,
  type NftKept,
  type NftPlan,
} from '../core/proxy/nftables.js';
import type { RenderOptions } from '../core/proxy/iptables.js';
import type { ProxyState } from '../core/proxy/types.js';
import { ConntrackCleaner } from './conntrack-cleaner.js';
import type { ConntrackTool } from './conntrack-tool.js';
import { NftError, type NftRunner } from './nft-runner.js';
import type { BackendResult, ProxyBackend, SyncLog } from './sync.js';

export interface NftablesBackendOptions {
  readonly runner: NftRunner;
  /** One render per family programmed (IPv4, and IPv6 when the node has it). */
  readonly families: readonly RenderOptions[];
  readonly conntrack: ConntrackTool;
  readonly log: SyncLog;
  /** A transaction nft refused (kube-proxy's kubeproxy_sync_proxy_rules_nftables_sync_failures_total). */
  readonly onFailure?: () => void;
  /** After each transaction: what it did (rules and elements written), for the metrics. */
  readonly onApplied?: (kind: 'full' | 'resync' | 'partial', changes: NftChanges) => void;
}

export class NftablesBackend implements ProxyBackend {
  readonly mode = 'nftables';
  /** Per family, the table as the last committed transaction left it; undefined: unknown (write anew). */
  private models: (NftKept | undefined)[];
  private readonly conntrack: ConntrackCleaner[];

  constructor(private readonly o: NftablesBackendOptions) {
    this.models = o.families.map(() => undefined);
    this.conntrack = o.families.map((f) => new ConntrackCleaner(o.conntrack, f.family, o.log));
  }

  async apply(
    state: ProxyState,
    changed: ReadonlySet<string> | 'full',
    signal?: AbortSignal,
  ): Promise<BackendResult> {
    const known = this.models.every((m) => m !== undefined) ? (this.models as NftKept[]) : undefined;
    const fam = this.o.families;
    let kind: 'full' | 'resync' | 'partial';
    let plans: NftPlan[];
    if (known === undefined) {
      kind = 'full';
      plans = fam.map((o) => renderNftFull(state, o));
      await this.commit(plans, kind, signal);
    } else if (changed === 'full') {
      kind = 'resync';
      plans = fam.map((o, i) => renderNftResync(known[i]!, state, o));
      try {
        await this.commit(plans, kind, signal);
      } catch (err) {
        if (!(err instanceof NftError)) throw err;
        this.o.log.warn('the proxy table was changed beyond a resync; writing it anew', {
          error: err.message,
        });
        kind = 'full';
        plans = fam.map((o) => renderNftFull(state, o));
        await this.commit(plans, kind, signal);
      }
    } else {
      kind = 'partial';
      // Each render updates its kept model in place; a refused transaction puts them back.
      plans = fam.map((o, i) => renderNftPartial(known[i]!, state, o, changed));
      try {
        await this.commit(plans, kind, signal);
      } catch (err) {
        for (const p of plans) p.revert?.();
        throw err;
      }
    }
    this.models = plans.map((p) => p.model);
    if (kind !== 'partial') await this.warm(signal);
    let flows = 0;
    for (const c of this.conntrack)
      flows += await c.clear(state, changed === 'full' ? c.everything(state) : changed, signal);
    const sum = (k: 'chainsWritten' | 'chainsDeleted' | 'elements'): number =>
      plans.reduce((n, p) => n + p.changes[k], 0);
    return {
      partial: kind === 'partial',
      detail: {
        chainsWritten: sum('chainsWritten'),
        chainsDeleted: sum('chainsDeleted'),
        elements: sum('elements'),
        conntrackDeletes: flows,
        ...(kind === 'resync' ? { resync: 1 } : {}),
      },
    };
  }

  /** Both families' transactions as one. */
  private async commit(
    plans: readonly NftPlan[],
    kind: 'full' | 'resync' | 'partial',
    signal?: AbortSignal,
  ): Promise<void> {
    const text = kind === 'partial' ? plans.map((p) => p.text).join('') : undefined;
    if (text === '') return;
    try {
      // A partial transaction is small: the runner's long-lived nft -i takes it without a process start.
      // A whole-table write (megabytes at 10,000 Services) is rendered a piece at a time as nft reads it.
      await (text !== undefined
        ? this.o.runner.applySmall(text, signal)
        : this.o.runner.apply(piecesOf(plans), signal));
    } catch (err) {
      this.o.onFailure?.();
      if (err instanceof NftError) {
        // nft refused the transaction: the kernel committed none of it, and the models are still right.
        this.o.log.error('nft refused the transaction; nothing of it was applied', {
          kind,
          line: err.line,
          lineText: err.lineText,
          stderr: err.stderr.trim().split('\n').slice(0, 3).join(' | '),
        });
      } else {
        // Aborted or killed: it may have been committed. The next sync writes the tables anew.
        this.models = this.models.map(() => undefined);
      }
      throw err;
    }
    this.o.onApplied?.(kind, {
      chainsWritten: plans.reduce((n, p) => n + p.changes.chainsWritten, 0),
      chainsDeleted: plans.reduce((n, p) => n + p.changes.chainsDeleted, 0),
      elements: plans.reduce((n, p) => n + p.changes.elements, 0),
    });
  }

  /**
   * After a whole-table write, a no-op transaction through the runner's nft -i (`add table` of a table that
   * exists), so that the first partial sync after a start does not also pay for starting nft. A failure
   * here is not the sync's: the next partial sync starts nft again and reports its own.
   */
  private async warm(signal?: AbortSignal): Promise<void> {
    const family = this.models[0]?.family;
    if (family === undefined) return;
    try {
      await this.o.runner.applySmall(`add table ${family} ${NFT_TABLE}\n`, signal);
    } catch (err) {
      this.o.log.info('nft -i did not start after the full sync; the next partial sync starts it', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** `--cleanup`: deletes the proxy's table in each family. */
  async cleanup(): Promise<{ tables: number }> {
    const tables = await removeNftablesRules(this.o.runner);
    this.models = this.models.map(() => undefined);
    return { tables };
  }

  close(): Promise<void> {
    // The rules stay when the proxy stops (as kube-proxy's do): traffic keeps flowing until --cleanup.
    // Only the runner's nft -i ends.
    return this.o.runner.close();
  }
}

/** The plans' pieces, one plan after another (one transaction for both families). */
function* piecesOf(plans: readonly NftPlan[]): Generator<string, void, undefined> {
  for (const p of plans) yield* p.pieces;
}

/**
 * Deletes the nftables mode's table in each family (how many there were): what `--cleanup` does, and what
 * the iptables mode runs when it takes over a node this mode programmed.
 */
export async function removeNftablesRules(runner: NftRunner): Promise<number> {
  let tables = 0;
  for (const family of ['ip', 'ip6'] as const) if (await runner.deleteTable(family, NFT_TABLE)) tables++;
  return tables;
}
