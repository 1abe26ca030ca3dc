// The ReplicaSet controller (behaves like kube-controller-manager's pkg/controller/replicaset): keeps
// spec.replicas active pods for each ReplicaSet. Wiring: ReplicaSet changes enqueue the ReplicaSet; a pod
// change enqueues its controlling ReplicaSet, or, for an orphan, every ReplicaSet of its namespace that
// selects it. Pod events also settle the expectations (core/workloads/replicaset-expectations), so that a
// sync never acts on a cache that has not yet seen the controller's own creates and deletes.
//
// A sync: read the ReplicaSet and the namespace's active pods from the caches; claim them (adopt orphans
// that match, release ours that stopped matching: strategic-merge patches with the pod's uid, after
// re-reading the ReplicaSet live before the first adoption); when the expectations are satisfied create
// the missing pods in slow-start batches or delete the surplus chosen by the deletion ranking; then
// write status through /status if it changed. Cached objects are never modified.
import { formatTimestamp } from '../../api/printers/time.js';
import { mustFindResource } from '../../api/resources.js';
import { isEverything, type LabelSelector } from '../../core/selectors/labels.js';
import type { Projection } from '../../core/projection/projection.js';
import { adoptPatch, canAdopt, decideClaim, releasePatch } from '../../core/workloads/controller-ref.js';
import { ControllerExpectations } from '../../core/workloads/replicaset-expectations.js';
import { podsToDelete } from '../../core/workloads/replicaset-ranking.js';
import {
  availabilityRecheckMs,
  computeStatus,
  controllerOf,
  desiredReplicas,
  isBeingDeleted,
  isPodActive,
  isPodReady,
  planReplicas,
  podFromTemplate,
  REPLICASET_KIND,
  replicaSetControllerRef,
  selectorOf,
  selects,
  slowStartOutcome,
  statusDiffers,
  type Pod,
  type ReplicaSet,
  type ReplicaSetStatus,
} from '../../core/workloads/replicaset.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import {
  objectKeyOf,
  type IndexFunc,
  type Informer,
  type SharedInformerFactory,
} from '../../runtime/informer.js';
import { keyedController, enqueuerOf, type KeyedControllerOptions } from '../controller-wiring.js';
import { errText } from '../../api/err-text.js';

export const REPLICASETS = mustFindResource('apps', 'replicasets');
const PODS = mustFindResource('', 'pods');

/** What the controller reads of a pod (the shared pod informer keeps the union of such views). */
export const REPLICASET_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  spec: { nodeName: true },
  status: { phase: true, conditions: true, containerStatuses: { restartCount: true } },
};

/** Index: the uid of the object's controller (pods by ReplicaSet, ReplicaSets by Deployment). */
const BY_CONTROLLER = 'replicaset/controllerUID';
const byControllerUid: IndexFunc = (o) => {
  const ref = controllerOf(o);
  return ref === undefined ? [] : [ref.uid];
};

/** Pods no controller owns, by namespace: the only ones a ReplicaSet may adopt. */
const ORPHANS = 'replicaset/orphansByNamespace';
const orphansByNamespace: IndexFunc = (o) =>
  controllerOf(o) === undefined ? [o.metadata.namespace ?? ''] : [];

export interface ReplicaSetControllerOptions extends KeyedControllerOptions {
  readonly events?: ClientEventRecorder;
  /** The clock (ms since the epoch); tests pass their own. */
  readonly now?: () => number;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const namespaceTerminating = (err: unknown): boolean =>
  isApiError(err, 403) &&
  (err.status?.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

export class ReplicaSetController {
  readonly controller: Controller;
  readonly expectations = new ControllerExpectations();
  private readonly replicaSets: Informer;
  private readonly pods: Informer;
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly opts: ReplicaSetControllerOptions = {},
  ) {
    this.now = opts.now ?? (() => Date.now());
    this.replicaSets = factory.informer(REPLICASETS, { indexers: { [BY_CONTROLLER]: byControllerUid } });
    this.pods = factory.informer(PODS, {
      indexers: { [BY_CONTROLLER]: byControllerUid, [ORPHANS]: orphansByNamespace },
    });
    this.controller = keyedController(
      { name: 'replicaset', workers: 5, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    const enqueue = enqueuerOf(this.controller);
    this.replicaSets.addHandlers({
      onAdd: enqueue,
      onUpdate: (_, rs) => enqueue(rs),
      onDelete: (rs) => {
        this.expectations.delete(objectKeyOf(rs));
        enqueue(rs);
      },
    });
    this.pods.addHandlers({
      onAdd: (p) => this.podAdded(p as Pod),
      onUpdate: (old, p) => this.podUpdated(old as Pod, p as Pod),
      onDelete: (p) => this.podDeleted(p as Pod),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.replicaSets.waitForSync(), this.pods.waitForSync()]);
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  // ---- event handlers --------------------------------------------------------------------------------

  /** The ReplicaSet a controllerRef names, if it is in the cache with that uid. */
  private resolve(namespace: string, pod: Pod): ReplicaSet | undefined {
    const ref = controllerOf(pod);
    if (ref === undefined || ref.kind !== REPLICASET_KIND) return undefined;
    const rs = this.replicaSets.indexer.get(`${namespace}/${ref.name}`) as ReplicaSet | undefined;
    return rs?.metadata.uid === ref.uid ? rs : undefined;
  }

  /** The ReplicaSets of the pod's namespace whose (non-empty, valid) selector matches it. */
  private selecting(pod: Pod): ReplicaSet[] {
    return this.replicaSets.indexer.byIndex('namespace', pod.metadata.namespace ?? '').filter((o) => {
      const sel = safeSelector(o as ReplicaSet);
      return sel !== undefined && !isEverything(sel) && selects(sel, pod);
    }) as ReplicaSet[];
  }

  private podAdded(pod: Pod): void {
    // A pod that is already going (seen first on a relist) is a deletion, not a creation.
    if (isBeingDeleted(pod)) return this.podDeleted(pod);
    if (controllerOf(pod) !== undefined) {
      const rs = this.resolve(pod.metadata.namespace ?? '', pod);
      if (rs === undefined) return;
      const key = objectKeyOf(rs);
      this.expectations.creationObserved(key);
      this.controller.enqueue(key);
      return;
    }
    for (const rs of this.selecting(pod)) this.controller.enqueue(objectKeyOf(rs));
  }

  private podUpdated(old: Pod, pod: Pod): void {
    if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    const labelsChanged = !sameJson(old.metadata.labels, pod.metadata.labels);
    if (isBeingDeleted(pod)) {
      // With graceful deletion the pod lingers with a deletionTimestamp: that is the deletion the
      // expectations wait for. Relabelled on the way out: the ReplicaSets of its old labels look too.
      this.podDeleted(pod);
      if (labelsChanged) this.podDeleted(old);
      return;
    }
    const ns = pod.metadata.namespace ?? '';
    const ref = controllerOf(pod);
    const oldRef = controllerOf(old);
    const refChanged = !sameJson(ref, oldRef);
    if (refChanged && oldRef !== undefined) {
      const was = this.resolve(ns, old);
      if (was !== undefined) this.controller.enqueue(objectKeyOf(was));
    }
    if (ref !== undefined) {
      const rs = this.resolve(ns, pod);
      if (rs === undefined) return;
      const key = objectKeyOf(rs);
      this.controller.enqueue(key);
      // Became Ready: availableReplicas changes minReadySeconds later.
      const minReady = rs.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(pod) && minReady > 0)
        this.controller.enqueueAfter(key, minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged)
      for (const rs of this.selecting(pod)) this.controller.enqueue(objectKeyOf(rs));
  }

  private podDeleted(pod: Pod): void {
    const rs = this.resolve(pod.metadata.namespace ?? '', pod);
    if (rs === undefined) return;
    const key = objectKeyOf(rs);
    this.expectations.deletionObserved(key, objectKeyOf(pod));
    this.controller.enqueue(key);
  }

  // ---- sync ------------------------------------------------------------------------------------------

  private async sync(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const rs = this.replicaSets.indexer.get(key) as ReplicaSet | undefined;
    if (rs === undefined) {
      this.expectations.delete(key);
      return;
    }
    const needsSync = this.expectations.satisfied(key, this.now());
    let selector: LabelSelector | undefined;
    try {
      selector = selectorOf(rs.spec?.selector);
    } catch (err) {
      // Not retried, as upstream: the ReplicaSet has to change first (and validation refuses these).
      this.opts.onError?.(key, new Error(`invalid selector: ${errText(err)}`, { cause: err }));
      return;
    }
    // A selector that selects everything (which validation refuses) claims nothing, rather than the
    // whole namespace.
    if (selector !== undefined && isEverything(selector)) selector = undefined;
    // The candidates are the pods it controls and the namespace's orphans: a pod another controller
    // owns is never claimed, so reading the whole namespace (10,000 pods of other ReplicaSets) per
    // sync would only cost time. Same result as upstream's namespace-wide claim.
    const active = [
      ...this.pods.indexer.byIndex(BY_CONTROLLER, rs.metadata.uid ?? ''),
      ...this.pods.indexer.byIndex(ORPHANS, rs.metadata.namespace ?? ''),
    ].filter((p) => isPodActive(p as Pod)) as Pod[];
    const pods = await this.claimPods(rs, selector, active);

    let manageError: unknown;
    if (needsSync && !isBeingDeleted(rs)) {
      try {
        await this.manageReplicas(rs, pods);
      } catch (err) {
        manageError = err;
      }
    }
    const nowMs = this.now();
    const status = computeStatus({
      rs,
      pods,
      manageError: manageError === undefined ? undefined : errText(manageError),
      nowMs,
      nowTimestamp: formatTimestamp(nowMs),
    });
    await this.writeStatus(rs, status);
    if (manageError !== undefined) throw manageError;
    const after = availabilityRecheckMs(rs, pods, this.now());
    return after === undefined ? undefined : { requeueAfterMs: after };
  }

  /**
   * ClaimPods: the active pods the ReplicaSet owns once orphans it selects are adopted and pods it no
   * longer selects are released. Any adopt or release error fails the sync (after the other pods).
   */
  private async claimPods(rs: ReplicaSet, selector: LabelSelector | undefined, pods: Pod[]): Promise<Pod[]> {
    const ns = rs.metadata.namespace ?? '';
    const name = rs.metadata.name ?? '';
    const uid = rs.metadata.uid ?? '';
    let recheck: Promise<string | undefined> | undefined;
    const canAdoptNow = (): Promise<string | undefined> =>
      (recheck ??= this.client.get(REPLICASETS, ns, name).then(
        (live) => canAdopt({ namespace: ns, name, uid }, live),
        (err: unknown) => {
          if (isApiError(err, 404)) return canAdopt({ namespace: ns, name, uid }, undefined);
          throw err;
        },
      ));
    const claimed: Pod[] = [];
    const errors: unknown[] = [];
    await Promise.all(
      pods.map(async (pod) => {
        const decision = decideClaim({
          ownerUid: uid,
          ownerBeingDeleted: isBeingDeleted(rs),
          controllerRef: controllerOf(pod),
          selected: selects(selector, pod),
          candidateBeingDeleted: isBeingDeleted(pod),
        });
        const podName = pod.metadata.name ?? '';
        const podUid = pod.metadata.uid ?? '';
        try {
          if (decision === 'keep') claimed.push(pod);
          else if (decision === 'adopt') {
            const refused = await canAdoptNow();
            if (refused !== undefined)
              throw new Error(`can't adopt Pod ${ns}/${podName} (${podUid}): ${refused}`);
            await this.client.patch(
              PODS,
              ns,
              podName,
              'strategic',
              adoptPatch(replicaSetControllerRef(rs), podUid),
            );
            claimed.push(pod);
          } else if (decision === 'release') {
            await this.client.patch(PODS, ns, podName, 'strategic', releasePatch(uid, podUid));
          }
        } catch (err) {
          // Gone already, or (release) no longer owned by us / a different pod now: nothing to do.
          if (isApiError(err, 404) || (decision === 'release' && isApiError(err, 422))) return;
          errors.push(err);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
    // Keep the cache's order stable for the ranking's final tie-breaks.
    return claimed;
  }

  private async manageReplicas(rs: ReplicaSet, pods: Pod[]): Promise<void> {
    const key = objectKeyOf(rs);
    const plan = planReplicas(pods.length, desiredReplicas(rs));
    if (plan.kind === 'none') return;
    if (plan.kind === 'create') return this.createPods(rs, key, plan.count, plan.batches);
    const victims = podsToDelete(pods, this.relatedPods(rs), plan.count, this.now());
    return this.deletePods(rs, key, victims);
  }

  private async createPods(
    rs: ReplicaSet,
    key: string,
    count: number,
    batches: readonly number[],
  ): Promise<void> {
    const ns = rs.metadata.namespace ?? '';
    // Expect them all before the first POST: a pod's ADD event may arrive before its POST returns.
    this.expectations.expectCreations(key, count, this.now());
    let body: Pod;
    try {
      body = podFromTemplate(rs);
    } catch (err) {
      this.expectations.creationObserved(key, count);
      this.event(rs, 'Warning', 'FailedCreate', `Error creating: ${errText(err)}`);
      throw err;
    }
    let firstError: unknown;
    let failedBatch: number | undefined;
    let failures = 0;
    for (let b = 0; b < batches.length; b++) {
      const results = await Promise.all(
        Array.from({ length: batches[b]! }, async () => {
          try {
            const pod = await this.client.create(PODS, ns, structuredClone(body));
            this.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name ?? ''}`);
            return undefined;
          } catch (err) {
            this.event(rs, 'Warning', 'FailedCreate', `Error creating: ${errText(err)}`);
            // A namespace being deleted refuses creates; the pods would go with it anyway.
            return namespaceTerminating(err) ? undefined : err;
          }
        }),
      );
      const errs = results.filter((e) => e !== undefined);
      if (errs.length > 0) {
        firstError = errs[0];
        failedBatch = b;
        failures = errs.length;
        break;
      }
    }
    const { skipped } = slowStartOutcome(batches, failedBatch, failures);
    // The informer will never see these: stop waiting for them.
    if (skipped > 0) this.expectations.creationObserved(key, skipped);
    if (firstError !== undefined) throw firstError;
  }

  private async deletePods(rs: ReplicaSet, key: string, victims: Pod[]): Promise<void> {
    const ns = rs.metadata.namespace ?? '';
    this.expectations.expectDeletions(key, victims.map(objectKeyOf), this.now());
    const errors: unknown[] = [];
    await Promise.all(
      victims.map(async (pod) => {
        const name = pod.metadata.name ?? '';
        try {
          // Default DeleteOptions: a pod on a node terminates gracefully.
          await this.client.delete(PODS, ns, name);
          this.event(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
        } catch (err) {
          // The informer will not see this deletion (or has: NotFound); stop waiting for it.
          this.expectations.deletionObserved(key, objectKeyOf(pod));
          if (isApiError(err, 404)) return;
          this.event(rs, 'Warning', 'FailedDelete', `Error deleting: ${errText(err)}`);
          errors.push(err);
        }
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  /**
   * The pods of every ReplicaSet with the same controller as `rs` (it included): the ranking counts
   * how many of them share a node. A ReplicaSet with no controller has none, as upstream's
   * getIndirectlyRelatedPods, so its pods all rank 0.
   */
  private relatedPods(rs: ReplicaSet): Pod[] {
    const owner = controllerOf(rs);
    if (owner === undefined) return [];
    const out: Pod[] = [];
    for (const sibling of this.replicaSets.indexer.byIndex(BY_CONTROLLER, owner.uid)) {
      if (sibling.metadata.namespace !== rs.metadata.namespace) continue;
      for (const p of this.pods.indexer.byIndex(BY_CONTROLLER, sibling.metadata.uid ?? ''))
        if (p.metadata.namespace === rs.metadata.namespace) out.push(p as Pod);
    }
    return out;
  }

  /**
   * Writes `status` through /status when it differs from what the ReplicaSet has; on a failure the
   * ReplicaSet is read again and the write tried once more (updateReplicaSetStatus).
   */
  private async writeStatus(rs: ReplicaSet, status: ReplicaSetStatus): Promise<void> {
    let cur = rs;
    for (let attempt = 0; ; attempt++) {
      const generation = cur.metadata.generation ?? 0;
      const { observedGeneration: _drop, conditions, ...counts } = status;
      const next: ReplicaSetStatus = {
        ...counts,
        ...(generation === 0 ? {} : { observedGeneration: generation }),
        ...(conditions === undefined ? {} : { conditions }),
      };
      if (!statusDiffers(cur, next)) return;
      try {
        await this.client.update(REPLICASETS, { ...cur, status: next }, 'status');
        return;
      } catch (err) {
        if (attempt >= 1) throw err;
        try {
          cur = (await this.client.get(
            REPLICASETS,
            rs.metadata.namespace ?? '',
            rs.metadata.name ?? '',
          )) as ReplicaSet;
        } catch (getErr) {
          if (isApiError(getErr, 404)) return; // gone: nothing to report on
          throw getErr;
        }
        if (cur.metadata.uid !== rs.metadata.uid) return;
      }
    }
  }

  private event(rs: ReplicaSet, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.opts.events?.record(regarding(REPLICASET_KIND, 'apps/v1', rs), type, reason, message);
  }
}

const safeSelector = (rs: ReplicaSet): LabelSelector | undefined => {
  try {
    return selectorOf(rs.spec?.selector);
  } catch {
    return undefined;
  }
};
