// When a node renews its certificate: 70–90% into its validity, counted from its issue for a fresh one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renewalAtMs, type NodeCertificate } from './tls-bootstrap.js';

const cert = (notBeforeMs: number, notAfterMs: number, requestName?: string): NodeCertificate => ({
  certPem: '',
  keyPem: '',
  notBeforeMs,
  notAfterMs,
  requestName,
});

describe('renewalAtMs', () => {
  it('picks a point between 70% and 90% of a stored certificate’s validity', () => {
    assert.equal(
      renewalAtMs(cert(0, 1000), 500, () => 0),
      700,
    );
    assert.equal(
      renewalAtMs(cert(0, 1000), 500, () => 1),
      900,
    );
  });

  it('counts a fresh certificate from now, not from its backdated notBefore', () => {
    // Backdated by 300 s, valid 40 s from now (1000 s): due 28–36 s from now, not at once.
    assert.equal(
      renewalAtMs(cert(700_000, 1_040_000, 'node-csr-x'), 1_000_000, () => 0),
      1_028_000,
    );
    assert.equal(
      renewalAtMs(cert(700_000, 1_040_000, 'node-csr-x'), 1_000_000, () => 1),
      1_036_000,
    );
  });
});
