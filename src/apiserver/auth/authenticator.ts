// Who is asking: kube-apiserver's request authentication chain, for the methods svcplane has.
//
//   union(x509 client certificate, static token, ServiceAccount token) → add "system:authenticated"
//   → else anonymous
//
// as upstream builds it (pkg/kubeapiserver/authenticator): methods are tried in order, the first that
// succeeds wins, and a method that fails only matters if none succeeds. Consequences worth knowing:
//  - a verified client certificate with a CN authenticates the request even when the Authorization header
//    carries a bad token (the token is never looked at);
//  - a certificate that failed verification is not fatal by itself: a good bearer token still wins;
//  - a bad bearer token (or a failed certificate) without any success is 401, never anonymous;
//  - a header that is not "Bearer <token>" (other schemes, "Bearer" alone, "Bearer  x" with two spaces)
//    is ignored, so such a request is anonymous;
//  - a verified certificate with an empty CN is ignored (upstream: no opinion).
// The answer is synchronous unless a ServiceAccount token has to be checked (a signature, a lookup): the
// certificate and static-token paths never wait.
// The WebSocket subprotocol token ("base64url.bearer.authorization.k8s.io.…") is not supported.
import {
  bearerToken,
  certificateUser,
  withAuthenticatedGroup,
  type CertificateSubject,
} from '../../core/authz/credentials.js';
import { lookupToken, type TokenDigest } from './token-file.js';
import type { UserInfo } from './types.js';

export interface AuthenticationRequest {
  /** The Authorization header. */
  readonly authorization?: string | undefined;
  /**
   * tlsSocket.getPeerCertificate(): node returns {} when the client sent none. Its identity is used only if
   * the TLS layer verified the chain against the client CA (see peerCertificateVerified).
   */
  readonly peerCertificate?: { readonly subject?: CertificateSubject | undefined } | undefined;
  /**
   * tlsSocket.authorized. Leave it out only when the TLS server rejects unverified client certificates
   * itself (rejectUnauthorized: true); false makes a presented certificate count as a failed attempt.
   */
  readonly peerCertificateVerified?: boolean | undefined;
}

export interface AuthenticatorOptions {
  /**
   * From parseTokenFile. Without a table the Authorization header is not looked at, as upstream has no
   * bearer-token authenticator in its chain then (an empty table rejects every token instead).
   */
  readonly tokens?: ReadonlyMap<TokenDigest, UserInfo> | undefined;
  /**
   * Bound ServiceAccount tokens (service-account-tokens.ts): the user a token that is no static token
   * authenticates as, or undefined. With it the Authorization header is looked at even without a table.
   */
  readonly serviceAccounts?: ((token: string) => Promise<UserInfo | undefined>) | undefined;
  /** kube-apiserver's --anonymous-auth (default true): when false, a request without credentials is 'invalid'. */
  readonly anonymous?: boolean | undefined;
}

export type AuthenticationResult = UserInfo | 'anonymous' | 'invalid';

/**
 * The user a request authenticates as (with "system:authenticated" added), 'anonymous' when it carries no
 * credentials (answer with ANONYMOUS_USER), or 'invalid' when its credentials are wrong (answer 401).
 */
export function authenticate(
  req: AuthenticationRequest,
  opts: AuthenticatorOptions = {},
): AuthenticationResult | Promise<AuthenticationResult> {
  let failed = false;

  const cert = req.peerCertificate;
  if (cert !== undefined && Object.keys(cert).length > 0) {
    if (req.peerCertificateVerified === false) {
      failed = true;
    } else {
      const user = certificateUser(cert.subject ?? {});
      if (user !== undefined) return withAuthenticatedGroup(user);
    }
  }

  const token = bearerToken(req.authorization);
  if (opts.tokens !== undefined && token !== undefined) {
    const user = lookupToken(opts.tokens, token);
    if (user !== undefined) return withAuthenticatedGroup(user);
    failed = true;
  }
  const serviceAccounts = opts.serviceAccounts;
  if (serviceAccounts !== undefined && token !== undefined) {
    return serviceAccounts(token).then(
      (user) => (user === undefined ? 'invalid' : withAuthenticatedGroup(user)),
      () => 'invalid' as const,
    );
  }

  if (failed || opts.anonymous === false) return 'invalid';
  return 'anonymous';
}
