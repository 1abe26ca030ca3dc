// The bootstrap reconcile plan, table-tested from upstream's reconciliation semantics.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUTOUPDATE_ANNOTATION, BOOTSTRAPPING_LABEL } from './bootstrap-policy.js';
import { reconcileBinding, reconcileRole } from './reconcile.js';

const meta = (extra: Record<string, unknown> = {}) => ({
  name: 'r',
  labels: { [BOOTSTRAPPING_LABEL]: 'rbac-defaults' },
  annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  ...extra,
});
const podsGet = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const podsList = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };
const role = (rules: unknown[], m: Record<string, unknown> = meta()) => ({
  kind: 'ClusterRole',
  metadata: m,
  rules,
});

describe('reconcileRole', () => {
  const desired = role([podsGet, podsList]);
  const cases: [string, Record<string, unknown> | undefined, string, unknown?][] = [
    ['absent: created as desired', undefined, 'create', desired],
    ['equal: nothing', role([podsGet, podsList], meta({ resourceVersion: '5' })), 'none'],
    [
      'covered by broader rules: nothing',
      role([{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }]),
      'none',
    ],
    [
      'autoupdate "false": left alone even when rules are missing',
      role([], meta({ annotations: { [AUTOUPDATE_ANNOTATION]: 'false' } })),
      'none',
    ],
    [
      'missing rules added, extra rules kept',
      role(
        [podsGet, { verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] }],
        meta({ resourceVersion: '7' }),
      ),
      'update',
      role(
        [
          podsGet,
          { verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments'] },
          { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
        ],
        meta({ resourceVersion: '7' }),
      ),
    ],
    [
      'missing label and annotation added; existing values win',
      role([podsGet, podsList], { name: 'r', labels: { [BOOTSTRAPPING_LABEL]: 'mine', extra: 'x' } }),
      'update',
      role([podsGet, podsList], {
        name: 'r',
        labels: { [BOOTSTRAPPING_LABEL]: 'mine', extra: 'x' },
        annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
      }),
    ],
  ];
  for (const [name, existing, action, object] of cases) {
    it(name, () => {
      const plan = reconcileRole(desired, existing);
      assert.equal(plan.action, action);
      if (object !== undefined) assert.deepEqual('object' in plan ? plan.object : undefined, object);
    });
  }

  it('an aggregated role gains missing selectors and keeps its aggregated rules', () => {
    const sel = (k: string) => ({ matchLabels: { [k]: 'true' } });
    const want = {
      kind: 'ClusterRole',
      metadata: meta(),
      aggregationRule: { clusterRoleSelectors: [sel('a')] },
      rules: [],
    };
    const have = { ...want, aggregationRule: { clusterRoleSelectors: [sel('mine')] }, rules: [podsGet] };
    const plan = reconcileRole(want, have);
    assert.equal(plan.action, 'update');
    assert.deepEqual('object' in plan && plan.object['aggregationRule'], {
      clusterRoleSelectors: [sel('mine'), sel('a')],
    });
    assert.deepEqual('object' in plan && plan.object['rules'], [podsGet]);
    assert.equal(reconcileRole(want, { ...want, rules: [podsGet] }).action, 'none');
  });
});

describe('reconcileBinding', () => {
  const ref = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' };
  const masters = { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' };
  const alice = { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' };
  const binding = (subjects: unknown[], roleRef: unknown = ref, m: Record<string, unknown> = meta()) => ({
    kind: 'ClusterRoleBinding',
    metadata: m,
    roleRef,
    subjects,
  });
  const desired = binding([masters]);
  const cases: [string, Record<string, unknown> | undefined, string, unknown?][] = [
    ['absent: created', undefined, 'create', desired],
    ['equal: nothing', binding([masters]), 'none'],
    ['extra subjects kept: nothing', binding([alice, masters]), 'none'],
    ['missing subject added after the others', binding([alice]), 'update', binding([alice, masters])],
    [
      'autoupdate "false": left alone',
      binding([], ref, meta({ annotations: { [AUTOUPDATE_ANNOTATION]: 'false' } })),
      'none',
    ],
    [
      'another roleRef: recreated with the subjects of both',
      binding([alice], { ...ref, name: 'edit' }, meta({ uid: 'u1', resourceVersion: '3' })),
      'recreate',
      binding([alice, masters], ref, meta()),
    ],
  ];
  for (const [name, existing, action, object] of cases) {
    it(name, () => {
      const plan = reconcileBinding(desired, existing);
      assert.equal(plan.action, action);
      if (object !== undefined) assert.deepEqual('object' in plan ? plan.object : undefined, object);
    });
  }
});
