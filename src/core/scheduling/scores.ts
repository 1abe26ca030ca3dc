// The score plugins, each 0–100 per node after normalizing, weighted and summed as kube-scheduler's
// default profile weighs them: TaintToleration ×3, NodeAffinity ×2, PodTopologySpread ×2,
// NodeResourcesFit (LeastAllocated) ×1, NodeResourcesBalancedAllocation ×1.
//
// PodTopologySpread uses the system default constraints (kubernetes.io/hostname maxSkew 3,
// topology.kubernetes.io/zone maxSkew 5, ScheduleAnyway) over the pods that share the incoming pod's
// controller owner, which is what upstream's selector (the owning ReplicaSet's) selects in practice.
// The node's name stands for its hostname label, so nodes made by hand without one still spread.
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { toleratedBy } from './taints.js';

export const MAX_NODE_SCORE = 100;
const HOSTNAME_MAX_SKEW = 3;
const ZONE_MAX_SKEW = 5;

/** Pods of `ownerUid` on the nodes of `zone` (all nodes, not only the feasible ones). */
export type ZoneOwnerCount = (zone: string, ownerUid: string) => number;

/** Untolerated PreferNoSchedule taints: fewer is better (normalized reversed). */
export function taintScores(pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
  const raw = nodes.map((n) => {
    let c = 0;
    for (const t of n.preferTaints) if (!toleratedBy(pod.tolerations, t)) c++;
    return c;
  });
  const max = Math.max(0, ...raw);
  return raw.map((c) =>
    max === 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE - Math.trunc((MAX_NODE_SCORE * c) / max),
  );
}

/** Σ weights of the preferred terms a node matches, normalized by the largest. */
export function nodeAffinityScores(pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
  if (pod.preferred.length === 0) return nodes.map(() => 0);
  const raw = nodes.map((n) => {
    let s = 0;
    for (const t of pod.preferred) if (t.matches(n)) s += t.weight;
    return s;
  });
  const max = Math.max(0, ...raw);
  return raw.map((s) => (max === 0 ? 0 : Math.trunc((MAX_NODE_SCORE * s) / max)));
}

/**
 * System-default topology spread: raw = Σ over the node's domains of
 * count × ln(domains + 2) + (maxSkew − 1); normalized 100 × (max + min − s) / max.
 */
export function spreadScores(pod: PodInfo, nodes: readonly NodeInfo[], zoneCount: ZoneOwnerCount): number[] {
  const owner = pod.ownerUid;
  if (owner === undefined) return nodes.map(() => 0);
  const zones = new Set<string>();
  for (const n of nodes) if (n.zone !== undefined) zones.add(n.zone);
  const hostWeight = Math.log(nodes.length + 2);
  const zoneWeight = Math.log(zones.size + 2);
  const raw = nodes.map((n) => {
    let s = (n.ownerCounts.get(owner) ?? 0) * hostWeight + (HOSTNAME_MAX_SKEW - 1);
    if (n.zone !== undefined) s += zoneCount(n.zone, owner) * zoneWeight + (ZONE_MAX_SKEW - 1);
    return Math.round(s);
  });
  let max = 0;
  let min = Number.MAX_SAFE_INTEGER;
  for (const s of raw) {
    if (s > max) max = s;
    if (s < min) min = s;
  }
  return raw.map((s) => (max === 0 ? MAX_NODE_SCORE : Math.trunc((MAX_NODE_SCORE * (max + min - s)) / max)));
}

const leastAllocated = (requested: number, allocatable: number): number =>
  allocatable <= 0 || requested > allocatable
    ? 0
    : Math.trunc(((allocatable - requested) * MAX_NODE_SCORE) / allocatable);

/** LeastAllocated over cpu and memory (weights 1), with the non-zero defaults for pods that request none. */
export function leastAllocatedScore(pod: PodInfo, n: NodeInfo): number {
  const cpu = leastAllocated(n.nonZeroCpu + pod.nonZeroCpu, n.allocatable.get('cpu') ?? 0);
  const mem = leastAllocated(n.nonZeroMemory + pod.nonZeroMemory, n.allocatable.get('memory') ?? 0);
  return Math.trunc((cpu + mem) / 2);
}

const fraction = (requested: number, allocatable: number): number =>
  allocatable <= 0 ? (requested > 0 ? 1 : 0) : Math.min(1, requested / allocatable);

/** BalancedAllocation: (1 − |f_cpu − f_memory| / 2) × 100 over what pods actually request. */
export function balancedAllocationScore(pod: PodInfo, n: NodeInfo): number {
  const req = (r: string): number => (n.requested.get(r) ?? 0) + (pod.requests.get(r) ?? 0);
  const f1 = fraction(req('cpu'), n.allocatable.get('cpu') ?? 0);
  const f2 = fraction(req('memory'), n.allocatable.get('memory') ?? 0);
  return Math.trunc((1 - Math.abs(f1 - f2) / 2) * MAX_NODE_SCORE);
}

/** The weighted total per node, in the order given. */
export function scoreNodes(pod: PodInfo, nodes: readonly NodeInfo[], zoneCount: ZoneOwnerCount): number[] {
  const taint = taintScores(pod, nodes);
  const affinity = nodeAffinityScores(pod, nodes);
  const spread = spreadScores(pod, nodes, zoneCount);
  return nodes.map(
    (n, i) =>
      3 * taint[i]! +
      2 * affinity[i]! +
      2 * spread[i]! +
      leastAllocatedScore(pod, n) +
      balancedAllocationScore(pod, n),
  );
}
