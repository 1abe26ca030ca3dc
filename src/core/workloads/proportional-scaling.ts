// What the proportional scaling of a Deployment reads when its replicas change (kube's
// pkg/controller/deployment sync.go scale, with deployment/util's FindActiveOrLatest, IsSaturated and
// GetProportion): the one ReplicaSet that takes the whole change, whether the new ReplicaSet is already
// saturated, and each ReplicaSet's share of the change. Pure.
import {
  byCreation,
  DESIRED_REPLICAS_ANNOTATION,
  intAnnotation,
  isActive,
  MAX_REPLICAS_ANNOTATION,
  maxSurgeOf,
  replicasOf,
  specReplicas,
  type Deployment,
  type ReplicaSet,
} from './deployment-util.js';

/**
 * FindActiveOrLatest: with at most one active RS, that one (or with none, the new RS, else the newest
 * old one); with several, undefined.
 */
export function findActiveOrLatest(
  newRS: ReplicaSet | undefined,
  olds: readonly ReplicaSet[],
): ReplicaSet | undefined {
  if (newRS === undefined && olds.length === 0) return undefined;
  const newestFirst = [...olds].sort((a, b) => byCreation(b, a));
  const active = [...newestFirst, ...(newRS === undefined ? [] : [newRS])].filter(isActive);
  if (active.length === 0) return newRS ?? newestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** IsSaturated: the new RS wants, was told and has available exactly replicas. */
export function isSaturated(d: Deployment, rs: ReplicaSet): boolean {
  const desired = intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
  const replicas = replicasOf(d);
  return (
    desired !== undefined &&
    specReplicas(rs) === replicas &&
    desired === replicas &&
    (rs.status?.availableReplicas ?? 0) === replicas
  );
}

/** Go's math.Round: half away from zero. */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/**
 * GetProportion: this RS's share of `toAdd`, by its size against the max-replicas annotation it was
 * last scaled with (or the Deployment's status.replicas), bounded by what is still to add.
 */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  const spec = specReplicas(rs);
  if (spec === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  const replicas = replicasOf(d);
  if (replicas === 0) fraction = -spec;
  else {
    const target = replicas + maxSurgeOf(d);
    const annotated = intAnnotation(rs, MAX_REPLICAS_ANNOTATION) ?? d.status?.replicas ?? 0;
    // upstream divides by zero here; with no basis the leftover step hands the change out instead
    fraction = annotated > 0 ? roundHalfAway((spec * target) / annotated) - spec : 0;
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}
