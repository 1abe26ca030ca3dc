// The rbac.authorization.k8s.io/v1 kinds end to end: the real kubectl against `svcplane up` creates,
// lists, describes, applies and reconciles Roles, ClusterRoles and their bindings, gets upstream's 422
// texts for a bad rule and a changed roleRef, and sees an aggregated ClusterRole filled by the
// clusterrole-aggregation controller. Authorization stays AlwaysAllow here: these are the kinds only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PolicyRule } from '../../src/api/rbac.js';
import { kubectlFor, writeYaml, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const WAIT = 30_000;
const RBAC = 'rbac.authorization.k8s.io';
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-rbac-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The header and the row of a one-object `kubectl get`, split on runs of spaces. */
const table = (out: string): string[][] =>
  out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

describe('RBAC kinds: kubectl against svcplane up', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  /** kubectl's stderr for a command that must fail. */
  const fails = async (args: string[], stdin?: string): Promise<string> => {
    const err = await kubectl(args, stdin).then(
      (out) => assert.fail(`kubectl ${args.join(' ')} succeeded: ${out}`),
      (e: Error) => e.message,
    );
    return err.slice(err.indexOf(': ') + 2);
  };
  const rulesOf = async (kind: string, name: string, ns = 'default'): Promise<PolicyRule[] | null> =>
    (JSON.parse(await kubectl(['get', kind, name, '-n', ns, '-o', 'json'])) as { rules: PolicyRule[] | null })
      .rules;

  before(async () => {
    srv = await startUp();
    kubectl = kubectlFor(srv, work);
  });
  after(async () => srv?.destroy());

  it('kubectl create makes each kind; get prints NAME, CREATED AT and NAME, ROLE, AGE (+ wide subjects)', async () => {
    assert.equal(
      await kubectl(['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods']),
      'role.rbac.authorization.k8s.io/pod-reader created\n',
    );
    await kubectl(['create', 'clusterrole', 'health', '--verb=get', '--non-resource-url=/healthz']);
    await kubectl([
      'create',
      'rolebinding',
      'read-pods',
      '--role=pod-reader',
      '--user=alice',
      '--user=bob',
      '--group=devs',
      '--serviceaccount=ci:builder',
    ]);
    await kubectl(['create', 'clusterrolebinding', 'health-all', '--clusterrole=health', '--group=everyone']);

    assert.deepEqual(await rulesOf('role', 'pod-reader'), [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    ]);
    assert.deepEqual(await rulesOf('clusterrole', 'health'), [
      { nonResourceURLs: ['/healthz'], verbs: ['get'] },
    ]);

    const roles = table(await kubectl(['get', 'roles']));
    assert.deepEqual(roles[0], ['NAME', 'CREATED AT']);
    assert.equal(roles[1]![0], 'pod-reader');
    assert.match(roles[1]![1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(table(await kubectl(['get', 'clusterrole', 'health']))[0], ['NAME', 'CREATED AT']);

    const rb = table(await kubectl(['get', 'rolebinding', 'read-pods']));
    assert.deepEqual(rb[0], ['NAME', 'ROLE', 'AGE']);
    assert.deepEqual(rb[1]!.slice(0, 2), ['read-pods', 'Role/pod-reader']);
    const wide = table(await kubectl(['get', 'rolebinding', 'read-pods', '-o', 'wide']));
    assert.deepEqual(wide[0], ['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    assert.deepEqual(
      [wide[1]![1], ...wide[1]!.slice(3)],
      ['Role/pod-reader', 'alice, bob', 'devs', 'ci/builder'],
    );
    const crb = table(await kubectl(['get', 'clusterrolebinding', 'health-all', '-o', 'wide']));
    assert.deepEqual(crb[0], ['NAME', 'ROLE', 'AGE', 'USERS', 'GROUPS', 'SERVICEACCOUNTS']);
    assert.deepEqual([crb[1]![0], crb[1]![1], crb[1]![3]], ['health-all', 'ClusterRole/health', 'everyone']);

    // Subjects got their apiGroup defaulted the way upstream does it.
    const subjects = JSON.parse(
      await kubectl(['get', 'rolebinding', 'read-pods', '-o', 'jsonpath={.subjects}']),
    ) as unknown[];
    assert.deepEqual(subjects[0], { apiGroup: RBAC, kind: 'User', name: 'alice' });
    assert.deepEqual(subjects[3], { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' });
  });

  it('kubectl describe shows the rules and the role and subjects of a binding', async () => {
    const role = await kubectl(['describe', 'role', 'pod-reader']);
    assert.match(role, /^Name:\s+pod-reader$/m);
    assert.match(role, /^\s+pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
    const rb = await kubectl(['describe', 'rolebinding', 'read-pods']);
    assert.match(rb, /^Role:\n\s+Kind:\s+Role\n\s+Name:\s+pod-reader$/m);
    assert.match(rb, /^\s+User\s+alice\s*$/m);
    assert.match(rb, /^\s+ServiceAccount\s+builder\s+ci$/m);
  });

  it('kubectl apply of YAML; a bad rule and a changed roleRef are 422 with upstream texts', async () => {
    const role = {
      apiVersion: `${RBAC}/v1`,
      kind: 'Role',
      metadata: { name: 'applied', namespace: 'default' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }],
    };
    const binding = {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'applied', namespace: 'default' },
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'applied' },
      subjects: [{ kind: 'ServiceAccount', name: 'default' }],
    };
    const ok = writeYaml(work, 'applied.yaml', [role, binding]);
    assert.equal(
      await kubectl(['apply', '-f', ok]),
      'role.rbac.authorization.k8s.io/applied created\nrolebinding.rbac.authorization.k8s.io/applied created\n',
    );

    /** kubectl apply's error for the Role "bad" with these rules. */
    const badRole = (rules: PolicyRule[]): Promise<string> =>
      fails([
        'apply',
        '-f',
        writeYaml(work, 'bad.yaml', [{ ...role, metadata: { name: 'bad', namespace: 'default' }, rules }]),
      ]);
    assert.equal(
      await badRole([{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]),
      'The Role "bad" is invalid: rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs\n',
    );
    assert.equal(
      await badRole([{ verbs: ['get'], resources: ['pods'] }]),
      'The Role "bad" is invalid: rules[0].apiGroups: Required value: resource rules must supply at least one api group\n',
    );

    const moved = writeYaml(work, 'moved.yaml', [
      { ...binding, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'view' } },
    ]);
    assert.match(
      await fails(['apply', '-f', moved]),
      /The RoleBinding "applied" is invalid: roleRef: Invalid value: rbac\.RoleRef\{APIGroup:"rbac\.authorization\.k8s\.io", Kind:"ClusterRole", Name:"view"\}: cannot change roleRef/,
    );
    // Subjects may change.
    await kubectl([
      'apply',
      '-f',
      writeYaml(work, 'more.yaml', [
        { ...binding, subjects: [...binding.subjects, { kind: 'User', name: 'carol' }] },
      ]),
    ]);
  });

  it('a binding to a role that does not exist is accepted; a PUT creates, as upstream allows for RBAC', async () => {
    assert.equal(
      await kubectl(['create', 'clusterrolebinding', 'orphan', '--clusterrole=no-such-role', '--user=x']),
      'clusterrolebinding.rbac.authorization.k8s.io/orphan created\n',
    );
    const put = await call(srv, 'PUT', `/apis/${RBAC}/v1/namespaces/default/roles/put-created`, {
      body: { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: { name: 'put-created' }, rules: [] },
    });
    assert.equal(put.status, 201, put.text);
  });

  it('kubectl auth reconcile -f creates a role, then extends it without dropping rules', async () => {
    const role = (rules: PolicyRule[]): unknown => ({
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'reconciled' },
      rules,
    });
    const pods: PolicyRule = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
    const svcs: PolicyRule = { apiGroups: [''], resources: ['services'], verbs: ['list'] };
    const first = await kubectl(['auth', 'reconcile', '-f', writeYaml(work, 'r1.yaml', [role([pods])])]);
    assert.match(first, /clusterrole\.rbac\.authorization\.k8s\.io\/reconciled reconciled/);
    assert.deepEqual(await rulesOf('clusterrole', 'reconciled'), [pods]);
    await kubectl(['auth', 'reconcile', '-f', writeYaml(work, 'r2.yaml', [role([svcs])])]);
    assert.deepEqual(await rulesOf('clusterrole', 'reconciled'), [pods, svcs]);
  });

  it('server-side apply replaces the rules as a whole; kubectl explain reads the schema', async () => {
    const role = (verbs: string[]): unknown => ({
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'ssa' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs }],
    });
    for (const [i, verbs] of [['get', 'list'], ['watch']].entries()) {
      const file = writeYaml(work, `ssa-${i}.yaml`, [role(verbs)]);
      await kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', file]);
      assert.deepEqual(await rulesOf('clusterrole', 'ssa'), [
        { apiGroups: ['apps'], resources: ['deployments'], verbs },
      ]);
    }
    assert.match(await kubectl(['explain', 'rolebinding.roleRef']), /FIELD: *roleRef/);
  });

  it('an aggregated ClusterRole gets the rules of the ClusterRoles its selector picks', async () => {
    await kubectl([
      'create',
      'clusterrole',
      'aggregate',
      '--aggregation-rule=e2e.example.com/aggregate=true',
    ]);
    await kubectl(['create', 'clusterrole', 'part-pods', '--verb=get', '--resource=pods']);
    await kubectl(['create', 'clusterrole', 'part-nodes', '--verb=list', '--resource=nodes']);
    await kubectl(['label', 'clusterrole', 'part-pods', 'part-nodes', 'e2e.example.com/aggregate=true']);
    const want: PolicyRule[] = [
      { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
    ];
    await until(
      'the aggregated rules',
      WAIT,
      async () => JSON.stringify(await rulesOf('clusterrole', 'aggregate')) === JSON.stringify(want),
    );
    // A picked role dropping out takes its rules with it.
    await kubectl(['label', 'clusterrole', 'part-nodes', 'e2e.example.com/aggregate-']);
    await until(
      'the rules of part-pods alone',
      WAIT,
      async () => JSON.stringify(await rulesOf('clusterrole', 'aggregate')) === JSON.stringify(want.slice(1)),
    );
  });
});
