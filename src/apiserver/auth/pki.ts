// Certificates for the API server: a self-signed CA, serving certificates with IP and DNS SANs, and client
// certificates whose CN/O carry a user name and groups (what kube-apiserver reads from a verified client
// certificate). RSA keys come from node:crypto (native, ~10× faster than node-forge's pure-JS generator);
// node-forge only assembles and signs the X.509 structures, which node:crypto cannot do.
// This is the one file allowed to import node-forge (scripts/eslint/layers.js).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import forge from 'node-forge';

/** A PEM certificate and its PEM private key (PKCS#1, "RSA PRIVATE KEY"). */
export interface CertKeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface ServingCertOptions {
  readonly commonName: string;
  /** IPv4 or IPv6 literals, written as iPAddress SANs. */
  readonly ipAddresses: readonly string[];
  readonly dnsNames: readonly string[];
  /** Validity in days; default 365. */
  readonly days?: number;
}

export interface ClientCertOptions {
  /** Becomes the user name. */
  readonly commonName: string;
  /** Each becomes a group (e.g. "system:masters"). */
  readonly organizations: readonly string[];
  /** Validity in days; default 365. */
  readonly days?: number;
}

const RSA_BITS = 2048;
const CA_DAYS = 3650;
const LEAF_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Certificates start an hour in the past so that a peer whose clock is a little behind accepts them. */
const BACKDATE_MS = 60 * 60 * 1000;

// @types/node-forge declares a field's valueTagClass as asn1.Class, but node-forge reads it as the universal tag
// number (asn1.Type): the UTF8String tag is what it needs.
const UTF8 = forge.asn1.Type.UTF8 as number as forge.asn1.Class;

/** A self-signed CA (RSA 2048, SHA-256, 10 years, basicConstraints CA:TRUE, keyCertSign + cRLSign). */
export function generateCA(commonName: string): CertKeyPair {
  requireName('commonName', commonName);
  const keys = newKeyPair();
  const cert = newCertificate(keys.publicKey, CA_DAYS);
  const subject = [attr('commonName', commonName)];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true, digitalSignature: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A TLS server certificate signed by `ca`: serverAuth, with every IP and DNS name as a SAN. */
export function issueServingCert(ca: CertKeyPair, opts: ServingCertOptions): CertKeyPair {
  requireName('commonName', opts.commonName);
  if (opts.ipAddresses.length === 0 && opts.dnsNames.length === 0) {
    throw new Error('a serving certificate needs at least one IP address or DNS name');
  }
  const altNames = [
    ...opts.dnsNames.map((dns) => {
      requireName('DNS name', dns);
      return { type: 2, value: dns };
    }),
    // The raw octets: node-forge's own IP parser mishandles some IPv6 forms.
    ...opts.ipAddresses.map((ip) => ({ type: 7, value: ipToBytes(ip) })),
  ];
  return issue(ca, [attr('commonName', opts.commonName)], opts.days ?? LEAF_DAYS, [
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
}

/** A TLS client certificate signed by `ca`: clientAuth, CN = user name, one O per group. */
export function issueClientCert(ca: CertKeyPair, opts: ClientCertOptions): CertKeyPair {
  requireName('commonName', opts.commonName);
  for (const o of opts.organizations) requireName('organization', o);
  const subject = [
    ...opts.organizations.map((o) => attr('organizationName', o)),
    attr('commonName', opts.commonName),
  ];
  return issue(ca, subject, opts.days ?? LEAF_DAYS, [{ name: 'extKeyUsage', clientAuth: true }]);
}

function issue(
  ca: CertKeyPair,
  subject: forge.pki.CertificateField[],
  days: number,
  extra: object[],
): CertKeyPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = newKeyPair();
  const cert = newCertificate(keys.publicKey, days);
  cert.setSubject(subject);
  // The issuer DN must be byte-for-byte the CA's subject, so copy its attributes (with their string types).
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    ...extra,
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

interface KeyPair {
  readonly publicKey: forge.pki.rsa.PublicKey;
  readonly privateKey: forge.pki.rsa.PrivateKey;
  readonly keyPem: string;
}

function newKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: RSA_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey),
    keyPem: privateKey,
  };
}

function newCertificate(publicKey: forge.pki.rsa.PublicKey, days: number): forge.pki.Certificate {
  if (!Number.isInteger(days) || days <= 0) throw new Error(`invalid validity: ${days} days`);
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = randomSerial();
  const now = Date.now();
  cert.validity.notBefore = new Date(now - BACKDATE_MS);
  cert.validity.notAfter = new Date(now + days * DAY_MS);
  return cert;
}

/**
 * 128 random bits as a positive DER INTEGER in minimal form: the first octet is 0x40–0x7f, so it is neither
 * negative (Go's crypto/x509 rejects negative serials) nor a redundant leading zero (rejected as non-minimal).
 */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x3f) | 0x40;
  return bytes.toString('hex');
}

/** A subject attribute as a UTF8String: PrintableString cannot hold "_", "@" or "*", and Go rejects it if it tries. */
function attr(name: string, value: string): forge.pki.CertificateField {
  return { name, value, valueTagClass: UTF8 };
}

function requireName(what: string, value: string): void {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} must be a non-empty string`);
}

/** The network-order octets of an IPv4 or IPv6 literal, as a binary string (node-forge's byte representation). */
export function ipToBytes(ip: string): string {
  if (isIPv4(ip)) return String.fromCharCode(...ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
  let text = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip;
  // An embedded IPv4 tail ("::ffff:10.0.0.1") becomes two hex groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(zeros).fill('0'), ...right].map((g) => parseInt(g, 16));
  return String.fromCharCode(...groups.flatMap((g) => [g >> 8, g & 0xff]));
}
