// The ObjectLookup the ServiceAccount token authenticator reads, over the API server's watch cache: no
// store round trip per request, and a deleted object stops backing its tokens as soon as the cache sees it.
// A fresh lookup first waits for the cache to reflect the store's current revision.
import { objectKey } from '../../api/codec.js';
import { findResource } from '../../api/resources.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import type { ObjectLookup } from './service-account-tokens.js';

export function cachedObjectLookup(cache: WatchCache): ObjectLookup {
  return async (resource, namespace, name, fresh) => {
    const r = findResource('', 'v1', resource);
    if (r === undefined) return undefined;
    if (fresh) await cache.waitFresh();
    const cached = cache.get(r, objectKey(r, namespace, name));
    if (cached === undefined) return undefined;
    const meta = (JSON.parse(cached.json) as { metadata?: { uid?: unknown; deletionTimestamp?: unknown } })
      .metadata;
    return {
      uid: typeof meta?.uid === 'string' ? meta.uid : '',
      ...(typeof meta?.deletionTimestamp === 'string' ? { deletionTimestamp: meta.deletionTimestamp } : {}),
    };
  };
}
