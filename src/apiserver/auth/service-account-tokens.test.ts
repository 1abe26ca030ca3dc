// Bound ServiceAccount tokens end to end below HTTP: issue with one key, authenticate against the
// configured keys, issuers, audiences, clock and objects, case by case as kube-apiserver decides them.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { keyId, parsePublicKeys, parseSigningKey } from './service-account-keys.js';
import {
  ServiceAccountTokens,
  type ObjectLookup,
  type ObjectRecord,
  type ServiceAccountTokenConfig,
} from './service-account-tokens.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const T0 = Date.UTC(2026, 11, 6, 5, 0, 0);

const ecPem = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'sec1', format: 'pem' })
    .toString();
const rsaPem = (): string =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();

const EC = parseSigningKey(ecPem());
const RSA = parseSigningKey(rsaPem());
const FOREIGN = parseSigningKey(ecPem());

const SA = { name: 'builder', uid: 'sa-uid-1' };
const POD = { name: 'web-0', uid: 'pod-uid-1' };

function objects(extra: Record<string, ObjectRecord | undefined> = {}): ObjectLookup {
  const table: Record<string, ObjectRecord | undefined> = {
    'serviceaccounts/ci/builder': { uid: SA.uid },
    'pods/ci/web-0': { uid: POD.uid },
    'nodes//edge-1': { uid: 'node-uid-1' },
    ...extra,
  };
  return (resource, ns, name) => Promise.resolve(table[`${resource}/${ns}/${name}`]);
}

function tokens(over: Partial<ServiceAccountTokenConfig> = {}, nowMs = T0): ServiceAccountTokens {
  return new ServiceAccountTokens(
    { issuers: [ISSUER], audiences: [ISSUER], verifyKeys: [EC, RSA], signingKey: EC, ...over },
    () => nowMs,
    () => 'jti-1',
  );
}

const issue = (
  t: ServiceAccountTokens,
  bound?: { kind: 'Pod' | 'Node'; ref: { name: string; uid: string } },
) => t.issue({ namespace: 'ci', serviceAccount: SA, audiences: [ISSUER], expirationSeconds: 3600, bound });

const USER = {
  name: 'system:serviceaccount:ci:builder',
  uid: SA.uid,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:ci'],
};

describe('ServiceAccountTokens', () => {
  it('issues a JWT with upstream claims and a kid derived from the public key', async () => {
    const { token, expiresAt } = await issue(tokens(), { kind: 'Pod', ref: POD });
    const header = decodeProtectedHeader(token);
    assert.deepEqual(header, { alg: 'ES256', kid: keyId(EC.key) });
    assert.deepEqual(decodeJwt(token), {
      iss: ISSUER,
      sub: 'system:serviceaccount:ci:builder',
      aud: [ISSUER],
      exp: T0 / 1000 + 3600,
      iat: T0 / 1000,
      nbf: T0 / 1000,
      jti: 'jti-1',
      'kubernetes.io': { namespace: 'ci', serviceaccount: SA, pod: POD },
    });
    assert.equal(expiresAt, T0 / 1000 + 3600);
  });

  it('signs RS256 with an RSA key', async () => {
    const { token } = await issue(tokens({ signingKey: RSA }));
    assert.equal(decodeProtectedHeader(token).alg, 'RS256');
    assert.equal((await tokens().authenticate(token, objects()))?.name, USER.name);
  });

  it('reads every key of a key file: public, private and certificate PEM blocks', () => {
    const pub = EC.key.export({ type: 'spki', format: 'pem' }).toString();
    const keys = parsePublicKeys(`${pub}\n${rsaPem()}`);
    assert.deepEqual(
      keys.map((k) => k.alg),
      ['ES256', 'RS256'],
    );
    assert.equal(keys[0]!.kid, EC.kid);
    assert.throws(
      () => parsePublicKeys('no keys here'),
      /does not contain any valid RSA or ECDSA public keys/,
    );
  });

  const cases: {
    name: string;
    token: () => Promise<string>;
    verifier?: ServiceAccountTokens;
    objects?: ObjectLookup;
    ok: boolean;
  }[] = [
    { name: 'a fresh token', token: async () => (await issue(tokens())).token, ok: true },
    {
      name: 'within the leeway after exp',
      token: async () => (await issue(tokens())).token,
      verifier: tokens({}, T0 + 3600_000 + 59_000),
      ok: true,
    },
    {
      name: 'expired beyond the leeway',
      token: async () => (await issue(tokens())).token,
      verifier: tokens({}, T0 + 3600_000 + 61_000),
      ok: false,
    },
    {
      name: 'not valid yet (nbf beyond the leeway)',
      token: async () => (await issue(tokens())).token,
      verifier: tokens({}, T0 - 120_000),
      ok: false,
    },
    {
      name: 'signed by a foreign key',
      token: async () => (await issue(tokens({ signingKey: FOREIGN }))).token,
      ok: false,
    },
    {
      name: 'a foreign key that claims a trusted kid',
      token: async () =>
        new SignJWT({ ...(decodeJwt((await issue(tokens())).token) as Record<string, unknown>) })
          .setProtectedHeader({ alg: 'ES256', kid: EC.kid })
          .sign(FOREIGN.privateKey),
      ok: false,
    },
    {
      name: 'the signature of an altered payload',
      token: async () => {
        const [h, , s] = (await issue(tokens())).token.split('.');
        const claims = { ...decodeJwt((await issue(tokens())).token), sub: 'system:serviceaccount:ci:admin' };
        return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
      },
      ok: false,
    },
    {
      name: 'alg none',
      token: async () => {
        const [, p] = (await issue(tokens())).token.split('.');
        return `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
      },
      ok: false,
    },
    {
      name: 'a wrong audience',
      token: async () =>
        (
          await tokens().issue({
            namespace: 'ci',
            serviceAccount: SA,
            audiences: ['vault'],
            expirationSeconds: 3600,
          })
        ).token,
      ok: false,
    },
    {
      name: 'one of several audiences is ours',
      token: async () =>
        (
          await tokens().issue({
            namespace: 'ci',
            serviceAccount: SA,
            audiences: ['vault', ISSUER],
            expirationSeconds: 3600,
          })
        ).token,
      ok: true,
    },
    {
      name: 'a wrong issuer',
      token: async () => (await issue(tokens({ issuers: ['https://other.example'] }))).token,
      ok: false,
    },
    {
      name: 'a second accepted issuer',
      token: async () => (await issue(tokens({ issuers: ['https://old.example'] }))).token,
      verifier: tokens({ issuers: [ISSUER, 'https://old.example'] }),
      ok: true,
    },
    {
      name: 'a deleted ServiceAccount',
      token: async () => (await issue(tokens())).token,
      objects: objects({ 'serviceaccounts/ci/builder': undefined }),
      ok: false,
    },
    {
      name: 'a ServiceAccount recreated with another uid',
      token: async () => (await issue(tokens())).token,
      objects: objects({ 'serviceaccounts/ci/builder': { uid: 'sa-uid-2' } }),
      ok: false,
    },
    {
      name: 'a bound pod that exists',
      token: async () => (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      ok: true,
    },
    {
      name: 'a deleted bound pod',
      token: async () => (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      objects: objects({ 'pods/ci/web-0': undefined }),
      ok: false,
    },
    {
      name: 'a bound pod recreated with another uid',
      token: async () => (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      objects: objects({ 'pods/ci/web-0': { uid: 'pod-uid-2' } }),
      ok: false,
    },
    {
      name: 'a bound pod terminating for less than 60 s',
      token: async () => (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      objects: objects({
        'pods/ci/web-0': { uid: POD.uid, deletionTimestamp: new Date(T0 - 30_000).toISOString() },
      }),
      ok: true,
    },
    {
      name: 'a bound pod terminating for more than 60 s',
      token: async () => (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      objects: objects({
        'pods/ci/web-0': { uid: POD.uid, deletionTimestamp: new Date(T0 - 90_000).toISOString() },
      }),
      ok: false,
    },
    {
      name: 'a bound node (cluster-scoped lookup)',
      token: async () =>
        (await issue(tokens(), { kind: 'Node', ref: { name: 'edge-1', uid: 'node-uid-1' } })).token,
      ok: true,
    },
    {
      name: 'an account a lagging cache has not seen yet (found by the fresh lookup)',
      token: async () => (await issue(tokens())).token,
      objects: (r, ns, n, fresh) => (fresh ? objects()(r, ns, n, fresh) : Promise.resolve(undefined)),
      ok: true,
    },
    { name: 'no JWT at all', token: () => Promise.resolve('not-a-jwt'), ok: false },
  ];
  for (const c of cases) {
    it(`${c.ok ? 'accepts' : 'refuses'} ${c.name}`, async () => {
      const user = await (c.verifier ?? tokens()).authenticate(await c.token(), c.objects ?? objects());
      const { extra: _extra, ...who } = user ?? {};
      assert.deepEqual(user === undefined ? undefined : who, c.ok ? USER : undefined);
    });
  }

  it("adds upstream's extra: the token's id and the pod or node it is bound to", async () => {
    const plain = await tokens().authenticate((await issue(tokens())).token, objects());
    assert.deepEqual(plain?.extra, { 'authentication.kubernetes.io/credential-id': ['JTI=jti-1'] });
    const podBound = await tokens().authenticate(
      (await issue(tokens(), { kind: 'Pod', ref: POD })).token,
      objects(),
    );
    assert.deepEqual(podBound?.extra, {
      'authentication.kubernetes.io/pod-name': [POD.name],
      'authentication.kubernetes.io/pod-uid': [POD.uid],
      'authentication.kubernetes.io/credential-id': ['JTI=jti-1'],
    });
  });

  it('caps the expiration at --service-account-max-token-expiration', () => {
    assert.equal(tokens({ maxExpirationSeconds: 7200 }).capExpiration(86400), 7200);
    assert.equal(tokens({ maxExpirationSeconds: 7200 }).capExpiration(3600), 3600);
    assert.equal(tokens().capExpiration(86400), 86400);
  });

  it('serves the discovery documents in upstream shapes', () => {
    const t = tokens({ verifyKeys: [EC, RSA, EC] });
    assert.deepEqual(t.openidConfiguration('https://127.0.0.1:6443/openid/v1/jwks'), {
      issuer: ISSUER,
      jwks_uri: 'https://127.0.0.1:6443/openid/v1/jwks',
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256', 'RS256'],
    });
    const keys = (t.jwks() as { keys: Record<string, unknown>[] }).keys;
    assert.deepEqual(
      keys.map((k) => [k['kty'], k['kid'], k['alg'], k['use']]),
      [
        ['EC', EC.kid, 'ES256', 'sig'],
        ['RSA', RSA.kid, 'RS256', 'sig'],
      ],
    );
    assert.equal(keys[0]!['d'], undefined);
    assert.equal(keys[1]!['d'], undefined);
  });
});
