// Optimistic concurrency for the registry's writes, in the shape of kube-apiserver's
// storage.Interface GuaranteedUpdate: read the current object, let tryUpdate decide from it, write at
// the revision read (compare-and-swap); when the write loses the race to another writer, read again
// and decide again.
import type { ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { isStoreError } from '../../storage/store.js';

/**
 * How often a write is re-applied to a fresh read after losing a race to another writer.
 * GuaranteedUpdate retries such conflicts until it wins; a bound this high only guards against a
 * livelock.
 */
export const MAX_CONFLICT_RETRIES = 100;

/** What tryUpdate decided from the current object. */
export type UpdateAttempt<R> =
  /** An answer that needs no write (nothing changes, a dry run, a create where nothing was). */
  | { readonly done: R }
  /**
   * A write at the revision read. `pinned`: the request named the resourceVersion it expects (a
   * precondition), so a conflict is the answer and is not retried.
   */
  | { readonly write: () => Promise<R>; readonly pinned?: boolean };

/**
 * Reads with `read`, decides with `tryUpdate` and runs the write it asks for, until the write does not
 * fail with an error `isConflict` recognises or the retries run out. Errors of `read` and `tryUpdate`
 * are never retried.
 */
export async function guaranteedUpdate<T, R>(
  read: () => Promise<T>,
  tryUpdate: (current: T) => UpdateAttempt<R> | Promise<UpdateAttempt<R>>,
  isConflict: (err: unknown) => boolean,
): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    const step = await tryUpdate(await read());
    if ('done' in step) return step.done;
    try {
      return await step.write();
    } catch (err) {
      if (isConflict(err) && step.pinned !== true && attempt < MAX_CONFLICT_RETRIES) continue;
      throw err;
    }
  }
}

/** Runs a store write for the object `name`, its Conflict and NotFound turned into the Status errors. */
export async function storeWrite<R>(r: ResourceInfo, name: string, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (err) {
    if (isStoreError(err, 'Conflict')) throw statusErrors.conflict(r, name);
    if (isStoreError(err, 'NotFound')) throw statusErrors.notFound(r, name);
    throw err;
  }
}
