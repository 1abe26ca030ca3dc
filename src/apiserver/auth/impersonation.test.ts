// User impersonation as kube-apiserver does it: the headers, what is authorized (and in which order),
// the identity that results, the 400 and 403 answers; then end to end through the API server's handler
// with an ABAC policy.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { abacAuthorizer, parseAbacPolicy, policyLine } from './abac.js';
import { authenticate } from './authenticator.js';
import { buildAuthorizer } from './authorizer.js';
import { forbiddenMessage } from './forbidden-message.js';
import { impersonate, splitServiceAccountUsername, type DistinctHeaders } from './impersonation.js';
import { formatTokenFileRecord, parseTokenFile } from './token-file.js';
import type { RequestAttributes, UserInfo } from './types.js';

const bob: UserInfo = { name: 'bob', uid: 'bob-uid', groups: ['ops', 'system:authenticated'] };

/** Runs impersonate() with an authorizer that records what it was asked and refuses `deny`. */
function run(headers: DistinctHeaders, deny: (a: RequestAttributes) => boolean = () => false) {
  const asked: RequestAttributes[] = [];
  const result = impersonate(bob, headers, '/api/v1/pods', (a) => {
    asked.push(a);
    return !deny(a);
  });
  const summary = asked.map(
    (a) =>
      `${a.verb} ${a.apiGroup === '' ? '' : `${a.apiGroup}/`}${a.resource}${a.subresource === '' ? '' : `/${a.subresource}`}` +
      `${a.namespace === '' ? '' : ` -n ${a.namespace}`} ${a.name}`,
  );
  return { result, asked, summary };
}

describe('impersonate', () => {
  it('does nothing without impersonation headers', () => {
    const { result, asked } = run({ accept: ['application/json'] });
    assert.deepEqual(result, { kind: 'none' });
    assert.equal(asked.length, 0);
  });

  it('checks the user as the requester, then acts as it with system:authenticated', () => {
    const { result, asked } = run({ 'impersonate-user': ['alice'] });
    assert.deepEqual(asked, [
      {
        user: bob,
        verb: 'impersonate',
        resourceRequest: true,
        apiGroup: '',
        namespace: '',
        resource: 'users',
        subresource: '',
        name: 'alice',
        path: '/api/v1/pods',
      },
    ]);
    assert.deepEqual(result, {
      kind: 'user',
      user: { name: 'alice', uid: '', groups: ['system:authenticated'] },
    });
  });

  it('checks the user, each group and the uid, in that order', () => {
    const { result, summary } = run({
      'impersonate-uid': ['u-1'],
      'impersonate-group': ['dev', 'qa'],
      'impersonate-user': ['alice'],
    });
    assert.deepEqual(summary, [
      'impersonate users alice',
      'impersonate groups dev',
      'impersonate groups qa',
      'impersonate authentication.k8s.io/uids u-1',
    ]);
    assert.deepEqual(result, {
      kind: 'user',
      user: { name: 'alice', uid: 'u-1', groups: ['dev', 'qa', 'system:authenticated'] },
    });
  });

  it('adds system:authenticated only when no group says authenticated or unauthenticated', () => {
    const as = (groups: string[]) => {
      const r = run({ 'impersonate-user': ['alice'], 'impersonate-group': groups }).result;
      return r.kind === 'user' ? r.user.groups : r;
    };
    assert.deepEqual(as(['system:authenticated', 'dev']), ['system:authenticated', 'dev']);
    assert.deepEqual(as(['system:unauthenticated']), ['system:unauthenticated']);
  });

  it('gives system:anonymous system:unauthenticated', () => {
    const { result } = run({ 'impersonate-user': ['system:anonymous'] });
    assert.deepEqual(result, {
      kind: 'user',
      user: { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] },
    });
  });

  it('checks a service account in its namespace and gives it the service-account groups', () => {
    const { result, summary } = run({ 'impersonate-user': ['system:serviceaccount:kube-system:default'] });
    assert.deepEqual(summary, ['impersonate serviceaccounts -n kube-system default']);
    assert.deepEqual(result, {
      kind: 'user',
      user: {
        name: 'system:serviceaccount:kube-system:default',
        uid: '',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
      },
    });
    // Groups named explicitly replace the service-account groups.
    const named = run({
      'impersonate-user': ['system:serviceaccount:kube-system:default'],
      'impersonate-group': ['x'],
    }).result;
    assert.deepEqual(named.kind === 'user' ? named.user.groups : named, ['x', 'system:authenticated']);
  });

  it('reads only well-formed service-account names as service accounts', () => {
    assert.deepEqual(splitServiceAccountUsername('system:serviceaccount:ns:sa.name'), ['ns', 'sa.name']);
    for (const bad of [
      'system:serviceaccount:ns',
      'system:serviceaccount:a:b:c',
      'system:serviceaccount:NS:x',
      'x',
    ]) {
      assert.equal(splitServiceAccountUsername(bad), undefined, bad);
    }
    assert.deepEqual(run({ 'impersonate-user': ['system:serviceaccount:a:b:c'] }).summary, [
      'impersonate users system:serviceaccount:a:b:c',
    ]);
  });

  it('checks extras as userextras/<key> and drops them', () => {
    const { result, summary } = run({
      'impersonate-user': ['alice'],
      'impersonate-extra-scopes': ['view', 'edit'],
      'impersonate-extra-example.com%2fteam': ['a'],
    });
    assert.deepEqual(summary, [
      'impersonate users alice',
      'impersonate authentication.k8s.io/userextras/scopes view',
      'impersonate authentication.k8s.io/userextras/scopes edit',
      'impersonate authentication.k8s.io/userextras/example.com/team a',
    ]);
    assert.deepEqual(result, {
      kind: 'user',
      user: { name: 'alice', uid: '', groups: ['system:authenticated'] },
    });
  });

  it("answers groups, a uid or extras without a user with kube-apiserver's 400 message", () => {
    assert.deepEqual(run({ 'impersonate-group': ['ops'] }).result, {
      kind: 'bad-request',
      message: 'requested [{Group  ops    }] without impersonating a user',
    });
    assert.deepEqual(run({ 'impersonate-user': [''], 'impersonate-uid': ['u-1'] }).result, {
      kind: 'bad-request',
      message: 'requested [{UID  u-1  authentication.k8s.io/v1  }] without impersonating a user',
    });
    assert.deepEqual(run({ 'impersonate-extra-k': ['v'] }).result, {
      kind: 'bad-request',
      message: 'requested [{UserExtra  v  authentication.k8s.io/v1  k}] without impersonating a user',
    });
    assert.equal(run({ 'impersonate-group': ['ops'] }).asked.length, 0);
  });

  it('stops at the first refusal and names it as kube-apiserver does', () => {
    const denied = (resource: string) => (a: RequestAttributes) => a.resource === resource;
    const users = run({ 'impersonate-user': ['alice'], 'impersonate-group': ['dev'] }, denied('users'));
    assert.equal(users.asked.length, 1);
    assert.equal(users.result.kind, 'forbidden');
    if (users.result.kind !== 'forbidden') return;
    assert.equal(
      forbiddenMessage(users.result.attrs),
      'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const groups = run({ 'impersonate-user': ['alice'], 'impersonate-group': ['dev'] }, denied('groups'));
    assert.equal(
      groups.result.kind === 'forbidden' && forbiddenMessage(groups.result.attrs),
      'groups "dev" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const uids = run({ 'impersonate-user': ['alice'], 'impersonate-uid': ['u-1'] }, denied('uids'));
    assert.equal(
      uids.result.kind === 'forbidden' && forbiddenMessage(uids.result.attrs),
      'uids.authentication.k8s.io "u-1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope',
    );
  });
});

interface Reply {
  status: number;
  body: { kind?: string; code?: number; reason?: string; message?: string; details?: unknown };
}

describe('impersonation through the API server (ABAC)', () => {
  let api: InProcessApiServer;
  const tokens = { proxy: 'proxy-token', carol: 'carol-token', alice: 'alice-token' };

  before(async () => {
    const table = parseTokenFile(
      [
        formatTokenFileRecord(tokens.proxy, { name: 'proxy', uid: 'proxy-uid', groups: [] }),
        formatTokenFileRecord(tokens.carol, { name: 'carol', uid: 'carol-uid', groups: [] }),
        formatTokenFileRecord(tokens.alice, { name: 'alice', uid: 'alice-uid', groups: [] }),
      ].join('\n'),
    );
    const authz = buildAuthorizer([
      abacAuthorizer(
        parseAbacPolicy(
          [
            policyLine({ user: 'proxy', apiGroup: '', namespace: '*', resource: 'users' }),
            policyLine({ user: 'proxy', apiGroup: '', namespace: '*', resource: 'groups' }),
            policyLine({ user: 'alice', apiGroup: '', namespace: '*', resource: 'events' }),
            policyLine({ user: 'carol', apiGroup: '*', namespace: '*', resource: '*' }),
          ].join('\n'),
        ),
      ),
    ]);
    api = await startInProcessApiServer({
      auth: {
        authenticate: (req) => authenticate(req, { tokens: table }),
        authorize: (attrs) => authz(attrs).decision === 'allow',
        forbiddenMessage: (attrs) => forbiddenMessage(attrs, authz(attrs).reason),
      },
    });
  });
  after(() => api?.stop());

  const send = (
    token: string,
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    body?: unknown,
  ): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = httpsRequest(`${api.server.url}${path}`, {
        method,
        rejectUnauthorized: false, // the test server's throwaway certificate, on loopback
        headers: {
          Authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Reply['body'] }),
        );
      });
      req.on('error', reject);
      req.end(payload);
    });

  const event = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'Test',
    message: 'hello',
  });
  const namespace = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

  it('authorizes the request as the impersonated user', async () => {
    const ns = await send(
      tokens.proxy,
      'POST',
      '/api/v1/namespaces',
      { 'Impersonate-User': 'alice' },
      namespace('x'),
    );
    assert.equal(ns.status, 403, JSON.stringify(ns.body));
    assert.equal(
      ns.body.message,
      'namespaces is forbidden: User "alice" cannot create resource "namespaces" in API group "" at the cluster scope: No policy matched.',
    );
    const ev = await send(
      tokens.proxy,
      'POST',
      '/api/v1/namespaces/default/events',
      { 'Impersonate-User': 'alice' },
      event('e1'),
    );
    assert.equal(ev.status, 201, JSON.stringify(ev.body));
  });

  it('gives the impersonated user the groups asked for', async () => {
    const ns = await send(
      tokens.proxy,
      'POST',
      '/api/v1/namespaces',
      { 'Impersonate-User': 'alice', 'Impersonate-Group': ['dev', 'system:masters'] },
      namespace('made-as-master'),
    );
    assert.equal(ns.status, 201, JSON.stringify(ns.body));
  });

  it('refuses a requester who may not impersonate with 403', async () => {
    const r = await send(tokens.alice, 'GET', '/api/v1/namespaces', { 'Impersonate-User': 'carol' });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.details, { name: 'carol', kind: 'users' });
    assert.equal(
      r.body.message,
      'users "carol" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope: No policy matched.',
    );
    // proxy may impersonate users and groups, not uids.
    const uid = await send(tokens.proxy, 'GET', '/api/v1/namespaces', {
      'Impersonate-User': 'carol',
      'Impersonate-Uid': 'u-1',
    });
    assert.equal(uid.status, 403);
    assert.match(
      uid.body.message ?? '',
      /^uids\.authentication\.k8s\.io "u-1" is forbidden: User "proxy" cannot impersonate/,
    );
  });

  it('answers groups without a user with 400 BadRequest', async () => {
    const r = await send(tokens.proxy, 'GET', '/api/v1/namespaces', {
      'Impersonate-Group': 'system:masters',
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, 'requested [{Group  system:masters    }] without impersonating a user');
  });
});
