// --authorization-mode=RBAC: kube-apiserver's RBAC authorizer (plugin/pkg/auth/authorizer/rbac), answering
// from the API server's own Roles, ClusterRoles, RoleBindings and ClusterRoleBindings. The policy index
// (core/rbac/policy-index.ts) follows them in the watch cache, synchronously as each change is applied,
// so a request costs a few map lookups; it allows, or has no opinion (RBAC never denies), with
// upstream's reasons.
import { findResource, type ResourceInfo } from '../../api/resources.js';
import { bindingFromObject, roleFromObject } from '../../core/rbac/from-object.js';
import { RbacPolicyIndex } from '../../core/rbac/policy-index.js';
import { RBAC_GROUP } from '../../core/rbac/types.js';
import { followResource } from '../watch-cache/follow.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import type { Authorizer } from './types.js';

export type RbacResource = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';
export const RBAC_RESOURCES: readonly RbacResource[] = [
  'roles',
  'clusterroles',
  'rolebindings',
  'clusterrolebindings',
];

/** Where the RBAC kinds are served: the resource table's rows (undefined while a build serves none). */
export type RbacResourceLookup = (resource: RbacResource) => ResourceInfo | undefined;

export const servedRbacResource: RbacResourceLookup = (resource) => findResource(RBAC_GROUP, 'v1', resource);

/**
 * An index of the RBAC objects in `cache`, kept current as the cache applies changes. A kind the
 * lookup does not find is followed by nothing (it grants nothing).
 */
export function followRbacPolicy(
  cache: WatchCache,
  lookup: RbacResourceLookup = servedRbacResource,
): RbacPolicyIndex {
  const index = new RbacPolicyIndex();
  for (const resource of RBAC_RESOURCES) {
    const r = lookup(resource);
    if (r === undefined) continue;
    const isRole = resource === 'roles' || resource === 'clusterroles';
    const held = new Map<string, { namespace: string; name: string }>();
    const remove = (namespace: string, name: string): void => {
      held.delete(`${namespace}/${name}`);
      if (isRole) index.deleteRole(namespace, name);
      else index.deleteBinding(namespace, name);
    };
    followResource(cache, r, {
      reset: () => {
        for (const o of [...held.values()]) remove(o.namespace, o.name);
      },
      put: (obj) => {
        const parsed = JSON.parse(obj.json) as unknown;
        held.set(`${obj.namespace}/${obj.name}`, { namespace: obj.namespace, name: obj.name });
        // The key decides the scope: a cluster-scoped kind is indexed at '' whatever the object says.
        if (isRole) index.putRole({ ...roleFromObject(parsed), namespace: obj.namespace, name: obj.name });
        else index.putBinding({ ...bindingFromObject(parsed), namespace: obj.namespace, name: obj.name });
      },
      delete: (obj) => remove(obj.namespace, obj.name),
    });
  }
  return index;
}

/** The authorizer of the chain: allow, or no opinion with upstream's reason (missing roles, if any). */
export function rbacAuthorizer(index: RbacPolicyIndex): Authorizer {
  return (attrs) => {
    const d = index.authorize(attrs);
    return { decision: d.allowed ? 'allow' : 'no-opinion', reason: d.reason };
  };
}
