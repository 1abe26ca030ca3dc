// How authorizers combine: the system:masters bypass first, then the modes in order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abacAuthorizer, parseAbacPolicy, readOnlyPolicy } from './abac.js';
import {
  alwaysAllow,
  alwaysDeny,
  buildAuthorizer,
  isAllowed,
  privilegedGroups,
  unionAuthorizer,
  type Authorizer,
  type RequestAttributes,
} from './authorizer.js';
import { ANONYMOUS_USER, type UserInfo } from './types.js';

const attrs = (user: UserInfo, verb: string): RequestAttributes => ({
  user,
  verb,
  resourceRequest: true,
  apiGroup: '',
  namespace: 'default',
  resource: 'services',
  subresource: '',
  name: '',
  path: '/api/v1/namespaces/default/services',
});
const root: UserInfo = { name: 'root', uid: '', groups: ['system:masters', 'system:authenticated'] };
const ro: UserInfo = { name: 'ro', uid: '', groups: ['system:authenticated'] };
const deny: Authorizer = () => ({ decision: 'deny', reason: 'no way' });

describe('authorizers', () => {
  const abac = abacAuthorizer(parseAbacPolicy(readOnlyPolicy('ro')));

  it('lets system:masters do anything, even under AlwaysDeny or an ABAC policy that does not name them', () => {
    assert.equal(isAllowed(buildAuthorizer([alwaysDeny]), attrs(root, 'delete')), true);
    assert.equal(isAllowed(buildAuthorizer([abac]), attrs(root, 'create')), true);
  });

  it('asks the modes in order and explains a refusal with their reasons', () => {
    const authz = buildAuthorizer([abac]);
    assert.deepEqual(authz(attrs(ro, 'list')), { decision: 'allow', reason: '' });
    assert.deepEqual(authz(attrs(ro, 'create')), { decision: 'no-opinion', reason: 'No policy matched.' });
    assert.deepEqual(buildAuthorizer([abac, alwaysDeny])(attrs(ro, 'create')), {
      decision: 'no-opinion',
      reason: 'No policy matched.\nEverything is forbidden.',
    });
    assert.equal(isAllowed(buildAuthorizer([abac, alwaysAllow]), attrs(ANONYMOUS_USER, 'create')), true);
  });

  it('stops at the first allow or deny', () => {
    assert.deepEqual(unionAuthorizer([deny, alwaysAllow])(attrs(ro, 'get')), {
      decision: 'deny',
      reason: 'no way',
    });
    assert.equal(isAllowed(unionAuthorizer([alwaysAllow, deny]), attrs(ro, 'get')), true);
    assert.equal(isAllowed(unionAuthorizer([]), attrs(ro, 'get')), false);
  });

  it('matches privileged groups exactly', () => {
    const p = privilegedGroups('system:masters');
    assert.equal(p(attrs(root, 'get')).decision, 'allow');
    assert.equal(p(attrs({ name: 'x', uid: '', groups: ['system:master'] }, 'get')).decision, 'no-opinion');
    assert.equal(p(attrs({ name: 'system:masters', uid: '', groups: [] }, 'get')).decision, 'no-opinion');
  });

  it('needs at least one mode', () => {
    assert.throws(() => buildAuthorizer([]), /at least one authorization mode/);
  });
});
