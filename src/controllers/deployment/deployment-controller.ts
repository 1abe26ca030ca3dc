// The Deployment controller (behaves like kube-controller-manager's pkg/controller/deployment): keeps
// one ReplicaSet per pod template and moves replicas from the old ones to the new one by the
// Deployment's strategy. It manages ReplicaSets only; the ReplicaSet controller makes the pods.
//
// Wiring: Deployment changes enqueue the Deployment; a ReplicaSet change enqueues its controlling
// Deployment, or, for an orphan, every Deployment of its namespace that selects it; a pod deletion (or a
// pod finishing) enqueues the Recreate Deployment whose old ReplicaSet owned it, since Recreate waits for
// old pods to stop.
//
// A sync: read the Deployment and its namespace's ReplicaSets from the caches; claim them (adopt
// matching orphans, release ours that stopped matching: strategic-merge patches carrying the
// ReplicaSet's uid, after re-reading the Deployment live before the first adoption); ask
// core/workloads/deployment-sync for the plan; apply it: create/update ReplicaSets (updates are
// compare-and-swap PUTs of copies carrying the cached resourceVersion), delete those past
// revisionHistoryLimit, record events, and write the Deployment's annotations and status through
// /status. A 409 means the cache is behind: the newer object's event brings the key back, so the sync
// stops quietly. The progress deadline is checked again by requeueing the key.
import { labelSelectorMatches } from '../../api/label-match.js';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import type { Projection } from '../../core/projection/projection.js';
import { adoptPatch, canAdopt, decideClaim, releasePatch } from '../../core/workloads/controller-ref.js';
import {
  createErrorStatus,
  planDeploymentSync,
  type DeploymentSyncPlan,
  type PlannedEvent,
  type PodPhase,
} from '../../core/workloads/deployment-sync.js';
import {
  controllerRefOf,
  deploymentControllerRef,
  equalIgnoreHash,
  isRollingUpdate,
  type Deployment,
  type ReplicaSet,
} from '../../core/workloads/deployment-util.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller, ReconcileResult } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import {
  objectKeyOf,
  type IndexFunc,
  type Informer,
  type SharedInformerFactory,
} from '../../runtime/informer.js';
import { keyedController, enqueueOnChange, type KeyedControllerOptions } from '../controller-wiring.js';
import { errText } from '../../api/err-text.js';

export const DEPLOYMENTS = mustFindResource('apps', 'deployments');
export const REPLICASETS = mustFindResource('apps', 'replicasets');
const PODS = mustFindResource('', 'pods');

/** What the controller reads of a pod: its owner and phase (Recreate waits for old pods to stop). */
export const DEPLOYMENT_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  status: { phase: true },
};

/** Index: the uid of the object's controller (ReplicaSets by Deployment, pods by ReplicaSet). */
const BY_CONTROLLER = 'deployment/controllerUID';
const byControllerUid: IndexFunc = (o) => {
  const ref = controllerRefOf(o);
  return ref === undefined ? [] : [ref.uid];
};

export interface DeploymentControllerOptions extends KeyedControllerOptions {
  readonly events?: ClientEventRecorder;
  /** The clock (ms since the epoch); tests pass their own. */
  readonly now?: () => number;
}

const beingDeleted = (o: KObject): boolean =>
  o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;

/** A write that lost a race with a newer version (409) or with a deletion (404). */
const lostRace = (err: unknown): boolean => isApiError(err, 409) || isApiError(err, 404);

export class DeploymentController {
  readonly controller: Controller;
  private readonly deployments: Informer;
  private readonly replicaSets: Informer;
  private readonly pods: Informer;
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly opts: DeploymentControllerOptions = {},
  ) {
    this.now = opts.now ?? (() => Date.now());
    this.deployments = factory.informer(DEPLOYMENTS);
    this.replicaSets = factory.informer(REPLICASETS, { indexers: { [BY_CONTROLLER]: byControllerUid } });
    this.pods = factory.informer(PODS, { indexers: { [BY_CONTROLLER]: byControllerUid } });
    this.controller = keyedController(
      { name: 'deployment', workers: 5, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    const enqueue = enqueueOnChange(this.deployments, this.controller);
    this.replicaSets.addHandlers({
      onAdd: (rs) => this.replicaSetChanged(undefined, rs),
      onUpdate: (old, rs) => this.replicaSetChanged(old, rs),
      onDelete: (rs) => {
        const d = this.owner(rs);
        if (d !== undefined) enqueue(d);
      },
    });
    this.pods.addHandlers({
      onUpdate: (old, pod) => {
        const done = (p: KObject): boolean => {
          const phase = (p['status'] as { phase?: string } | undefined)?.phase;
          return phase === 'Succeeded' || phase === 'Failed';
        };
        if (!done(old) && done(pod)) this.podGone(pod);
      },
      onDelete: (pod) => this.podGone(pod),
    });
  }

  async start(): Promise<void> {
    await Promise.all([
      this.deployments.waitForSync(),
      this.replicaSets.waitForSync(),
      this.pods.waitForSync(),
    ]);
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  // ---- event handlers --------------------------------------------------------------------------------

  /** The cached Deployment a controllerRef names, if its uid matches. */
  private owner(o: KObject): Deployment | undefined {
    const ref = controllerRefOf(o);
    if (ref === undefined || ref.kind !== 'Deployment') return undefined;
    const d = this.deployments.indexer.get(`${o.metadata.namespace ?? ''}/${ref.name}`);
    return d !== undefined && d.metadata.uid === ref.uid ? (d as Deployment) : undefined;
  }

  /** The Deployments of the RS's namespace that select it (for an orphan). */
  private selecting(rs: KObject): Deployment[] {
    return (
      this.deployments.indexer.byIndex('namespace', rs.metadata.namespace ?? '') as Deployment[]
    ).filter((d) => labelSelectorMatches(d.spec?.selector, rs.metadata.labels));
  }

  private replicaSetChanged(old: KObject | undefined, rs: KObject): void {
    const enqueue = (d: KObject): void => this.controller.enqueue(objectKeyOf(d));
    if (old !== undefined && old.metadata.resourceVersion === rs.metadata.resourceVersion) return;
    const oldRef = old === undefined ? undefined : controllerRefOf(old);
    const ref = controllerRefOf(rs);
    if (old !== undefined && oldRef !== undefined && oldRef.uid !== ref?.uid) {
      const was = this.owner(old);
      if (was !== undefined) enqueue(was);
    }
    if (ref !== undefined) {
      const d = this.owner(rs);
      if (d !== undefined) enqueue(d);
      return;
    }
    // An orphan: whoever selects it may adopt it (on add, and when its labels or owner changed).
    const labelsChanged =
      old === undefined ||
      JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(rs.metadata.labels ?? {});
    if (beingDeleted(rs) || !(labelsChanged || oldRef !== undefined)) return;
    for (const d of this.selecting(rs)) enqueue(d);
  }

  /** A pod stopped: a Recreate Deployment may be waiting for it. */
  private podGone(pod: KObject): void {
    const ref = controllerRefOf(pod);
    if (ref === undefined || ref.kind !== 'ReplicaSet') return;
    const rs = this.replicaSets.indexer.get(`${pod.metadata.namespace ?? ''}/${ref.name}`);
    if (rs === undefined || rs.metadata.uid !== ref.uid) return;
    const d = this.owner(rs);
    if (d !== undefined && !isRollingUpdate(d)) this.controller.enqueue(objectKeyOf(d));
  }

  // ---- sync ------------------------------------------------------------------------------------------

  private record(d: Deployment, e: PlannedEvent): void {
    void this.opts.events?.record(regarding('Deployment', 'apps/v1', d), e.type, e.reason, e.message);
  }

  /**
   * The Deployment's ReplicaSets after claiming (ClaimReplicaSets): ours that match are kept, matching
   * orphans adopted, ours that stopped matching released. Adoption first re-reads the Deployment live.
   */
  private async claim(d: Deployment): Promise<ReplicaSet[]> {
    const ns = d.metadata.namespace ?? '';
    const uid = d.metadata.uid ?? '';
    const out: ReplicaSet[] = [];
    let recheck: string | undefined | null = null; // null: not read yet
    for (const o of this.replicaSets.indexer.byIndex('namespace', ns)) {
      const rs = o as ReplicaSet;
      const decision = decideClaim({
        ownerUid: uid,
        ownerBeingDeleted: beingDeleted(d),
        controllerRef: controllerRefOf(rs),
        selected: labelSelectorMatches(d.spec.selector, rs.metadata.labels),
        candidateBeingDeleted: beingDeleted(rs),
      });
      if (decision === 'keep') out.push(rs);
      if (decision === 'adopt') {
        if (recheck === null) {
          let live: KObject | undefined;
          try {
            live = await this.client.get(DEPLOYMENTS, ns, d.metadata.name ?? '');
          } catch (err) {
            if (!isApiError(err, 404)) throw err;
          }
          recheck = canAdopt({ namespace: ns, name: d.metadata.name ?? '', uid }, live);
        }
        if (recheck !== undefined) throw new Error(recheck);
        try {
          const adopted = await this.client.patch(
            REPLICASETS,
            ns,
            rs.metadata.name ?? '',
            'strategic',
            adoptPatch(deploymentControllerRef(d), rs.metadata.uid ?? ''),
          );
          out.push(adopted as ReplicaSet);
        } catch (err) {
          if (!isApiError(err, 404)) throw err; // gone: nothing to adopt
        }
      }
      if (decision === 'release') {
        try {
          await this.client.patch(
            REPLICASETS,
            ns,
            rs.metadata.name ?? '',
            'strategic',
            releasePatch(uid, rs.metadata.uid ?? ''),
          );
        } catch (err) {
          if (!isApiError(err, 404) && !isApiError(err, 422)) throw err;
        }
      }
    }
    return out;
  }

  /** Pods of the Deployment's ReplicaSets (only Recreate reads them). */
  private podPhases(rss: readonly ReplicaSet[]): PodPhase[] {
    const out: PodPhase[] = [];
    for (const rs of rss) {
      const uid = rs.metadata.uid ?? '';
      for (const p of this.pods.indexer.byIndex(BY_CONTROLLER, uid)) {
        out.push({ ownerUid: uid, phase: (p['status'] as { phase?: string } | undefined)?.phase });
      }
    }
    return out;
  }

  private async sync(key: string): Promise<ReconcileResult | void> {
    const cached = this.deployments.indexer.get(key) as Deployment | undefined;
    if (cached === undefined) return;
    const d = cached;
    const rss = await this.claim(d);
    const plan = planDeploymentSync({
      deployment: d,
      replicaSets: rss,
      ...(isRollingUpdate(d) ? {} : { pods: this.podPhases(rss) }),
      nowMs: this.now(),
    });
    return this.apply(d, plan);
  }

  private async apply(d: Deployment, plan: DeploymentSyncPlan): Promise<ReconcileResult | void> {
    const ns = d.metadata.namespace ?? '';
    for (const w of plan.writes) {
      if (w.op === 'create') {
        try {
          await this.client.create(REPLICASETS, ns, w.replicaSet);
        } catch (err) {
          if (isApiError(err, 409)) return this.createConflict(d, w.replicaSet);
          await this.createFailed(d, w.replicaSet, err);
          throw err;
        }
      } else {
        try {
          await this.client.update(REPLICASETS, w.replicaSet);
        } catch (err) {
          if (lostRace(err)) return;
          throw err;
        }
      }
      for (const e of w.events) this.record(d, e);
    }
    for (const rs of plan.deletes) {
      try {
        await this.client.delete(REPLICASETS, ns, rs.metadata.name ?? '', {
          preconditions: {
            ...(rs.metadata.uid === undefined ? {} : { uid: rs.metadata.uid }),
            ...(rs.metadata.resourceVersion === undefined
              ? {}
              : { resourceVersion: rs.metadata.resourceVersion }),
          },
        });
      } catch (err) {
        if (!lostRace(err)) throw err;
      }
    }
    for (const e of plan.events) this.record(d, e);
    if (plan.deployment !== undefined) {
      try {
        await this.client.update(DEPLOYMENTS, plan.deployment, 'status');
      } catch (err) {
        if (lostRace(err)) return;
        throw err;
      }
    }
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfterMs: plan.requeueAfterMs };
  }

  /**
   * The new RS's name is taken. Ours with the same template: it is the new RS, which the cache has not
   * seen yet; its event brings the key back. Anything else is a hash collision: count it in
   * status.collisionCount (the next hash differs) and retry.
   */
  private async createConflict(d: Deployment, want: ReplicaSet): Promise<void> {
    const ns = d.metadata.namespace ?? '';
    let existing: ReplicaSet | undefined;
    try {
      existing = (await this.client.get(REPLICASETS, ns, want.metadata.name ?? '')) as ReplicaSet;
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
    if (existing === undefined)
      throw new Error(`replica set ${want.metadata.name ?? ''} vanished after a conflict`);
    if (
      controllerRefOf(existing)?.uid === d.metadata.uid &&
      equalIgnoreHash(existing.spec.template, d.spec.template)
    )
      return;
    const next = structuredClone(d);
    next.status = { ...next.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
    try {
      await this.client.update(DEPLOYMENTS, next, 'status');
    } catch (err) {
      if (!lostRace(err)) throw err;
    }
    throw new Error(`hash collision on replica set ${want.metadata.name ?? ''}: collisionCount raised`);
  }

  /** ReplicaSetCreateError: Progressing False and a Warning event. */
  private async createFailed(d: Deployment, rs: ReplicaSet, err: unknown): Promise<void> {
    const failed = createErrorStatus(d, rs.metadata.name ?? '', errText(err), this.now());
    if (failed === undefined) return;
    this.record(d, failed.event);
    const next = structuredClone(d);
    next.status = failed.status;
    try {
      await this.client.update(DEPLOYMENTS, next, 'status');
    } catch (e) {
      if (!lostRace(e)) throw e;
    }
  }
}
