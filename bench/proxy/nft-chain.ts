// Reading one Service's chain of the nftables mode's table, outside the proxy's sync path: its name from
// the renderer's own model (nftModel), its rules from `nft -j list chain` in the namespace.
import { nftChainTargets } from '../../src/core/demo/node-rules.js';
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
 * The endpoint addresses (`ip:port`) the chain `ip svcplane <chain>` sends to, read with
 * `nft -j list chain` and `nft -j list map` of the endpoint map its rule names, in `netns`; undefined when
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
  const items = await list('chain', 'ip', NFT_TABLE, chain);
  if (items === undefined) return undefined;
  // Only the maps the chain names are listed: the whole table costs seconds at 10,000 Services.
  for (const map of new Set(
    [...JSON.stringify(items).matchAll(/"@(endpoints-[a-z]+-\d+)"/g)].map((m) => m[1]!),
  ))
    items.push(...((await list('map', 'ip', NFT_TABLE, map)) ?? []));
  // With ClientIP affinity the chain jumps to endpoint chains, which are not listed here: their names end
  // in `__<ip>/<port>` (IPv4 only here).
  const viaChains = [...JSON.stringify(items).matchAll(/endpoint-[^"]*__([0-9.]+)\/(\d+)"/g)];
  return new Set([...nftChainTargets(items, chain), ...viaChains.map((m) => `${m[1]}:${m[2]}`)]);
}
