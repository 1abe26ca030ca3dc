// What a DELETE does to the object it finds, as kube-apiserver's genericregistry.Store.Delete decides
// it: the preconditions, the garbage collector's finalizers for the propagation policy
// (deletionFinalizersForGarbageCollection), graceful deletion of pods (pod-deletion.ts) and finalizers
// that hold the object (markAsDeleting). Pure: the registry writes what the plan says.
import type { KObject } from '../../api/object.js';
import { mustFindResource, type ResourceInfo } from '../../api/resources.js';
import { sameList } from './kind-rules.js';
import { rfc3339 } from './object-meta.js';
import { planPodDeletion, type PodDeletionPlan } from './pod-deletion.js';
import type { DeleteOptions } from './types.js';

const NAMESPACES = mustFindResource('', 'namespaces');
const PODS = mustFindResource('', 'pods');
const IMMEDIATE: PodDeletionPlan = { kind: 'immediate' };

/** Namespaces kube-apiserver refuses to delete. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

export type DeletePlan =
  /** A precondition does not hold: the answer is a Conflict with this message. */
  | { readonly kind: 'precondition-failed'; readonly message: string }
  /** Nothing changes: the answer is the object as it is, not deleted. */
  | { readonly kind: 'unchanged' }
  /**
   * Write `object` (marked for deletion, or with new finalizers) at the revision read; then, when
   * `thenRemove`, remove it, so watchers see MODIFIED, then DELETED.
   */
  | { readonly kind: 'update'; readonly object: KObject; readonly thenRemove: boolean }
  /** Remove the object at the revision read. */
  | { readonly kind: 'remove' };

/** What a DELETE of `old` (a `r`) with `opts` does at `nowMs`. */
export function planDelete(r: ResourceInfo, old: KObject, opts: DeleteOptions, nowMs: number): DeletePlan {
  const pre = opts.preconditions;
  if (pre?.uid !== undefined && pre.uid !== old.metadata.uid) {
    return {
      kind: 'precondition-failed',
      message: `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
    };
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== old.metadata.resourceVersion) {
    return {
      kind: 'precondition-failed',
      message: `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion ?? ''}`,
    };
  }
  // kube's deletionFinalizersForGarbageCollection: an explicit policy replaces the GC finalizers the
  // object carries (kubectl always sends one); without a policy they stay as they are.
  const policy = opts.propagationPolicy;
  const finalizers = (old.metadata.finalizers ?? []).filter(
    (f) => policy === undefined || (f !== 'orphan' && f !== 'foregroundDeletion'),
  );
  if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion'))
    finalizers.push('foregroundDeletion');
  if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
  const nsFinalizers =
    r === NAMESPACES
      ? (((old.spec as { finalizers?: unknown[] } | undefined)?.finalizers ?? []) as string[])
      : [];
  const graceful = finalizers.length > 0 || nsFinalizers.length > 0;
  const plan = r === PODS ? planPodDeletion(old, opts.gracePeriodSeconds, nowMs) : IMMEDIATE;
  if (plan.kind === 'pending') {
    // Already terminating with this grace or a shorter one: only a new propagationPolicy changes
    // anything (kube's deletionFinalizersForGarbageCollection runs on every DELETE).
    if (sameList(finalizers, old.metadata.finalizers)) return { kind: 'unchanged' };
    const next = structuredClone(old);
    next.metadata.finalizers = finalizers;
    if (finalizers.length === 0) delete next.metadata.finalizers;
    return { kind: 'update', object: next, thenRemove: false };
  }
  if (plan.kind === 'graceful') {
    // A pod on a node: mark it and let the node's kubelet confirm with grace 0 (rest.BeforeDelete).
    // With grace 0 the removal follows the update; should it lose a race, the retry finds a pod
    // terminating with grace 0 and removes it.
    const next = structuredClone(old);
    const gen = next.metadata.generation;
    if (next.metadata.deletionTimestamp === undefined && gen !== undefined && gen > 0) {
      next.metadata.generation = gen + 1;
    }
    next.metadata.deletionTimestamp = plan.deletionTimestamp;
    next.metadata.deletionGracePeriodSeconds = plan.grace;
    next.metadata.finalizers = finalizers;
    if (finalizers.length === 0) delete next.metadata.finalizers;
    return { kind: 'update', object: next, thenRemove: plan.grace === 0 && finalizers.length === 0 };
  }
  if (graceful) {
    // Finalizers hold the object: mark it for deletion and let their owners let go.
    if (old.metadata.deletionTimestamp !== undefined && sameList(finalizers, old.metadata.finalizers)) {
      return { kind: 'unchanged' };
    }
    const next = structuredClone(old);
    // kube's markAsDeleting: the first deletion bumps a tracked generation.
    const gen = next.metadata.generation;
    if (next.metadata.deletionTimestamp === undefined && gen !== undefined && gen > 0) {
      next.metadata.generation = gen + 1;
    }
    next.metadata.deletionTimestamp ??= rfc3339(nowMs);
    next.metadata.deletionGracePeriodSeconds ??= 0;
    next.metadata.finalizers = finalizers;
    if (r === NAMESPACES)
      next.status = { ...((next.status as object | undefined) ?? {}), phase: 'Terminating' };
    return { kind: 'update', object: next, thenRemove: false };
  }
  return { kind: 'remove' };
}
