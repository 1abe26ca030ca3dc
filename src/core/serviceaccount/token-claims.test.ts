// Bound token claims: what is granted is accepted exactly while it is valid (with the leeway), and the
// kubernetes.io claim names what the grant named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkClaims, CLAIM_LEEWAY_SECONDS, tokenClaims, type TokenGrant } from './token-claims.js';
import { missingServiceAccounts } from './ensure-accounts.js';

const ISS = 'https://issuer';
const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
const grant = fc.record({
  issuer: fc.constant(ISS),
  audiences: fc.array(fc.constantFrom('a', 'b', ISS), { minLength: 1, maxLength: 3 }),
  namespace: name,
  serviceAccount: fc.record({ name, uid: fc.uuid() }),
  bound: fc.option(
    fc.record({
      kind: fc.constantFrom('Pod' as const, 'Node' as const),
      ref: fc.record({ name, uid: fc.uuid() }),
    }),
    { nil: undefined },
  ),
  nowSeconds: fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
  expirationSeconds: fc.integer({ min: 600, max: 2 ** 32 }),
  jti: fc.uuid(),
}) as fc.Arbitrary<TokenGrant>;

describe('token claims', () => {
  it('accepts a granted token from nbf - leeway to exp + leeway, and refuses it outside', () => {
    fc.assert(
      fc.property(grant, fc.integer({ min: -10_000, max: 10_000 }), (g, skew) => {
        const c = tokenClaims(g);
        const at = skew < 0 ? c.nbf + skew : c.exp + skew;
        const r = checkClaims(JSON.parse(JSON.stringify(c)), {
          issuers: [ISS],
          audiences: [...g.audiences],
          nowSeconds: at,
        });
        assert.equal(r.ok, Math.abs(skew) <= CLAIM_LEEWAY_SECONDS);
        if (r.ok) {
          assert.equal(r.subject.namespace, g.namespace);
          const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));
          assert.deepEqual(plain(r.subject.serviceAccount), plain(g.serviceAccount));
          assert.deepEqual(plain(r.subject.bound), plain(g.bound));
          assert.equal(c.sub, `system:serviceaccount:${g.namespace}:${g.serviceAccount.name}`);
        }
      }),
    );
  });

  it('refuses other issuers, audiences that do not meet ours, and a missing kubernetes.io claim', () => {
    fc.assert(
      fc.property(grant, (g) => {
        const c = tokenClaims(g);
        const check = { issuers: [ISS], audiences: [...g.audiences], nowSeconds: c.iat };
        assert.equal(checkClaims({ ...c, iss: 'https://other' }, check).ok, false);
        assert.equal(checkClaims(c, { ...check, audiences: ['zzz'] }).ok, false);
        assert.equal(checkClaims({ ...c, 'kubernetes.io': undefined }, check).ok, false);
        assert.equal(checkClaims({ ...c, exp: undefined }, check).ok, false);
      }),
    );
  });
});

describe('missingServiceAccounts', () => {
  const none = (): boolean => false;
  it('asks for default in an active namespace that lacks it, and nothing otherwise', () => {
    assert.deepEqual(missingServiceAccounts({ phase: 'Active', deleting: false }, none), ['default']);
    assert.deepEqual(missingServiceAccounts({ phase: '', deleting: false }, none), ['default']);
    assert.deepEqual(
      missingServiceAccounts({ phase: 'Active', deleting: false }, () => true),
      [],
    );
    assert.deepEqual(missingServiceAccounts({ phase: 'Terminating', deleting: false }, none), []);
    assert.deepEqual(missingServiceAccounts({ phase: 'Active', deleting: true }, none), []);
  });
});
