// RollingUpdate step planning: how far the new ReplicaSet may grow and how far the old ones may shrink
// in one sync, so that no more than replicas + maxSurge pods exist and no fewer than
// replicas − maxUnavailable are available. Behaves like kube's pkg/controller/deployment/rolling.go.
// Scaling is injected: `scale(rs, n)` records the write and returns the RS as it will be, so these
// functions stay pure and read what earlier steps changed.
import {
  byCreation,
  isRollingUpdate,
  maxSurgeOf,
  maxUnavailableOf,
  replicasOf,
  specReplicas,
  type Deployment,
  type ReplicaSet,
} from './deployment-util.js';

/** Scales `rs` to `size`; returns the RS with its new spec (the same object when nothing changed). */
export type Scaler = (rs: ReplicaSet, size: number) => ReplicaSet;

const sum = (rss: readonly (ReplicaSet | undefined)[], f: (rs: ReplicaSet) => number): number =>
  rss.reduce((n, rs) => n + (rs === undefined ? 0 : f(rs)), 0);

/** Σ spec.replicas. */
export const specTotal = (rss: readonly (ReplicaSet | undefined)[]): number => sum(rss, specReplicas);
/** Σ status.replicas. */
export const actualTotal = (rss: readonly (ReplicaSet | undefined)[]): number =>
  sum(rss, (rs) => rs.status?.replicas ?? 0);
/** Σ status.availableReplicas. */
export const availableTotal = (rss: readonly (ReplicaSet | undefined)[]): number =>
  sum(rss, (rs) => rs.status?.availableReplicas ?? 0);
/** Σ status.readyReplicas. */
export const readyTotal = (rss: readonly (ReplicaSet | undefined)[]): number =>
  sum(rss, (rs) => rs.status?.readyReplicas ?? 0);

/**
 * NewRSNewReplicas: the size the new RS may have now. Rolling: grow towards replicas while the total
 * stays within replicas + maxSurge (never shrink here). Recreate: replicas.
 */
export function newRSNewReplicas(
  d: Deployment,
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d)) return replicas;
  const current = newRS === undefined ? 0 : specReplicas(newRS);
  const total = specTotal(allRSs);
  const maxTotal = replicas + maxSurgeOf(d);
  if (total >= maxTotal) return current;
  return current + Math.min(maxTotal - total, replicas - current);
}

/** The size a new RS is created with: NewRSNewReplicas with the old RSes only. */
export function newRSReplicasForCreate(d: Deployment, olds: readonly ReplicaSet[]): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d)) return replicas;
  const total = specTotal(olds);
  const maxTotal = replicas + maxSurgeOf(d);
  return total >= maxTotal ? 0 : Math.min(maxTotal - total, replicas);
}

/** reconcileNewReplicaSet: scales the new RS towards replicas; whether it changed. */
export function reconcileNewReplicaSet(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  newRS: ReplicaSet,
  scale: Scaler,
): boolean {
  const replicas = replicasOf(d);
  const current = specReplicas(newRS);
  if (current === replicas) return false;
  if (current > replicas) return scale(newRS, replicas) !== newRS;
  return scale(newRS, newRSNewReplicas(d, allRSs, newRS)) !== newRS;
}

/**
 * reconcileOldReplicaSets: shrinks the active old RSes, first by dropping their unavailable pods
 * (cleanupUnhealthyReplicas, bounded by maxScaledDown), then by what availability above
 * replicas − maxUnavailable allows. Oldest RSes go first. Returns whether anything was scaled.
 */
export function reconcileOldReplicaSets(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  oldRSs: readonly ReplicaSet[],
  newRS: ReplicaSet,
  scale: Scaler,
): boolean {
  if (specTotal(oldRSs) === 0) return false;
  const minAvailable = replicasOf(d) - maxUnavailableOf(d);
  const newUnavailable = specReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = specTotal(allRSs) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const { rss: olds, scaled: cleaned } = cleanupUnhealthyReplicas(oldRSs, maxScaledDown, scale);
  const scaledDown = scaleDownOldForRollingUpdate(d, [...olds, newRS], olds, scale);
  return cleaned + scaledDown > 0;
}

/**
 * cleanupUnhealthyReplicas: oldest first, each old RS loses up to its unavailable replicas, at most
 * `maxCleanup` in total. (An RS reporting more available than it wants is left alone; upstream errors.)
 */
export function cleanupUnhealthyReplicas(
  oldRSs: readonly ReplicaSet[],
  maxCleanup: number,
  scale: Scaler,
): { rss: ReplicaSet[]; scaled: number } {
  const rss = [...oldRSs].sort(byCreation);
  let total = 0;
  for (let i = 0; i < rss.length; i++) {
    if (total >= maxCleanup) break;
    const rs = rss[i]!;
    const spec = specReplicas(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (spec === 0 || spec <= available) continue;
    const n = Math.min(maxCleanup - total, spec - available);
    rss[i] = scale(rs, spec - n);
    total += n;
  }
  return { rss, scaled: total };
}

/**
 * scaleDownOldReplicaSetsForRollingUpdate: with availability above replicas − maxUnavailable, the
 * surplus comes off the old RSes, oldest first. Returns how many replicas were taken off.
 */
export function scaleDownOldForRollingUpdate(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  oldRSs: readonly ReplicaSet[],
  scale: Scaler,
): number {
  const minAvailable = replicasOf(d) - maxUnavailableOf(d);
  const available = availableTotal(allRSs);
  if (available <= minAvailable) return 0;
  const budget = available - minAvailable;
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= budget) break;
    const spec = specReplicas(rs);
    if (spec === 0) continue;
    const n = Math.min(spec, budget - total);
    scale(rs, spec - n);
    total += n;
  }
  return total;
}
