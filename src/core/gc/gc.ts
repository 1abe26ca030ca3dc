// The pure decisions of the garbage collector (in behaviour like kube's pkg/controller/garbagecollector:
// attemptToDeleteItem, processDeletingDependentsItem and the orphan finalizer). The controller resolves
// the facts (is each owner there, with that uid, and is it being deleted in the foreground? which objects
// name this one as owner?) and applies what these functions decide.
//
// An object with ownerReferences, not itself being deleted, is classified by its owners:
//   - solid: the owner exists with the referenced uid and is not waiting for its dependents;
//   - dangling: the owner does not exist, or exists with another uid (a namesake), or the reference can
//     never resolve (a namespaced owner kind referenced from a cluster-scoped object);
//   - waiting: the owner is being deleted in the foreground (deletionTimestamp + foregroundDeletion);
//   - unknown: the owner's kind is not served; the reference is left alone and counts as solid, so nothing
//     is ever deleted because of a kind this collector cannot see.
// Then:
//   - any solid owner: the object stays; references to dangling and waiting owners are removed;
//   - no solid owner, some waiting owner, and the object has dependents of its own: it is deleted in the
//     foreground, so the waiting owner waits for the whole chain; if one of those dependents is itself
//     deleting its dependents (a cycle), the object's references to the waiting owners are unblocked first;
//   - otherwise it is deleted: Background, or Orphan / Foreground when it carries that finalizer.
// An owner being deleted:
//   - with the orphan finalizer: its references are removed from every dependent, then the finalizer;
//   - with foregroundDeletion: while a dependent still references it with blockOwnerDeletion, it waits
//     (and every dependent not yet being deleted is checked, which deletes it); then the finalizer goes.
import type { OwnerReference } from '../../api/object.js';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

export type DeletionPolicy = 'Background' | 'Foreground' | 'Orphan';

export type OwnerState = 'solid' | 'dangling' | 'waiting' | 'unknown';

export interface ItemFacts {
  readonly ownerReferences: readonly OwnerReference[];
  readonly finalizers: readonly string[];
  readonly beingDeleted: boolean;
  /** Objects that name this one as owner. */
  readonly dependents: number;
  /** Whether one of those dependents is itself being deleted in the foreground. */
  readonly dependentDeletingDependents: boolean;
}

export type ItemDecision =
  | { readonly action: 'none' }
  | { readonly action: 'removeOwnerReferences'; readonly uids: readonly string[] }
  | {
      readonly action: 'delete';
      readonly policy: DeletionPolicy;
      /** References whose blockOwnerDeletion must be set to false before the delete (cycles). */
      readonly unblock: readonly string[];
    };

/** What to do about an object that is not being deleted, given the state of each owner (by uid). */
export function decideItem(item: ItemFacts, owners: ReadonlyMap<string, OwnerState>): ItemDecision {
  if (item.beingDeleted || item.ownerReferences.length === 0) return { action: 'none' };
  const solid: string[] = [];
  const dangling: string[] = [];
  const waiting: string[] = [];
  for (const ref of item.ownerReferences) {
    const state = owners.get(ref.uid) ?? 'unknown';
    if (state === 'solid' || state === 'unknown') solid.push(ref.uid);
    else if (state === 'dangling') dangling.push(ref.uid);
    else waiting.push(ref.uid);
  }
  if (solid.length > 0) {
    const gone = [...dangling, ...waiting];
    return gone.length === 0 ? { action: 'none' } : { action: 'removeOwnerReferences', uids: gone };
  }
  if (waiting.length > 0 && item.dependents > 0) {
    const unblock = item.dependentDeletingDependents
      ? item.ownerReferences
          .filter((r) => waiting.includes(r.uid) && r.blockOwnerDeletion === true)
          .map((r) => r.uid)
      : [];
    return { action: 'delete', policy: 'Foreground', unblock };
  }
  return { action: 'delete', policy: policyFromFinalizers(item.finalizers), unblock: [] };
}

/** The propagation an object asked for through its finalizers (Background when none). */
export function policyFromFinalizers(finalizers: readonly string[]): DeletionPolicy {
  if (finalizers.includes(FINALIZER_ORPHAN)) return 'Orphan';
  if (finalizers.includes(FINALIZER_FOREGROUND)) return 'Foreground';
  return 'Background';
}

export interface DependentFacts {
  /** This dependent's reference to the owner. */
  readonly reference: OwnerReference;
  readonly beingDeleted: boolean;
}

export type OwnerDecision =
  | { readonly action: 'none' }
  /** Remove the owner's references from these dependents (by index), then the orphan finalizer. */
  | { readonly action: 'orphan'; readonly dependents: readonly number[] }
  /** Nothing blocks any more: remove the foregroundDeletion finalizer. */
  | { readonly action: 'removeForegroundFinalizer' }
  /** Still blocked: check these dependents (by index), which deletes those that have no other owner. */
  | { readonly action: 'waitForDependents'; readonly check: readonly number[] };

/** What to do about an owner that is being deleted, given its dependents. */
export function decideOwner(
  owner: { readonly finalizers: readonly string[]; readonly beingDeleted: boolean },
  dependents: readonly DependentFacts[],
): OwnerDecision {
  if (!owner.beingDeleted) return { action: 'none' };
  if (owner.finalizers.includes(FINALIZER_ORPHAN)) {
    return { action: 'orphan', dependents: dependents.map((_, i) => i) };
  }
  if (!owner.finalizers.includes(FINALIZER_FOREGROUND)) return { action: 'none' };
  const blocking = dependents.some((d) => d.reference.blockOwnerDeletion === true);
  if (!blocking) return { action: 'removeForegroundFinalizer' };
  const check = dependents.flatMap((d, i) => (d.beingDeleted ? [] : [i]));
  return { action: 'waitForDependents', check };
}

/** The references without those to the given owners. */
export function withoutOwners(refs: readonly OwnerReference[], uids: readonly string[]): OwnerReference[] {
  return refs.filter((r) => !uids.includes(r.uid));
}

/** The references with blockOwnerDeletion set to false for the given owners. */
export function unblocked(refs: readonly OwnerReference[], uids: readonly string[]): OwnerReference[] {
  return refs.map((r) => (uids.includes(r.uid) ? { ...r, blockOwnerDeletion: false } : { ...r }));
}

/** Whether an object is being deleted in the foreground (waits for its blocking dependents). */
export const deletingDependents = (meta: {
  readonly deletionTimestamp?: unknown;
  readonly finalizers?: readonly string[];
}): boolean =>
  meta.deletionTimestamp !== undefined &&
  meta.deletionTimestamp !== null &&
  (meta.finalizers ?? []).includes(FINALIZER_FOREGROUND);
