// The iptables data plane: the renderer's restore text (core/proxy/iptables.ts, pure) applied with
// iptables-restore --noflush in the network namespace the proxy runs in.
//
// - A full sync (start, --sync-period, after any failure) ensures kube-proxy's jumps from the built-in
//   chains, reads which KUBE-* chains exist (iptables-save), and rewrites every chain, deleting stale ones
//   (when iptables-save fails, stale chains stay until a later full sync, as in kube-proxy).
// - A partial sync rewrites the dispatch chains and only the changed service ports' chains (KEP-3453).
// - iptables-restore commits each table atomically: a failed restore leaves every table either as it was
//   or fully rewritten (an error in *filter comes after *nat was committed), never half-written. The
//   failure is logged with the offending line, the backend forgets what it had applied, and the next
//   sync is a full one, which rewrites both.
import {
  jumpRules,
  parseSaveChains,
  renderCleanup,
  renderFull,
  renderPartial,
  type RenderOptions,
} from '../core/proxy/iptables.js';
import type { ProxyState } from '../core/proxy/types.js';
import { ConntrackCleaner } from './conntrack-cleaner.js';
import { RestoreError, type IptablesRunner } from './iptables-runner.js';
import type { BackendResult, ProxyBackend, SyncLog } from './sync.js';
import { errText } from '../api/err-text.js';

export interface IptablesBackendOptions {
  readonly runner: IptablesRunner;
  readonly render: RenderOptions;
  readonly log: SyncLog;
  /** Rules written per table by the last restore (kube-proxy's kubeproxy_sync_proxy_rules_iptables_total). */
  readonly onRules?: (table: 'nat' | 'filter', n: number) => void;
  /** kube-proxy's kubeproxy_sync_proxy_rules_iptables_restore_failures_total. */
  readonly onRestoreFailure?: () => void;
}

/** The chain a jump rule's `-j` names. */
const targetOf = (args: readonly string[]): string | undefined => {
  const i = args.indexOf('-j');
  return i < 0 ? undefined : args[i + 1];
};

const chainsOf = (applied: ReadonlyMap<string, readonly string[]>): string[] => [...applied.values()].flat();

const countRules = (text: string): { nat: number; filter: number } => {
  const out = { nat: 0, filter: 0 };
  let table: 'nat' | 'filter' | undefined;
  for (const line of text.split('\n')) {
    if (line === '*nat') table = 'nat';
    else if (line === '*filter') table = 'filter';
    else if (line.startsWith('-A ') && table !== undefined) out[table]++;
  }
  return out;
};

/**
 * Removes everything the iptables mode wrote through `runner` (one family): the jumps from the built-in
 * chains, then every chain this proxy owns (another tool's KUBE-* chains stay). What `--cleanup` does, and
 * what another proxy mode runs when it takes over a node the iptables mode programmed.
 */
export async function removeIptablesRules(runner: IptablesRunner): Promise<{ chains: number }> {
  for (const j of jumpRules()) await runner.deleteRule(j.table, j.chain, j.args);
  const existing = {
    nat: parseSaveChains(await runner.save('nat')).nat,
    filter: parseSaveChains(await runner.save('filter')).filter,
  };
  const text = renderCleanup(existing);
  if (text !== '') await runner.restore(text);
  return { chains: text.split('\n').filter((l) => l.startsWith('-X ')).length };
}

export class IptablesBackend implements ProxyBackend {
  readonly mode = 'iptables';
  /** What the last successful restore left, per service port; undefined: unknown (full sync next). */
  private applied: Map<string, string[]> | undefined;
  /**
   * Every per-service chain a restore of this process may have left in the kernel (kept across a failed
   * restore, which forgets `applied`): what a full sync deletes when iptables-save fails.
   */
  private written: Set<string> | undefined;
  private readonly conntrack: ConntrackCleaner;

  constructor(private readonly o: IptablesBackendOptions) {
    this.conntrack = new ConntrackCleaner(o.runner, o.render.family, o.log);
  }

  /**
   * The nat chains iptables-save lists, for a full sync to find stale ones (the filter table has no
   * per-service chains). When it fails (iptables-nft 1.8.9's save crashed on a 10,000-Service table by
   * hand), the sync goes on, as kube-proxy does, with the chains this process knows it wrote: those are
   * still deleted when the state no longer has them (a partial sync could not delete a chain that a
   * forgotten one still jumps to); others stay until a full sync whose save works.
   */
  private async existingChains(signal?: AbortSignal): Promise<{ nat: string[]; filter: string[] }> {
    try {
      return { nat: parseSaveChains(await this.o.runner.save('nat', signal)).nat, filter: [] };
    } catch (err) {
      if (signal?.aborted === true) throw err;
      const known = [...(this.written ?? [])];
      this.o.log.warn('iptables-save failed: only the chains this proxy wrote are checked for deletion', {
        error: errText(err),
        known: known.length,
      });
      return { nat: known, filter: [] };
    }
  }

  /** Notes the chains a restore is about to write (before it runs: a failed one may have written some). */
  private remember(applied: ReadonlyMap<string, readonly string[]>): void {
    this.written ??= new Set();
    for (const c of chainsOf(applied)) this.written.add(c);
  }

  async apply(
    state: ProxyState,
    changed: ReadonlySet<string> | 'full',
    signal?: AbortSignal,
  ): Promise<BackendResult> {
    if (changed === 'full' || this.applied === undefined) {
      for (const j of jumpRules()) await this.o.runner.ensureRule(j.table, j.chain, j.args, targetOf(j.args));
      const plan = renderFull(state, await this.existingChains(signal), this.o.render);
      this.remember(plan.applied);
      await this.restore(plan.text, signal);
      this.applied = plan.applied;
      // Everything else a full sync found was deleted: what is left is what the state owns.
      this.written = new Set(chainsOf(plan.applied));
      const flows = await this.conntrack.clear(state, this.conntrack.everything(state), signal);
      return {
        partial: false,
        detail: { rules: plan.rules, deletedChains: plan.deleted, conntrackDeletes: flows },
      };
    }
    const plan = renderPartial(state, changed, this.applied, this.o.render);
    this.remember(plan.applied);
    await this.restore(plan.text, signal);
    this.applied = plan.applied;
    const flows = await this.conntrack.clear(state, changed, signal);
    return {
      partial: true,
      detail: {
        rules: plan.rules,
        rewritten: plan.written,
        deletedChains: plan.deleted,
        conntrackDeletes: flows,
      },
    };
  }

  private async restore(text: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.o.runner.restore(text, signal);
    } catch (err) {
      this.applied = undefined;
      this.o.onRestoreFailure?.();
      if (err instanceof RestoreError)
        this.o.log.error('iptables-restore failed; the next sync rewrites every table', {
          line: err.line,
          lineText: err.lineText,
          stderr: err.stderr.trim().split('\n').slice(0, 3).join(' | '),
        });
      throw err;
    }
    const n = countRules(text);
    this.o.onRules?.('nat', n.nat);
    this.o.onRules?.('filter', n.filter);
  }

  /** `--cleanup`: removes the jumps from the built-in chains, then every KUBE-* chain. */
  async cleanup(): Promise<{ chains: number }> {
    const r = await removeIptablesRules(this.o.runner);
    this.applied = undefined;
    return r;
  }

  close(): Promise<void> {
    // The rules stay when the proxy stops (as kube-proxy's do): traffic keeps flowing until --cleanup.
    return Promise.resolve();
  }
}

/**
 * Both IP families: one IptablesBackend per family (iptables and ip6tables), applied in turn. A failure in
 * either makes the next sync a full one for both (each backend forgets what it applied on its own failure;
 * the sync loop asks both for 'full').
 */
export class DualStackBackend implements ProxyBackend {
  readonly mode = 'iptables';

  constructor(private readonly families: readonly IptablesBackend[]) {}

  async apply(
    state: ProxyState,
    changed: ReadonlySet<string> | 'full',
    signal?: AbortSignal,
  ): Promise<BackendResult> {
    let partial = true;
    const detail: Record<string, number> = {};
    for (const [i, b] of this.families.entries()) {
      const r = await b.apply(state, changed, signal);
      partial &&= r.partial;
      for (const [k, v] of Object.entries(r.detail ?? {})) detail[i === 0 ? k : `${k}IPv6`] = v;
    }
    return { partial, detail };
  }

  async cleanup(): Promise<{ chains: number }> {
    let chains = 0;
    for (const b of this.families) chains += (await b.cleanup()).chains;
    return { chains };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
