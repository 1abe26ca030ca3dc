// authentication.k8s.io/v1 TokenReview through the real API server in process: the token file's users,
// ServiceAccount tokens for the server's audiences or the ones a review names, tokens of no one, the 400s
// of upstream's tokenreview REST, and who may ask (create tokenreviews: system:auth-delegator).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../../api/resources.js';
import { BOOTSTRAP_CLUSTER_ROLES } from '../../core/rbac/bootstrap-policy.js';
import { ruleAllows } from '../../core/rbac/rule-match.js';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { authenticate } from './authenticator.js';
import { generateServiceAccountKey, parseSigningKey } from './service-account-keys.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { formatTokenFileRecord, parseTokenFile } from './token-file.js';
import { reviewToken } from './token-review.js';
import { SYSTEM_MASTERS } from './types.js';

const SA = mustFindResource('', 'serviceaccounts');
const ISS = 'https://issuer.test';
const PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
const DELEGATOR = BOOTSTRAP_CLUSTER_ROLES.find((r) => r.name === 'system:auth-delegator')!;

interface Reply {
  readonly [k: string]: unknown;
  readonly status?: unknown;
}

describe('TokenReview', () => {
  let api: InProcessApiServer;
  const key = parseSigningKey(generateServiceAccountKey());
  const sa = new ServiceAccountTokens({
    issuers: [ISS],
    audiences: [ISS, 'api'],
    verifyKeys: [key],
    signingKey: key,
  });
  const tokens = parseTokenFile(
    [
      formatTokenFileRecord('admin-token', { name: 'admin', uid: '', groups: [SYSTEM_MASTERS] }),
      formatTokenFileRecord('alice-token', { name: 'alice', uid: 'a-1', groups: ['devs', 'ops'] }),
      formatTokenFileRecord('kubelet-token', { name: 'kubelet', uid: '', groups: ['delegates'] }),
    ].join('\n'),
  );
  let saUid = '';

  before(async () => {
    api = await startInProcessApiServer({
      token: 'admin-token',
      auth: {
        authenticate: (req, objects) =>
          authenticate(req, { tokens, serviceAccounts: (t) => sa.authenticate(t, objects) }),
        // Masters may do anything; the group "delegates" is bound to system:auth-delegator; alice to nothing.
        authorize: (a) =>
          a.user.groups.includes(SYSTEM_MASTERS) ||
          (a.user.groups.includes('delegates') && DELEGATOR.rules.some((r) => ruleAllows(r, a))),
        forbiddenMessage: () => 'forbidden',
        serviceAccountTokens: sa,
        reviewToken: (token, audiences, objects) =>
          reviewToken(token, audiences, {
            tokens,
            serviceAccounts: (t, auds) => sa.review(t, objects, auds),
            apiAudiences: sa.config.audiences,
          }),
      },
    });
    const created = (await api.client.create(SA, 'default', { metadata: { name: 'bot' } })) as {
      metadata: { uid?: string };
    };
    saUid = created.metadata.uid!;
  });
  after(() => api.stop());

  async function post(asker: string, body: unknown): Promise<{ status: number; json: Reply }> {
    const r = await api.transport(asker).send({ method: 'POST', path: PATH, body: JSON.stringify(body) });
    let text = '';
    for await (const c of r.body) text += String(c);
    return { status: r.status, json: JSON.parse(text) as Reply };
  }
  const review = (spec: Record<string, unknown>) => ({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec,
  });
  const saToken = async (audiences?: string[]): Promise<string> => {
    const r = (await api.client.createSubresource(SA, 'default', 'bot', 'token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: audiences === undefined ? {} : { audiences },
    })) as { status: { token: string } };
    return r.status.token;
  };

  it("answers a token file's token with its user, the server's audiences, 201 Created", async () => {
    const r = await post('admin-token', review({ token: 'alice-token' }));
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.deepEqual(r.json, {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { token: 'alice-token' },
      status: {
        authenticated: true,
        user: { username: 'alice', uid: 'a-1', groups: ['devs', 'ops', 'system:authenticated'] },
        audiences: [ISS, 'api'],
      },
    });
    // An audience-agnostic token is valid for whatever audiences the review names.
    const named = await post('admin-token', review({ token: 'alice-token', audiences: ['vault'] }));
    assert.deepEqual((named.json.status as Reply)['audiences'], ['vault']);
  });

  it('answers a ServiceAccount token for the audiences it names among those asked', async () => {
    const forServer = await post('admin-token', review({ token: await saToken() }));
    assert.equal(forServer.status, 201);
    const status = forServer.json.status as Reply;
    assert.equal(status['authenticated'], true);
    assert.deepEqual(status['audiences'], [ISS, 'api']);
    const user = status['user'] as Reply;
    assert.equal(user['username'], 'system:serviceaccount:default:bot');
    assert.equal(user['uid'], saUid);
    assert.deepEqual(user['groups'], [
      'system:serviceaccounts',
      'system:serviceaccounts:default',
      'system:authenticated',
    ]);
    assert.match(
      String((user['extra'] as Record<string, string[]>)['authentication.kubernetes.io/credential-id']),
      /^JTI=/,
    );

    const vault = await saToken(['vault', 'other']);
    const matching = await post('admin-token', review({ token: vault, audiences: ['x', 'vault'] }));
    assert.equal((matching.json.status as Reply)['authenticated'], true);
    assert.deepEqual((matching.json.status as Reply)['audiences'], ['vault']);
    // Not for this server (no audiences named: the server's own), nor for an audience it does not name.
    for (const spec of [{ token: vault }, { token: vault, audiences: ['nope'] }]) {
      const r = await post('admin-token', review(spec));
      assert.equal(r.status, 201);
      const s = r.json.status as Reply;
      assert.equal(s['authenticated'], undefined);
      assert.deepEqual(s['user'], {});
      assert.match(
        String(s['error']),
        /token audiences \["vault","other"\] is invalid for the target audiences/,
      );
    }
  });

  it('answers a token of no one: not authenticated, no user, no error', async () => {
    for (const token of ['garbage', 'alice-token-', 'a.b.c']) {
      const r = await post('admin-token', review({ token }));
      assert.equal(r.status, 201);
      assert.deepEqual(r.json.status, { user: {} });
    }
  });

  it('refuses a review without a token (400) and a body of another kind (400)', async () => {
    for (const spec of [{}, { token: '' }, { audiences: ['api'] }]) {
      const r = await post('admin-token', review(spec));
      assert.equal(r.status, 400);
      assert.equal(r.json['reason'], 'BadRequest');
      assert.equal(r.json['message'], 'token is required for TokenReview in authentication');
    }
    const other = await post('admin-token', {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { token: 'alice-token' },
    });
    assert.equal(other.status, 400);
  });

  it('needs create tokenreviews: system:auth-delegator grants it, no self review does', async () => {
    const denied = await post('alice-token', review({ token: 'alice-token' }));
    assert.equal(denied.status, 403);
    const delegated = await post('kubelet-token', review({ token: 'alice-token' }));
    assert.equal(delegated.status, 201);
    assert.equal((delegated.json.status as Reply)['authenticated'], true);
    assert.ok(
      DELEGATOR.rules.some((r) =>
        ruleAllows(r, {
          verb: 'create',
          resourceRequest: true,
          apiGroup: 'authorization.k8s.io',
          namespace: '',
          resource: 'subjectaccessreviews',
          subresource: '',
          name: '',
          path: '',
        }),
      ),
    );
    const get = await api.transport('admin-token').send({ method: 'GET', path: PATH });
    get.body.resume();
    assert.equal(get.status, 405);
  });

  it('is listed in discovery, create only', async () => {
    const r = await api
      .transport('admin-token')
      .send({ method: 'GET', path: '/apis/authentication.k8s.io/v1' });
    let text = '';
    for await (const c of r.body) text += String(c);
    const resources = (JSON.parse(text) as { resources: Reply[] }).resources;
    assert.deepEqual(
      resources.find((x) => x['name'] === 'tokenreviews'),
      {
        name: 'tokenreviews',
        singularName: 'tokenreview',
        namespaced: false,
        kind: 'TokenReview',
        verbs: ['create'],
      },
    );
  });
});
