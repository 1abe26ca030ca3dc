// serviceaccounts/NAME/token through the real API server in process: kube-apiserver's TokenREST answers
// (defaults, 422, 404, bound-object checks), and the issued token authenticating until its account or
// bound pod is gone.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { mustFindResource } from '../../api/resources.js';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { authenticate } from '../auth/authenticator.js';
import { parseSigningKey } from '../auth/service-account-keys.js';
import { ServiceAccountTokens } from '../auth/service-account-tokens.js';
import { formatTokenFileRecord, parseTokenFile } from '../auth/token-file.js';
import { Client, isApiError } from '../../runtime/client.js';

const SA = mustFindResource('', 'serviceaccounts');
const PODS = mustFindResource('', 'pods');
const NODES = mustFindResource('', 'nodes');
const ISS = 'https://issuer.test';
const ADMIN = 'admin-token';

describe('serviceaccounts/NAME/token', () => {
  let api: InProcessApiServer;
  const key = parseSigningKey(
    generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'sec1', format: 'pem' })
      .toString(),
  );
  const sa = new ServiceAccountTokens({
    issuers: [ISS],
    audiences: [ISS, 'api'],
    verifyKeys: [key],
    signingKey: key,
    maxExpirationSeconds: 7200,
  });
  const tokens = parseTokenFile(
    formatTokenFileRecord(ADMIN, { name: 'admin', uid: '', groups: ['system:masters'] }),
  );

  before(async () => {
    api = await startInProcessApiServer({
      token: ADMIN,
      auth: {
        authenticate: (req, objects) =>
          authenticate(req, { tokens, serviceAccounts: (t) => sa.authenticate(t, objects) }),
        authorize: () => true,
        forbiddenMessage: () => 'forbidden',
        serviceAccountTokens: sa,
      },
    });
    const c = api.client;
    await c.create(SA, 'default', { metadata: { name: 'bot' } });
    await c.create(NODES, '', { metadata: { name: 'n1' } });
    for (const [name, account] of [
      ['p1', 'bot'],
      ['other', 'default'],
    ]) {
      await c.create(PODS, 'default', {
        metadata: { name },
        spec: { serviceAccountName: account, containers: [{ name: 'c', image: 'i' }] },
      });
    }
  });
  after(() => api.stop());

  const request = (spec: Record<string, unknown>, name = 'bot', metadata: Record<string, unknown> = {}) =>
    api.client.createSubresource(SA, 'default', name, 'token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata,
      spec,
    }) as Promise<{ spec: Record<string, unknown>; status: { token: string; expirationTimestamp: string } }>;

  const refused = async (p: Promise<unknown>, code: number, message: string): Promise<void> => {
    await assert.rejects(p, (e: unknown) => isApiError(e, code) && e.status?.message === message);
  };

  const whoami = async (token: string): Promise<string | number> => {
    try {
      const r = (await new Client(api.transport(token)).get(SA, 'default', 'bot')) as {
        metadata: { name?: string };
      };
      return r.metadata.name ?? '';
    } catch (e) {
      return isApiError(e) ? e.code : -1;
    }
  };

  it('defaults audiences to the server and expiration to 3600, and cuts to the maximum', async () => {
    const r = await request({});
    assert.deepEqual(r.spec['audiences'], [ISS, 'api']);
    assert.equal(r.spec['expirationSeconds'], 3600);
    const c = decodeJwt(r.status.token);
    assert.equal(c.exp! - c.iat!, 3600);
    assert.equal(r.status.expirationTimestamp, new Date(c.exp! * 1000).toISOString().replace('.000Z', 'Z'));
    const long = await request({ expirationSeconds: 86400, audiences: ['vault'] });
    assert.equal(long.spec['expirationSeconds'], 7200);
    assert.deepEqual(decodeJwt(long.status.token).aud, ['vault']);
    assert.equal(await whoami(r.status.token), 'bot');
    assert.equal(await whoami(long.status.token), 401, 'a token for another audience is not for this server');
  });

  it('answers as TokenREST does for bad requests', async () => {
    await refused(
      request({ expirationSeconds: 599 }),
      422,
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
    );
    await refused(
      request({}, 'bot', { name: 'other' }),
      422,
      'TokenRequest.authentication.k8s.io "bot" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified',
    );
    await refused(request({}, 'ghost'), 404, 'serviceaccounts "ghost" not found');
    await refused(
      request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other' } }),
      400,
      'cannot bind token for serviceaccount "bot" to pod running with different serviceaccount name.',
    );
    await refused(
      request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'not-its-uid' } }),
      409,
      'Operation cannot be fulfilled on Pod "p1": the UID in the bound object reference (not-its-uid) does not match the UID in record. The object might have been deleted and then recreated',
    );
    await refused(
      request({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 's' } }),
      404,
      'secrets "s" not found',
    );
    await refused(
      request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'nope' } }),
      404,
      'pods "nope" not found',
    );
    await refused(
      request({ boundObjectRef: { kind: 'Deployment', apiVersion: 'apps/v1', name: 'd' } }),
      400,
      'cannot bind token for serviceaccount "bot" to object of type apps/v1, Kind=Deployment',
    );
  });

  it('binds a token to a node and to a pod; the pod-bound token stops once the pod is gone', async () => {
    const node = await request({ boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'n1' } });
    const n1 = await api.client.get(NODES, '', 'n1');
    assert.deepEqual((decodeJwt(node.status.token)['kubernetes.io'] as Record<string, unknown>)['node'], {
      name: 'n1',
      uid: n1.metadata.uid,
    });
    const bound = await request({ boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1' } });
    assert.equal(await whoami(bound.status.token), 'bot');
    await api.client.delete(PODS, 'default', 'p1', { gracePeriodSeconds: 0 });
    assert.equal(await whoami(bound.status.token), 401);
    assert.equal(await whoami(node.status.token), 'bot');
  });
});
