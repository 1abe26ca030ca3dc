// kube's NamespaceLifecycle admission, as the registry applies it on create: nothing new goes into a
// namespace that does not exist or is being deleted.
import type { ResourceInfo } from '../../api/resources.js';
import { mustFindResource } from '../../api/resources.js';
import { StatusError, statusErrors } from '../../api/status.js';
import type { Store } from '../../storage/store.js';
import { decodeObject, objectKey } from '../codec.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';

const NAMESPACES = mustFindResource('', 'namespaces');

/** Throws NotFound when `namespace` does not exist and a Forbidden when it is being deleted. */
export async function checkNamespaceAcceptsCreates(
  store: Store,
  cache: WatchCache,
  r: ResourceInfo,
  namespace: string,
  name: string,
): Promise<void> {
  const key = objectKey(NAMESPACES, '', namespace);
  const cached = cache.get(NAMESPACES, key);
  if (cached !== undefined && !cached.json.includes('"deletionTimestamp"')) return;
  // The cache may lag a namespace created a moment ago; the store has the last word.
  const kv = await store.get(key);
  if (kv === undefined) throw statusErrors.notFound(NAMESPACES, namespace);
  if (decodeObject(kv.value, kv.modRevision).metadata.deletionTimestamp !== undefined) {
    throw namespaceTerminating(r, namespace, name);
  }
}

/** kube's NamespaceLifecycle admission: a Forbidden about the object being created. */
function namespaceTerminating(r: ResourceInfo, namespace: string, name: string): StatusError {
  const forbidden = statusErrors.forbidden(
    r,
    name,
    `unable to create new content in namespace ${namespace} because it is being terminated`,
  ).status;
  return new StatusError({
    ...forbidden,
    details: {
      ...forbidden.details,
      causes: [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${namespace} is being terminated`,
          field: 'metadata.namespace',
        },
      ],
    },
    code: 403,
  });
}
