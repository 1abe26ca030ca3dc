// rbac.authorization.k8s.io/v1 validation: each case is defaulted, validated, and compared with the
// exact `<field>: <message>` texts kube-apiserver returns (pkg/apis/rbac/validation).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDefaults, prepareForUpdate } from '../defaults/index.js';
import { fieldErrorString } from '../field-errors.js';
import type { KObject } from '../object.js';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES } from '../rbac.js';
import type { ResourceInfo } from '../resources.js';
import { validateCreate, validateUpdate } from './index.js';

const RBAC = 'rbac.authorization.k8s.io';
const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;

const ns = (name: string): Record<string, unknown> => ({ name, namespace: 'default' });
const podsRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const ref = (kind: string, name: string): Record<string, unknown> => ({ apiGroup: RBAC, kind, name });
const user = { kind: 'User', name: 'alice' };

interface Case {
  readonly name: string;
  readonly r: ResourceInfo;
  readonly obj: Record<string, unknown>;
  readonly want: readonly string[];
  readonly old?: Record<string, unknown>;
}

function run(c: Case): string[] {
  const obj = structuredClone(c.obj) as unknown as KObject;
  if (c.old === undefined) {
    applyDefaults(c.r, obj);
    return validateCreate(c.r, obj).map(fieldErrorString);
  }
  const old = structuredClone(c.old) as unknown as KObject;
  applyDefaults(c.r, old);
  prepareForUpdate(c.r, obj, old);
  applyDefaults(c.r, obj);
  return validateUpdate(c.r, obj, old).map(fieldErrorString);
}

const cases: Case[] = [
  // ---- Role and ClusterRole ----
  { name: 'a valid role', r: ROLES, obj: { metadata: ns('reader'), rules: [podsRule] }, want: [] },
  { name: 'a role without rules', r: ROLES, obj: { metadata: ns('empty') }, want: [] },
  {
    name: 'names are path segments: colons and capitals are fine',
    r: CLUSTER_ROLES,
    obj: { metadata: { name: 'system:controller:Foo_Bar' }, rules: [podsRule] },
    want: [],
  },
  {
    name: 'a name with a slash or a percent sign, or ".."',
    r: ROLES,
    obj: { metadata: ns('a/b%c') },
    want: [
      `metadata.name: Invalid value: "a/b%c": may not contain '/'`,
      `metadata.name: Invalid value: "a/b%c": may not contain '%'`,
    ],
  },
  {
    name: 'a ClusterRole is cluster-scoped',
    r: CLUSTER_ROLES,
    obj: { metadata: { name: '..' } },
    want: [`metadata.name: Invalid value: "..": may not be '..'`],
  },
  {
    name: 'a Role needs a namespace',
    r: ROLES,
    obj: { metadata: { name: 'r' } },
    want: ['metadata.namespace: Required value'],
  },
  {
    name: 'verbs are required; a resource rule needs api groups and resources',
    r: ROLES,
    obj: { metadata: ns('r'), rules: [podsRule, { verbs: [] }] },
    want: [
      'rules[1].verbs: Required value: verbs must contain at least one value',
      'rules[1].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[1].resources: Required value: resource rules must supply at least one resource',
    ],
  },
  {
    name: 'a Role may not name non-resource URLs',
    r: ROLES,
    obj: { metadata: ns('r'), rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] },
    want: [
      'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
    ],
  },
  {
    name: 'a ClusterRole may, but not with resources in the same rule',
    r: CLUSTER_ROLES,
    obj: {
      metadata: { name: 'c' },
      rules: [
        { verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] },
        { verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods'] },
        { verbs: ['get'], nonResourceURLs: ['/y'], resourceNames: ['n'] },
      ],
    },
    want: [
      'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
      'rules[2].nonResourceURLs: Invalid value: []string{"/y"}: rules cannot apply to both regular resources and non-resource URLs',
    ],
  },
  {
    name: 'an aggregation rule needs at least one selector',
    r: CLUSTER_ROLES,
    obj: { metadata: { name: 'agg' }, aggregationRule: {} },
    want: [
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ],
  },
  {
    name: 'aggregation selectors are label selectors',
    r: CLUSTER_ROLES,
    obj: {
      metadata: { name: 'agg' },
      aggregationRule: {
        clusterRoleSelectors: [
          { matchLabels: { 'rbac.example.com/aggregate-to-agg': 'true' } },
          { matchExpressions: [{ key: 'k', operator: 'Like' }] },
        ],
      },
    },
    want: [
      'aggregationRule.clusterRoleSelectors[1].matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
      'aggregationRule.clusterRoleSelectors[1]: Invalid value: "null": invalid label selector.',
    ],
  },
  {
    name: 'a rule of the wrong type is reported, not thrown on',
    r: ROLES,
    obj: { metadata: ns('r'), rules: [{ verbs: 'get', apiGroups: [''], resources: ['pods'] }] },
    want: [
      'rules[0].verbs: Invalid value: "get": must be of type array',
      'rules[0].verbs: Required value: verbs must contain at least one value',
    ],
  },

  // ---- RoleBinding and ClusterRoleBinding ----
  {
    name: 'a RoleBinding to a Role or a ClusterRole that need not exist; apiGroups defaulted',
    r: ROLE_BINDINGS,
    obj: {
      metadata: ns('rb'),
      roleRef: { kind: 'ClusterRole', name: 'missing' },
      subjects: [user, { kind: 'Group', name: 'devs' }, { kind: 'ServiceAccount', name: 'sa' }],
    },
    want: [],
  },
  {
    name: 'roleRef: group, kind and name',
    r: ROLE_BINDINGS,
    obj: { metadata: ns('rb'), roleRef: { apiGroup: 'example.com', kind: 'Secret', name: '' } },
    want: [
      'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
      'roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"',
      'roleRef.name: Required value',
    ],
  },
  {
    name: 'a missing roleRef',
    r: CLUSTER_ROLE_BINDINGS,
    obj: { metadata: { name: 'crb' } },
    want: [
      'roleRef.kind: Unsupported value: "": supported values: "ClusterRole"',
      'roleRef.name: Required value',
    ],
  },
  {
    name: 'a ClusterRoleBinding binds ClusterRoles only',
    r: CLUSTER_ROLE_BINDINGS,
    obj: { metadata: { name: 'crb' }, roleRef: ref('Role', 'a/b') },
    want: [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      `roleRef.name: Invalid value: "a/b": may not contain '/'`,
    ],
  },
  {
    name: 'a ServiceAccount in a ClusterRoleBinding needs a namespace',
    r: CLUSTER_ROLE_BINDINGS,
    obj: {
      metadata: { name: 'crb' },
      roleRef: ref('ClusterRole', 'view'),
      subjects: [
        { kind: 'ServiceAccount', name: 'sa' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'kube-system' },
      ],
    },
    want: ['subjects[0].namespace: Required value'],
  },
  {
    name: 'subjects: kinds, api groups and ServiceAccount names',
    r: ROLE_BINDINGS,
    obj: {
      metadata: ns('rb'),
      roleRef: ref('Role', 'r'),
      subjects: [
        { kind: 'ServiceAccount', name: 'Bad_Name', apiGroup: RBAC },
        { kind: 'User', name: 'bob', apiGroup: 'v1' },
        { kind: 'Robot', name: 'r2' },
        { kind: 'Group', name: '' },
      ],
    },
    want: [
      `subjects[0].name: Invalid value: "Bad_Name": ${SUBDOMAIN_MSG}`,
      'subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
      'subjects[1].apiGroup: Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"',
      'subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
      'subjects[3].name: Required value',
    ],
  },
];

const rb = (name: string, subjects: unknown[] = [user]): Record<string, unknown> => ({
  metadata: { ...ns('rb'), uid: 'u1', resourceVersion: '5' },
  roleRef: ref('Role', name),
  subjects,
});

const updates: Case[] = [
  {
    name: 'subjects may change',
    r: ROLE_BINDINGS,
    old: rb('reader'),
    obj: rb('reader', [user, { kind: 'Group', name: 'g' }]),
    want: [],
  },
  {
    name: 'roleRef may not',
    r: ROLE_BINDINGS,
    old: rb('reader'),
    obj: rb('writer'),
    want: [
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"writer"}: cannot change roleRef',
    ],
  },
  {
    name: 'nor its kind, on a ClusterRoleBinding either',
    r: CLUSTER_ROLE_BINDINGS,
    old: { metadata: { name: 'crb' }, roleRef: ref('ClusterRole', 'view') },
    obj: { metadata: { name: 'crb' }, roleRef: ref('ClusterRole', 'edit') },
    want: [
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ],
  },
  {
    name: 'a role update is validated like a create',
    r: CLUSTER_ROLES,
    old: { metadata: { name: 'c' }, rules: [podsRule] },
    obj: { metadata: { name: 'c' }, rules: [{ apiGroups: [''], resources: ['pods'] }] },
    want: ['rules[0].verbs: Required value: verbs must contain at least one value'],
  },
];

describe('RBAC validation: creates', () => {
  for (const c of cases) it(`${c.r.kind}: ${c.name}`, () => assert.deepEqual(run(c), c.want));
});

describe('RBAC validation: updates', () => {
  for (const c of updates) it(`${c.r.kind}: ${c.name}`, () => assert.deepEqual(run(c), c.want));
});

describe('RBAC defaulting', () => {
  it('fills roleRef.apiGroup and the User and Group subjects apiGroup, not a ServiceAccount one', () => {
    const obj = {
      metadata: ns('rb'),
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [user, { kind: 'Group', name: 'g', apiGroup: '' }, { kind: 'ServiceAccount', name: 'sa' }],
    } as unknown as KObject;
    applyDefaults(ROLE_BINDINGS, obj);
    assert.deepEqual(obj['roleRef'], ref('Role', 'r'));
    assert.deepEqual(obj['subjects'], [
      { ...user, apiGroup: RBAC },
      { kind: 'Group', name: 'g', apiGroup: RBAC },
      { kind: 'ServiceAccount', name: 'sa' },
    ]);
  });
});
