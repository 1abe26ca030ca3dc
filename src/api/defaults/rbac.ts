// rbac.authorization.k8s.io/v1 defaulting (SetDefaults_RoleBinding, SetDefaults_ClusterRoleBinding,
// SetDefaults_Subject): an empty roleRef.apiGroup is the RBAC group, and so is an empty subject
// apiGroup for a User or a Group (a ServiceAccount's stays "").
import { RBAC_GROUP } from '../rbac.js';
import { type Obj, ensureChild, items, setDefaultString } from './util.js';

export function defaultBinding(o: Obj): void {
  const ref = ensureChild(o, 'roleRef');
  if (ref !== undefined) setDefaultString(ref, 'apiGroup', RBAC_GROUP);
  for (const s of items(o, 'subjects'))
    if (s['kind'] === 'User' || s['kind'] === 'Group') setDefaultString(s, 'apiGroup', RBAC_GROUP);
}
