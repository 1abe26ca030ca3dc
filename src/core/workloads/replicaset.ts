// The ReplicaSet controller's pure decisions (behaves like kube-controller-manager's
// pkg/controller/replicaset/replica_set.go and replica_set_utils.go): which pods count, how many to
// create or delete, the slow-start batch sizes, the pod built from the template, and the status. Time is
// a parameter (milliseconds since the epoch); nothing here reads a clock or does I/O.
import { type KObject, type OwnerReference } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { parseTimestamp } from '../../api/printers/time.js';
import { matchesLabels, type LabelSelectorObject } from '../../api/label-match.js';
import type { LabelRequirement, LabelSelector } from '../selectors/labels.js';

/** kube's burstReplicas: at most this many creates or deletes per sync. */
export const BURST_REPLICAS = 500;
/** controller.SlowStartInitialBatchSize. */
export const SLOW_START_INITIAL_BATCH = 1;
export const REPLICASET_API_VERSION = 'apps/v1';
export const REPLICASET_KIND = 'ReplicaSet';
export const REPLICA_FAILURE = 'ReplicaFailure';

/** A pod as this controller reads it (see the controller's pod view). */
export interface Pod extends KObject {
  spec?: { nodeName?: string; [k: string]: unknown };
  status?: {
    phase?: string;
    conditions?: readonly PodCondition[];
    containerStatuses?: readonly { restartCount?: number }[];
    [k: string]: unknown;
  };
}

export interface PodCondition {
  readonly type?: string;
  readonly status?: string;
  readonly lastTransitionTime?: string | null;
}

export interface ReplicaSetCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

export interface PodTemplate {
  metadata?: {
    labels?: Record<string, string> | null;
    annotations?: Record<string, string> | null;
    finalizers?: string[] | null;
    [k: string]: unknown;
  } | null;
  spec?: unknown;
}

export interface ReplicaSet extends KObject {
  spec?: {
    replicas?: number;
    minReadySeconds?: number;
    selector?: LabelSelectorObject | null;
    template?: PodTemplate | null;
  };
  status?: ReplicaSetStatus;
}

// ---------------------------------------------------------------------------------------------------
// Pod predicates (pkg/api/v1/pod/util.go and controller_utils.go)

export const isBeingDeleted = (o: KObject): boolean =>
  o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;

/** controller.IsPodActive: not Succeeded or Failed, and not being deleted. */
export const isPodActive = (pod: Pod): boolean =>
  pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed' && !isBeingDeleted(pod);

const readyCondition = (pod: Pod): PodCondition | undefined =>
  (Array.isArray(pod.status?.conditions) ? pod.status.conditions : []).find(
    (c) => isPlainObject(c) && c.type === 'Ready',
  );

/** podutil.IsPodReady: the Ready condition is True. */
export const isPodReady = (pod: Pod): boolean => readyCondition(pod)?.status === 'True';

/**
 * When the pod last became Ready (ms), or undefined for a pod that is not Ready or whose condition has
 * no (or Go's zero) lastTransitionTime.
 */
export function podReadySince(pod: Pod): number | undefined {
  const c = readyCondition(pod);
  if (c?.status !== 'True') return undefined;
  return parseTimestamp(c.lastTransitionTime);
}

/**
 * podutil.IsPodAvailable: Ready, and with minReadySeconds > 0 Ready since strictly more than
 * minReadySeconds before `nowMs` (a Ready condition without a transition time never becomes available).
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadySince(pod);
  return since !== undefined && since + minReadySeconds * 1000 < nowMs;
}

/** The controller ownerReference of an object (metav1.GetControllerOf), if any. */
export const controllerOf = (o: KObject): OwnerReference | undefined =>
  (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);

/** metav1.NewControllerRef for a ReplicaSet. */
export const replicaSetControllerRef = (rs: ReplicaSet): OwnerReference => ({
  apiVersion: REPLICASET_API_VERSION,
  kind: REPLICASET_KIND,
  name: rs.metadata.name ?? '',
  uid: rs.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

// ---------------------------------------------------------------------------------------------------
// Selectors

export class InvalidSelectorError extends Error {
  override readonly name = 'InvalidSelectorError';
}

/**
 * metav1.LabelSelectorAsSelector: a missing selector matches nothing (undefined here), `{}` matches
 * everything. An unknown operator, or In/NotIn without values, throws InvalidSelectorError.
 */
export function selectorOf(sel: LabelSelectorObject | null | undefined): LabelSelector | undefined {
  if (sel === undefined || sel === null) return undefined;
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {}))
    reqs.push({ key, operator: 'Equals', values: [value] });
  for (const e of sel.matchExpressions ?? []) {
    const values = [...new Set(e.values ?? [])].sort();
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          throw new InvalidSelectorError(
            `for '${e.operator.toLowerCase()}' operator, values set can't be empty`,
          );
        reqs.push({ key: e.key, operator: e.operator, values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        reqs.push({ key: e.key, operator: e.operator, values: [] });
        break;
      default:
        throw new InvalidSelectorError(
          `${JSON.stringify(e.operator)} is not a valid label selector operator`,
        );
    }
  }
  return { requirements: reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)) };
}

export const selects = (sel: LabelSelector | undefined, o: KObject): boolean =>
  sel !== undefined && matchesLabels(sel, o.metadata.labels ?? {});

// ---------------------------------------------------------------------------------------------------
// manageReplicas

export const desiredReplicas = (rs: ReplicaSet): number => rs.spec?.replicas ?? 1;

export type ReplicaPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'create'; readonly count: number; readonly batches: readonly number[] }
  | { readonly kind: 'delete'; readonly count: number };

/**
 * What manageReplicas does given the number of active pods the ReplicaSet owns: create the missing
 * ones (at most BURST_REPLICAS, in slow-start batches) or delete the surplus (at most BURST_REPLICAS).
 */
export function planReplicas(active: number, desired: number, burst = BURST_REPLICAS): ReplicaPlan {
  const diff = active - Math.max(0, desired);
  if (diff < 0) {
    const count = Math.min(-diff, burst);
    return { kind: 'create', count, batches: slowStartBatches(count) };
  }
  if (diff > 0) return { kind: 'delete', count: Math.min(diff, burst) };
  return { kind: 'none' };
}

/**
 * controller's slowStartBatch sizes: 1, 2, 4, ... each min(2 × previous, remaining), summing to `count`.
 * For 500: 1, 2, 4, 8, 16, 32, 64, 128, 245.
 */
export function slowStartBatches(count: number, initial = SLOW_START_INITIAL_BATCH): number[] {
  const out: number[] = [];
  let remaining = Math.max(0, Math.floor(count));
  for (let size = Math.min(remaining, Math.max(1, initial)); size > 0; size = Math.min(2 * size, remaining)) {
    out.push(size);
    remaining -= size;
  }
  return out;
}

/**
 * The creations attempted by slow start when the first failing batch is `failedBatch` (its index) and
 * `failures` of its creations failed: returns how many succeeded and how many were skipped (never
 * tried, plus the failed ones), which the caller subtracts from its creation expectations.
 */
export function slowStartOutcome(
  batches: readonly number[],
  failedBatch: number | undefined,
  failures: number,
): { succeeded: number; skipped: number } {
  const total = batches.reduce((a, b) => a + b, 0);
  if (failedBatch === undefined) return { succeeded: total, skipped: 0 };
  const attempted = batches.slice(0, failedBatch + 1).reduce((a, b) => a + b, 0);
  const succeeded = attempted - failures;
  return { succeeded, skipped: total - succeeded };
}

// ---------------------------------------------------------------------------------------------------
// The pod from the template (controller_utils.go GetPodFromTemplate)

export class NoLabelsError extends Error {
  override readonly name = 'NoLabelsError';
  constructor() {
    super('unable to create pods, no labels');
  }
}

/**
 * The pod to POST for `rs`: the template's labels, annotations, finalizers and spec (copied, never
 * shared), generateName `<rs>-` and a controller ownerReference to the ReplicaSet.
 */
export function podFromTemplate(rs: ReplicaSet): Pod {
  const template = rs.spec?.template ?? {};
  const tm = template.metadata ?? {};
  const labels = { ...(tm.labels ?? {}) };
  if (Object.keys(labels).length === 0) throw new NoLabelsError();
  const annotations = { ...(tm.annotations ?? {}) };
  const finalizers = [...(tm.finalizers ?? [])];
  const metadata: Pod['metadata'] = {
    generateName: `${rs.metadata.name ?? ''}-`,
    ...(rs.metadata.namespace === undefined ? {} : { namespace: rs.metadata.namespace }),
    labels,
    ...(Object.keys(annotations).length === 0 ? {} : { annotations }),
    ...(finalizers.length === 0 ? {} : { finalizers }),
    ownerReferences: [replicaSetControllerRef(rs)],
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: structuredClone((template.spec ?? {}) as Record<string, unknown>),
  };
}

// ---------------------------------------------------------------------------------------------------
// Status (replica_set_utils.go calculateStatus / updateReplicaSetStatus)

export interface StatusInput {
  readonly rs: ReplicaSet;
  /** The active pods the ReplicaSet owns after claiming. */
  readonly pods: readonly Pod[];
  /** The error manageReplicas ended with, if any (it did not run: undefined). */
  readonly manageError?: string | undefined;
  readonly nowMs: number;
  /** RFC 3339 for nowMs (the caller formats it: core has no Date). */
  readonly nowTimestamp: string;
}

const templateLabelsMatch = (template: Readonly<Record<string, string>>, pod: Pod): boolean => {
  const labels = pod.metadata.labels ?? {};
  return Object.entries(template).every(([k, v]) => Object.hasOwn(labels, k) && labels[k] === v);
};

/**
 * The status the ReplicaSet should have. Zero counts other than `replicas` are left out, as the API's
 * omitempty does. A ReplicaFailure condition is added when manageReplicas failed and none exists
 * (reason FailedCreate when pods are missing, FailedDelete when there are too many) and removed after
 * a successful manage; other conditions are kept.
 */
export function computeStatus(input: StatusInput): ReplicaSetStatus {
  const { rs, pods, nowMs } = input;
  const minReady = rs.spec?.minReadySeconds ?? 0;
  const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const p of pods) {
    if (templateLabelsMatch(templateLabels, p)) fullyLabeled++;
    if (isPodReady(p)) {
      ready++;
      if (isPodAvailable(p, minReady, nowMs)) available++;
    }
  }
  let conditions = [...(rs.status?.conditions ?? [])];
  const failure = conditions.find((c) => c.type === REPLICA_FAILURE);
  if (input.manageError !== undefined && failure === undefined) {
    const reason = pods.length - desiredReplicas(rs) < 0 ? 'FailedCreate' : 'FailedDelete';
    conditions.push({
      type: REPLICA_FAILURE,
      status: 'True',
      lastTransitionTime: input.nowTimestamp,
      reason,
      message: input.manageError,
    });
  } else if (input.manageError === undefined && failure !== undefined) {
    conditions = conditions.filter((c) => c.type !== REPLICA_FAILURE);
  }
  const generation = rs.metadata.generation ?? 0;
  return {
    replicas: pods.length,
    ...(fullyLabeled === 0 ? {} : { fullyLabeledReplicas: fullyLabeled }),
    ...(ready === 0 ? {} : { readyReplicas: ready }),
    ...(available === 0 ? {} : { availableReplicas: available }),
    ...(generation === 0 ? {} : { observedGeneration: generation }),
    ...(conditions.length === 0 ? {} : { conditions }),
  };
}

/** Whether `rs.status` differs from `next` in what updateReplicaSetStatus compares. */
export function statusDiffers(rs: ReplicaSet, next: ReplicaSetStatus): boolean {
  const cur = rs.status ?? { replicas: 0 };
  return (
    (cur.replicas ?? 0) !== next.replicas ||
    (cur.fullyLabeledReplicas ?? 0) !== (next.fullyLabeledReplicas ?? 0) ||
    (cur.readyReplicas ?? 0) !== (next.readyReplicas ?? 0) ||
    (cur.availableReplicas ?? 0) !== (next.availableReplicas ?? 0) ||
    (rs.metadata.generation ?? 0) !== (cur.observedGeneration ?? 0) ||
    JSON.stringify(cur.conditions ?? []) !== JSON.stringify(next.conditions ?? [])
  );
}

/**
 * When to look at the ReplicaSet again so that availableReplicas catches up with minReadySeconds: the
 * milliseconds until the first Ready-but-not-yet-available pod becomes available (undefined when none
 * will). Upstream requeues after minReadySeconds; waiting exactly as long as needed is never later.
 */
export function availabilityRecheckMs(
  rs: ReplicaSet,
  pods: readonly Pod[],
  nowMs: number,
): number | undefined {
  const minReady = rs.spec?.minReadySeconds ?? 0;
  if (minReady <= 0) return undefined;
  let soonest: number | undefined;
  for (const p of pods) {
    const since = podReadySince(p);
    if (since === undefined || isPodAvailable(p, minReady, nowMs)) continue;
    const wait = since + minReady * 1000 - nowMs + 1;
    if (soonest === undefined || wait < soonest) soonest = wait;
  }
  return soonest === undefined ? undefined : Math.max(1, soonest);
}
