// In-process consumers of the API server's own objects (the RBAC authorizer's policy, and any other that
// must answer synchronously from what the server has stored): the current objects of one resource now,
// then every change in the order the watch cache applies them, synchronously with it. When the cache is
// re-initialised (it fell behind the store's compaction), the follower is told to forget the resource and
// is handed its whole state again.
import type { ResourceInfo } from '../../api/resources.js';
import type { CachedObject } from './cached-object.js';
import type { WatchCache } from './watch-cache.js';

export interface ObjectFollower {
  /** Forget every object of the resource: its whole state follows. */
  reset(): void;
  /** An object added or changed. */
  put(obj: CachedObject): void;
  /** An object gone (its last state). */
  delete(obj: CachedObject): void;
}

const EVERYTHING = { label: { requirements: [] }, field: { requirements: [] } } as const;

/** Follows `r` in `cache` (which must have loaded); returns the function that stops following. */
export function followResource(cache: WatchCache, r: ResourceInfo, follower: ObjectFollower): () => void {
  let stop: (() => void) | undefined;
  let stopped = false;
  const register = (): void => {
    if (stopped) return;
    follower.reset();
    stop = cache.watch(
      r,
      EVERYTHING,
      {
        deliver: (type, obj) => (type === 'DELETED' ? follower.delete(obj) : follower.put(obj)),
        // The cache drops its watchers once it has expired them all: register again after that turn.
        expire: () => queueMicrotask(register),
      },
      { initial: true },
    ).stop;
  };
  register();
  return () => {
    stopped = true;
    stop?.();
  };
}
