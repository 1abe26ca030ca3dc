// The proxy's kernel data planes as `svcplane proxy` builds them from its flags: the iptables mode
// (iptables and ip6tables), the nftables mode (one nft runner, a table per family), and --cleanup of both.
// Each mode removes what the other left on the node when it starts, as kube-proxy cleans up the modes it
// is not running, so that two modes never program the same Service traffic.
import { errText } from '../api/err-text.js';
import type { RenderOptions } from '../core/proxy/iptables.js';
import { NFT_TABLE } from '../core/proxy/nftables.js';
import { conntrackTool } from '../proxy/conntrack-tool.js';
import { DualStackBackend, IptablesBackend, removeIptablesRules } from '../proxy/iptables-backend.js';
import { iptablesRunner, type IptablesRunner } from '../proxy/iptables-runner.js';
import type { ProxyMetrics } from '../proxy/metrics.js';
import { NftablesBackend, removeNftablesRules } from '../proxy/nftables-backend.js';
import { nftRunner } from '../proxy/nft-runner.js';
import type { SyncLog } from '../proxy/sync.js';
import { UsageError } from './flags.js';

type Family = 4 | 6;

/** The render options of one family: the cluster CIDR and node port addresses of that family only. */
function familyRender(
  render: Omit<RenderOptions, 'family'>,
  nodePortList: readonly string[],
  family: Family,
): RenderOptions {
  return {
    ...(render.masqueradeAll === true ? { masqueradeAll: true } : {}),
    // The cluster CIDR is one family's: the other family's rules go without it.
    ...(render.clusterCIDR !== undefined && render.clusterCIDR.includes(':') === (family === 6)
      ? { clusterCIDR: render.clusterCIDR }
      : {}),
    family,
    // The renderers take this family's CIDRs from the list: given only the other family's, this family
    // serves no node port (rather than every local address).
    ...(nodePortList.length > 0 ? { nodePortAddresses: nodePortList } : {}),
  };
}

/**
 * The iptables data plane for both families: IPv4 always, IPv6 when ip6tables works here (else a warning:
 * IPv6 cluster IPs are not programmed). Before it, the nftables mode's tables go.
 */
export async function iptablesBackends(
  render: Omit<RenderOptions, 'family'>,
  nodePortList: readonly string[],
  log: SyncLog,
  metrics: ProxyMetrics | undefined,
): Promise<DualStackBackend> {
  const v4 = iptablesRunner({ family: 4 });
  const ok = await v4.check();
  if (!ok.ok)
    throw new UsageError(`--proxy-mode iptables: ${ok.reason} (without root, use --proxy-mode userspace)`);
  const v6 = iptablesRunner({ family: 6 });
  const ok6 = await v6.check();
  if (!ok6.ok)
    log.warn('ip6tables does not work here: IPv6 cluster IPs are not programmed', { reason: ok6.reason });
  const nft = nftRunner();
  if ((await nft.check()).ok) {
    const tables = await removeNftablesRules(nft);
    if (tables > 0) log.info("removed the nftables mode's tables", { tables });
  }
  const backend = (runner: IptablesRunner, family: Family): IptablesBackend =>
    new IptablesBackend({
      runner,
      render: familyRender(render, nodePortList, family),
      log,
      ...(metrics === undefined
        ? {}
        : {
            onRestoreFailure: () => metrics.restoreFailures.inc(),
            ...(family === 4
              ? { onRules: (table: 'nat' | 'filter', n: number) => metrics.iptablesRules.set({ table }, n) }
              : {}),
          }),
    });
  return new DualStackBackend([backend(v4, 4), ...(ok6.ok ? [backend(v6, 6)] : [])]);
}

/**
 * The nftables data plane: IPv4 always, IPv6 when the kernel takes an ip6 table (else a warning). Before
 * it, the iptables mode's jumps and chains go, in each family where iptables works.
 */
export async function nftablesBackend(
  render: Omit<RenderOptions, 'family'>,
  nodePortList: readonly string[],
  log: SyncLog,
  metrics: ProxyMetrics | undefined,
): Promise<NftablesBackend> {
  const runner = nftRunner();
  const ok = await runner.check();
  if (!ok.ok)
    throw new UsageError(`--proxy-mode nftables: ${ok.reason} (without root, use --proxy-mode userspace)`);
  const families: Family[] = [4];
  try {
    await runner.validate(`add table ip6 ${NFT_TABLE}\n`);
    families.push(6);
  } catch (err) {
    log.warn('the kernel takes no ip6 nftables table: IPv6 cluster IPs are not programmed', {
      reason: errText(err),
    });
  }
  const chains = await removeIptablesModes(log);
  if (chains > 0) log.info("removed the iptables mode's chains", { chains });
  return new NftablesBackend({
    runner,
    families: families.map((f) => familyRender(render, nodePortList, f)),
    conntrack: conntrackTool(),
    log,
    ...(metrics === undefined ? {} : { onFailure: () => metrics.nftablesFailures.inc() }),
  });
}

/** The iptables mode's chains, removed in each family whose iptables works here: how many chains. */
async function removeIptablesModes(log: SyncLog): Promise<number> {
  let chains = 0;
  for (const family of [4, 6] as const) {
    const runner = iptablesRunner({ family });
    const ok = await runner.check();
    if (!ok.ok) {
      // No iptables program: nothing of the iptables mode can be here. A program that fails is worth a word.
      if (!/not found/.test(ok.reason))
        log.warn("the iptables mode's chains could not be checked", { family, reason: ok.reason });
      continue;
    }
    chains += (await removeIptablesRules(runner)).chains;
  }
  return chains;
}

/**
 * `--cleanup`: every rule the iptables mode wrote and every table the nftables mode wrote, in each family
 * whose program works here. Fails when neither iptables nor nft can be used (nothing could be checked).
 */
export async function removeProxyRules(log: SyncLog): Promise<{ chains: number; tables: number }> {
  const nft = nftRunner();
  const nftOk = await nft.check();
  const iptOk = await iptablesRunner({ family: 4 }).check();
  if (!nftOk.ok && !iptOk.ok)
    throw new Error(
      `--cleanup: neither iptables nor nft can be used here (${iptOk.reason}; ${nftOk.reason})`,
    );
  const chains = await removeIptablesModes(log);
  const tables = nftOk.ok ? await removeNftablesRules(nft) : 0;
  return { chains, tables };
}
