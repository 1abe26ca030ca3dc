// Reading one Service's chain of the nftables mode's table, outside the proxy's sync path: its name from
// the renderer's own model (nftModel), its rules from `nft -j list chain` in the namespace.
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
 * `nft -j list chain` in `netns`; undefined when the chain is not there.
 */
export async function nftChainEndpoints(netns: string, chain: string): Promise<Set<string> | undefined> {
  const nft = findProgram('nft') ?? 'nft';
  const out = await runOut(ipPath(), [
    'netns',
    'exec',
    netns,
    nft,
    '-j',
    'list',
    'chain',
    'ip',
    NFT_TABLE,
    chain,
  ]);
  let text: string;
  try {
    text = JSON.stringify(JSON.parse(out));
  } catch {
    return undefined;
  }
  // The chain DNATs to each endpoint (`"dnat":{"addr":…,"port":…}`), or, with ClientIP affinity, jumps to
  // endpoint chains whose names end in `__<ip>/<port>` (IPv4 only here).
  const dnat = [...text.matchAll(/"dnat":\{"addr":"([0-9.]+)","port":(\d+)/g)];
  const chains = [...text.matchAll(/endpoint-[^"]*__([0-9.]+)\/(\d+)"/g)];
  return new Set([...dnat, ...chains].map((m) => `${m[1]}:${m[2]}`));
}
