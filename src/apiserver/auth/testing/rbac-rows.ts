// Resource rows for the four RBAC kinds, for tests of the authorizer, its escalation check and the
// bootstrap policy that must not depend on the resource table serving them.
import type { ResourceInfo } from '../../../api/resources.js';
import { RBAC_GROUP } from '../../../core/rbac/types.js';
import type { RbacResource, RbacResourceLookup } from '../rbac-authorizer.js';

const row = (resource: RbacResource, kind: string, namespaced: boolean): ResourceInfo => ({
  group: RBAC_GROUP,
  version: 'v1',
  resource,
  kind,
  listKind: `${kind}List`,
  singular: kind.toLowerCase(),
  shortNames: [],
  categories: [],
  namespaced,
  hasStatus: false,
  custom: false,
  storagePath: resource,
  fieldSelectors: {},
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  nameRule: 'path-segment',
});

export const RBAC_ROWS: Readonly<Record<RbacResource, ResourceInfo>> = {
  roles: row('roles', 'Role', true),
  clusterroles: row('clusterroles', 'ClusterRole', false),
  rolebindings: row('rolebindings', 'RoleBinding', true),
  clusterrolebindings: row('clusterrolebindings', 'ClusterRoleBinding', false),
};

export const rbacRows: RbacResourceLookup = (resource) => RBAC_ROWS[resource];
