// Certificates for the API server: a self-signed CA, serving certificates with IP and DNS SANs, and client
// certificates whose CN/O carry a user name and groups (what kube-apiserver reads from a verified client
// certificate). Keys are ECDSA P-256 from node:crypto, which also signs: an RSA 2048 key pair costs a
// quarter of a CPU-second to find, and node-forge signs RSA in JavaScript, which made every first start
// spend ~0.8 CPU-s here. node-forge only writes the X.509 structures as DER (node:crypto cannot), and an
// RSA CA from an earlier version still issues certificates (node:crypto signs with either key type).
// This is the one file allowed to import node-forge (scripts/eslint/layers.js).
import {
  createHash,
  createPrivateKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import forge from 'node-forge';

/** A PEM certificate and its PEM private key (PKCS#8, "PRIVATE KEY"). */
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

const CA_DAYS = 3650;
const LEAF_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Certificates start an hour in the past so that a peer whose clock is a little behind accepts them. */
const BACKDATE_MS = 60 * 60 * 1000;

const { asn1 } = forge;
const OID = {
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** keyUsage bits (RFC 5280 §4.2.1.3), numbered from the most significant bit of the first octet. */
const KEY_USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

type Asn1 = forge.asn1.Asn1;
const seq = (...items: Asn1[]): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, items);
const set = (...items: Asn1[]): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, items);
const oid = (o: string): Asn1 =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const octets = (bytes: string): Asn1 =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, bytes);
/** A BIT STRING of whole octets (no unused bits). */
const bits = (bytes: string): Asn1 =>
  asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\0${bytes}`);
const der = (a: Asn1): string => asn1.toDer(a).getBytes();
// Bit strings stay opaque: by default node-forge parses one whose contents look like DER (an RSA key).
// (@types/node-forge only declares the older boolean `strict` argument; node-forge reads this object.)
const DER_OPTIONS = { strict: true, parseAllBytes: true, decodeBitStrings: false } as unknown as boolean;
const fromBuffer = (b: Buffer): Asn1 => asn1.fromDer(b.toString('binary'), DER_OPTIONS);

/** Subject and issuer names: one RDN per attribute, each a UTF8String (PrintableString cannot hold "_",
 * "@" or "*", and Go rejects it when it tries). */
function name(attrs: ReadonlyArray<readonly [keyof typeof OID, string]>): Asn1 {
  return seq(
    ...attrs.map(([type, value]) =>
      set(
        seq(
          oid(OID[type]),
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTF8, false, forge.util.encodeUtf8(value)),
        ),
      ),
    ),
  );
}

/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5). */
function time(d: Date): Asn1 {
  return d.getUTCFullYear() < 2050
    ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(d))
    : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
}

function extension(id: keyof typeof OID, value: Asn1, critical = false): Asn1 {
  return seq(
    oid(OID[id]),
    ...(critical ? [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BOOLEAN, false, '\xff')] : []),
    octets(der(value)),
  );
}

function keyUsage(...usages: Array<keyof typeof KEY_USAGE>): Asn1 {
  let mask = 0;
  for (const u of usages) mask |= 0x80 >> KEY_USAGE[u];
  // DER drops trailing zero bits: the first octet says how many bits of the last one are unused.
  const unused = Math.max(0, Math.min(7, Math.log2(mask & -mask)));
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, String.fromCharCode(unused, mask));
}

/** The subjectKeyIdentifier of a key: SHA-1 of its subjectPublicKey bits (RFC 5280 §4.2.1.2, method 1). */
function keyIdentifier(spki: Buffer): string {
  const key = fromBuffer(spki).value[1] as Asn1;
  return createHash('sha1')
    .update(Buffer.from((key.value as string).slice(1), 'binary'))
    .digest('binary');
}

interface Issuer {
  readonly name: Asn1;
  readonly key: KeyObject;
  readonly keyId: string;
}

interface Template {
  readonly subject: Asn1;
  readonly days: number;
  readonly extensions: Asn1[];
}

/** A new P-256 key and a certificate for it, signed by `issuer` (or by itself when `issuer` is undefined). */
function certify(t: Template, issuer: Issuer | undefined): CertKeyPair {
  if (!Number.isInteger(t.days) || t.days <= 0) throw new Error(`invalid validity: ${t.days} days`);
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const keyId = keyIdentifier(spki);
  const signer: Issuer = issuer ?? { name: t.subject, key: privateKey, keyId };
  const rsa = signer.key.asymmetricKeyType === 'rsa';
  const algorithm = rsa
    ? seq(oid(OID.sha256WithRSAEncryption), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''))
    : seq(oid(OID.ecdsaWithSHA256));
  const now = Date.now();
  const tbs = seq(
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x02'), // v3
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, forge.util.hexToBytes(randomSerial())),
    algorithm,
    signer.name,
    seq(time(new Date(now - BACKDATE_MS)), time(new Date(now + t.days * DAY_MS))),
    t.subject,
    fromBuffer(spki),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 3, true, [
      seq(
        ...t.extensions,
        extension('subjectKeyIdentifier', octets(keyId)),
        ...(issuer === undefined
          ? []
          : [
              extension(
                'authorityKeyIdentifier',
                seq(asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, issuer.keyId)),
              ),
            ]),
      ),
    ]),
  );
  const tbsDer = der(tbs);
  // ECDSA signatures come as DER ECDSA-Sig-Value, RSA ones as PKCS#1 v1.5: both what X.509 carries.
  const signature = sign('sha256', Buffer.from(tbsDer, 'binary'), signer.key).toString('binary');
  const cert = seq(tbs, algorithm, bits(signature));
  const certPem = forge.pem
    .encode({ type: 'CERTIFICATE', body: der(cert) }, { maxline: 64 })
    .replace(/\r\n/g, '\n');
  return { certPem, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A self-signed CA (ECDSA P-256, SHA-256, 10 years, basicConstraints CA:TRUE, keyCertSign + cRLSign). */
export function generateCA(commonName: string): CertKeyPair {
  requireName('commonName', commonName);
  return certify(
    {
      subject: name([['commonName', commonName]]),
      days: CA_DAYS,
      extensions: [
        extension(
          'basicConstraints',
          seq(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BOOLEAN, false, '\xff')),
          true,
        ),
        extension('keyUsage', keyUsage('digitalSignature', 'keyCertSign', 'cRLSign'), true),
      ],
    },
    undefined,
  );
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
      return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, dns); // dNSName, IA5String
    }),
    ...opts.ipAddresses.map((ip) => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 7, false, ipToBytes(ip))),
  ];
  return issue(ca, name([['commonName', opts.commonName]]), opts.days ?? LEAF_DAYS, [
    extension('extKeyUsage', seq(oid(OID.serverAuth))),
    extension('subjectAltName', seq(...altNames)),
  ]);
}

/** A TLS client certificate signed by `ca`: clientAuth, CN = user name, one O per group. */
export function issueClientCert(ca: CertKeyPair, opts: ClientCertOptions): CertKeyPair {
  requireName('commonName', opts.commonName);
  for (const o of opts.organizations) requireName('organization', o);
  const subject = name([
    ...opts.organizations.map((o) => ['organizationName', o] as const),
    ['commonName', opts.commonName],
  ]);
  return issue(ca, subject, opts.days ?? LEAF_DAYS, [extension('extKeyUsage', seq(oid(OID.clientAuth)))]);
}

function issue(ca: CertKeyPair, subject: Asn1, days: number, extra: Asn1[]): CertKeyPair {
  const caCert = new X509Certificate(ca.certPem);
  // The issuer DN must be byte-for-byte the CA's subject: copy it from the CA's own TBSCertificate.
  const tbs = (fromBuffer(caCert.raw).value as Asn1[])[0]!;
  const caName = (tbs.value as Asn1[])[5]!;
  const issuer: Issuer = {
    name: caName,
    key: createPrivateKey(ca.keyPem),
    keyId: keyIdentifier(caCert.publicKey.export({ type: 'spki', format: 'der' })),
  };
  return certify(
    {
      subject,
      days,
      extensions: [
        extension('basicConstraints', seq(), true),
        extension('keyUsage', keyUsage('digitalSignature'), true),
        ...extra,
      ],
    },
    issuer,
  );
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
