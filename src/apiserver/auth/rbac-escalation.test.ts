// RBAC's escalation check on writes of roles and bindings, as upstream's policybased storage.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { isStatusError } from '../../api/status.js';
import { RbacPolicyIndex } from '../../core/rbac/policy-index.js';
import type { PolicyRule } from '../../core/rbac/types.js';
import type { WriteContext } from '../registry/types.js';
import { buildAuthorizer } from './authorizer.js';
import { rbacAuthorizer } from './rbac-authorizer.js';
import { rbacEscalationHooks } from './rbac-escalation.js';
import { RBAC_ROWS } from './testing/rbac-rows.js';
import type { UserInfo } from './types.js';

const G = 'rbac.authorization.k8s.io';
const alice: UserInfo = { name: 'alice', uid: '', groups: ['system:authenticated'] };
const ctx = (user?: UserInfo): WriteContext => ({
  dryRun: false,
  fieldManager: 't',
  fieldValidation: 'Strict',
  warnings: [],
  ...(user === undefined ? {} : { user }),
});
const secretsRead: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] };
const manageRoles: PolicyRule = {
  verbs: ['create', 'update'],
  apiGroups: [G],
  resources: ['roles', 'rolebindings'],
};

/** alice holds `rules` in namespace dev, through a Role bound to her. */
function setup(rules: PolicyRule[]): ReturnType<typeof rbacEscalationHooks> & { index: RbacPolicyIndex } {
  const index = new RbacPolicyIndex();
  index.putRole({ namespace: 'dev', name: 'alice-role', rules });
  index.putBinding({
    namespace: 'dev',
    name: 'alice',
    subjects: [{ kind: 'User', name: 'alice' }],
    roleRef: { apiGroup: G, kind: 'Role', name: 'alice-role' },
  });
  index.putRole({ namespace: '', name: 'secret-reader', rules: [secretsRead] });
  return { ...rbacEscalationHooks(index, buildAuthorizer([rbacAuthorizer(index)])), index };
}

const role = (rules: PolicyRule[]): KObject =>
  ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name: 'sneaky', namespace: 'dev' }, rules }) as KObject;
const binding = (roleName: string): KObject =>
  ({
    apiVersion: `${G}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'b', namespace: 'dev' },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: roleName },
    subjects: [{ kind: 'User', apiGroup: G, name: 'bob' }],
  }) as KObject;

async function forbidden(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(isStatusError(err, 'Forbidden'), String(err));
    return err.status.message ?? '';
  }
  assert.fail('expected 403');
}

describe('rbacEscalationHooks', () => {
  it("refuses a role with rules the requester lacks, with upstream's message", async () => {
    const h = setup([manageRoles]);
    assert.equal(
      await forbidden(h.beforeCreate!(RBAC_ROWS.roles, role([secretsRead]), ctx(alice))),
      'roles.rbac.authorization.k8s.io "sneaky" is forbidden: user "alice" (groups=["system:authenticated"]) is ' +
        'attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
  });

  it('allows what the requester holds at that scope, and escalate, and system:masters, and the server itself', async () => {
    await setup([manageRoles, secretsRead]).beforeCreate!(RBAC_ROWS.roles, role([secretsRead]), ctx(alice));
    const escalate: PolicyRule = { verbs: ['escalate'], apiGroups: [G], resources: ['roles'] };
    await setup([manageRoles, escalate]).beforeCreate!(RBAC_ROWS.roles, role([secretsRead]), ctx(alice));
    const h = setup([]);
    await h.beforeCreate!(
      RBAC_ROWS.roles,
      role([secretsRead]),
      ctx({ ...alice, groups: ['system:masters'] }),
    );
    await h.beforeCreate!(RBAC_ROWS.roles, role([secretsRead]), ctx());
    // Another kind is not checked at all.
    await h.beforeCreate!(
      { ...RBAC_ROWS.roles, group: '', resource: 'pods' },
      role([secretsRead]),
      ctx(alice),
    );
  });

  it('holding the rules in another namespace does not count', async () => {
    const h = setup([manageRoles, secretsRead]);
    const elsewhere = role([secretsRead]);
    elsewhere.metadata.namespace = 'prod';
    await forbidden(h.beforeCreate!(RBAC_ROWS.roles, elsewhere, ctx(alice)));
  });

  it('an update changing only ownerReferences or finalizers passes', async () => {
    const h = setup([manageRoles]);
    const old = {
      ...role([secretsRead]),
      metadata: { name: 'sneaky', namespace: 'dev', resourceVersion: '4' },
    };
    const next = {
      ...old,
      metadata: { ...old.metadata, finalizers: ['x'], resourceVersion: '5' },
    } as KObject;
    await h.beforeUpdate!(RBAC_ROWS.roles, next, old as KObject, ctx(alice));
    await forbidden(
      h.beforeUpdate!(RBAC_ROWS.roles, role([secretsRead, manageRoles]), old as KObject, ctx(alice)),
    );
  });

  it('a binding needs the role held, or bind on it', async () => {
    const h = setup([manageRoles]);
    assert.match(
      await forbidden(h.beforeCreate!(RBAC_ROWS.rolebindings, binding('secret-reader'), ctx(alice))),
      /^rolebindings\.rbac\.authorization\.k8s\.io "b" is forbidden: user "alice" .* not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get" "list"\]\}$/,
    );
    await setup([manageRoles, secretsRead]).beforeCreate!(
      RBAC_ROWS.rolebindings,
      binding('secret-reader'),
      ctx(alice),
    );
    const bindIt: PolicyRule = {
      verbs: ['bind'],
      apiGroups: [G],
      resources: ['clusterroles'],
      resourceNames: ['secret-reader'],
    };
    const b = setup([manageRoles, bindIt]);
    await b.beforeCreate!(RBAC_ROWS.rolebindings, binding('secret-reader'), ctx(alice));
  });

  it('a binding to a role that does not exist is 404 unless bind is held', async () => {
    const h = setup([manageRoles]);
    await assert.rejects(
      h.beforeCreate!(RBAC_ROWS.rolebindings, binding('nope'), ctx(alice)),
      (e: unknown) => {
        assert.ok(isStatusError(e, 'NotFound'));
        assert.equal(e.status.message, 'clusterrole.rbac.authorization.k8s.io "nope" not found');
        return true;
      },
    );
    const bindAny: PolicyRule = { verbs: ['bind'], apiGroups: [G], resources: ['clusterroles'] };
    await setup([manageRoles, bindAny]).beforeCreate!(RBAC_ROWS.rolebindings, binding('nope'), ctx(alice));
  });

  it('an aggregationRule on the new or the old ClusterRole needs full authority (setting, changing or removing it)', async () => {
    const index = new RbacPolicyIndex();
    const rolesRule: PolicyRule = {
      verbs: ['create', 'update', 'get'],
      apiGroups: [G],
      resources: ['clusterroles'],
    };
    index.putRole({ namespace: '', name: 'role-manager', rules: [rolesRule, secretsRead] });
    index.putBinding({
      namespace: '',
      name: 'alice',
      subjects: [{ kind: 'User', name: 'alice' }],
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'role-manager' },
    });
    const h = rbacEscalationHooks(index, buildAuthorizer([rbacAuthorizer(index)]));
    const clusterRole = (aggregated: boolean): KObject =>
      ({
        apiVersion: `${G}/v1`,
        kind: 'ClusterRole',
        metadata: { name: 'agg' },
        rules: [secretsRead],
        ...(aggregated
          ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'aggregate-to-agg': 'true' } }] } }
          : {}),
      }) as KObject;
    const why = 'must have cluster-admin privileges to use the aggregationRule';
    // Holding every rule of the role is not enough once an aggregationRule is involved.
    assert.match(
      await forbidden(h.beforeCreate!(RBAC_ROWS.clusterroles, clusterRole(true), ctx(alice))),
      new RegExp(why),
    );
    assert.match(
      await forbidden(
        h.beforeUpdate!(RBAC_ROWS.clusterroles, clusterRole(false), clusterRole(true), ctx(alice)),
      ),
      new RegExp(why),
    );
    // Without one on either side, the rules alone decide.
    await h.beforeUpdate!(RBAC_ROWS.clusterroles, clusterRole(false), clusterRole(false), ctx(alice));
  });
});
