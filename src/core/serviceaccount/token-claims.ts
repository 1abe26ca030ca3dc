// The claims of a bound ServiceAccount token (KEP-1205, kube's pkg/serviceaccount/claims.go), as pure
// functions: what a TokenRequest puts in a token, and what the authenticator accepts of one. Signing
// and signature checks are I/O (apiserver/auth/jwt.ts); the clock and the token id are parameters.

export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const ALL_SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** The clock skew allowed on exp, nbf and iat (go-jose's DefaultLeeway, one minute). */
export const CLAIM_LEEWAY_SECONDS = 60;

/** The kinds a token may be bound to (kube's TokenRequest also takes Secret; svcplane serves none). */
export type BoundKind = 'Pod' | 'Node' | 'Secret';

export interface NamedUid {
  readonly name: string;
  readonly uid: string;
}

/** The private `kubernetes.io` claim. */
export interface KubernetesClaim {
  readonly namespace: string;
  readonly serviceaccount: NamedUid;
  readonly pod?: NamedUid;
  readonly node?: NamedUid;
  readonly secret?: NamedUid;
}

export interface TokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: readonly string[];
  readonly exp: number;
  readonly iat: number;
  readonly nbf: number;
  readonly jti: string;
  readonly 'kubernetes.io': KubernetesClaim;
}

export const serviceAccountUsername = (namespace: string, name: string): string =>
  `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;

/** The groups every ServiceAccount is in (system:authenticated is added by the authenticator chain). */
export const serviceAccountGroups = (namespace: string): string[] => [
  ALL_SERVICE_ACCOUNTS_GROUP,
  `${ALL_SERVICE_ACCOUNTS_GROUP}:${namespace}`,
];

export interface TokenGrant {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly namespace: string;
  readonly serviceAccount: NamedUid;
  readonly bound?: { readonly kind: BoundKind; readonly ref: NamedUid } | undefined;
  readonly nowSeconds: number;
  readonly expirationSeconds: number;
  readonly jti: string;
}

const BOUND_CLAIM = { Pod: 'pod', Node: 'node', Secret: 'secret' } as const;

/** The claims of a token granted now for `expirationSeconds`. */
export function tokenClaims(g: TokenGrant): TokenClaims {
  const now = Math.floor(g.nowSeconds);
  return {
    iss: g.issuer,
    sub: serviceAccountUsername(g.namespace, g.serviceAccount.name),
    aud: [...g.audiences],
    exp: now + g.expirationSeconds,
    iat: now,
    nbf: now,
    jti: g.jti,
    'kubernetes.io': {
      namespace: g.namespace,
      serviceaccount: { name: g.serviceAccount.name, uid: g.serviceAccount.uid },
      ...(g.bound === undefined
        ? {}
        : { [BOUND_CLAIM[g.bound.kind]]: { name: g.bound.ref.name, uid: g.bound.ref.uid } }),
    },
  };
}

export interface ClaimsCheck {
  /** --service-account-issuer: a token of any of them is accepted. */
  readonly issuers: readonly string[];
  /** --api-audiences (or the issuers): the token's aud must name one of them. */
  readonly audiences: readonly string[];
  readonly nowSeconds: number;
  readonly leewaySeconds?: number;
}

/** What a token whose claims passed names: the ServiceAccount and the object it is bound to, if any. */
export interface TokenSubject {
  readonly namespace: string;
  readonly serviceAccount: NamedUid;
  readonly bound?: { readonly kind: BoundKind; readonly ref: NamedUid };
}

export type ClaimsResult =
  { readonly ok: true; readonly subject: TokenSubject } | { readonly ok: false; readonly reason: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

function namedUid(v: unknown): NamedUid | undefined {
  if (!isRecord(v) || !nonEmpty(v['name']) || !nonEmpty(v['uid'])) return undefined;
  return { name: v['name'], uid: v['uid'] };
}

/** The issuer a payload names, read before its signature is checked (to tell whether it is ours). */
export const issuerOf = (payload: unknown): string | undefined =>
  isRecord(payload) && typeof payload['iss'] === 'string' ? payload['iss'] : undefined;

/**
 * Whether a verified token's claims make it one of ours and valid now: the issuer is one of ours, the
 * audiences meet ours, it is within exp/nbf/iat (with the leeway), and the kubernetes.io claim names a
 * ServiceAccount (and at most one bound object). Existence of those objects is checked by the caller.
 */
export function checkClaims(payload: unknown, c: ClaimsCheck): ClaimsResult {
  const fail = (reason: string): ClaimsResult => ({ ok: false, reason });
  if (!isRecord(payload)) return fail('token payload is not a JSON object');
  const iss = issuerOf(payload);
  if (iss === undefined || !c.issuers.includes(iss)) return fail('token issuer is not recognized');
  const rawAud = payload['aud'];
  const aud = typeof rawAud === 'string' ? [rawAud] : Array.isArray(rawAud) ? rawAud : [];
  if (!aud.some((a) => typeof a === 'string' && c.audiences.includes(a))) {
    return fail(
      `token audiences ${JSON.stringify(aud)} is invalid for the target audiences ${JSON.stringify(c.audiences)}`,
    );
  }
  const leeway = c.leewaySeconds ?? CLAIM_LEEWAY_SECONDS;
  const num = (k: string): number | undefined =>
    typeof payload[k] === 'number' ? (payload[k] as number) : undefined;
  const exp = num('exp');
  if (exp === undefined) return fail('token has no expiry');
  if (c.nowSeconds > exp + leeway) return fail('service account token has expired');
  const nbf = num('nbf');
  if (nbf !== undefined && c.nowSeconds + leeway < nbf) return fail('service account token is not valid yet');
  const iat = num('iat');
  if (iat !== undefined && c.nowSeconds + leeway < iat)
    return fail('service account token was issued in the future');
  const k8s = payload['kubernetes.io'];
  if (!isRecord(k8s) || !nonEmpty(k8s['namespace']))
    return fail('token has no kubernetes.io namespace claim');
  const sa = namedUid(k8s['serviceaccount']);
  if (sa === undefined) return fail('token has no kubernetes.io serviceaccount claim');
  const bounds = (['Pod', 'Node', 'Secret'] as const).filter((k) => k8s[BOUND_CLAIM[k]] !== undefined);
  if (bounds.length > 1 && !(bounds.length === 2 && bounds.includes('Pod') && bounds.includes('Node'))) {
    return fail('token is bound to more than one object');
  }
  // A pod-bound token may also name the pod's node (kube adds it as information); the pod is what binds it.
  const kind = bounds[0];
  if (kind === undefined) return { ok: true, subject: { namespace: k8s['namespace'], serviceAccount: sa } };
  const ref = namedUid(k8s[BOUND_CLAIM[kind]]);
  if (ref === undefined) return fail(`token's kubernetes.io ${BOUND_CLAIM[kind]} claim is malformed`);
  return { ok: true, subject: { namespace: k8s['namespace'], serviceAccount: sa, bound: { kind, ref } } };
}
