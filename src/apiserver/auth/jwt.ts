// JWS compact tokens for ServiceAccounts, signed and verified with `jose` (the one file that loads it).
// Verification tries every configured key of the token's algorithm, as kube-apiserver does; a token
// whose header names a kid tries that key first.
import { compactVerify, decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { PublicKey, SigningKey } from './service-account-keys.js';

/** A signed JWT of `claims`, with the header {alg, kid} of the key. */
export async function signJwt(claims: Record<string, unknown>, key: SigningKey): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
}

/** The claims of a JWT, unverified (to tell whether it is one of ours); undefined when it is no JWT. */
export function peekClaims(token: string): Record<string, unknown> | undefined {
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

/** The verified claims of a JWT signed by one of `keys`, or undefined. */
export async function verifyJwt(
  token: string,
  keys: readonly PublicKey[],
): Promise<Record<string, unknown> | undefined> {
  let alg: string | undefined;
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    alg = header.alg;
    kid = header.kid;
  } catch {
    return undefined;
  }
  const candidates = keys
    .filter((k) => k.alg === alg)
    .sort((a, b) => Number(b.kid === kid) - Number(a.kid === kid));
  for (const k of candidates) {
    try {
      const { payload } = await compactVerify(token, k.key, { algorithms: [k.alg] });
      const claims: unknown = JSON.parse(new TextDecoder().decode(payload));
      return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
        ? (claims as Record<string, unknown>)
        : undefined;
    } catch {
      // the next key
    }
  }
  return undefined;
}
