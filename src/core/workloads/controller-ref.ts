// ControllerRef claiming (behaves like kube-controller-manager's pkg/controller/controller_ref_manager.go
// ClaimObject): given an owner (e.g. a ReplicaSet) and a candidate object (e.g. a pod of its namespace),
// whether the owner keeps it, adopts it, releases it or leaves it alone, and the strategic-merge patches
// that adopt and release. The patches carry the object's uid, which the API server treats as a
// precondition, so a patch never lands on a newer object of the same name.
import type { KObject, OwnerReference } from '../../api/object.js';

export type ClaimDecision =
  /** Controlled by this owner and still selected: it counts. */
  | 'keep'
  /** An orphan the owner should adopt (after re-reading the owner live). */
  | 'adopt'
  /** Controlled by this owner but no longer selected: release it. */
  | 'release'
  /** Not ours (another controller's, or an orphan we may not adopt), or ours but we are being deleted. */
  | 'ignore';

export interface ClaimFacts {
  readonly ownerUid: string;
  readonly ownerBeingDeleted: boolean;
  /** The candidate's controller ownerReference, if any. */
  readonly controllerRef: OwnerReference | undefined;
  readonly selected: boolean;
  readonly candidateBeingDeleted: boolean;
}

/** ClaimObject's decision table. */
export function decideClaim(f: ClaimFacts): ClaimDecision {
  if (f.controllerRef !== undefined) {
    if (f.controllerRef.uid !== f.ownerUid) return 'ignore';
    if (f.selected) return 'keep';
    // Ours but no longer selected: released, unless we are being deleted (then the garbage collector
    // takes it with us).
    return f.ownerBeingDeleted ? 'ignore' : 'release';
  }
  // An orphan: adopted only when it matches, it is not going away, and neither are we.
  if (f.ownerBeingDeleted || !f.selected || f.candidateBeingDeleted) return 'ignore';
  return 'adopt';
}

/** `{"metadata":{"ownerReferences":[<controllerRef>],"uid":<uid>}}` (strategic merge, keyed by uid). */
export const adoptPatch = (ref: OwnerReference, objUid: string): object => ({
  metadata: { ownerReferences: [{ ...ref }], uid: objUid },
});

/** `{"metadata":{"ownerReferences":[{"$patch":"delete","uid":<owner>}],"uid":<uid>}}`. */
export const releasePatch = (ownerUid: string, objUid: string): object => ({
  metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: objUid },
});

/**
 * The result of re-reading the owner before the first adoption (RecheckDeletionTimestamp): undefined
 * when adoption may go ahead, else the error upstream reports.
 */
export function canAdopt(
  wanted: { readonly namespace: string; readonly name: string; readonly uid: string },
  live: KObject | undefined,
): string | undefined {
  const id = `${wanted.namespace}/${wanted.name}`;
  if (live === undefined || live.metadata.uid !== wanted.uid)
    return `original ${id} is gone: got uid ${live?.metadata.uid ?? ''}, wanted ${wanted.uid}`;
  if (live.metadata.deletionTimestamp !== undefined && live.metadata.deletionTimestamp !== null)
    return `${id} has just been deleted at ${live.metadata.deletionTimestamp}`;
  return undefined;
}
