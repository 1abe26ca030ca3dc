// Pod garbage collection decisions. Behaves like kube-controller-manager's pod GC controller
// (pkg/controller/podgc/gc_controller.go), one pass at a time:
// 1. terminated pods beyond --terminated-pod-gc-threshold (evicted first, then oldest) are deleted;
// 2. terminating pods on a NotReady node tainted node.kubernetes.io/out-of-service are force-deleted;
// 3. orphans: pods bound to a node the informer does not know are quarantined; once the quarantine is
//    over the node is looked up live (by the caller) and, if it is gone, its pods are marked Failed
//    (DisruptionTarget, DeletionByPodGC) and force-deleted;
// 4. terminating pods bound to no node are marked Failed and force-deleted.
import { TAINT_OUT_OF_SERVICE, conditionOf, parseTime, type Node, type Pod } from './types.js';

export const DEFAULT_TERMINATED_POD_GC_THRESHOLD = 12500;
export const DEFAULT_ORPHAN_QUARANTINE_MS = 40_000;
export const DEFAULT_POD_GC_PERIOD_MS = 20_000;

export const DISRUPTION_REASON_POD_GC = 'DeletionByPodGC';
export const DISRUPTION_MESSAGE_POD_GC = 'PodGC: node no longer exists';

/**
 * A pod that has finished: any phase but Pending, Running and Unknown. An empty phase counts as
 * Pending here (the API server defaults it), not as terminated.
 */
export const isTerminated = (p: Pod): boolean => {
  const phase = p.status?.phase ?? '';
  return phase !== '' && phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
};

const isEvicted = (p: Pod): boolean => p.status?.phase === 'Failed' && p.status.reason === 'Evicted';
const terminating = (p: Pod): boolean =>
  p.metadata.deletionTimestamp !== undefined && p.metadata.deletionTimestamp !== null;

/** Terminated pods to delete so that at most `threshold` remain (≤ 0: none). */
export function terminatedExcess(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const done = pods.filter(isTerminated);
  const excess = done.length - threshold;
  if (excess <= 0) return [];
  const created = (p: Pod): number => parseTime(p.metadata.creationTimestamp) ?? 0;
  return [...done]
    .sort(
      (a, b) =>
        Number(isEvicted(b)) - Number(isEvicted(a)) ||
        created(a) - created(b) ||
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    )
    .slice(0, excess);
}

/** Terminating pods on NotReady nodes tainted out-of-service:NoExecute (force-deleted). */
export function outOfServiceTerminating(pods: readonly Pod[], nodes: ReadonlyMap<string, Node>): Pod[] {
  return pods.filter((p) => {
    if (!terminating(p)) return false;
    const node = nodes.get(p.spec?.nodeName ?? '');
    if (node === undefined) return false;
    const ready = conditionOf(node.status?.conditions, 'Ready')?.status === 'True';
    const oos = (node.spec?.taints ?? []).some(
      (t) => t.key === TAINT_OUT_OF_SERVICE && t.effect === 'NoExecute',
    );
    return !ready && oos;
  });
}

/** Terminating pods bound to no node (marked Failed and force-deleted). */
export const unscheduledTerminating = (pods: readonly Pod[]): Pod[] =>
  pods.filter((p) => terminating(p) && (p.spec?.nodeName ?? '') === '');

export interface OrphanPass {
  /** Node names unknown to the informer since when (ms), to carry to the next pass. */
  readonly missingSince: Map<string, number>;
  /** Nodes whose quarantine is over: look each up live; the ones not found are gone. */
  readonly toCheck: string[];
}

/**
 * Tracks the node names pods are bound to that the informer does not know. A name seen missing for
 * the first time starts its quarantine; one the informer knows again leaves the set.
 */
export function orphanPass(
  pods: readonly Pod[],
  nodeKnown: (name: string) => boolean,
  missingSince: ReadonlyMap<string, number>,
  quarantineMs: number,
  now: number,
): OrphanPass {
  const missing = new Map<string, number>();
  for (const p of pods) {
    const name = p.spec?.nodeName ?? '';
    if (name === '' || nodeKnown(name) || missing.has(name)) continue;
    missing.set(name, missingSince.get(name) ?? now);
  }
  const toCheck = [...missing].filter(([, since]) => now - since >= quarantineMs).map(([n]) => n);
  return { missingSince: missing, toCheck };
}

/** Pods bound to one of `goneNodes`. */
export const podsOnNodes = (pods: readonly Pod[], goneNodes: ReadonlySet<string>): Pod[] =>
  pods.filter((p) => goneNodes.has(p.spec?.nodeName ?? ''));

/** The status patch marking a pod Failed (with DisruptionTarget for orphans), or undefined if terminal. */
export function failedStatusPatch(
  pod: Pod,
  condition: { reason: string; message: string } | undefined,
  now: string,
): Record<string, unknown> | undefined {
  if (isTerminated(pod)) return undefined;
  return {
    status: {
      phase: 'Failed',
      ...(condition === undefined
        ? {}
        : {
            conditions: [
              {
                type: 'DisruptionTarget',
                status: 'True',
                reason: condition.reason,
                message: condition.message,
                lastTransitionTime: now,
              },
            ],
          }),
    },
  };
}
