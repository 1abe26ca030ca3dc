// rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding and ClusterRoleBinding.
import { always, atomicList, atomicStrings, field, named, str } from './build.js';
import { kindSchema, labelSelector } from './meta.js';
import type { Schema } from './schema.js';

const RBAC = 'io.k8s.api.rbac.v1';

const policyRule: Schema = named(
  `${RBAC}.PolicyRule`,
  {
    verbs: always(
      atomicStrings('Verbs the rule allows, such as get, list and watch; `*` allows every verb.'),
    ),
    apiGroups: atomicStrings('API groups of the resources; "" is the core group, `*` every group.'),
    resources: atomicStrings('Resources the rule applies to (`pods`, `pods/status`, `*`, `*/scale`).'),
    resourceNames: atomicStrings('Names the rule is restricted to; empty means every name.'),
    nonResourceURLs: atomicStrings(
      'Non-resource paths the rule applies to (`/healthz`, `/api/*`); ClusterRoles only.',
    ),
  },
  { required: ['verbs'] },
);

const rules = always(atomicList(policyRule, 'The rules of the role.'));

const aggregationRule: Schema = named(`${RBAC}.AggregationRule`, {
  clusterRoleSelectors: atomicList(
    labelSelector,
    'Selectors of the ClusterRoles whose rules are aggregated into this one.',
  ),
});

const roleRef: Schema = named(
  `${RBAC}.RoleRef`,
  {
    apiGroup: always(str('API group of the referenced role: rbac.authorization.k8s.io.')),
    kind: always(str('Role or ClusterRole.')),
    name: always(str('Name of the referenced role.')),
  },
  { required: ['apiGroup', 'kind', 'name'], 'x-kubernetes-map-type': 'atomic' },
);

const subject: Schema = named(
  `${RBAC}.Subject`,
  {
    kind: always(str('User, Group or ServiceAccount.')),
    apiGroup: str('"" for a ServiceAccount, rbac.authorization.k8s.io for a User or a Group.'),
    name: always(str('Name of the subject.')),
    namespace: str('Namespace of a ServiceAccount subject.'),
  },
  { required: ['kind', 'name'], 'x-kubernetes-map-type': 'atomic' },
);

const bindingFields = (scope: string): Record<string, Schema> => ({
  subjects: atomicList(subject, 'The users, groups and service accounts the role is granted to.'),
  roleRef: always(field(roleRef, `The role granted ${scope}; immutable.`)),
});

export const role: Schema = kindSchema(
  `${RBAC}.Role`,
  'A Role is a namespaced set of rules granting access to resources in its namespace.',
  { rules },
);

export const clusterRole: Schema = kindSchema(
  `${RBAC}.ClusterRole`,
  'A ClusterRole is a cluster-wide set of rules, which bindings grant in a namespace or cluster-wide.',
  {
    rules,
    aggregationRule: field(
      aggregationRule,
      'When set, the controller manager fills rules from the ClusterRoles the selectors pick.',
    ),
  },
);

export const roleBinding: Schema = kindSchema(
  `${RBAC}.RoleBinding`,
  'A RoleBinding grants a Role or a ClusterRole to subjects inside the binding’s namespace.',
  bindingFields('inside the namespace: a Role of the namespace or a ClusterRole'),
);

export const clusterRoleBinding: Schema = kindSchema(
  `${RBAC}.ClusterRoleBinding`,
  'A ClusterRoleBinding grants a ClusterRole to subjects across the whole cluster.',
  bindingFields('cluster-wide: a ClusterRole'),
);
