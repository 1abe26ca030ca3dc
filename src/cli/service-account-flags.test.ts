// The --service-account-* flags: kube-apiserver's rules, as usage errors naming the flag.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { serviceAccountTokensFromFlags } from './service-account-flags.js';

const EC = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .privateKey.export({ type: 'sec1', format: 'pem' })
  .toString();
const ED = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const FILES: Record<string, string> = { '/k/ec.key': EC, '/k/ed.key': ED, '/k/junk': 'hello' };
const read = (flag: string, file: string): string => {
  const text = FILES[file];
  if (text === undefined) throw new UsageError(`--${flag}: cannot read ${file}: ENOENT`);
  return text;
};
const load = (values: Record<string, unknown>) => serviceAccountTokensFromFlags(values, read);
const ISS = 'https://kubernetes.default.svc.cluster.local';

describe('serviceAccountTokensFromFlags', () => {
  it('is off without an issuer', () => assert.equal(load({}), undefined));

  it('defaults the audiences to the issuers and trusts the signing key', () => {
    const t = load({
      'service-account-issuer': [ISS, 'https://old'],
      'service-account-signing-key-file': '/k/ec.key',
    });
    assert.deepEqual(t?.config.audiences, [ISS, 'https://old']);
    assert.equal(t?.config.verifyKeys.length, 1);
    assert.equal(t?.canIssue, true);
  });

  it('splits --api-audiences on commas and takes several key files', () => {
    const t = load({
      'service-account-issuer': [ISS],
      'api-audiences': ['a,b', 'c'],
      'service-account-key-file': ['/k/ec.key', '/k/ec.key'],
    });
    assert.deepEqual(t?.config.audiences, ['a', 'b', 'c']);
    assert.equal(t?.canIssue, false);
  });

  const errors: [string, Record<string, unknown>, RegExp][] = [
    [
      'a signing key without an issuer',
      { 'service-account-signing-key-file': '/k/ec.key' },
      /^service-account-signing-key-file and service-account-issuer are required flags$/,
    ],
    [
      'an unreadable key file',
      { 'service-account-issuer': [ISS], 'service-account-key-file': ['/k/none'] },
      /cannot read \/k\/none/,
    ],
    [
      'a file without keys',
      { 'service-account-issuer': [ISS], 'service-account-key-file': ['/k/junk'] },
      /--service-account-key-file: \/k\/junk: data does not contain any valid RSA or ECDSA public keys/,
    ],
    [
      'an Ed25519 signing key',
      { 'service-account-issuer': [ISS], 'service-account-signing-key-file': '/k/ed.key' },
      /--service-account-signing-key-file: \/k\/ed.key: unsupported key type ed25519/,
    ],
    ['an issuer without keys', { 'service-account-issuer': [ISS] }, /needs --service-account-key-file/],
    ['a repeated issuer', { 'service-account-issuer': [ISS, ISS] }, /is already specified/],
    ['an issuer with a colon that is no URL', { 'service-account-issuer': ['1a:b'] }, /was not a valid URL/],
    [
      'a max expiration under an hour',
      {
        'service-account-issuer': [ISS],
        'service-account-signing-key-file': '/k/ec.key',
        'service-account-max-token-expiration': '30m',
      },
      /between 1 hour and 2\^32 seconds/,
    ],
  ];
  for (const [name, values, message] of errors) {
    it(`refuses ${name}`, () =>
      assert.throws(
        () => load(values),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
      ));
  }
});
