// --authorization-mode: upstream's checks of the list, and the chain it builds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AbacPolicy } from './abac.js';
import {
  AUTHORIZATION_MODES,
  buildAuthorization,
  parseAuthorizationModes,
  type ModeContext,
} from './modes.js';
import type { RequestAttributes } from './types.js';

describe('parseAuthorizationModes', () => {
  it('keeps the order given', () => {
    assert.deepEqual(parseAuthorizationModes('RBAC,AlwaysAllow', false), ['RBAC', 'AlwaysAllow']);
    assert.deepEqual(parseAuthorizationModes('ABAC', true), ['ABAC']);
  });

  const errors: [string, boolean, string][] = [
    ['', false, 'at least one authorization-mode must be passed'],
    ['Webhook', false, 'authorization-mode "Webhook" is not a valid mode'],
    ['RBAC,RBAC', false, 'authorization-mode ["RBAC" "RBAC"] has mode specified more than once'],
    ['ABAC', false, "authorization-mode ABAC's authorization policy file not passed"],
    ['RBAC', true, 'cannot specify --authorization-policy-file without mode ABAC'],
    [
      'Foo,RBAC,RBAC',
      false,
      '[authorization-mode "Foo" is not a valid mode, authorization-mode ["Foo" "RBAC" "RBAC"] has mode specified more than once]',
    ],
  ];
  for (const [raw, policy, message] of errors) {
    it(`${JSON.stringify(raw)}${policy ? ' with a policy file' : ''}: ${message}`, () => {
      assert.throws(() => parseAuthorizationModes(raw, policy), { message });
    });
  }

  it('lists every mode of the table', () => {
    for (const m of Object.keys(AUTHORIZATION_MODES))
      assert.deepEqual(parseAuthorizationModes(m, m === 'ABAC'), [m]);
  });
});

describe('buildAuthorization', () => {
  const attrs = (groups: string[]): RequestAttributes => ({
    user: { name: 'u', uid: '', groups },
    verb: 'get',
    resourceRequest: true,
    apiGroup: '',
    namespace: 'ns',
    resource: 'pods',
    subresource: '',
    name: 'p',
    path: '/api/v1/namespaces/ns/pods/p',
  });
  const policy: AbacPolicy = {
    rules: [
      {
        user: 'u',
        group: '',
        readonly: true,
        apiGroup: '*',
        resource: '*',
        namespace: '*',
        nonResourcePath: '',
        line: 1,
      },
    ],
  };
  const ctx = { abacPolicy: policy } as unknown as ModeContext;

  it('asks system:masters first, then each mode in order; the first allow decides', () => {
    const denyFirst = buildAuthorization(['AlwaysDeny', 'ABAC'], ctx).authorizer;
    assert.equal(denyFirst(attrs([])).decision, 'allow', 'AlwaysDeny has no opinion: ABAC allows');
    assert.deepEqual(buildAuthorization(['AlwaysDeny'], ctx).authorizer(attrs([])), {
      decision: 'no-opinion',
      reason: 'Everything is forbidden.',
    });
    assert.equal(
      buildAuthorization(['AlwaysDeny'], ctx).authorizer(attrs(['system:masters'])).decision,
      'allow',
    );
  });

  it("concatenates the modes' rules, and adds no write checks without RBAC", () => {
    const built = buildAuthorization(['ABAC', 'AlwaysAllow'], ctx);
    assert.equal(built.rules(attrs([]).user, 'ns').resourceRules.length, 2);
    assert.deepEqual(built.registryHooks, []);
  });
});
