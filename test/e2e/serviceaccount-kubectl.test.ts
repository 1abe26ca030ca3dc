// ServiceAccounts and bound tokens with the real kubectl against `svcplane up`: the serviceaccount
// controller's `default` account in every namespace, `kubectl create serviceaccount` and `get sa`
// columns, `kubectl create token --duration 10m` and `kubectl --token T auth whoami` as the account;
// a token signed by a foreign key, an expired one (minted with the server's own key) and one whose
// account was deleted are 401; a duration under 10 minutes is refused with kube-apiserver's 422; the
// issuer's OIDC discovery documents name the key that signed the token.
import assert from 'node:assert/strict';
import { generateKeyPairSync, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { call, startUp, type TestServer } from './testing/server.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { until } from './testing/until.js';

const NS = 'sa-e2e';
const ISSUER = 'https://kubernetes.default.svc.cluster.local';

describe('ServiceAccounts and tokens with kubectl', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  let home: string;
  let token = '';
  let saUid = '';

  before(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'svcplane-sa-'));
    srv = await startUp();
    kubectl = kubectlFor(srv, home);
    await kubectl(['create', 'namespace', NS]);
  });
  after(async () => {
    await srv?.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  /** kubectl with another bearer token, resolving to stdout or rejecting with stderr. */
  const as = (t: string, args: string[]): Promise<string> => kubectl([`--token=${t}`, ...args]);

  /** The claims of a token for the test account, valid from `iat` to `exp` (seconds). */
  const claims = (iat: number, exp: number): Record<string, unknown> => ({
    iss: ISSUER,
    sub: `system:serviceaccount:${NS}:builder`,
    aud: [ISSUER],
    iat,
    nbf: iat,
    exp,
    jti: 'e2e',
    'kubernetes.io': { namespace: NS, serviceaccount: { name: 'builder', uid: saUid } },
  });

  it('gives every namespace a default ServiceAccount, and lists accounts with kubectl get sa', async () => {
    await until('the default ServiceAccount in the new namespace', 20_000, async () =>
      (await kubectl(['-n', NS, 'get', 'sa', 'default', '-o', 'name']).catch(() => '')).includes(
        'serviceaccount/default',
      ),
    );
    assert.equal(
      (await kubectl(['-n', NS, 'create', 'serviceaccount', 'builder'])).trim(),
      'serviceaccount/builder created',
    );
    const lines = (await kubectl(['-n', NS, 'get', 'sa'])).trim().split('\n');
    assert.match(lines[0]!, /^NAME\s+SECRETS\s+AGE$/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2)),
      [
        ['builder', '0'],
        ['default', '0'],
      ],
    );
    assert.match(
      (await kubectl(['get', 'sa', '-n', 'kube-system', '-o', 'name'])).trim(),
      /serviceaccount\/default/,
    );
    saUid = (await kubectl(['-n', NS, 'get', 'sa', 'builder', '-o', 'jsonpath={.metadata.uid}'])).trim();
    assert.notEqual(saUid, '');
  });

  it('issues a token with kubectl create token, and authenticates kubectl as the account', async () => {
    token = (await kubectl(['-n', NS, 'create', 'token', 'builder', '--duration', '10m'])).trim();
    const c = decodeJwt(token);
    assert.equal(c.iss, ISSUER);
    assert.equal(c.sub, `system:serviceaccount:${NS}:builder`);
    assert.deepEqual(c.aud, [ISSUER]);
    assert.equal(c.exp! - c.iat!, 600);
    assert.deepEqual(c['kubernetes.io'], { namespace: NS, serviceaccount: { name: 'builder', uid: saUid } });
    const review = JSON.parse(await as(token, ['auth', 'whoami', '-o', 'json'])) as {
      status: { userInfo: { username: string; uid: string; groups: string[] } };
    };
    assert.deepEqual(review.status.userInfo, {
      username: `system:serviceaccount:${NS}:builder`,
      uid: saUid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${String(c.jti)}`] },
    });
  });

  it('serves the issuer discovery documents with the key that signed the token', async () => {
    const oidc = (await call(srv, 'GET', '/.well-known/openid-configuration')).json();
    assert.equal(oidc['issuer'], ISSUER);
    assert.equal(oidc['jwks_uri'], `${srv.url}/openid/v1/jwks`);
    const jwks = (await call(srv, 'GET', '/openid/v1/jwks')).json<{ keys: { kid: string; alg: string }[] }>();
    const { kid, alg } = decodeProtectedHeader(token);
    assert.deepEqual(
      jwks.keys.map((k) => [k.kid, k.alg]),
      [[kid, alg]],
    );
  });

  it('refuses a duration under 10 minutes with kube-apiserver 422', async () => {
    await assert.rejects(
      kubectl(['-n', NS, 'create', 'token', 'builder', '--duration', '1s']),
      /TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 1: may not specify a duration less than 10 minutes/,
    );
    const r = await call(srv, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/builder/token`, {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 599 },
      },
    });
    assert.equal(r.status, 422);
    const missing = await call(srv, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/nobody/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.json()['message'], 'serviceaccounts "nobody" not found');
  });

  it('answers 401 for a token signed by a foreign key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const foreign = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const forged = await new SignJWT(claims(now, now + 600))
      .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(token).kid! })
      .sign(foreign);
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces', { token: forged })).status, 401);
    await assert.rejects(as(forged, ['get', 'ns']), /Unauthorized/);
  });

  it('answers 401 for an expired token signed with the server key, which it accepts unexpired', async () => {
    const key = createPrivateKey(readFileSync(path.join(srv.dataDir, 'pki', 'sa.key')));
    const now = Math.floor(Date.now() / 1000);
    const mint = (iat: number, exp: number): Promise<string> =>
      new SignJWT(claims(iat, exp)).setProtectedHeader({ alg: 'ES256' }).sign(key);
    const fresh = await mint(now, now + 600);
    assert.match(await as(fresh, ['auth', 'whoami']), new RegExp(`system:serviceaccount:${NS}:builder`));
    const expired = await mint(now - 7200, now - 3600);
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces', { token: expired })).status, 401);
    await assert.rejects(as(expired, ['auth', 'whoami']), /Unauthorized/);
  });

  it('answers 401 once the ServiceAccount is deleted, and for a recreated one of another uid', async () => {
    await kubectl(['-n', NS, 'delete', 'sa', 'builder']);
    await until(
      'the deleted account to stop authenticating',
      10_000,
      async () => (await call(srv, 'GET', '/api/v1/namespaces', { token })).status === 401,
    );
    await kubectl(['-n', NS, 'create', 'serviceaccount', 'builder']);
    await kubectl(['-n', NS, 'get', 'sa', 'builder']);
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces', { token })).status, 401);
  });
});
