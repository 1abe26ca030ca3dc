// One Deployment sync as a plan: from the Deployment, the ReplicaSets it owns (already claimed) and,
// for Recreate, the phases of their pods, decide which ReplicaSets to create, scale (with their
// annotations) or delete, which events to record, and the Deployment's annotations and status to write
// through /status. Behaves like kube's pkg/controller/deployment/{deployment_controller.go syncDeployment,
// sync.go, rolling.go, recreate.go}: the same steps in the same order, with each step's writes folded
// into one plan. Like upstream, a sync that scales stops there and lets the next sync (triggered by the
// ReplicaSet's change) take the next step. Pure: `nowMs` is passed in and nothing given is changed.
import {
  byCreation,
  byRevision,
  buildNewReplicaSet,
  DESIRED_REPLICAS_ANNOTATION,
  findNewReplicaSet,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  intAnnotation,
  isActive,
  isEmptySelector,
  isRollingUpdate,
  MAX_REPLICAS_ANNOTATION,
  maxRevision,
  maxSurgeOf,
  newReplicaSetAnnotations,
  REVISION_ANNOTATION,
  replicasOf,
  specReplicas,
  type Deployment,
  type DeploymentStatus,
  type ReplicaSet,
} from './deployment-util.js';
import {
  applyPausedCondition,
  calculateStatus,
  conditionOf,
  deploymentComplete,
  newCondition,
  normalizeStatus,
  PROGRESSING,
  REASON,
  rolloutStatus,
  sameStatus,
  setCondition,
  stuckRequeueAfterMs,
} from './deployment-status.js';
import { findActiveOrLatest, isSaturated, proportion } from './proportional-scaling.js';
import {
  newRSReplicasForCreate,
  reconcileNewReplicaSet,
  reconcileOldReplicaSets,
  specTotal,
} from './rolling.js';

/** A pod controlled by one of the Deployment's ReplicaSets (only its owner and phase are read). */
export interface PodPhase {
  readonly ownerUid: string;
  readonly phase?: string | undefined;
}

export interface DeploymentSyncInput {
  readonly deployment: Deployment;
  /** The ReplicaSets the Deployment controls, after adoption and release. */
  readonly replicaSets: readonly ReplicaSet[];
  /** Pods of those ReplicaSets; Recreate waits until none of the old ones runs. */
  readonly pods?: readonly PodPhase[];
  readonly nowMs: number;
}

export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface ReplicaSetWrite {
  readonly op: 'create' | 'update';
  /** The whole object to write (an update carries the resourceVersion read, for compare-and-swap). */
  readonly replicaSet: ReplicaSet;
  /** Events to record once the write succeeds. */
  readonly events: PlannedEvent[];
}

export type SyncPath = 'selecting-all' | 'status-only' | 'scale' | 'rolling' | 'recreate';

export interface DeploymentSyncPlan {
  readonly path: SyncPath;
  /** In order: a create comes first. */
  readonly writes: ReplicaSetWrite[];
  readonly deletes: ReplicaSet[];
  /** Events about the Deployment not tied to a ReplicaSet write. */
  readonly events: PlannedEvent[];
  /** The Deployment with its new annotations and status, to write through /status; absent when unchanged. */
  readonly deployment?: Deployment;
  /** When to look again without an event (the progress deadline). */
  readonly requeueAfterMs?: number;
}

export const SCALING_REPLICA_SET = 'ScalingReplicaSet';
export const SELECTING_ALL = 'SelectingAll';

class Planner {
  /** The Deployment as this sync changes it (annotations, conditions). */
  readonly d: Deployment;
  private readonly rss = new Map<string, ReplicaSet>();
  private readonly writes = new Map<string, ReplicaSetWrite>();
  private readonly deletes: ReplicaSet[] = [];
  private readonly events: PlannedEvent[] = [];

  constructor(private readonly input: DeploymentSyncInput) {
    this.d = structuredClone(input.deployment);
    this.d.status ??= {};
    for (const rs of input.replicaSets) this.rss.set(rs.metadata.name ?? '', rs);
  }

  private get now(): number {
    return this.input.nowMs;
  }

  private all(): ReplicaSet[] {
    return [...this.rss.values()];
  }

  private current(rs: ReplicaSet): ReplicaSet {
    return this.rss.get(rs.metadata.name ?? '') ?? rs;
  }

  private record(next: ReplicaSet, op: 'create' | 'update', event?: PlannedEvent): ReplicaSet {
    const name = next.metadata.name ?? '';
    this.rss.set(name, next);
    const prior = this.writes.get(name);
    const events = [...(prior?.events ?? []), ...(event === undefined ? [] : [event])];
    this.writes.set(name, { op: prior?.op ?? op, replicaSet: next, events });
    return next;
  }

  private replicasAnnotations(): { desired: string; max: string } {
    const replicas = replicasOf(this.d);
    return { desired: String(replicas), max: String(replicas + maxSurgeOf(this.d)) };
  }

  /**
   * scaleReplicaSet: new size and refreshed desired/max annotations; an event only when the size
   * changes. Returns the RS as it will be (the same object when nothing changes).
   */
  private scaleTo(rs0: ReplicaSet, size: number, op?: 'up' | 'down'): ReplicaSet {
    const rs = this.current(rs0);
    const from = specReplicas(rs);
    const { desired, max } = this.replicasAnnotations();
    const a = rs.metadata.annotations ?? {};
    const sizeChanged = from !== size;
    if (!sizeChanged && a[DESIRED_REPLICAS_ANNOTATION] === desired && a[MAX_REPLICAS_ANNOTATION] === max)
      return rs;
    const next = structuredClone(rs);
    next.spec.replicas = size;
    next.metadata.annotations = {
      ...a,
      [DESIRED_REPLICAS_ANNOTATION]: desired,
      [MAX_REPLICAS_ANNOTATION]: max,
    };
    const word = op ?? (size > from ? 'up' : 'down');
    return this.record(
      next,
      'update',
      sizeChanged
        ? {
            type: 'Normal',
            reason: SCALING_REPLICA_SET,
            message: `Scaled ${word} replica set ${rs.metadata.name ?? ''} from ${from} to ${size}`,
          }
        : undefined,
    );
  }

  /** scaleReplicaSetAndRecordEvent: nothing at all when the size is already right. */
  readonly scale = (rs0: ReplicaSet, size: number): ReplicaSet => {
    const rs = this.current(rs0);
    return specReplicas(rs) === size ? rs : this.scaleTo(rs, size);
  };

  private setDeploymentRevision(revision: string): void {
    const a = (this.d.metadata.annotations ??= {});
    if (a[REVISION_ANNOTATION] !== revision) a[REVISION_ANNOTATION] = revision;
  }

  /**
   * getNewReplicaSet: the RS for the current template with its annotations brought up to date (revision
   * raised above every old RS's, Deployment annotations copied, minReadySeconds), created when asked
   * and missing; the Deployment's revision annotation follows it.
   */
  newReplicaSet(create: boolean): ReplicaSet | undefined {
    const d = this.d;
    const existing = findNewReplicaSet(d, this.all());
    const olds = this.all().filter((rs) => rs !== existing);
    const newRevision = maxRevision(olds) + 1;
    if (existing !== undefined) {
      const { annotations, changed } = newReplicaSetAnnotations(
        d,
        existing.metadata.annotations,
        newRevision,
        true,
      );
      const minReady = d.spec.minReadySeconds ?? 0;
      let rs = existing;
      if (changed || (existing.spec.minReadySeconds ?? 0) !== minReady) {
        const next = structuredClone(existing);
        next.metadata.annotations = annotations;
        next.spec.minReadySeconds = minReady;
        rs = this.record(next, 'update');
      }
      this.setDeploymentRevision(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? '');
      if (hasProgressDeadline(d) && conditionOf(d.status, PROGRESSING) === undefined) {
        setCondition(
          d.status!,
          newCondition(
            PROGRESSING,
            'True',
            REASON.foundNewRS,
            `Found new replica set "${rs.metadata.name ?? ''}"`,
            this.now,
          ),
        );
      }
      return rs;
    }
    if (!create) return undefined;
    const replicas = newRSReplicasForCreate(d, olds);
    const rs = buildNewReplicaSet(d, replicas, newRevision);
    const name = rs.metadata.name ?? '';
    this.record(
      rs,
      'create',
      replicas > 0
        ? {
            type: 'Normal',
            reason: SCALING_REPLICA_SET,
            message: `Scaled up replica set ${name} from 0 to ${replicas}`,
          }
        : undefined,
    );
    if (hasProgressDeadline(d)) {
      setCondition(
        d.status!,
        newCondition(PROGRESSING, 'True', REASON.newRSCreated, `Created new replica set "${name}"`, this.now),
      );
    }
    this.setDeploymentRevision(String(newRevision));
    return rs;
  }

  private olds(newRS: ReplicaSet | undefined): ReplicaSet[] {
    return this.all().filter((rs) => rs.metadata.name !== newRS?.metadata.name);
  }

  /** isScalingEvent: an active RS whose desired-replicas annotation is not spec.replicas. */
  isScalingEvent(): boolean {
    this.newReplicaSet(false);
    const replicas = replicasOf(this.d);
    return this.all().some((rs) => {
      if (!isActive(rs)) return false;
      const desired = intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);
      return desired !== undefined && desired !== replicas;
    });
  }

  /** `scale` of sync.go: proportional scaling across the active RSes. */
  private scaleProportionally(newRS: ReplicaSet | undefined, olds: ReplicaSet[]): void {
    const d = this.d;
    const replicas = replicasOf(d);
    const single = findActiveOrLatest(newRS, olds);
    if (single !== undefined) {
      // upstream leaves the annotations of an RS already at the right size; refreshing them too lets a
      // stale desired-replicas annotation stop looking like a scaling event
      this.scaleTo(single, replicas);
      return;
    }
    if (newRS !== undefined && isSaturated(d, newRS)) {
      for (const rs of olds) if (isActive(rs)) this.scale(rs, 0);
      return;
    }
    if (!isRollingUpdate(d)) return;
    const active = [...olds, ...(newRS === undefined ? [] : [newRS])].filter(isActive);
    const allowed = replicas === 0 ? 0 : replicas + maxSurgeOf(d);
    const toAdd = allowed - specTotal(active);
    if (toAdd > 0) active.sort((a, b) => specReplicas(b) - specReplicas(a) || byCreation(b, a));
    else if (toAdd < 0) active.sort((a, b) => specReplicas(b) - specReplicas(a) || byCreation(a, b));
    const sizes = new Map<string, number>();
    let added = 0;
    for (const rs of active) {
      const p = toAdd === 0 ? 0 : proportion(rs, d, toAdd, added);
      sizes.set(rs.metadata.name ?? '', specReplicas(rs) + p);
      added += p;
    }
    const op = toAdd > 0 ? 'up' : 'down';
    active.forEach((rs, i) => {
      const name = rs.metadata.name ?? '';
      let size = sizes.get(name)!;
      if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
      this.scaleTo(rs, size, op);
    });
  }

  /** cleanupDeployment: old RSes beyond revisionHistoryLimit, lowest revision first, once fully down. */
  private cleanup(olds: readonly ReplicaSet[]): void {
    const d = this.d;
    if (!hasRevisionHistoryLimit(d)) return;
    const alive = olds
      .map((rs) => this.current(rs))
      .filter((rs) => rs.metadata.deletionTimestamp === undefined);
    const diff = alive.length - (d.spec.revisionHistoryLimit ?? 0);
    if (diff <= 0) return;
    for (const rs of alive.sort(byRevision).slice(0, diff)) {
      if (
        (rs.status?.replicas ?? 0) !== 0 ||
        specReplicas(rs) !== 0 ||
        (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0) ||
        this.writes.has(rs.metadata.name ?? '')
      )
        continue;
      this.deletes.push(rs);
    }
  }

  private finish(path: SyncPath, status: DeploymentStatus, requeue: boolean): DeploymentSyncPlan {
    const stored = this.input.deployment;
    const annotationsChanged =
      JSON.stringify(stored.metadata.annotations ?? {}) !== JSON.stringify(this.d.metadata.annotations ?? {});
    const statusChanged = !sameStatus(stored.status, status);
    const requeueAfterMs = requeue ? stuckRequeueAfterMs(this.d, status, this.now) : undefined;
    let deployment: Deployment | undefined;
    if (annotationsChanged || statusChanged) {
      deployment = structuredClone(stored);
      if (this.d.metadata.annotations !== undefined)
        deployment.metadata.annotations = { ...this.d.metadata.annotations };
      deployment.status = normalizeStatus(status);
    }
    return {
      path,
      writes: [...this.writes.values()].sort((a, b) => (a.op === b.op ? 0 : a.op === 'create' ? -1 : 1)),
      deletes: this.deletes,
      events: this.events,
      ...(deployment === undefined ? {} : { deployment }),
      ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }),
    };
  }

  private rolloutFinish(path: SyncPath, newRS: ReplicaSet | undefined): DeploymentSyncPlan {
    const rs = newRS === undefined ? undefined : this.current(newRS);
    return this.finish(path, rolloutStatus(this.d, this.all(), rs, this.now), true);
  }

  private statusFinish(path: SyncPath, newRS: ReplicaSet | undefined): DeploymentSyncPlan {
    const rs = newRS === undefined ? undefined : this.current(newRS);
    return this.finish(path, calculateStatus(this.d, this.all(), rs, this.now), false);
  }

  plan(): DeploymentSyncPlan {
    const d = this.d;
    if (isEmptySelector(d.spec.selector)) {
      this.events.push({
        type: 'Warning',
        reason: SELECTING_ALL,
        message: 'This deployment is selecting all pods. A non-empty selector is required.',
      });
      const status = structuredClone(d.status ?? {});
      if ((status.observedGeneration ?? 0) < (d.metadata.generation ?? 0))
        status.observedGeneration = d.metadata.generation ?? 0;
      return this.finish('selecting-all', status, false);
    }
    if (d.metadata.deletionTimestamp !== undefined) {
      return this.statusFinish('status-only', this.newReplicaSet(false));
    }
    applyPausedCondition(d, d.status!, this.now);
    if (d.spec.paused === true || this.isScalingEvent()) return this.sync();
    return isRollingUpdate(d) ? this.rolling() : this.recreate();
  }

  /** sync: scale only (paused or a scaling event); a paused Deployment also cleans up. */
  private sync(): DeploymentSyncPlan {
    const newRS = this.newReplicaSet(false);
    const olds = this.olds(newRS);
    this.scaleProportionally(newRS, olds);
    if (this.d.spec.paused === true) this.cleanup(this.olds(newRS));
    return this.statusFinish('scale', newRS);
  }

  /** rolloutRolling. */
  private rolling(): DeploymentSyncPlan {
    const d = this.d;
    let newRS = this.newReplicaSet(true)!;
    if (reconcileNewReplicaSet(d, this.all(), newRS, this.scale)) return this.rolloutFinish('rolling', newRS);
    newRS = this.current(newRS);
    const olds = this.olds(newRS);
    if (reconcileOldReplicaSets(d, this.all(), olds.filter(isActive), newRS, this.scale))
      return this.rolloutFinish('rolling', newRS);
    if (deploymentComplete(d, d.status!)) this.cleanup(olds);
    return this.rolloutFinish('rolling', newRS);
  }

  /** rolloutRecreate: every old RS to 0, wait for their pods to stop, then the new RS at full size. */
  private recreate(): DeploymentSyncPlan {
    const d = this.d;
    let newRS = this.newReplicaSet(false);
    const olds = this.olds(newRS);
    let scaled = false;
    for (const rs of olds) if (isActive(rs) && this.scale(rs, 0) !== rs) scaled = true;
    if (scaled) return this.rolloutFinish('recreate', newRS);
    if (this.oldPodsRunning(newRS, olds)) return this.rolloutFinish('recreate', newRS);
    newRS ??= this.newReplicaSet(true)!;
    this.scale(newRS, replicasOf(d));
    if (deploymentComplete(d, d.status!)) this.cleanup(olds);
    return this.rolloutFinish('recreate', newRS);
  }

  /** oldPodsRunning: an old RS still reports replicas, or one of its pods is not Succeeded/Failed. */
  private oldPodsRunning(newRS: ReplicaSet | undefined, olds: readonly ReplicaSet[]): boolean {
    if (olds.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
    const oldUids = new Set(olds.map((rs) => rs.metadata.uid ?? ''));
    oldUids.delete(newRS?.metadata.uid ?? '');
    return (this.input.pods ?? []).some(
      (p) => oldUids.has(p.ownerUid) && p.phase !== 'Succeeded' && p.phase !== 'Failed',
    );
  }
}

/** One Deployment sync (syncDeployment after the ReplicaSets are claimed). */
export function planDeploymentSync(input: DeploymentSyncInput): DeploymentSyncPlan {
  return new Planner(input).plan();
}

/**
 * The Progressing condition for a failed ReplicaSet create (ReplicaSetCreateError), applied to a copy of
 * the Deployment's status; undefined when the Deployment has no progress deadline.
 */
export function createErrorStatus(
  d: Deployment,
  rsName: string,
  err: string,
  nowMs: number,
): { status: DeploymentStatus; event: PlannedEvent } | undefined {
  if (!hasProgressDeadline(d)) return undefined;
  const message = `Failed to create new replica set "${rsName}": ${err}`;
  const status = structuredClone(d.status ?? {});
  setCondition(status, newCondition(PROGRESSING, 'False', REASON.rsCreateError, message, nowMs));
  return {
    status: normalizeStatus(status),
    event: { type: 'Warning', reason: REASON.rsCreateError, message },
  };
}
