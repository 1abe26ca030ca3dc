// `svcplane node --pod-ip-on-restart keep|new`: what a node's pods' addresses do when the node process
// starts again.
//
//   keep  the CNI keeps addresses (host-local with its state on disk): every pod holds the IPs it had.
//   new   the CNI does not (its state was on a tmpfs, or an overlay that hands out leases anew): every
//         pod that ran before the restart gets a NEW address from the pool, never the one it had while
//         the range has another free address. The round-robin continues from the checkpoint's position
//         (PodIPPool.resume), so addresses are not handed back at once either.
//
// Pure: the pool is the node's PodIPPool.
import { NodeCidrError } from './pod-cidrs.js';
import type { PodIPPool } from './pod-ips.js';

export type PodIPOnRestart = 'keep' | 'new';

export const POD_IP_ON_RESTART: readonly PodIPOnRestart[] = ['keep', 'new'];

/** A pod that ran before the restart: its key in the pool (its UID) and the addresses it had. */
export interface RestartedPod {
  readonly key: string;
  readonly previous: readonly string[];
}

/** The key a pod's previous addresses are held under while new ones are chosen. */
const previousKey = (key: string): string => `\u0000previous/${key}`;

/**
 * Gives every pod new addresses (mode `new`), in the order given. While they are chosen, every pod's
 * previous addresses are held, so no pod gets its own (or another restarted pod's) old address while the
 * range has another; a pod for which none is left is tried once more after the old addresses are free
 * again (it may then get an old address, though not while the scan finds another first). Returns each
 * pod's addresses, or undefined for a pod the full range leaves without (it waits, Pending, as any pod
 * on a full node). A pod whose key already holds addresses keeps them.
 */
export function readdressPods(
  pool: PodIPPool,
  pods: readonly RestartedPod[],
): Map<string, readonly string[] | undefined> {
  const out = new Map<string, readonly string[] | undefined>();
  const held: string[] = [];
  for (const p of pods) {
    if (pool.get(p.key) !== undefined || p.previous.length === 0) continue;
    if (pool.reserve(previousKey(p.key), p.previous) === undefined) held.push(previousKey(p.key));
  }
  const tryAllocate = (key: string): readonly string[] | undefined => {
    try {
      return pool.allocate(key);
    } catch (err) {
      if (err instanceof NodeCidrError) return undefined;
      throw err;
    }
  };
  const waiting: string[] = [];
  for (const p of pods) {
    const ips = tryAllocate(p.key);
    if (ips === undefined) waiting.push(p.key);
    out.set(p.key, ips);
  }
  for (const k of held) pool.release(k);
  for (const k of waiting) out.set(k, tryAllocate(k));
  return out;
}
