// ABAC: the policy file format (v1beta1 and legacy v0 lines) and upstream's matching rules, as a table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ABAC_API_VERSION,
  AbacPolicyError,
  abacAuthorizer,
  authorize,
  nodeAgentPolicy,
  parseAbacPolicy,
  policyLine,
  readOnlyPolicy,
  type AbacPolicySpec,
  type RequestAttributes,
  type UserInfo,
} from './abac.js';
import { ANONYMOUS_USER } from './types.js';

const authd = (name: string, ...groups: string[]): UserInfo => ({
  name,
  uid: '',
  groups: [...groups, 'system:authenticated'],
});

interface ResourceOpts {
  readonly group?: string;
  readonly ns?: string;
  readonly sub?: string;
  readonly name?: string;
}

function res(user: UserInfo, verb: string, resource: string, o: ResourceOpts = {}): RequestAttributes {
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: o.group ?? '',
    namespace: o.ns ?? '',
    resource,
    subresource: o.sub ?? '',
    name: o.name ?? '',
    path: '/api/v1/…',
  };
}

function path(user: UserInfo, verb: string, p: string): RequestAttributes {
  return {
    user,
    verb,
    resourceRequest: false,
    apiGroup: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    path: p,
  };
}

const line = (spec: AbacPolicySpec): string => policyLine(spec);

const POLICY = [
  '# Policy for the table below.',
  '',
  line({ user: 'admin', namespace: '*', resource: '*', apiGroup: '*', nonResourcePath: '*' }),
  '   # an indented comment',
  line({ group: 'dev', namespace: 'dev', resource: '*', apiGroup: '*' }),
  line({ user: 'alice', group: 'qa', namespace: '*', resource: 'pods', apiGroup: '' }),
  line({ user: 'lister', readonly: true, namespace: '*', resource: 'services', apiGroup: '' }),
  line({ user: 'cluster', namespace: '', resource: 'nodes', apiGroup: '' }),
  line({ user: '*', readonly: true, nonResourcePath: '/healthz' }),
  line({ group: 'system:unauthenticated', readonly: true, nonResourcePath: '/version' }),
  line({ user: 'metrics', readonly: true, nonResourcePath: '/metrics/*' }),
  line({ user: 'nothing' }),
  line({ readonly: true, namespace: '*', resource: '*', apiGroup: '*' }),
  line({ group: '*', namespace: 'public', resource: 'configmaps', apiGroup: '' }),
  '',
].join('\n');

const policy = parseAbacPolicy(POLICY);
const nodePolicy = parseAbacPolicy(nodeAgentPolicy('node-1'));
const roPolicy = parseAbacPolicy(readOnlyPolicy('ro'));

const admin = authd('admin');
const bob = authd('bob', 'dev');
const alice = authd('alice', 'qa');
const aliceNoQa = authd('alice');
const lister = authd('lister');
const metrics = authd('metrics');
const node1 = authd('node-1', 'nodes');
const ro = authd('ro');

describe('ABAC authorize', () => {
  const cases: [string, RequestAttributes, boolean, typeof policy?][] = [
    [
      'admin: any verb on any resource',
      res(admin, 'delete', 'services', { ns: 'kube-system', name: 'x' }),
      true,
    ],
    ['admin: cluster-scoped, other group', res(admin, 'create', 'nodes'), true],
    ['admin: any non-resource path', path(admin, 'post', '/anything'), true],
    ['group dev: write in its namespace', res(bob, 'create', 'services', { ns: 'dev' }), true],
    [
      'group dev: any API group in its namespace',
      res(bob, 'patch', 'deployments', { group: 'apps', ns: 'dev' }),
      true,
    ],
    ['group dev: not another namespace', res(bob, 'get', 'services', { ns: 'prod' }), false],
    ['group dev: not cluster-scoped', res(bob, 'get', 'nodes'), false],
    ['user and group both named: both match', res(alice, 'delete', 'pods', { ns: 'a' }), true],
    ['user and group both named: group missing', res(aliceNoQa, 'delete', 'pods', { ns: 'a' }), false],
    [
      'apiGroup "" is the core group only',
      res(alice, 'get', 'pods', { group: 'metrics.k8s.io', ns: 'a' }),
      false,
    ],
    ['readonly: get passes', res(lister, 'get', 'services', { ns: 'a', name: 's' }), true],
    ['readonly: list passes', res(lister, 'list', 'services'), true],
    ['readonly: watch passes', res(lister, 'watch', 'services', { ns: 'a' }), true],
    ['readonly: create fails', res(lister, 'create', 'services', { ns: 'a' }), false],
    ['readonly: update fails', res(lister, 'update', 'services', { ns: 'a', name: 's' }), false],
    ['readonly: patch fails', res(lister, 'patch', 'services', { ns: 'a', name: 's' }), false],
    ['readonly: delete fails', res(lister, 'delete', 'services', { ns: 'a', name: 's' }), false],
    ['readonly: deletecollection fails', res(lister, 'deletecollection', 'services', { ns: 'a' }), false],
    ['resource must match', res(lister, 'get', 'endpoints', { ns: 'a' }), false],
    [
      'a subresource is covered by its resource',
      res(lister, 'get', 'services', { ns: 'a', sub: 'status', name: 's' }),
      true,
    ],
    [
      'namespace "" matches cluster-scoped requests',
      res(authd('cluster'), 'delete', 'nodes', { name: 'n' }),
      true,
    ],
    ['namespace "" does not match a namespace', res(authd('cluster'), 'delete', 'nodes', { ns: 'x' }), false],
    ['user "*" = every authenticated user', path(authd('someone'), 'get', '/healthz'), true],
    ['user "*" does not match anonymous', path(ANONYMOUS_USER, 'get', '/healthz'), false],
    ['group system:unauthenticated matches anonymous', path(ANONYMOUS_USER, 'get', '/version'), true],
    ['non-resource readonly: post fails', path(authd('someone'), 'post', '/healthz'), false],
    ['non-resource: exact path only', path(authd('someone'), 'get', '/healthz/ping'), false],
    ['non-resource prefix "/metrics/*": a subpath', path(metrics, 'get', '/metrics/cadvisor'), true],
    ['non-resource prefix "/metrics/*": the bare prefix', path(metrics, 'get', '/metrics/'), true],
    ['non-resource prefix "/metrics/*": not "/metrics"', path(metrics, 'get', '/metrics'), false],
    ['a resource rule never matches a non-resource request', path(lister, 'get', '/api/v1/services'), false],
    ['a non-resource rule never matches a resource request', res(metrics, 'get', 'metrics'), false],
    ['a rule naming no user or group matches nobody', res(authd('x'), 'get', 'pods', { ns: 'a' }), false],
    ['a rule with only a user and no targets matches nothing', res(authd('nothing'), 'get', 'pods'), false],
    ['group "*" = every authenticated user', res(authd('x'), 'update', 'configmaps', { ns: 'public' }), true],
    [
      'group "*" does not match anonymous',
      res(ANONYMOUS_USER, 'update', 'configmaps', { ns: 'public' }),
      false,
    ],
    ['no rule for anonymous resources', res(ANONYMOUS_USER, 'get', 'services', { ns: 'a' }), false],
    // The node agent policy.
    ['node-1 lists services', res(node1, 'list', 'services'), true, nodePolicy],
    ['node-1 watches services', res(node1, 'watch', 'services'), true, nodePolicy],
    [
      'node-1 watches EndpointSlices',
      res(node1, 'watch', 'endpointslices', { group: 'discovery.k8s.io' }),
      true,
      nodePolicy,
    ],
    ['node-1 gets its node', res(node1, 'get', 'nodes', { name: 'node-1' }), true, nodePolicy],
    ['node-1 creates events', res(node1, 'create', 'events', { ns: 'default' }), true, nodePolicy],
    [
      'node-1 creates events.k8s.io events',
      res(node1, 'create', 'events', { group: 'events.k8s.io', ns: 'default' }),
      true,
      nodePolicy,
    ],
    ['node-1 reads discovery', path(node1, 'get', '/apis/discovery.k8s.io/v1'), true, nodePolicy],
    [
      'node-1 may not create services',
      res(node1, 'create', 'services', { ns: 'default' }),
      false,
      nodePolicy,
    ],
    ['node-1 may not update nodes', res(node1, 'update', 'nodes', { name: 'node-1' }), false, nodePolicy],
    [
      'node-1 may not update service status',
      res(node1, 'update', 'services', { ns: 'default', name: 's', sub: 'status' }),
      false,
      nodePolicy,
    ],
    [
      'node-1 may not write EndpointSlices',
      res(node1, 'create', 'endpointslices', { group: 'discovery.k8s.io', ns: 'default' }),
      false,
      nodePolicy,
    ],
    [
      'node-1 may not read secrets',
      res(node1, 'get', 'secrets', { ns: 'default', name: 'x' }),
      false,
      nodePolicy,
    ],
    ['node-1 may not read /metrics', path(node1, 'get', '/metrics'), false, nodePolicy],
    ['node-2 gets nothing from node-1 rules', res(authd('node-2'), 'list', 'services'), false, nodePolicy],
    // The read-only user.
    ['ro may not create a service', res(ro, 'create', 'services', { ns: 'default' }), false, roPolicy],
    [
      'ro watches EndpointSlices',
      res(ro, 'watch', 'endpointslices', { group: 'discovery.k8s.io', ns: 'default' }),
      true,
      roPolicy,
    ],
    ['ro gets /metrics', path(ro, 'get', '/metrics'), true, roPolicy],
    ['ro may not post a path', path(ro, 'post', '/metrics'), false, roPolicy],
  ];
  for (const [name, attrs, allowed, p = policy] of cases) {
    it(`${allowed ? 'allows' : 'denies'}: ${name}`, () => assert.equal(authorize(p, attrs), allowed));
  }

  it('gives upstream\'s "No policy matched." reason when denying', () => {
    const authz = abacAuthorizer(roPolicy);
    assert.deepEqual(authz(res(ro, 'get', 'pods')), { decision: 'allow', reason: '' });
    assert.deepEqual(authz(res(ro, 'create', 'pods')), {
      decision: 'no-opinion',
      reason: 'No policy matched.',
    });
  });
});

describe('parseAbacPolicy', () => {
  it('keeps line numbers and converts "*" subjects to system:authenticated', () => {
    const p = parseAbacPolicy(`\n${line({ user: '*', group: 'x', namespace: '*' })}\n`);
    assert.deepEqual(p.rules, [
      {
        user: '',
        group: 'system:authenticated',
        readonly: false,
        apiGroup: '',
        resource: '',
        namespace: '*',
        nonResourcePath: '',
        line: 2,
      },
    ]);
  });

  it('reads CRLF files and ignores unknown fields', () => {
    const text = `{"apiVersion":"${ABAC_API_VERSION}","kind":"Policy","spec":{"user":"a","resource":"*","namespace":"*","apiGroup":"*","extra":1}}\r\n`;
    assert.equal(authorize(parseAbacPolicy(text), res(authd('a'), 'create', 'pods')), true);
  });

  it('reads the legacy unversioned format as upstream converts it, with a warning', () => {
    const warnings: string[] = [];
    const p = parseAbacPolicy(
      [
        '{"user":"legacy"}',
        '{"readonly":true}',
        '{"user":"*","resource":"pods"}',
        '{"group":"ops","namespace":"ops"}',
        `{"apiVersion":"abac.authorization.kubernetes.io/v0","kind":"Policy","user":"v0"}`,
      ].join('\n'),
      { warn: (w) => warnings.push(w) },
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /4 unversioned/);
    // No subject: every authenticated user, read-only, everything (resources and paths, all API groups).
    assert.equal(authorize(p, res(authd('x'), 'get', 'widgets', { group: 'example.com', ns: 'y' })), true);
    assert.equal(authorize(p, path(authd('x'), 'get', '/logs')), true);
    assert.equal(authorize(p, res(ANONYMOUS_USER, 'get', 'pods')), false);
    assert.equal(authorize(p, res(authd('x'), 'create', 'services', { ns: 'y' })), false);
    // "*" user: authenticated users, pods in any namespace and group, no paths.
    assert.equal(authorize(p, res(authd('x'), 'delete', 'pods', { ns: 'y', group: 'example.com' })), true);
    // A namespace without resource: all resources there, no paths.
    assert.equal(authorize(p, res(authd('o', 'ops'), 'create', 'secrets', { ns: 'ops' })), true);
    assert.equal(authorize(p, path(authd('o', 'ops'), 'post', '/x')), false);
    // A user alone: everything.
    assert.equal(authorize(p, res(authd('legacy'), 'create', 'nodes')), true);
    assert.equal(authorize(p, path(authd('v0'), 'put', '/x')), true);
  });

  const bad: [string, string, number, RegExp][] = [
    ['invalid JSON', `${readOnlyPolicy('a')}\n{"apiVersion":`, 3, /invalid JSON/],
    ['a JSON array', '[1,2]', 1, /expected a JSON object/],
    ['another apiVersion', '{"apiVersion":"v1","kind":"Policy","spec":{}}', 1, /unsupported apiVersion "v1"/],
    [
      'another kind',
      `{"apiVersion":"${ABAC_API_VERSION}","kind":"Role","spec":{}}`,
      1,
      /unsupported kind "Role"/,
    ],
    [
      'readonly as a string',
      `#\n${line({ user: 'a' }).replace('}}', ',"readonly":"true"}}')}`,
      2,
      /spec.readonly must be a boolean/,
    ],
    [
      'a number user',
      `{"apiVersion":"${ABAC_API_VERSION}","kind":"Policy","spec":{"user":7}}`,
      1,
      /spec.user must be a string/,
    ],
    [
      'spec not an object',
      `{"apiVersion":"${ABAC_API_VERSION}","kind":"Policy","spec":"x"}`,
      1,
      /spec must be an object/,
    ],
    ['a v0 field of the wrong type', '{"namespace":["a"]}', 1, /namespace must be a string/],
  ];
  for (const [name, text, lineNo, message] of bad) {
    it(`rejects ${name}, naming line ${lineNo}`, () => {
      assert.throws(
        () => parseAbacPolicy(text),
        (err: unknown) =>
          err instanceof AbacPolicyError &&
          err.line === lineNo &&
          err.message.startsWith(`policy file line ${lineNo}: `) &&
          message.test(err.message),
      );
    });
  }

  it('writes the documented line format', () => {
    assert.equal(
      readOnlyPolicy('ro').trim(),
      '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"ro","readonly":true,"apiGroup":"*","namespace":"*","resource":"*","nonResourcePath":"*"}}',
    );
    assert.equal(nodeAgentPolicy('node-1').trim().split('\n').length, 10);
  });
});

describe('ABAC and the impersonate verb', () => {
  // Impersonation asks for verb "impersonate" on users, groups and serviceaccounts (API group "") and on
  // uids and userextras (authentication.k8s.io). ABAC has no verbs and no names: a rule that is not
  // readonly and covers the resource allows impersonating anyone of that kind.
  const p = parseAbacPolicy(
    [
      line({ user: 'proxy', apiGroup: '', namespace: '*', resource: 'users' }),
      line({ user: 'proxy', apiGroup: '', namespace: '', resource: 'groups' }),
      line({ user: 'viewer', readonly: true, apiGroup: '*', namespace: '*', resource: '*' }),
      line({ user: 'sa-admin', apiGroup: '', namespace: 'kube-system', resource: 'serviceaccounts' }),
      line({ user: 'uider', apiGroup: 'authentication.k8s.io', namespace: '', resource: 'uids' }),
      '',
    ].join('\n'),
  );
  const imp = (user: UserInfo, resource: string, name: string, o: ResourceOpts = {}): RequestAttributes =>
    res(user, 'impersonate', resource, { name, ...o });
  const cases: [string, RequestAttributes, boolean][] = [
    ['a rule on users allows impersonating any user', imp(authd('proxy'), 'users', 'alice'), true],
    ['namespace "" covers groups (cluster-scoped)', imp(authd('proxy'), 'groups', 'ops'), true],
    [
      'a rule on users does not cover uids',
      imp(authd('proxy'), 'uids', 'u', { group: 'authentication.k8s.io' }),
      false,
    ],
    ['readonly never allows impersonate', imp(authd('viewer'), 'users', 'alice'), false],
    [
      'service accounts are namespaced',
      imp(authd('sa-admin'), 'serviceaccounts', 'default', { ns: 'kube-system' }),
      true,
    ],
    [
      'service accounts of another namespace',
      imp(authd('sa-admin'), 'serviceaccounts', 'default', { ns: 'default' }),
      false,
    ],
    [
      'uids are in authentication.k8s.io',
      imp(authd('uider'), 'uids', 'u', { group: 'authentication.k8s.io' }),
      true,
    ],
    ['uids are not in the core group', imp(authd('uider'), 'uids', 'u'), false],
  ];
  for (const [name, attrs, allowed] of cases) {
    it(`${allowed ? 'allows' : 'denies'}: ${name}`, () => assert.equal(authorize(p, attrs), allowed));
  }
});
