// fast-check arbitraries for RBAC property tests: rules, roles, bindings and requests over small
// vocabularies, so that random rules and requests often meet.
import fc from 'fast-check';
import type { PolicyRule, RbacBinding, RbacRequest, RbacRole, Subject } from '../types.js';

const VERBS = ['get', 'list', 'create', 'delete', '*'];
const GROUPS = ['', 'apps', '*'];
const RESOURCES = ['pods', 'pods/status', 'deployments', 'deployments/scale', '*', '*/scale'];
const NAMES = ['a', 'b'];
const URLS = ['/healthz', '/api', '/api/*', '*'];
export const USERS = ['alice', 'bob', 'system:serviceaccount:ns1:sa'];
export const GROUP_NAMES = ['g1', 'g2', 'system:authenticated'];
export const NAMESPACES = ['ns1', 'ns2'];
export const ROLE_NAMES = ['r1', 'r2', 'r3'];

const someOf = (xs: string[]): fc.Arbitrary<string[]> =>
  fc.uniqueArray(fc.constantFrom(...xs), { minLength: 1, maxLength: 3 });

export const resourceRule: fc.Arbitrary<PolicyRule> = fc.record(
  {
    verbs: someOf(VERBS),
    apiGroups: someOf(GROUPS),
    resources: someOf(RESOURCES),
    resourceNames: fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 2 }),
  },
  { requiredKeys: ['verbs', 'apiGroups', 'resources'] },
);

export const nonResourceRule: fc.Arbitrary<PolicyRule> = fc.record({
  verbs: someOf(VERBS),
  nonResourceURLs: someOf(URLS),
});

export const rule: fc.Arbitrary<PolicyRule> = fc.oneof(resourceRule, resourceRule, nonResourceRule);
export const rules: fc.Arbitrary<PolicyRule[]> = fc.array(rule, { maxLength: 4 });

const subject: fc.Arbitrary<Subject> = fc.oneof(
  fc.constantFrom(...USERS.slice(0, 2)).map((name) => ({ kind: 'User', name })),
  fc.constantFrom(...GROUP_NAMES).map((name) => ({ kind: 'Group', name })),
  fc.constant({ kind: 'ServiceAccount', name: 'sa', namespace: 'ns1' }),
  fc.constant({ kind: 'ServiceAccount', name: 'sa' }),
);

export const role = (namespace: string): fc.Arbitrary<RbacRole> =>
  fc.record({ namespace: fc.constant(namespace), name: fc.constantFrom(...ROLE_NAMES), rules });

export const binding: fc.Arbitrary<RbacBinding> = fc.record({
  namespace: fc.constantFrom('', ...NAMESPACES),
  name: fc.constantFrom('b1', 'b2', 'b3', 'b4'),
  subjects: fc.array(subject, { maxLength: 3 }),
  roleRef: fc.record({
    apiGroup: fc.constant('rbac.authorization.k8s.io'),
    kind: fc.constantFrom('Role', 'ClusterRole'),
    name: fc.constantFrom(...ROLE_NAMES, 'missing'),
  }),
});

export const request: fc.Arbitrary<RbacRequest> = fc.record({
  user: fc.record({
    name: fc.constantFrom(...USERS),
    groups: fc.uniqueArray(fc.constantFrom(...GROUP_NAMES), { maxLength: 2 }),
  }),
  verb: fc.constantFrom('get', 'list', 'create', 'delete'),
  resourceRequest: fc.boolean(),
  apiGroup: fc.constantFrom('', 'apps'),
  namespace: fc.constantFrom('', ...NAMESPACES),
  resource: fc.constantFrom('pods', 'deployments'),
  subresource: fc.constantFrom('', 'status', 'scale'),
  name: fc.constantFrom('', ...NAMES),
  path: fc.constantFrom('/healthz', '/api', '/api/v1', '/apis'),
});
