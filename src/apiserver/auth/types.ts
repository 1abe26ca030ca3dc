// The shapes the authentication and authorization steps share: who is asking (UserInfo), what they ask
// for (RequestAttributes) and what an authorizer answers (AuthorizerResult). They mirror kube-apiserver's
// user.Info, authorizer.Attributes and (decision, reason) pair so that policies written for it mean the same here.
import type { FieldRequirement } from '../../core/selectors/fields.js';

/** An authenticated (or anonymous) identity. */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  /** user.Info's extra: what an authenticator adds (a ServiceAccount token's credential id, its pod). */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The well-known users and groups of kube-apiserver. */
export const ANONYMOUS_USER_NAME = 'system:anonymous';
export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
/** Members are allowed everything, whatever the configured authorizers say. */
export const SYSTEM_MASTERS = 'system:masters';

/** The identity kube-apiserver gives a request that carries no credentials (with anonymous auth enabled). */
export const ANONYMOUS_USER: UserInfo = Object.freeze({
  name: ANONYMOUS_USER_NAME,
  uid: '',
  groups: Object.freeze([ALL_UNAUTHENTICATED]),
});

/** What a request asks to do: kube-apiserver's authorizer.Attributes, as the request-info step derives them. */
export interface RequestAttributes {
  readonly user: UserInfo;
  /**
   * Resource requests: get, list, watch, create, update, patch, delete, deletecollection (and proxy, …).
   * Non-resource requests: the lower-cased HTTP method (get, post, put, …).
   */
  readonly verb: string;
  readonly resourceRequest: boolean;
  /** '' for the core group. Resource requests only. */
  readonly apiGroup: string;
  /** '' for cluster-scoped resources and for non-namespaced requests. */
  readonly namespace: string;
  /** The plural resource, without the subresource ('services', not 'services/status'). */
  readonly resource: string;
  readonly subresource: string;
  /** The object's name; '' for list, watch, create and deletecollection. */
  readonly name: string;
  /** The URL path, without the query. */
  readonly path: string;
  /**
   * A list, watch or deletecollection's fieldSelector, parsed (upstream's AuthorizeWithSelectors); absent
   * for other verbs and when there is none or it does not parse.
   */
  readonly fieldSelector?: readonly FieldRequirement[];
}

/** kube-apiserver's authorizer decisions: a 'no-opinion' from every authorizer means the request is forbidden. */
export type Decision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizerResult {
  readonly decision: Decision;
  /** Why: appended to the Forbidden message when non-empty ("…: No policy matched."). */
  readonly reason: string;
}

export type Authorizer = (attrs: RequestAttributes) => AuthorizerResult;
