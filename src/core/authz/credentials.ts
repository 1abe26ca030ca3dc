// Reading the credentials a request carries, as kube-apiserver's authenticators (and the kubelet's,
// which are the same) read them: the identity of a verified client certificate, and a bearer token;
// and the group every authenticated user is in. Verifying them (the chain, the token) is the caller's.

/** The well-known users and groups of kube-apiserver. */
export const ANONYMOUS_USER_NAME = 'system:anonymous';
export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';

/** The subject of a peer certificate as node:tls reports it (a repeated attribute becomes an array). */
export interface CertificateSubject {
  readonly CN?: string | readonly string[] | undefined;
  readonly O?: string | readonly string[] | undefined;
}

/** The user a verified certificate names (x509 authenticator). */
export interface CertificateUser {
  readonly name: string;
  readonly uid: string;
  readonly groups: string[];
}

/** CN → name, each O → a group; no CN → no identity. Repeated CNs: the last one (as Go's pkix.Name reads it). */
export function certificateUser(subject: CertificateSubject): CertificateUser | undefined {
  const cn = typeof subject.CN === 'string' ? subject.CN : subject.CN?.at(-1);
  if (cn === undefined || cn === '') return undefined;
  const groups = subject.O === undefined ? [] : typeof subject.O === 'string' ? [subject.O] : [...subject.O];
  return { name: cn, uid: '', groups };
}

/**
 * The token of "Bearer <token>" (scheme case-insensitive, surrounding whitespace trimmed, anything after a
 * second space ignored, as upstream splits it), or undefined when the header is absent or not a bearer token.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const parts = header.trim().split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
  const token = parts[1];
  return token === undefined || token === '' ? undefined : token;
}

/** Upstream's AuthenticatedGroupAdder: every authenticated user is in system:authenticated. */
export function withAuthenticatedGroup<
  U extends { readonly name: string; readonly groups: readonly string[] },
>(user: U): U {
  if (user.name === ANONYMOUS_USER_NAME) return user;
  if (user.groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, ALL_AUTHENTICATED] };
}
