// `svcplane node --pod-ip-on-restart keep|new`: what a node's pods' addresses do when the node process
// starts again.
//
//   keep  the CNI keeps addresses (host-local with its state on disk): every pod holds the IPs it had.
//   new   the CNI does not (its state was on a tmpfs, or an overlay that hands out leases anew): every
//         pod that ran before the restart gets a NEW address from the pool, never the one it had while
//         the range has another free address (then another restarted pod's old one). The round-robin continues from the checkpoint's position
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
 * range has another; a pod for which none is left is tried again once the old addresses are free,
 * holding only its own, so it gets another pod's old address, or its own when nothing else is left.
 * Returns each
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
  // Another restarted pod's old address is better than the pod's own: hold its own while it chooses.
  const previousOf = new Map(pods.map((p) => [p.key, p.previous]));
  for (const k of waiting) {
    const own = previousOf.get(k) ?? [];
    const holding = own.length > 0 && pool.reserve(previousKey(k), own) === undefined;
    let ips = tryAllocate(k);
    if (holding) pool.release(previousKey(k));
    ips ??= tryAllocate(k);
    out.set(k, ips);
  }
  return out;
}
