// Reading one Service's chain of the nftables mode's table, outside the proxy's sync path: its name from
// the renderer's own model (nftModel), its rules from `nft -j list chain` in the namespace.
import { NFT_TABLE, nftModel } from '../../src/core/proxy/nftables.js';
import type { ServicePortState } from '../../src/core/proxy/types.js';
import { ipPath } from '../../src/demo/netns.js';
import { findProgram, runOut } from './programs.js';

/**
 * The name of the `service-…` chain the nftables mode gives an IPv4 Service port with endpoints (which
 * endpoints does not matter).
 */
export function nftServiceChain(st: ServicePortState): string {
  const owned = nftModel(new Map([[st.key, st]]), { family: 4 }).owned.get(st.key);
  const chain = owned?.chains.find((c) => c.startsWith('service-'));
  if (chain === undefined) throw new Error(`no IPv4 service chain for ${st.key}`);
  return chain;
}

/**
 * The endpoint addresses (`ip:port`) the chain `ip svcplane <chain>` jumps to, read with
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
  // Endpoint chains end in `__<ip>/<port>` (IPv6 colons as dots; IPv4 only here).
  return new Set([...text.matchAll(/endpoint-[^"]*__([0-9.]+)\/(\d+)"/g)].map((m) => `${m[1]}:${m[2]}`));
}
