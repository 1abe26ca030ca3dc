// RBAC's escalation check on writes of the RBAC kinds (upstream's policybased storage in
// pkg/registry/rbac and ConfirmNoEscalation in pkg/registry/rbac/validation): a requester may create or
// update a Role or ClusterRole only when it already holds every rule of it at that scope (a Role's
// namespace; the cluster for a ClusterRole), or may `escalate` roles (clusterroles); and a RoleBinding or
// ClusterRoleBinding only when it holds every rule of the referenced role in the binding's scope, or may
// `bind` that role (resourceNames may name it). system:masters passes; so do updates that change only
// what the garbage collector changes (ownerReferences, finalizers). Otherwise 403 Forbidden:
//   roles.rbac.authorization.k8s.io "r" is forbidden: user "u" (groups=["system:authenticated"]) is
//   attempting to grant RBAC permissions not currently held:
//   {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
// A ClusterRole with an aggregationRule gathers anything: setting one needs every permission there is.
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { covers, escalationMessage } from '../../core/rbac/covers.js';
import { bindingFromObject, roleFromObject } from '../../core/rbac/from-object.js';
import type { RbacPolicyIndex } from '../../core/rbac/policy-index.js';
import { RBAC_GROUP, type PolicyRule } from '../../core/rbac/types.js';
import type { RegistryHooks } from '../registry/types.js';
import { RBAC_RESOURCES, type RbacResource } from './rbac-authorizer.js';
import { SYSTEM_MASTERS, type Authorizer, type UserInfo } from './types.js';

const FULL_AUTHORITY: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const rbacResourceOf = (r: ResourceInfo): RbacResource | undefined =>
  r.group === RBAC_GROUP ? RBAC_RESOURCES.find((x) => x === r.resource) : undefined;

const GC_FIELDS = ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion'];

/** The object without what the garbage collector and the server change. */
function withoutGcFields(obj: KObject): string {
  const meta: Record<string, unknown> = { ...obj.metadata };
  for (const f of GC_FIELDS) delete meta[f];
  return JSON.stringify({ ...obj, metadata: meta });
}

export function rbacEscalationHooks(index: RbacPolicyIndex, chain: Authorizer): RegistryHooks {
  const allowedTo = (
    user: UserInfo,
    verb: string,
    resource: string,
    namespace: string,
    name: string,
  ): boolean =>
    chain({
      user,
      verb,
      resourceRequest: true,
      apiGroup: RBAC_GROUP,
      namespace,
      resource,
      subresource: '',
      name,
      path: '',
    }).decision === 'allow';

  /** undefined when `user` holds `wanted` at `namespace`'s scope; otherwise upstream's message. */
  const escalation = (
    user: UserInfo,
    namespace: string,
    wanted: readonly PolicyRule[],
  ): string | undefined => {
    const held = index.rulesFor(user, namespace);
    const { covered, missing } = covers(held.rules, wanted);
    if (covered) return undefined;
    const msg = escalationMessage(user, missing);
    return held.errors.length === 0 ? msg : `${msg}; resolution errors: [${held.errors.join(' ')}]`;
  };

  const check = (
    r: ResourceInfo,
    obj: KObject,
    old: KObject | undefined,
    user: UserInfo | undefined,
  ): void => {
    const resource = rbacResourceOf(r);
    if (resource === undefined || user === undefined || user.groups.includes(SYSTEM_MASTERS)) return;
    const name = obj.metadata.name ?? '';
    const namespace = r.namespaced ? (obj.metadata.namespace ?? '') : '';
    const gr = { group: RBAC_GROUP, resource };
    if (resource === 'roles' || resource === 'clusterroles') {
      // Upstream asks with the request's name: none on a create.
      if (allowedTo(user, 'escalate', resource, namespace, old === undefined ? '' : name)) return;
      if (old !== undefined && withoutGcFields(old) === withoutGcFields(obj)) return;
      const why = escalation(user, namespace, roleFromObject(obj).rules);
      if (why !== undefined) throw statusErrors.forbidden(gr, name, why);
      const aggregation = (o: KObject | undefined): string =>
        JSON.stringify((o as Record<string, unknown> | undefined)?.['aggregationRule'] ?? null);
      // As upstream's ClusterRole storage: an aggregationRule on the new or the old object (setting,
      // changing or removing one) needs full authority, unless `escalate` was held (above).
      if (
        resource === 'clusterroles' &&
        (aggregation(obj) !== 'null' || (old !== undefined && aggregation(old) !== 'null')) &&
        escalation(user, '', FULL_AUTHORITY) !== undefined
      )
        throw statusErrors.forbidden(
          gr,
          name,
          'must have cluster-admin privileges to use the aggregationRule',
        );
      return;
    }
    if (old !== undefined && withoutGcFields(old) === withoutGcFields(obj)) return;
    const { roleRef } = bindingFromObject(obj);
    const refResource =
      roleRef.kind === 'ClusterRole' ? 'clusterroles' : roleRef.kind === 'Role' ? 'roles' : '';
    if (refResource !== '' && allowedTo(user, 'bind', refResource, namespace, roleRef.name)) return;
    const rules = index.roleRules(roleRef, namespace);
    if (typeof rules === 'string')
      throw statusErrors.notFound({ group: RBAC_GROUP, resource: roleRef.kind.toLowerCase() }, roleRef.name);
    const why = escalation(user, namespace, rules);
    if (why !== undefined) throw statusErrors.forbidden(gr, name, why);
  };

  return {
    beforeCreate: async (r, obj, ctx) => check(r, obj, undefined, ctx.user),
    beforeUpdate: async (r, obj, old, ctx) => check(r, obj, old, ctx.user),
  };
}
