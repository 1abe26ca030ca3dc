// Which pods a ReplicaSet deletes first when it scales down (behaves like kube-controller-manager's
// controller.ActivePodsWithRanks with LogarithmicScaleDown and PodDeletionCost on, and
// replica_set.go getPodsToDelete / getPodsRankedByRelatedPodsOnSameNode). The first rule that tells
// two pods apart decides; "less" means deleted earlier:
//   1. unscheduled before scheduled;
//   2. phase Pending < Unknown < Running;
//   3. not Ready before Ready;
//   4. lower controller.kubernetes.io/pod-deletion-cost first;
//   5. higher rank (more related active pods on the same node) first;
//   6. both Ready: Ready for less time first, by floor(log2(ns since Ready)) buckets; a zero time is
//      the newest; equal buckets compare UIDs;
//   7. more container restarts first;
//   8. newer creationTimestamp first, by the same buckets, equal buckets compare UIDs;
//   9. finally UID, then namespace/name, so the order is total.
//
// One deliberate difference: upstream compares buckets only when two times differ, and falls through
// to rule 7 when they are exactly equal (common: timestamps have whole seconds). That comparator is not
// transitive (a and b Ready in the same second, c a second later in the same bucket: a<b by restarts,
// b<c and c<a by UID). Here equal times are an equal bucket like any other, so rule 6 compares UIDs
// too; ties that upstream leaves to chance or to a cycle are broken the same way every time.
import { parseTimestamp } from '../../api/printers/time.js';
import { isPodActive, isPodReady, podReadySince, type Pod } from './replicaset.js';

export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** The pod-deletion-cost annotation as an int32; absent or invalid counts as 0 (as upstream ignores the error). */
export function deletionCost(pod: Pod): number {
  const raw = pod.metadata.annotations?.[POD_DELETION_COST];
  if (raw === undefined || !/^[+-]?\d+$/.test(raw)) return 0;
  const n = Number(raw);
  return n >= INT32_MIN && n <= INT32_MAX ? n : 0;
}

const PHASE_ORDINAL: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };
const phaseOrdinal = (pod: Pod): number => PHASE_ORDINAL[pod.status?.phase ?? ''] ?? 0;

const maxRestarts = (pod: Pod): number => {
  let max = 0;
  for (const c of Array.isArray(pod.status?.containerStatuses) ? pod.status.containerStatuses : [])
    if (typeof c?.restartCount === 'number' && c.restartCount > max) max = c.restartCount;
  return max;
};

/** floor(log2(nanoseconds from t to now)); -1 when t is not before now (logarithmicRankDiff). */
export function logBucket(tMs: number, nowMs: number): number {
  const ns = (nowMs - tMs) * 1e6;
  return ns <= 0 ? -1 : Math.floor(Math.log2(ns));
}

/** What a pod is compared on, computed once per pod. */
export interface RankedPod {
  readonly pod: Pod;
  readonly unscheduled: boolean;
  readonly phase: number;
  readonly ready: boolean;
  readonly cost: number;
  readonly rank: number;
  /** Ready pods: undefined for a zero/absent transition time, else its log bucket. */
  readonly readyBucket: number | undefined;
  readonly restarts: number;
  readonly createdBucket: number | undefined;
  readonly uid: string;
  readonly key: string;
}

export function rankedPod(pod: Pod, rank: number, nowMs: number): RankedPod {
  const ready = isPodReady(pod);
  const readySince = ready ? podReadySince(pod) : undefined;
  const created = parseTimestamp(pod.metadata.creationTimestamp);
  return {
    pod,
    unscheduled: (pod.spec?.nodeName ?? '') === '',
    phase: phaseOrdinal(pod),
    ready,
    cost: deletionCost(pod),
    rank,
    readyBucket: readySince === undefined ? undefined : logBucket(readySince, nowMs),
    restarts: maxRestarts(pod),
    createdBucket: created === undefined ? undefined : logBucket(created, nowMs),
    uid: pod.metadata.uid ?? '',
    key: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`,
  };
}

const cmp = (a: number | string, b: number | string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Rules 6 and 8: a zero time first; both zero → equal; else bucket (smaller = newer first), then UID. */
function byTime(a: number | undefined, b: number | undefined, ua: string, ub: string): number {
  if (a === undefined || b === undefined) return a === undefined ? (b === undefined ? 0 : -1) : 1;
  return cmp(a, b) || cmp(ua, ub);
}

/** Negative when `a` is deleted before `b`; 0 only for the same pod. */
export function compareForDeletion(a: RankedPod, b: RankedPod): number {
  if (a.unscheduled !== b.unscheduled) return a.unscheduled ? -1 : 1;
  if (a.phase !== b.phase) return a.phase - b.phase;
  if (a.ready !== b.ready) return a.ready ? 1 : -1;
  if (a.cost !== b.cost) return a.cost - b.cost;
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (a.ready && b.ready) {
    const t = byTime(a.readyBucket, b.readyBucket, a.uid, b.uid);
    if (t !== 0) return t;
  }
  if (a.restarts !== b.restarts) return b.restarts - a.restarts;
  return byTime(a.createdBucket, b.createdBucket, a.uid, b.uid) || cmp(a.uid, b.uid) || cmp(a.key, b.key);
}

/**
 * Each pod's rank: how many of the related pods (the active pods of every ReplicaSet with the same
 * controller, this one included) run on its node. Pods with no node share the "" node, as upstream's
 * map does; rule 1 sorts them first anyway.
 */
export function ranksOnSameNode(pods: readonly Pod[], related: readonly Pod[]): number[] {
  const onNode = new Map<string, number>();
  const seen = new Set<string>();
  for (const p of related) {
    const id = p.metadata.uid ?? `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;
    if (seen.has(id) || !isPodActive(p)) continue;
    seen.add(id);
    const node = p.spec?.nodeName ?? '';
    onNode.set(node, (onNode.get(node) ?? 0) + 1);
  }
  return pods.map((p) => onNode.get(p.spec?.nodeName ?? '') ?? 0);
}

/**
 * The `count` pods to delete out of `pods` (getPodsToDelete): all of them when count covers them, else
 * the first `count` in deletion order.
 */
export function podsToDelete(
  pods: readonly Pod[],
  related: readonly Pod[],
  count: number,
  nowMs: number,
): Pod[] {
  if (count <= 0) return [];
  if (count >= pods.length) return [...pods];
  return sortForDeletion(pods, related, nowMs)
    .slice(0, count)
    .map((r) => r.pod);
}

/** `pods` in deletion order (first = deleted first). */
export function sortForDeletion(pods: readonly Pod[], related: readonly Pod[], nowMs: number): RankedPod[] {
  const ranks = ranksOnSameNode(pods, related);
  return pods.map((p, i) => rankedPod(p, ranks[i]!, nowMs)).sort(compareForDeletion);
}
