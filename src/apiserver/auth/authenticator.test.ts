// kube-apiserver's authentication chain for certificates and bearer tokens, case by case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearerToken } from '../../core/authz/credentials.js';
import { authenticate, type AuthenticationRequest, type AuthenticatorOptions } from './authenticator.js';
import { lookupToken, parseTokenFile } from './token-file.js';
import type { UserInfo } from './types.js';

const tokens = parseTokenFile(
  [
    'admin-token,admin,uid-admin,system:masters',
    'node-token,node-1,uid-node-1,"nodes,edge"',
    'anon-token,system:anonymous,uid-x',
    'authd-token,carol,uid-c,"system:authenticated,ops"',
    '',
  ].join('\n'),
);
const opts: AuthenticatorOptions = { tokens };
const cert = (CN?: string, O?: string | string[]): AuthenticationRequest['peerCertificate'] => ({
  subject: { ...(CN === undefined ? {} : { CN }), ...(O === undefined ? {} : { O }) },
});
const admin: UserInfo = {
  name: 'admin',
  uid: 'uid-admin',
  groups: ['system:masters', 'system:authenticated'],
};

describe('authenticate', () => {
  const cases: {
    name: string;
    req: AuthenticationRequest;
    opts?: AuthenticatorOptions;
    expect: UserInfo | 'anonymous' | 'invalid';
  }[] = [
    { name: 'no credentials', req: {}, expect: 'anonymous' },
    {
      name: 'no credentials, anonymous auth off',
      req: {},
      opts: { tokens, anonymous: false },
      expect: 'invalid',
    },
    { name: 'a good token', req: { authorization: 'Bearer admin-token' }, expect: admin },
    { name: 'the scheme in any case', req: { authorization: 'bEaReR admin-token' }, expect: admin },
    { name: 'surrounding whitespace', req: { authorization: '  Bearer admin-token \t' }, expect: admin },
    {
      name: 'text after a second space',
      req: { authorization: 'Bearer admin-token trailing' },
      expect: admin,
    },
    {
      name: 'a token with groups',
      req: { authorization: 'Bearer node-token' },
      expect: { name: 'node-1', uid: 'uid-node-1', groups: ['nodes', 'edge', 'system:authenticated'] },
    },
    {
      name: 'a user already in system:authenticated (not added twice)',
      req: { authorization: 'Bearer authd-token' },
      expect: { name: 'carol', uid: 'uid-c', groups: ['system:authenticated', 'ops'] },
    },
    {
      name: 'a token naming system:anonymous (no group added)',
      req: { authorization: 'Bearer anon-token' },
      expect: { name: 'system:anonymous', uid: 'uid-x', groups: [] },
    },
    { name: 'a bad token', req: { authorization: 'Bearer nope' }, expect: 'invalid' },
    { name: 'a token prefix', req: { authorization: 'Bearer admin-toke' }, expect: 'invalid' },
    { name: 'another scheme (ignored)', req: { authorization: 'Basic YWRtaW46eA==' }, expect: 'anonymous' },
    { name: '"Bearer" alone (ignored)', req: { authorization: 'Bearer' }, expect: 'anonymous' },
    { name: '"Bearer " with no token (ignored)', req: { authorization: 'Bearer ' }, expect: 'anonymous' },
    {
      name: 'two spaces before the token (ignored)',
      req: { authorization: 'Bearer  admin-token' },
      expect: 'anonymous',
    },
    { name: 'an empty header', req: { authorization: '' }, expect: 'anonymous' },
    {
      name: 'a token when no token file is configured (header not looked at)',
      req: { authorization: 'Bearer admin-token' },
      opts: {},
      expect: 'anonymous',
    },
    {
      name: 'a token against an empty token file',
      req: { authorization: 'Bearer admin-token' },
      opts: { tokens: new Map() },
      expect: 'invalid',
    },
    {
      name: 'a verified certificate',
      req: { peerCertificate: cert('alice', ['system:masters', 'dev']), peerCertificateVerified: true },
      expect: { name: 'alice', uid: '', groups: ['system:masters', 'dev', 'system:authenticated'] },
    },
    {
      name: 'a certificate with one O',
      req: { peerCertificate: cert('alice', 'dev') },
      expect: { name: 'alice', uid: '', groups: ['dev', 'system:authenticated'] },
    },
    {
      name: 'a certificate without O',
      req: { peerCertificate: cert('alice') },
      expect: { name: 'alice', uid: '', groups: ['system:authenticated'] },
    },
    {
      name: 'a verified certificate wins over a bad token',
      req: { authorization: 'Bearer nope', peerCertificate: cert('alice'), peerCertificateVerified: true },
      expect: { name: 'alice', uid: '', groups: ['system:authenticated'] },
    },
    {
      name: 'a verified certificate wins over a good token',
      req: {
        authorization: 'Bearer admin-token',
        peerCertificate: cert('alice'),
        peerCertificateVerified: true,
      },
      expect: { name: 'alice', uid: '', groups: ['system:authenticated'] },
    },
    {
      name: 'an unverified certificate alone',
      req: { peerCertificate: cert('alice'), peerCertificateVerified: false },
      expect: 'invalid',
    },
    {
      name: 'an unverified certificate and a good token',
      req: {
        authorization: 'Bearer admin-token',
        peerCertificate: cert('mallory'),
        peerCertificateVerified: false,
      },
      expect: admin,
    },
    {
      name: 'a certificate without CN (no opinion)',
      req: { peerCertificate: cert(undefined, 'system:masters'), peerCertificateVerified: true },
      expect: 'anonymous',
    },
    {
      name: 'a certificate without CN and a good token',
      req: {
        authorization: 'Bearer admin-token',
        peerCertificate: cert('', 'x'),
        peerCertificateVerified: true,
      },
      expect: admin,
    },
    {
      name: "node's {} for no certificate",
      req: { peerCertificate: {}, peerCertificateVerified: false },
      expect: 'anonymous',
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(authenticate(c.req, c.opts ?? opts), c.expect));
  }

  it('takes the last of repeated CNs, as Go does', () => {
    const req = { peerCertificate: { subject: { CN: ['first', 'last'] } } };
    assert.deepEqual(authenticate(req), { name: 'last', uid: '', groups: ['system:authenticated'] });
  });

  it('leaves the token table as it was (the group is added to a copy)', () => {
    authenticate({ authorization: 'Bearer admin-token' }, opts);
    assert.deepEqual(authenticate({ authorization: 'Bearer admin-token' }, opts), admin);
    assert.deepEqual(lookupToken(tokens, 'admin-token')?.groups, ['system:masters']);
  });
});

describe('authenticate with ServiceAccount tokens', () => {
  const sa: UserInfo = { name: 'system:serviceaccount:ci:b', uid: 'u', groups: ['system:serviceaccounts'] };
  const asked: string[] = [];
  const withSa: AuthenticatorOptions = {
    tokens,
    serviceAccounts: (t) => {
      asked.push(t);
      return Promise.resolve(t === 'jwt-good' ? sa : undefined);
    },
  };

  it('answers a static token synchronously, never asking the ServiceAccount authenticator', () => {
    asked.length = 0;
    assert.deepEqual(authenticate({ authorization: 'Bearer admin-token' }, withSa), admin);
    assert.deepEqual(asked, []);
  });

  it('prefers a verified certificate, as upstream orders the chain', () => {
    asked.length = 0;
    const user = authenticate({ authorization: 'Bearer jwt-good', peerCertificate: cert('bob') }, withSa);
    assert.deepEqual(user, { name: 'bob', uid: '', groups: ['system:authenticated'] });
    assert.deepEqual(asked, []);
  });

  it('authenticates a ServiceAccount token, adding system:authenticated', async () => {
    assert.deepEqual(await authenticate({ authorization: 'Bearer jwt-good' }, withSa), {
      ...sa,
      groups: ['system:serviceaccounts', 'system:authenticated'],
    });
  });

  it('answers 401 (never anonymous) for a token neither method accepts, or a failing check', async () => {
    assert.equal(await authenticate({ authorization: 'Bearer jwt-bad' }, withSa), 'invalid');
    const failing: AuthenticatorOptions = { serviceAccounts: () => Promise.reject(new Error('boom')) };
    assert.equal(await authenticate({ authorization: 'Bearer x' }, failing), 'invalid');
  });

  it('looks at the header without a token table when ServiceAccount tokens are on', async () => {
    const only: AuthenticatorOptions = { serviceAccounts: withSa.serviceAccounts };
    assert.equal(await authenticate({ authorization: 'Bearer nope' }, only), 'invalid');
    assert.equal(authenticate({}, only), 'anonymous');
  });
});

describe('bearerToken', () => {
  it('extracts the token the way upstream splits the header', () => {
    assert.equal(bearerToken('Bearer abc'), 'abc');
    assert.equal(bearerToken('BEARER abc def'), 'abc');
    assert.equal(bearerToken(' Bearer abc '), 'abc');
    assert.equal(bearerToken('Bearer  abc'), undefined);
    assert.equal(bearerToken('Bearer\tabc'), undefined);
    assert.equal(bearerToken('Token abc'), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });
});
