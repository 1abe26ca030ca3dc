// The shapes the authentication and authorization steps share: who is asking (UserInfo), what they ask
// for (RequestAttributes) and what an authorizer answers (AuthorizerResult). They mirror kube-apiserver's
// user.Info, authorizer.Attributes and (decision, reason) pair so that policies written for it mean the same here.
import type { AccessRequest } from '../../core/authz/access-request.js';

/** An authenticated (or anonymous) identity. */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  /** user.Info's extra: what an authenticator adds (a ServiceAccount token's credential id, its pod). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER_NAME } from '../../core/authz/credentials.js';

/** The well-known users and groups of kube-apiserver (core/authz/credentials.ts). */
export { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER_NAME };
/** Members are allowed everything, whatever the configured authorizers say. */
export const SYSTEM_MASTERS = 'system:masters';

/** The identity kube-apiserver gives a request that carries no credentials (with anonymous auth enabled). */
export const ANONYMOUS_USER: UserInfo = Object.freeze({
  name: ANONYMOUS_USER_NAME,
  uid: '',
  groups: Object.freeze([ALL_UNAUTHENTICATED]),
});

/** What a request asks to do (core/authz/access-request.ts), by a user with a uid and extra. */
export interface RequestAttributes extends AccessRequest {
  readonly user: UserInfo;
}

/** kube-apiserver's authorizer decisions: a 'no-opinion' from every authorizer means the request is forbidden. */
export type Decision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizerResult {
  readonly decision: Decision;
  /** Why: appended to the Forbidden message when non-empty ("…: No policy matched."). */
  readonly reason: string;
}

export type Authorizer = (attrs: RequestAttributes) => AuthorizerResult;
