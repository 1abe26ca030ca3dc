// The revision rules every backend shares: which revisions a read may ask for, and the errors it gets.
import { checkRevision } from './keys.js';
import { StoreError } from './store.js';

export function compactedError(from: number, compactRevision: number): StoreError {
  return new StoreError(
    'Compacted',
    `required revision ${from} has been compacted (oldest available is ${compactRevision})`,
    { revision: from, compactRevision },
  );
}

export function futureRevisionError(revision: number, head: number, what = 'revision'): StoreError {
  return new StoreError('FutureRevision', `${what} ${revision} is newer than the current revision ${head}`, {
    revision,
  });
}

/**
 * The revision a get/list reads at: the head for 0 or undefined; otherwise `revision` itself, which
 * must be neither compacted away nor in the future.
 */
export function resolveReadRevision(revision: number | undefined, head: number, compacted: number): number {
  if (revision === undefined || revision === 0) return head;
  checkRevision('revision', revision);
  if (revision < compacted) throw compactedError(revision, compacted);
  if (revision > head) throw futureRevisionError(revision, head);
  return revision;
}
