// The generated certificates as TLS sees them: real handshakes on 127.0.0.1 with the CA as the only trust
// root, SANs for IPs and DNS names, and client certificates whose CN/O become the user.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import tls from 'node:tls';
import { authenticate } from './authenticator.js';
import {
  createCertificateRequest,
  generateCA,
  ipToBytes,
  issueClientCert,
  issueServingCert,
  parseCertificateRequest,
  signCertificateRequest,
  type CertKeyPair,
} from './pki.js';
import { parseTokenFile } from './token-file.js';

const ca = generateCA('svcplane-ca');
const serving = issueServingCert(ca, {
  commonName: 'svcplane-apiserver',
  ipAddresses: ['127.0.0.1', '::1', '10.96.0.1'],
  dnsNames: ['localhost', 'kubernetes.default.svc'],
});
const alice = issueClientCert(ca, { commonName: 'alice', organizations: ['system:masters', 'dev'] });

interface ServerView {
  readonly authorized: boolean;
  readonly authorizationError: string | null;
  readonly user: unknown;
}

/**
 * A TLS server on 127.0.0.1 that asks for (but does not require) a client certificate and answers with
 * what authenticate() makes of the connection; then one client connection with `client` options.
 */
async function handshake(
  client: tls.ConnectionOptions,
  server: CertKeyPair = serving,
  authorization?: string,
): Promise<{ readonly socket: tls.TLSSocket; readonly view: ServerView }> {
  const tokens = parseTokenFile('tok-1,bob,uid-bob\n');
  const srv = tls.createServer(
    {
      key: server.keyPem,
      cert: server.certPem,
      ca: [ca.certPem],
      requestCert: true,
      rejectUnauthorized: false,
    },
    (socket) => {
      const user = authenticate(
        {
          authorization,
          peerCertificate: socket.getPeerCertificate(),
          peerCertificateVerified: socket.authorized,
        },
        { tokens },
      );
      const err = socket.authorizationError as Error | string | null;
      const authorizationError = err === null ? null : typeof err === 'string' ? err : err.message;
      socket.end(JSON.stringify({ authorized: socket.authorized, authorizationError, user }));
    },
  );
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  try {
    const port = (srv.address() as AddressInfo).port;
    return await new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ...client });
      let body = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (body += d));
      socket.on('end', () => resolve({ socket, view: JSON.parse(body) as ServerView }));
      socket.on('error', reject);
    });
  } finally {
    srv.close();
  }
}

describe('pki', () => {
  it('makes a CA: self-signed, CA:TRUE, positive random serial, 10 years', () => {
    const x = new X509Certificate(ca.certPem);
    assert.equal(x.ca, true);
    assert.equal(x.subject, 'CN=svcplane-ca');
    assert.equal(x.issuer, 'CN=svcplane-ca');
    assert.ok(x.verify(x.publicKey), 'self-signed');
    assert.ok(x.checkIssued(x));
    assert.equal(x.publicKey.asymmetricKeyType, 'ec');
    assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.match(x.serialNumber, /^[4-7][0-9A-F]{31}$/, 'positive, 16 octets, no leading zero octet');
    assert.notEqual(generateCA('svcplane-ca').certPem, ca.certPem);
    const years = (Date.parse(x.validTo) - Date.now()) / (365.25 * 24 * 3600 * 1000);
    assert.ok(years > 9.9 && years < 10.1, `valid for ${years} years`);
    assert.ok(Date.parse(x.validFrom) < Date.now());
  });

  it('makes a serving certificate with IP and DNS SANs, signed by the CA, for serverAuth', () => {
    const x = new X509Certificate(serving.certPem);
    const caX = new X509Certificate(ca.certPem);
    assert.equal(x.ca, false);
    assert.ok(x.checkIssued(caX));
    assert.ok(x.verify(caX.publicKey));
    assert.equal(
      x.subjectAltName,
      'DNS:localhost, DNS:kubernetes.default.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:10.96.0.1',
    );
    assert.equal(x.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(x.checkIP('::1'), '::1');
    assert.equal(x.checkHost('localhost'), 'localhost');
    assert.equal(x.checkHost('example.com'), undefined);
    assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  });

  it('makes a client certificate: CN and one O per group, for clientAuth', () => {
    const x = new X509Certificate(alice.certPem);
    assert.equal(x.subject, 'O=system:masters\nO=dev\nCN=alice');
    assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.ok(x.checkIssued(new X509Certificate(ca.certPem)));
  });

  it('completes a TLS handshake to 127.0.0.1 with the CA as the only trust root', async () => {
    const { socket, view } = await handshake({ ca: [ca.certPem] });
    assert.equal(socket.authorized, true);
    assert.equal(view.authorized, false, 'no client certificate was sent');
    assert.equal(view.user, 'anonymous');
  });

  it('completes a TLS handshake with servername localhost', async () => {
    const { socket } = await handshake({ ca: [ca.certPem], servername: 'localhost' });
    assert.equal(socket.authorized, true);
  });

  it('fails the handshake for a name the certificate does not carry', async () => {
    await assert.rejects(handshake({ ca: [ca.certPem], servername: 'example.com' }), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('fails the handshake without the CA', async () => {
    // The server sends its chain including the CA (it is in its `ca` list), hence "self-signed in chain".
    await assert.rejects(handshake({ ca: [generateCA('other').certPem] }), {
      code: /^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/,
    });
  });

  it('turns a verified client certificate into its CN and O groups', async () => {
    const { view } = await handshake({ ca: [ca.certPem], cert: alice.certPem, key: alice.keyPem });
    assert.equal(view.authorized, true);
    assert.deepEqual(view.user, {
      name: 'alice',
      uid: '',
      groups: ['system:masters', 'dev', 'system:authenticated'],
    });
  });

  it('does not trust a client certificate from another CA (401 unless a token succeeds)', async () => {
    const other = generateCA('other');
    const mallory = issueClientCert(other, { commonName: 'mallory', organizations: ['system:masters'] });
    const opts = { ca: [ca.certPem], cert: mallory.certPem, key: mallory.keyPem };
    const { view } = await handshake(opts);
    assert.equal(view.authorized, false);
    assert.equal(view.user, 'invalid');
    const withToken = await handshake(opts, serving, 'Bearer tok-1');
    assert.deepEqual(withToken.view.user, { name: 'bob', uid: 'uid-bob', groups: ['system:authenticated'] });
  });

  it('does not accept a serving certificate as a client certificate (EKU)', async () => {
    const { view } = await handshake({ ca: [ca.certPem], cert: serving.certPem, key: serving.keyPem });
    assert.equal(view.authorized, false);
    assert.equal(view.authorizationError, 'INVALID_PURPOSE');
    assert.equal(view.user, 'invalid');
  });

  it('writes IP SANs as raw octets', () => {
    const hex = (ip: string): string => Buffer.from(ipToBytes(ip), 'latin1').toString('hex');
    assert.equal(hex('127.0.0.1'), '7f000001');
    assert.equal(hex('::1'), '00000000000000000000000000000001');
    assert.equal(hex('::'), '0'.repeat(32));
    assert.equal(hex('fd00:10:96::1'), 'fd000010009600000000000000000001');
    assert.equal(hex('2001:db8::8a2e:370:7334'), '20010db80000000000008a2e03707334');
    assert.equal(hex('::ffff:10.0.0.1'), '00000000000000000000ffff0a000001');
    assert.equal(hex('1:2:3:4:5:6:7:8'), '00010002000300040005000600070008');
    assert.throws(() => ipToBytes('localhost'), /invalid IP address/);
    assert.throws(() => ipToBytes('256.0.0.1'), /invalid IP address/);
  });

  it('keeps issuing from an RSA CA that an earlier version generated (existing data dirs)', async () => {
    const dir = new URL('./testdata/', import.meta.url);
    const rsaCA = {
      certPem: readFileSync(new URL('rsa-ca.crt', dir), 'utf8'),
      keyPem: readFileSync(new URL('rsa-ca.key', dir), 'utf8'),
    };
    const leaf = issueServingCert(rsaCA, { commonName: 'x', ipAddresses: ['127.0.0.1'], dnsNames: [] });
    const x = new X509Certificate(leaf.certPem);
    const caX = new X509Certificate(rsaCA.certPem);
    assert.equal(caX.publicKey.asymmetricKeyType, 'rsa');
    assert.ok(x.checkIssued(caX) && x.verify(caX.publicKey));
    assert.equal(x.issuer, 'CN=svcplane-ca');
    const bob = issueClientCert(rsaCA, { commonName: 'bob', organizations: ['dev'] });
    const srv = await handshake({ ca: [rsaCA.certPem], cert: bob.certPem, key: bob.keyPem }, leaf);
    assert.equal(srv.socket.authorized, true);
  });

  it('rejects certificates that could not identify anything', () => {
    assert.throws(() => generateCA(''), /commonName/);
    assert.throws(
      () => issueServingCert(ca, { commonName: 'x', ipAddresses: [], dnsNames: [] }),
      /at least one IP address or DNS name/,
    );
    assert.throws(
      () => issueServingCert(ca, { commonName: 'x', ipAddresses: ['nope'], dnsNames: [] }),
      /invalid IP/,
    );
    assert.throws(() => issueClientCert(ca, { commonName: 'x', organizations: [''] }), /organization/);
  });
});

describe('certificate signing requests', () => {
  const ca = generateCA('csr-test-ca');
  const { csrPem, keyPem } = createCertificateRequest({
    commonName: 'system:node:n1',
    organizations: ['system:nodes'],
  });

  it('reads back the subject of a request it made, which has no subjectAltNames', () => {
    assert.deepEqual(parseCertificateRequest(csrPem), {
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      dnsNames: [],
      emailAddresses: [],
      ipAddresses: [],
      uris: [],
    });
  });

  it('refuses what is not a request, or one whose signature does not verify', () => {
    assert.throws(() => parseCertificateRequest(ca.certPem), /PEM block type must be CERTIFICATE REQUEST/);
    assert.throws(() => parseCertificateRequest('nothing'), /PEM block type must be CERTIFICATE REQUEST/);
    const body = csrPem.split('\n').slice(1, -2).join('');
    const bytes = Buffer.from(body, 'base64');
    // Another node's name in the signed subject: the signature no longer matches.
    bytes[bytes.indexOf('system:node:n1') + 'system:node:n'.length] = '2'.charCodeAt(0);
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${bytes.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    assert.throws(() => parseCertificateRequest(tampered), /verification/);
  });

  it('issues the request: its subject and key, client auth, the duration, signed by the CA', () => {
    const nowMs = Date.now();
    const certPem = signCertificateRequest(ca, csrPem, {
      usages: ['digital signature', 'client auth'],
      durationSeconds: 3600,
      nowMs,
    });
    const cert = new X509Certificate(certPem);
    assert.deepEqual(cert.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes']);
    assert.ok(cert.checkIssued(new X509Certificate(ca.certPem)));
    assert.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
    assert.ok(cert.checkPrivateKey(createPrivateKey(keyPem)));
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.ok(Math.abs(Date.parse(cert.validTo) - (nowMs + 3600_000)) < 2000);
    // Never past the CA's own expiry.
    const long = new X509Certificate(
      signCertificateRequest(ca, csrPem, {
        usages: ['client auth'],
        durationSeconds: 100 * 365 * 86400,
        nowMs,
      }),
    );
    assert.equal(long.validTo, new X509Certificate(ca.certPem).validTo);
  });
});
