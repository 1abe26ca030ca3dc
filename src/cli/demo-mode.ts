// Which layout and proxy mode `svcplane demo` runs with, from its flags and whether it runs as root; and
// whether the kernel takes the nftables mode's table, which decides the default proxy mode as root.
import { errText } from '../api/err-text.js';
import { NFT_TABLE } from '../core/proxy/nftables.js';
import { iptablesNodeRules, nftNodeRules, type NodeRules } from '../core/demo/node-rules.js';
import { iptablesRunner } from '../proxy/iptables-runner.js';
import { nftRunner } from '../proxy/nft-runner.js';
import { UsageError } from './flags.js';

export type DemoLayout = 'netns' | 'userspace';
export type DemoProxyMode = 'nftables' | 'iptables' | 'userspace';

export interface DemoPlan {
  readonly layout: DemoLayout;
  /** 'kernel': nftables where the kernel takes it, else iptables (decided once the namespaces exist). */
  readonly proxy: DemoProxyMode | 'kernel';
}

/**
 * The layout and proxy mode the flags ask for. Kernel modes need the namespaces, so root; userspace
 * proxies need the loopback layout. A combination that cannot run is a UsageError.
 */
export function demoPlan(
  root: boolean,
  layout: 'auto' | DemoLayout,
  proxy: DemoProxyMode | undefined,
): DemoPlan {
  if (proxy === 'nftables' || proxy === 'iptables') {
    if (!root)
      throw new UsageError(
        `--proxy-mode ${proxy} needs root (its rules go into network namespaces the demo creates); ` +
          'without root the proxies run in userspace mode',
      );
    if (layout === 'userspace')
      throw new UsageError(
        `--mode userspace runs the proxies in userspace mode: it takes no --proxy-mode ${proxy}`,
      );
    return { layout: 'netns', proxy };
  }
  if (proxy === 'userspace') {
    if (layout === 'netns')
      throw new UsageError(
        '--mode netns runs the proxies in iptables or nftables mode: it takes no --proxy-mode userspace',
      );
    return { layout: 'userspace', proxy };
  }
  if (layout === 'netns' && !root)
    throw new UsageError('--mode netns needs root (it creates network namespaces)');
  return layout === 'netns' || (layout === 'auto' && root)
    ? { layout: 'netns', proxy: 'kernel' }
    : { layout: 'userspace', proxy: 'userspace' };
}

/**
 * Whether the nftables mode can run in `netns` (a namespace the demo just made): nft is there and
 * `nft -c` accepts the mode's `ip` table. Validating commits nothing.
 */
export async function nftablesUsable(netns: string): Promise<{ ok: true } | { ok: false; reason: string }> {
  const runner = nftRunner({ netns });
  const found = await runner.check();
  if (!found.ok) return found;
  try {
    await runner.validate(`add table ip ${NFT_TABLE}\n`);
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: errText(e) };
  }
}

/**
 * Reads what the rules of `mode` in a node's namespace do with TCP to ip:port: nftables lists the mode's
 * `ip` table (as JSON), iptables saves the nat and filter tables. Listing is the demo's, never the proxy's.
 */
export function nodeRulesReader(
  mode: 'nftables' | 'iptables',
): (netns: string, ip: string, port: number) => Promise<NodeRules> {
  if (mode === 'nftables')
    return async (netns, ip, port) => {
      const items = await nftRunner({ netns }).listTable('ip', NFT_TABLE);
      return items === undefined ? { kind: 'none' } : nftNodeRules(items, ip, port);
    };
  return async (netns, ip, port) => {
    const runner = iptablesRunner({ family: 4, netns });
    return iptablesNodeRules(await runner.save('nat'), await runner.save('filter'), ip, port);
  };
}
