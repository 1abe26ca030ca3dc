// The indexed policy against a naive scan of every binding, and upstream's reasons.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RbacPolicyIndex, subjectMatches } from './policy-index.js';
import { ruleAllows } from './rule-match.js';
import { binding, NAMESPACES, request, role } from './testing/arbitraries.js';
import type { PolicyRule, RbacBinding, RbacRequest, RbacRole } from './types.js';

/** Every binding, every subject, every rule: what the index must agree with. */
function naiveAllows(
  roles: readonly RbacRole[],
  bindings: readonly RbacBinding[],
  req: RbacRequest,
): boolean {
  const lastRole = new Map(roles.map((r) => [`${r.namespace}/${r.name}`, r]));
  const lastBinding = new Map(bindings.map((b) => [`${b.namespace}/${b.name}`, b]));
  for (const b of lastBinding.values()) {
    if (b.namespace !== '' && b.namespace !== req.namespace) continue;
    if (!b.subjects.some((s) => subjectMatches(s, req.user, b.namespace))) continue;
    const roleNs = b.roleRef.kind === 'ClusterRole' ? '' : b.namespace;
    if (b.roleRef.kind === 'Role' && b.namespace === '') continue;
    const r = lastRole.get(`${roleNs}/${b.roleRef.name}`);
    if (r !== undefined && r.rules.some((rule) => ruleAllows(rule, req))) return true;
  }
  return false;
}

const roles = fc.array(fc.oneof(role(''), ...NAMESPACES.map(role)), { maxLength: 6 });
const bindings = fc.array(binding, { maxLength: 8 });

describe('RbacPolicyIndex', () => {
  it('agrees with a naive scan of all bindings', () => {
    fc.assert(
      fc.property(roles, bindings, fc.array(request, { minLength: 1, maxLength: 5 }), (rs, bs, reqs) => {
        const index = new RbacPolicyIndex();
        rs.forEach((r) => index.putRole(r));
        bs.forEach((b) => index.putBinding(b));
        return reqs.every((req) => index.authorize(req).allowed === naiveAllows(rs, bs, req));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees after deletions', () => {
    fc.assert(
      fc.property(roles, bindings, fc.array(fc.nat(7)), request, (rs, bs, drop, req) => {
        const index = new RbacPolicyIndex();
        rs.forEach((r) => index.putRole(r));
        bs.forEach((b) => index.putBinding(b));
        const gone = new Set(drop.map((i) => bs[i]).filter((b) => b !== undefined));
        for (const b of gone) index.deleteBinding(b.namespace, b.name);
        const left = bs.filter(
          (b) => ![...gone].some((g) => g.namespace === b.namespace && g.name === b.name),
        );
        return index.authorize(req).allowed === naiveAllows(rs, left, req);
      }),
      { numRuns: 500 },
    );
  });

  it('rulesFor allows exactly what authorize allows', () => {
    fc.assert(
      fc.property(roles, bindings, request, (rs, bs, req) => {
        const index = new RbacPolicyIndex();
        rs.forEach((r) => index.putRole(r));
        bs.forEach((b) => index.putBinding(b));
        const { rules } = index.rulesFor(req.user, req.namespace);
        return rules.some((r) => ruleAllows(r, req)) === index.authorize(req).allowed;
      }),
      { numRuns: 500 },
    );
  });

  const podsRead: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
  const req = (over: Partial<RbacRequest> = {}): RbacRequest => ({
    user: { name: 'alice', groups: ['system:authenticated'] },
    verb: 'list',
    resourceRequest: true,
    apiGroup: '',
    namespace: 'dev',
    resource: 'pods',
    subresource: '',
    name: '',
    path: '/api/v1/namespaces/dev/pods',
    ...over,
  });
  const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });

  it('grants a ClusterRole through a RoleBinding in its namespace only, with upstream reasons', () => {
    const index = new RbacPolicyIndex();
    index.putRole({ namespace: '', name: 'reader', rules: [podsRead] });
    index.putBinding({
      namespace: 'dev',
      name: 'rb',
      subjects: [{ kind: 'User', name: 'alice' }],
      roleRef: ref('ClusterRole', 'reader'),
    });
    assert.deepEqual(index.authorize(req()), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/dev" of ClusterRole "reader" to User "alice"',
    });
    assert.deepEqual(index.authorize(req({ namespace: 'prod' })), { allowed: false, reason: '' });
    assert.deepEqual(index.authorize(req({ namespace: '' })), { allowed: false, reason: '' });
  });

  it('a binding to a missing role grants nothing and is named in the reason', () => {
    const index = new RbacPolicyIndex();
    index.putBinding({
      namespace: '',
      name: 'crb',
      subjects: [{ kind: 'Group', name: 'system:authenticated' }],
      roleRef: ref('ClusterRole', 'nope'),
    });
    index.putBinding({
      namespace: 'dev',
      name: 'rb',
      subjects: [{ kind: 'User', name: 'alice' }],
      roleRef: ref('Role', 'gone'),
    });
    assert.deepEqual(index.authorize(req()), {
      allowed: false,
      reason:
        'RBAC: [clusterrole.rbac.authorization.k8s.io "nope" not found, role.rbac.authorization.k8s.io "gone" not found]',
    });
    index.putRole({ namespace: 'dev', name: 'gone', rules: [podsRead] });
    assert.equal(index.authorize(req()).allowed, true);
    index.deleteRole('dev', 'gone');
    assert.equal(index.authorize(req()).allowed, false);
  });

  it('matches ServiceAccount subjects as their user, defaulting to the binding namespace', () => {
    const index = new RbacPolicyIndex();
    index.putRole({ namespace: 'dev', name: 'r', rules: [podsRead] });
    index.putBinding({
      namespace: 'dev',
      name: 'rb',
      subjects: [{ kind: 'ServiceAccount', name: 'builder' }],
      roleRef: ref('Role', 'r'),
    });
    const sa = { name: 'system:serviceaccount:dev:builder', groups: ['system:serviceaccounts'] };
    assert.deepEqual(index.authorize(req({ user: sa })), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/dev" of Role "r" to ServiceAccount "builder/dev"',
    });
    assert.equal(
      index.authorize(req({ user: { name: 'system:serviceaccount:x:builder', groups: [] } })).allowed,
      false,
    );
  });

  it('replacing a binding drops its old subjects', () => {
    const index = new RbacPolicyIndex();
    index.putRole({ namespace: '', name: 'reader', rules: [podsRead] });
    const b = { namespace: '', name: 'crb', roleRef: ref('ClusterRole', 'reader') };
    index.putBinding({ ...b, subjects: [{ kind: 'User', name: 'alice' }] });
    index.putBinding({ ...b, subjects: [{ kind: 'User', name: 'bob' }] });
    assert.equal(index.authorize(req()).allowed, false);
    assert.equal(index.authorize(req({ user: { name: 'bob', groups: [] } })).allowed, true);
    index.clear();
    assert.equal(index.authorize(req({ user: { name: 'bob', groups: [] } })).allowed, false);
  });
});
