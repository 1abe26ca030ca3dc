// Bound ServiceAccount tokens (KEP-1205) as kube-apiserver issues and authenticates them: the issuer
// signs TokenRequests with --service-account-signing-key-file; the authenticator accepts a JWT whose
// issuer is one of --service-account-issuer, signed by one of --service-account-key-file's keys, for one
// of --api-audiences, not expired, and whose ServiceAccount (and bound object) still exists with the
// UID the token names. Objects are looked up through an ObjectLookup, fed from the server's watch cache.
import { randomUUID } from 'node:crypto';
import {
  checkClaims,
  issuerOf,
  serviceAccountGroups,
  serviceAccountUsername,
  tokenClaims,
  type BoundKind,
  type NamedUid,
} from '../../core/serviceaccount/token-claims.js';
import { peekClaims, signJwt, verifyJwt } from './jwt.js';
import { publicJwk, type PublicKey, type SigningKey } from './service-account-keys.js';
import type { UserInfo } from './types.js';

export interface ServiceAccountTokenConfig {
  /** --service-account-issuer; the first one is the `iss` of new tokens. At least one. */
  readonly issuers: readonly string[];
  /** --api-audiences, else the issuers: what new tokens are for by default, and what a token must name one of. */
  readonly audiences: readonly string[];
  /** --service-account-key-file's keys, and the signing key's public half. */
  readonly verifyKeys: readonly PublicKey[];
  /** --service-account-signing-key-file: without it no token is issued (no TokenRequest). */
  readonly signingKey?: SigningKey | undefined;
  /** --service-account-max-token-expiration in seconds: longer requests are cut to it. */
  readonly maxExpirationSeconds?: number | undefined;
}

/** What the server's cache holds of an object a token names. */
export interface ObjectRecord {
  readonly uid: string;
  readonly deletionTimestamp?: string | undefined;
}

export type LookupResource = 'serviceaccounts' | 'pods' | 'nodes' | 'secrets';

/**
 * The seam to the server's objects: one object's uid and deletion time, or undefined when it is absent.
 * With `fresh`, the answer reflects every write acknowledged before the call (a cache waits to catch up):
 * asked only when the first answer would refuse the token, so an account created or recreated just before
 * its token was issued is not refused for a cache that lags.
 */
export type ObjectLookup = (
  resource: LookupResource,
  namespace: string,
  name: string,
  fresh: boolean,
) => Promise<ObjectRecord | undefined>;

const BOUND_RESOURCE: Readonly<Record<BoundKind, LookupResource>> = {
  Pod: 'pods',
  Node: 'nodes',
  Secret: 'secrets',
};

/** An object deleted (deletionTimestamp) more than this long ago no longer backs a token (kube: 60 s). */
const DELETION_GRACE_SECONDS = 60;

export interface TokenGrantRequest {
  readonly namespace: string;
  readonly serviceAccount: NamedUid;
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly bound?: { readonly kind: BoundKind; readonly ref: NamedUid } | undefined;
}

export interface IssuedToken {
  readonly token: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

export class ServiceAccountTokens {
  constructor(
    readonly config: ServiceAccountTokenConfig,
    private readonly nowMs: () => number = Date.now,
    private readonly newId: () => string = randomUUID,
  ) {}

  /** Whether TokenRequests can be answered (a signing key is configured). */
  get canIssue(): boolean {
    return this.config.signingKey !== undefined;
  }

  /** The expiration a request gets after --service-account-max-token-expiration. */
  capExpiration(seconds: number): number {
    const max = this.config.maxExpirationSeconds;
    return max !== undefined && max > 0 && seconds > max ? max : seconds;
  }

  async issue(req: TokenGrantRequest): Promise<IssuedToken> {
    const key = this.config.signingKey;
    if (key === undefined) throw new Error('no --service-account-signing-key-file');
    const claims = tokenClaims({
      issuer: this.config.issuers[0]!,
      audiences: req.audiences,
      namespace: req.namespace,
      serviceAccount: req.serviceAccount,
      bound: req.bound,
      nowSeconds: Math.floor(this.nowMs() / 1000),
      expirationSeconds: req.expirationSeconds,
      jti: this.newId(),
    });
    return { token: await signJwt({ ...claims }, key), expiresAt: claims.exp };
  }

  /**
   * The ServiceAccount a token authenticates as, or undefined (the caller answers 401). Tokens that are no
   * JWT, or of another issuer, are not looked at further.
   */
  async authenticate(token: string, lookup: ObjectLookup): Promise<UserInfo | undefined> {
    const r = await this.review(token, lookup, this.config.audiences);
    return r !== undefined && 'user' in r ? r.user : undefined;
  }

  /**
   * A token checked for one of `audiences` (a TokenReview's spec.audiences, else --api-audiences): the
   * user and the audiences it is valid for among them; `error` when it is one of ours but invalid (as
   * upstream's JWT authenticator reports it); undefined when it is no token of ours at all.
   */
  async review(
    token: string,
    lookup: ObjectLookup,
    audiences: readonly string[],
  ): Promise<{ user: UserInfo; audiences: string[] } | { error: string } | undefined> {
    const peeked = peekClaims(token);
    const iss = peeked === undefined ? undefined : issuerOf(peeked);
    if (iss === undefined || !this.config.issuers.includes(iss)) return undefined;
    const claims = await verifyJwt(token, this.config.verifyKeys);
    if (claims === undefined) return undefined;
    const nowSeconds = this.nowMs() / 1000;
    const checked = checkClaims(claims, { issuers: this.config.issuers, audiences, nowSeconds });
    if (!checked.ok) return { error: checked.reason };
    const { namespace, serviceAccount, bound } = checked.subject;
    const exists = async (resource: LookupResource, ns: string, ref: NamedUid): Promise<boolean> =>
      live(await lookup(resource, ns, ref.name, false), ref.uid, nowSeconds) ||
      live(await lookup(resource, ns, ref.name, true), ref.uid, nowSeconds);
    if (!(await exists('serviceaccounts', namespace, serviceAccount))) return undefined;
    if (bound !== undefined) {
      const ns = bound.kind === 'Node' ? '' : namespace;
      if (!(await exists(BOUND_RESOURCE[bound.kind], ns, bound.ref))) return undefined;
    }
    const aud = claims['aud'];
    const tokenAud: unknown[] = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    return {
      user: {
        name: serviceAccountUsername(namespace, serviceAccount.name),
        uid: serviceAccount.uid,
        groups: serviceAccountGroups(namespace),
        extra: serviceAccountExtra(claims['jti'], bound),
      },
      audiences: audiences.filter((a) => tokenAud.includes(a)),
    };
  }

  /** ServiceAccountIssuerDiscovery's /.well-known/openid-configuration, with the JWKS at `jwksUri`. */
  openidConfiguration(jwksUri: string): Record<string, unknown> {
    return {
      issuer: this.config.issuers[0],
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...new Set(this.config.verifyKeys.map((k) => k.alg))].sort(),
    };
  }

  /** /openid/v1/jwks: every verification key once. */
  jwks(): Record<string, unknown> {
    const seen = new Set<string>();
    const keys = this.config.verifyKeys.filter((k) => !seen.has(k.kid) && seen.add(k.kid) !== undefined);
    return { keys: keys.map(publicJwk) };
  }
}

/** What upstream's ServiceAccountInfo adds to user.Info: the token's id and the object it is bound to. */
function serviceAccountExtra(
  jti: unknown,
  bound: { readonly kind: BoundKind; readonly ref: NamedUid } | undefined,
): Record<string, string[]> {
  const extra: Record<string, string[]> = {};
  if (bound !== undefined && bound.kind !== 'Secret') {
    const what = bound.kind === 'Pod' ? 'pod' : 'node';
    extra[`${EXTRA_PREFIX}${what}-name`] = [bound.ref.name];
    extra[`${EXTRA_PREFIX}${what}-uid`] = [bound.ref.uid];
  }
  if (typeof jti === 'string' && jti !== '') extra[`${EXTRA_PREFIX}credential-id`] = [`JTI=${jti}`];
  return extra;
}

const EXTRA_PREFIX = 'authentication.kubernetes.io/';

function live(rec: ObjectRecord | undefined, uid: string, nowSeconds: number): boolean {
  if (rec === undefined || rec.uid !== uid) return false;
  if (rec.deletionTimestamp === undefined) return true;
  const deleted = Date.parse(rec.deletionTimestamp) / 1000;
  return !(deleted < nowSeconds - DELETION_GRACE_SECONDS);
}
