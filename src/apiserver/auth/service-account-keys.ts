// The keys of ServiceAccount tokens, read as kube-apiserver reads them:
//  - --service-account-signing-key-file: one RSA or EC private key (PEM: PKCS#1, SEC 1 or PKCS#8);
//  - --service-account-key-file (repeatable): every PEM block of each file counts, public keys (PKIX or
//    PKCS#1), private keys (their public half) and certificates (their key), RSA or EC only.
// A key's id (the JWT header's kid) is the unpadded base64url SHA-256 of its public key's PKIX DER, as
// upstream's keyIDFromPublicKey computes it, so tokens and the JWKS document name keys alike.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';

export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface PublicKey {
  readonly key: KeyObject;
  readonly kid: string;
  readonly alg: SigningAlgorithm;
}

export interface SigningKey extends PublicKey {
  readonly privateKey: KeyObject;
}

const CURVE_ALG: Readonly<Record<string, SigningAlgorithm>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};

/** RS256 for RSA, ES256/384/512 for the NIST curves; anything else is refused. */
function algorithmOf(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALG[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (alg !== undefined) return alg;
    throw new Error(`unsupported EC curve ${key.asymmetricKeyDetails?.namedCurve ?? '(unknown)'}`);
  }
  throw new Error(`unsupported key type ${key.asymmetricKeyType ?? '(unknown)'}: only RSA and ECDSA keys`);
}

/** The key id kube gives a public key. */
export function keyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

const publicKey = (key: KeyObject): PublicKey => ({ key, kid: keyId(key), alg: algorithmOf(key) });

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Every RSA or EC public key a PEM file holds. Throws when it holds none, or an unusable one. */
export function parsePublicKeys(pem: string): PublicKey[] {
  const keys: PublicKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const [block, type = ''] = m;
    let key: KeyObject;
    if (type === 'CERTIFICATE') key = new X509Certificate(block).publicKey;
    else if (type.endsWith('PRIVATE KEY')) key = createPublicKey(createPrivateKey(block));
    else if (type.endsWith('PUBLIC KEY')) key = createPublicKey(block);
    else continue;
    keys.push(publicKey(key));
  }
  if (keys.length === 0) throw new Error('data does not contain any valid RSA or ECDSA public keys');
  return keys;
}

/** The one private key of a signing key file. */
export function parseSigningKey(pem: string): SigningKey {
  const blocks = [...pem.matchAll(PEM_BLOCK)].filter((m) => (m[1] ?? '').endsWith('PRIVATE KEY'));
  const first = blocks[0];
  if (first === undefined) throw new Error('data does not contain a PEM private key');
  const privateKey = createPrivateKey(first[0]);
  return { ...publicKey(createPublicKey(privateKey)), privateKey };
}

/** A new EC P-256 private key as SEC 1 PEM (what `svcplane up` writes to DIR/pki/sa.key). */
export function generateServiceAccountKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ type: 'sec1', format: 'pem' }).toString();
}

/** A key as a JWK of the issuer's JWKS document (kty and its parameters, kid, alg, use "sig"). */
export function publicJwk(k: PublicKey): Record<string, unknown> {
  return { use: 'sig', ...k.key.export({ format: 'jwk' }), kid: k.kid, alg: k.alg };
}
