// Reading one Service's chain of the nftables mode's table, outside the proxy's sync path: its name from
// the renderer's own model (nftModel), its rules from `nft -j list chain` in the namespace.
import { nftChainTargets, nftReferences } from '../../src/core/demo/node-rules.js';
import { NFT_TABLE, nftModel } from '../../src/core/proxy/nftables.js';
import type { ServicePortState } from '../../src/core/proxy/types.js';
import { ipPath } from '../../src/demo/netns.js';
import { findProgram, runOut } from './programs.js';

/**
 * The name of the `service-…` chain the nftables mode gives an IPv4 TCP Service port with endpoints (which
 * endpoints, which cluster IP and which port do not matter: the name comes from the port's identity).
 */
export function nftServiceChain(port: { namespace: string; name: string; portName: string }): string {
  const key = `${port.namespace}/${port.name}${port.portName === '' ? '' : `:${port.portName}`}`;
  const ep = { ip: '10.0.0.1', port: 8080, local: false, ready: true };
  const st: ServicePortState = {
    ...port,
    key,
    protocol: 'TCP',
    clusterIPs: ['10.0.0.2'],
    port: 80,
    externalIPs: [],
    loadBalancerIPs: [],
    internal: [ep],
    external: [ep],
    externalLocal: false,
    internalLocal: false,
  };
  const chain = nftModel(new Map([[key, st]]), { family: 4 })
    .owned.get(key)
    ?.chains.find((c) => c.startsWith('service-'));
  if (chain === undefined) throw new Error(`no IPv4 service chain for ${key}`);
  return chain;
}

/**
 * The endpoint addresses (`ip:port`) the chain `ip svcplane <chain>` sends to, read with `nft -j list chain`
 * and `nft -j list map` in `netns`, following the chains and endpoint maps its rules name; undefined when
 * the chain is not there.
 */
export async function nftChainEndpoints(netns: string, chain: string): Promise<Set<string> | undefined> {
  const nft = findProgram('nft') ?? 'nft';
  const list = async (...what: string[]): Promise<unknown[] | undefined> => {
    const out = await runOut(ipPath(), ['netns', 'exec', netns, nft, '-j', 'list', ...what]);
    try {
      const items = (JSON.parse(out) as { nftables?: unknown }).nftables;
      return Array.isArray(items) ? items : undefined;
    } catch {
      return undefined;
    }
  };
  // One chain or map at a time, following what each names: the whole table costs seconds at 10,000
  // Services. With ClientIP affinity the chain jumps to endpoint chains, which DNAT.
  const items: unknown[] = [];
  const listed = new Set<string>();
  const pending = [`chain ${chain}`];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (listed.has(next)) continue;
    listed.add(next);
    const [kind, name] = next.split(' ') as [string, string];
    const got = await list(kind, 'ip', NFT_TABLE, name);
    if (got === undefined) {
      if (kind === 'chain' && name === chain) return undefined;
      continue;
    }
    items.push(...got);
    if (kind !== 'chain') continue;
    const refs = nftReferences(got, name);
    pending.push(...refs.chains.map((c) => `chain ${c}`), ...refs.maps.map((m) => `map ${m}`));
  }
  return new Set(nftChainTargets(items, chain));
}
