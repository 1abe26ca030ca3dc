// Deployment status and its Available / Progressing / ReplicaFailure conditions, with upstream's
// reasons and messages. Behaves like kube's pkg/controller/deployment/{sync.go,progress.go} and
// deployment_util.go's condition helpers. Time is passed in.
import {
  canonicalJson,
  formatTime,
  hasProgressDeadline,
  maxUnavailableOf,
  parseTime,
  replicasOf,
  type Deployment,
  type DeploymentCondition,
  type DeploymentStatus,
  type ReplicaSet,
} from './deployment-util.js';
import { actualTotal, availableTotal, readyTotal, specTotal } from './rolling.js';

export const AVAILABLE = 'Available';
export const PROGRESSING = 'Progressing';
export const REPLICA_FAILURE = 'ReplicaFailure';

export const REASON = {
  newRSAvailable: 'NewReplicaSetAvailable',
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  rsUpdated: 'ReplicaSetUpdated',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
  rsCreateError: 'ReplicaSetCreateError',
} as const;

export const conditionOf = (
  status: DeploymentStatus | undefined,
  type: string,
): DeploymentCondition | undefined => status?.conditions?.find((c) => c.type === type);

export const newCondition = (
  type: string,
  status: DeploymentCondition['status'],
  reason: string,
  message: string,
  nowMs: number,
): DeploymentCondition => {
  const t = formatTime(nowMs);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
};

/**
 * SetDeploymentCondition on `status` in place: same status and reason → nothing (lastUpdateTime is not
 * refreshed); same status → lastTransitionTime kept; the condition moves to the end of the list.
 */
export function setCondition(status: DeploymentStatus, c: DeploymentCondition): void {
  const current = conditionOf(status, c.type);
  if (current !== undefined && current.status === c.status && current.reason === c.reason) return;
  const next =
    current !== undefined && current.status === c.status
      ? {
          ...c,
          ...(current.lastTransitionTime === undefined
            ? {}
            : { lastTransitionTime: current.lastTransitionTime }),
        }
      : c;
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  if (status.conditions === undefined) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
}

/** calculateStatus: counts over all the Deployment's RSes, and the Available condition. */
export function calculateStatus(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
  nowMs: number,
): DeploymentStatus {
  const available = availableTotal(allRSs);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: actualTotal(allRSs),
    updatedReplicas: actualTotal([newRS]),
    readyReplicas: readyTotal(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specTotal(allRSs) - available),
    ...(d.status?.collisionCount === undefined ? {} : { collisionCount: d.status.collisionCount }),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
  };
  if (available >= replicasOf(d) - maxUnavailableOf(d)) {
    setCondition(
      status,
      newCondition(AVAILABLE, 'True', REASON.minimumAvailable, 'Deployment has minimum availability.', nowMs),
    );
  } else {
    setCondition(
      status,
      newCondition(
        AVAILABLE,
        'False',
        REASON.minimumUnavailable,
        'Deployment does not have minimum availability.',
        nowMs,
      ),
    );
  }
  return status;
}

/** DeploymentComplete: every replica updated and available, and the generation observed. */
export const deploymentComplete = (d: Deployment, s: DeploymentStatus): boolean =>
  (s.updatedReplicas ?? 0) === replicasOf(d) &&
  (s.replicas ?? 0) === replicasOf(d) &&
  (s.availableReplicas ?? 0) === replicasOf(d) &&
  (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);

/** DeploymentProgressing: the new status shows progress over the stored one. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** DeploymentTimedOut: no progress for progressDeadlineSeconds since the Progressing lastUpdateTime. */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = conditionOf(s, PROGRESSING);
  if (c === undefined || c.reason === REASON.newRSAvailable) return false;
  if (c.reason === REASON.timedOut) return true;
  return parseTime(c.lastUpdateTime) + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

const subject = (d: Deployment, newRS: ReplicaSet | undefined): string =>
  newRS === undefined ? `Deployment "${d.metadata.name ?? ''}"` : `ReplicaSet "${newRS.metadata.name ?? ''}"`;

/**
 * The ReplicaFailure condition to carry: the new RS's, else the first RS's that has one (as a
 * Deployment condition whose both times are the RS condition's lastTransitionTime).
 */
function replicaFailure(
  allRSs: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
): DeploymentCondition | undefined {
  const from = (rs: ReplicaSet | undefined): DeploymentCondition | undefined => {
    const c = rs?.status?.conditions?.find((x) => x.type === REPLICA_FAILURE);
    if (c === undefined) return undefined;
    return {
      type: REPLICA_FAILURE,
      status: c.status,
      ...(c.lastTransitionTime === undefined
        ? {}
        : { lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime }),
      ...(c.reason === undefined ? {} : { reason: c.reason }),
      ...(c.message === undefined ? {} : { message: c.message }),
    };
  };
  const mine = from(newRS);
  if (mine !== undefined) return mine;
  for (const rs of allRSs) {
    const c = from(rs);
    if (c !== undefined) return c;
  }
  return undefined;
}

/**
 * syncRolloutStatus's computation: calculateStatus plus the Progressing condition (complete →
 * NewReplicaSetAvailable; progress → ReplicaSetUpdated with a fresh lastUpdateTime; no progress past
 * the deadline → ProgressDeadlineExceeded) and ReplicaFailure. `d` is the Deployment with the
 * conditions this sync already set; `stored` the status as the API server has it.
 */
export function rolloutStatus(
  d: Deployment,
  allRSs: readonly ReplicaSet[],
  newRS: ReplicaSet | undefined,
  nowMs: number,
): DeploymentStatus {
  const status = calculateStatus(d, allRSs, newRS, nowMs);
  if (!hasProgressDeadline(d)) removeCondition(status, PROGRESSING);
  const current = conditionOf(d.status, PROGRESSING);
  const settled = status.replicas === status.updatedReplicas && current?.reason === REASON.newRSAvailable;
  if (hasProgressDeadline(d) && !settled) {
    if (deploymentComplete(d, status)) {
      setCondition(
        status,
        newCondition(
          PROGRESSING,
          'True',
          REASON.newRSAvailable,
          `${subject(d, newRS)} has successfully progressed.`,
          nowMs,
        ),
      );
    } else if (deploymentProgressing(d, status)) {
      const c = newCondition(
        PROGRESSING,
        'True',
        REASON.rsUpdated,
        `${subject(d, newRS)} is progressing.`,
        nowMs,
      );
      if (current !== undefined) {
        if (current.status === 'True' && current.lastTransitionTime !== undefined)
          c.lastTransitionTime = current.lastTransitionTime;
        removeCondition(status, PROGRESSING);
      }
      setCondition(status, c);
    } else if (deploymentTimedOut(d, status, nowMs)) {
      setCondition(
        status,
        newCondition(
          PROGRESSING,
          'False',
          REASON.timedOut,
          `${subject(d, newRS)} has timed out progressing.`,
          nowMs,
        ),
      );
    }
  }
  const failure = replicaFailure(allRSs, newRS);
  if (failure !== undefined) setCondition(status, failure);
  else removeCondition(status, REPLICA_FAILURE);
  return status;
}

/**
 * requeueStuckDeployment: when a rollout is neither complete nor timed out, the delay after which
 * the deadline passes (so a timeout is noticed without another event); undefined when none is due.
 * A deadline already passed gives 1 s, upstream's rate-limited requeue.
 */
export function stuckRequeueAfterMs(d: Deployment, s: DeploymentStatus, nowMs: number): number | undefined {
  const c = conditionOf(s, PROGRESSING);
  if (!hasProgressDeadline(d) || c === undefined) return undefined;
  if (deploymentComplete(d, s) || c.reason === REASON.timedOut) return undefined;
  const after = parseTime(c.lastUpdateTime) + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - nowMs;
  if (after < 1000) return 1000;
  return after + 1000;
}

/**
 * checkPausedConditions: with a deadline and not timed out, pausing sets Progressing Unknown
 * DeploymentPaused and resuming DeploymentResumed (which restarts the progress clock). Changes `status`
 * in place; returns whether it changed.
 */
export function applyPausedCondition(d: Deployment, status: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = conditionOf(status, PROGRESSING);
  if (c?.reason === REASON.timedOut) return false;
  const pausedExists = c?.reason === REASON.paused;
  if (d.spec.paused === true && !pausedExists) {
    setCondition(status, newCondition(PROGRESSING, 'Unknown', REASON.paused, 'Deployment is paused', nowMs));
    return true;
  }
  if (d.spec.paused !== true && pausedExists) {
    setCondition(
      status,
      newCondition(PROGRESSING, 'Unknown', REASON.resumed, 'Deployment is resumed', nowMs),
    );
    return true;
  }
  return false;
}

/**
 * The status as Go would serialize it (omitempty drops zero counts and empty lists), so a computed
 * status compares equal to the stored one exactly when upstream's DeepEqual would.
 */
export function normalizeStatus(s: DeploymentStatus | undefined): DeploymentStatus {
  const out: DeploymentStatus = {};
  if (s === undefined) return out;
  for (const k of [
    'observedGeneration',
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
  ] as const) {
    const v = s[k];
    if (v !== undefined && v !== 0) out[k] = v;
  }
  if (s.conditions !== undefined && s.conditions.length > 0) out.conditions = s.conditions;
  if (s.collisionCount !== undefined) out.collisionCount = s.collisionCount;
  return out;
}

export const sameStatus = (a: DeploymentStatus | undefined, b: DeploymentStatus | undefined): boolean =>
  canonicalJson(normalizeStatus(a)) === canonicalJson(normalizeStatus(b));
