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
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  verify,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import forge from 'node-forge';
import type { ParsedCertificateRequest } from '../../api/certificate-request.js';

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
  const now = Date.now();
  const certPem = certifyKey(
    t.subject,
    spki,
    now - BACKDATE_MS,
    now + t.days * DAY_MS,
    t.extensions,
    issuer,
    privateKey,
  );
  return { certPem, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** The algorithm identifier of a signature by `key` (SHA-256 with ECDSA or RSA). */
const signatureAlgorithm = (key: KeyObject): Asn1 =>
  key.asymmetricKeyType === 'rsa'
    ? seq(oid(OID.sha256WithRSAEncryption), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''))
    : seq(oid(OID.ecdsaWithSHA256));

/** A certificate for the public key `spki`, valid from `notBefore` to `notAfter` (ms), signed by `issuer` or self-signed with `ownKey`. */
function certifyKey(
  subject: Asn1,
  spki: Buffer,
  notBefore: number,
  notAfter: number,
  extensions: Asn1[],
  issuer: Issuer | undefined,
  ownKey?: KeyObject,
): string {
  const keyId = keyIdentifier(spki);
  const signer: Issuer = issuer ?? { name: subject, key: ownKey!, keyId };
  const algorithm = signatureAlgorithm(signer.key);
  const tbs = seq(
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x02'), // v3
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, forge.util.hexToBytes(randomSerial())),
    algorithm,
    signer.name,
    seq(time(new Date(notBefore)), time(new Date(notAfter))),
    subject,
    fromBuffer(spki),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 3, true, [
      seq(
        ...extensions,
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
  return pem('CERTIFICATE', der(seq(tbs, algorithm, bits(signature))));
}

const pem = (type: string, body: string): string =>
  forge.pem.encode({ type, body }, { maxline: 64 }).replace(/\r\n/g, '\n');

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

function issuerOf(ca: CertKeyPair): Issuer {
  const caCert = new X509Certificate(ca.certPem);
  // The issuer DN must be byte-for-byte the CA's subject: copy it from the CA's own TBSCertificate.
  const tbs = (fromBuffer(caCert.raw).value as Asn1[])[0]!;
  return {
    name: (tbs.value as Asn1[])[5]!,
    key: createPrivateKey(ca.keyPem),
    keyId: keyIdentifier(caCert.publicKey.export({ type: 'spki', format: 'der' })),
  };
}

function issue(ca: CertKeyPair, subject: Asn1, days: number, extra: Asn1[]): CertKeyPair {
  const issuer = issuerOf(ca);
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

// ---- certificate signing requests (certificates.k8s.io/v1, TLS bootstrapping) -----------------------

const CSR_OID = {
  extensionRequest: '1.2.840.113549.1.9.14',
  emailAddress: '1.2.840.113549.1.9.1',
  ecPublicKey: '1.2.840.10045.2.1',
} as const;

export interface CertificateRequestSubject {
  readonly commonName: string;
  readonly organizations: readonly string[];
}

/**
 * A new P-256 key and a PKCS#10 CERTIFICATE REQUEST for it (what a kubelet sends to bootstrap): the
 * subject only, no extensions. The key stays with the caller.
 */
export function createCertificateRequest(subject: CertificateRequestSubject): {
  csrPem: string;
  keyPem: string;
} {
  requireName('commonName', subject.commonName);
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const info = seq(
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x00'),
    name([
      ...subject.organizations.map((o) => ['organizationName', o] as const),
      ['commonName', subject.commonName],
    ]),
    fromBuffer(publicKey.export({ type: 'spki', format: 'der' })),
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, []),
  );
  const infoDer = der(info);
  const signature = sign('sha256', Buffer.from(infoDer, 'binary'), privateKey).toString('binary');
  return {
    csrPem: pem('CERTIFICATE REQUEST', der(seq(info, signatureAlgorithm(privateKey), bits(signature)))),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

interface CsrParts {
  readonly info: Asn1;
  readonly subject: Asn1;
  readonly spki: Buffer;
  readonly parsed: ParsedCertificateRequest;
}

/** The one PEM block of `type` in `text`, as DER bytes; throws when there is none or it is not alone. */
function pemBlock(text: string, type: string): Buffer {
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const block = blocks[0]!;
  if (block[1] !== type) throw new Error(`PEM block type must be ${type}`);
  return Buffer.from(block[2]!.replace(/\s+/g, ''), 'base64');
}

const text = (a: Asn1): string =>
  a.type === asn1.Type.UTF8 ? forge.util.decodeUtf8(a.value as string) : (a.value as string);

function ipText(bytes: string): string {
  if (bytes.length === 4) return [...bytes].map((c) => c.charCodeAt(0)).join('.');
  const groups: string[] = [];
  for (let i = 0; i + 1 < bytes.length; i += 2)
    groups.push(((bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1)).toString(16));
  return groups.join(':');
}

function csrParts(pemText: string): CsrParts {
  let root: Asn1;
  try {
    root = fromBuffer(pemBlock(pemText, 'CERTIFICATE REQUEST'));
  } catch (err) {
    if ((err as Error).message.startsWith('PEM block type')) throw err;
    throw new Error('asn1: structure error: the certificate request is not valid DER', { cause: err });
  }
  const [info, algorithm, signature] = root.value as Asn1[];
  const fields = (info?.value ?? []) as Asn1[];
  const [, subject, spkiAsn1, attributes] = fields;
  if (
    info === undefined ||
    algorithm === undefined ||
    signature === undefined ||
    subject === undefined ||
    spkiAsn1 === undefined
  )
    throw new Error('asn1: structure error: the certificate request is incomplete');
  const spki = Buffer.from(der(spkiAsn1), 'binary');
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  const sig = Buffer.from((signature.value as string).slice(1), 'binary');
  if (!verify('sha256', Buffer.from(der(info), 'binary'), key, sig))
    throw new Error(
      key.asymmetricKeyType === 'rsa' ? 'crypto/rsa: verification error' : 'x509: ECDSA verification failure',
    );
  const out = {
    commonName: '',
    organizations: [] as string[],
    dnsNames: [] as string[],
    emailAddresses: [] as string[],
    ipAddresses: [] as string[],
    uris: [] as string[],
  };
  for (const rdn of subject.value as Asn1[])
    for (const atv of rdn.value as Asn1[]) {
      const [type, value] = atv.value as Asn1[];
      if (type === undefined || value === undefined) continue;
      const id = asn1.derToOid(type.value as string);
      if (id === OID.commonName) out.commonName = text(value);
      else if (id === OID.organizationName) out.organizations.push(text(value));
      else if (id === CSR_OID.emailAddress) out.emailAddresses.push(text(value));
    }
  for (const attr of (attributes?.value ?? []) as Asn1[]) {
    const [type, values] = attr.value as Asn1[];
    if (type === undefined || asn1.derToOid(type.value as string) !== CSR_OID.extensionRequest) continue;
    for (const exts of (values?.value ?? []) as Asn1[])
      for (const ext of exts.value as Asn1[]) {
        const parts = ext.value as Asn1[];
        if (asn1.derToOid(parts[0]!.value as string) !== OID.subjectAltName) continue;
        const names = asn1.fromDer(parts[parts.length - 1]!.value as string, DER_OPTIONS);
        for (const n of names.value as Asn1[]) {
          const v = n.value as string;
          if (n.type === 1) out.emailAddresses.push(v);
          else if (n.type === 2) out.dnsNames.push(v);
          else if (n.type === 6) out.uris.push(v);
          else if (n.type === 7) out.ipAddresses.push(ipText(v));
        }
      }
  }
  return { info, subject, spki, parsed: out };
}

/**
 * Reads a PEM CERTIFICATE REQUEST: its subject and requested subjectAltNames, after checking that it
 * is one and that its signature verifies with its own key (as kube-apiserver's CSR validation parses
 * spec.request). Throws an Error with what is wrong.
 */
export function parseCertificateRequest(pemText: string): ParsedCertificateRequest {
  return csrParts(pemText).parsed;
}

/** The X.509 key usages a CSR names (certificates.k8s.io's usage strings), as certificate extensions. */
const KEY_USAGES: Readonly<Record<string, keyof typeof KEY_USAGE>> = {
  'digital signature': 'digitalSignature',
  'key encipherment': 'keyEncipherment',
};
const EXT_KEY_USAGES: Readonly<Record<string, keyof typeof OID>> = {
  'client auth': 'clientAuth',
  'server auth': 'serverAuth',
};

export interface SignOptions {
  /** spec.usages; only digital signature, key encipherment, client auth and server auth are written. */
  readonly usages: readonly string[];
  readonly durationSeconds: number;
  readonly nowMs: number;
}

/**
 * Issues the certificate a CSR asks for, signed by `ca` (kube-controller-manager's csrsigning local
 * signer): the CSR's subject and key, its usages, valid from 5 minutes before `nowMs` (clock skew) for
 * `durationSeconds`, and never past the CA's own expiry.
 */
export function signCertificateRequest(ca: CertKeyPair, csrPem: string, opts: SignOptions): string {
  const { subject, spki } = csrParts(csrPem);
  const caNotAfter = Date.parse(new X509Certificate(ca.certPem).validTo);
  const notAfter = Math.min(opts.nowMs + opts.durationSeconds * 1000, caNotAfter);
  const keyUsages = opts.usages.map((u) => KEY_USAGES[u]).filter((u) => u !== undefined);
  const extUsages = opts.usages.map((u) => EXT_KEY_USAGES[u]).filter((u) => u !== undefined);
  return certifyKey(
    subject,
    spki,
    opts.nowMs - 5 * 60 * 1000,
    notAfter,
    [
      extension('basicConstraints', seq(), true),
      ...(keyUsages.length === 0 ? [] : [extension('keyUsage', keyUsage(...keyUsages), true)]),
      ...(extUsages.length === 0
        ? []
        : [extension('extKeyUsage', seq(...extUsages.map((u) => oid(OID[u]))))]),
    ],
    issuerOf(ca),
  );
}
