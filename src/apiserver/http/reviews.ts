// The "self" reviews every Kubernetes client may ask: authorization.k8s.io/v1 SelfSubjectAccessReview
// (`kubectl auth can-i`: may I do this?), SelfSubjectRulesReview (`kubectl auth can-i --list`: what may I
// do in this namespace?) and authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`: who am
// I?). They are create-only and stored nowhere: the answer is the request with a status,
// 201 Created, as kube-apiserver gives it. Every authenticated user may ask them, as kube-apiserver's
// default system:basic-user ClusterRole allows, whatever else the authorization policy says; the access
// review is then answered by that policy for the asking (or impersonated) user. SubjectAccessReview
// asks the same of another identity (the one its spec names), and is authorized like any create; so is
// authentication.k8s.io/v1 TokenReview (would this bearer token authenticate here, and as whom?), which
// webhook token authenticators such as a kubelet's ask (kube's system:auth-delegator grants both).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalid, required, type FieldError } from '../../api/field-errors.js';
import { recordOf as rec } from '../../api/json.js';
import { statusErrors } from '../../api/status.js';
import type { RuleResolver } from '../auth/rules.js';
import type { TokenReviewer, TokenReviewResult } from '../auth/token-review.js';
import { decodeWriteBody, readBody } from './body.js';
import { writeJson } from './respond.js';
import type { ResourceRequestInfo } from './request-info.js';
import { nonResourceAttributes, type AuthorizationAttributes, type Identity } from './types.js';

export interface ReviewResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly verbs: readonly string[];
}

export const SELF_SUBJECT_ACCESS_REVIEWS: ReviewResource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'selfsubjectaccessreviews',
  singular: 'selfsubjectaccessreview',
  kind: 'SelfSubjectAccessReview',
  verbs: ['create'],
};

export const SELF_SUBJECT_REVIEWS: ReviewResource = {
  group: 'authentication.k8s.io',
  version: 'v1',
  resource: 'selfsubjectreviews',
  singular: 'selfsubjectreview',
  kind: 'SelfSubjectReview',
  verbs: ['create'],
};

export const SELF_SUBJECT_RULES_REVIEWS: ReviewResource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'selfsubjectrulesreviews',
  singular: 'selfsubjectrulesreview',
  kind: 'SelfSubjectRulesReview',
  verbs: ['create'],
};

/** May this user do this? Asked for another identity; the asker needs `create subjectaccessreviews`. */
export const SUBJECT_ACCESS_REVIEWS: ReviewResource = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'subjectaccessreviews',
  singular: 'subjectaccessreview',
  kind: 'SubjectAccessReview',
  verbs: ['create'],
};

/** Would this bearer token authenticate, and as whom? The asker needs `create tokenreviews`. */
export const TOKEN_REVIEWS: ReviewResource = {
  group: 'authentication.k8s.io',
  version: 'v1',
  resource: 'tokenreviews',
  singular: 'tokenreview',
  kind: 'TokenReview',
  verbs: ['create'],
};

/** The review resources, for discovery (cluster-scoped, create only). */
export const REVIEW_RESOURCES: readonly ReviewResource[] = [
  SELF_SUBJECT_ACCESS_REVIEWS,
  SELF_SUBJECT_RULES_REVIEWS,
  SUBJECT_ACCESS_REVIEWS,
  SELF_SUBJECT_REVIEWS,
  TOKEN_REVIEWS,
];

/** The review resource a request is for (any verb), or undefined. */
export const reviewOf = (info: ResourceRequestInfo): ReviewResource | undefined =>
  REVIEW_RESOURCES.find(
    (r) => r.group === info.apiGroup && r.version === info.apiVersion && r.resource === info.resource,
  );

/** Whether a request creates a review (any review: the access review of another user is authorized as usual). */
export const isReviewCreate = (info: ResourceRequestInfo): boolean =>
  reviewOf(info) !== undefined &&
  info.verb === 'create' &&
  info.namespace === '' &&
  info.name === '' &&
  info.subresource === '';

/**
 * Whether a request is one every authenticated user may make (creating a review of themselves): the
 * caller checks that the user is one (a user impersonating system:anonymous is not).
 */
export const isSelfReview = (info: ResourceRequestInfo): boolean =>
  reviewOf(info) !== undefined &&
  reviewOf(info) !== SUBJECT_ACCESS_REVIEWS &&
  reviewOf(info) !== TOKEN_REVIEWS &&
  info.verb === 'create' &&
  info.namespace === '' &&
  info.name === '' &&
  info.subresource === '';

type Rec = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** What a SelfSubjectAccessReview's spec asks, as the authorizer's attributes, or why it cannot be asked. */
export function accessReviewAttributes(
  user: Identity,
  spec: unknown,
): { attrs: AuthorizationAttributes } | { errors: FieldError[] } {
  const s = rec(spec);
  const res = s['resourceAttributes'];
  const nonRes = s['nonResourceAttributes'];
  const has = (v: unknown): boolean => v !== undefined && v !== null;
  if (has(res) && has(nonRes))
    return {
      errors: [
        invalid(
          'spec.nonResourceAttributes',
          nonRes,
          'cannot be specified in combination with resourceAttributes',
        ),
      ],
    };
  if (!has(res) && !has(nonRes))
    return {
      errors: [
        // kube names the field it checks but passes the absent nonResourceAttributes as the value: null.
        invalid(
          'spec.resourceAttributes',
          null,
          'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        ),
      ],
    };
  if (has(res)) {
    const r = rec(res);
    return {
      attrs: {
        user,
        verb: str(r['verb']),
        resourceRequest: true,
        apiGroup: str(r['group']),
        namespace: str(r['namespace']),
        resource: str(r['resource']),
        subresource: str(r['subresource']),
        name: str(r['name']),
        path: '',
      },
    };
  }
  const n = rec(nonRes);
  return { attrs: nonResourceAttributes(user, str(n['verb']), str(n['path'])) };
}

/**
 * POST of a review: decoded (JSON, YAML or protobuf), answered with its status, 201 Created. Without
 * `reviewToken` a TokenReview is answered as it came (upstream, without a token authenticator).
 */
export async function serveReview(
  review: ReviewResource,
  req: IncomingMessage,
  res: ServerResponse,
  user: Identity,
  authorize: (attrs: AuthorizationAttributes) => boolean,
  rulesFor?: RuleResolver,
  reviewToken?: TokenReviewer,
): Promise<void> {
  const gvk = { group: review.group, version: review.version, kind: review.kind };
  const apiVersion = `${review.group}/${review.version}`;
  const body = rec(decodeWriteBody(req.headers['content-type'], await readBody(req), undefined, gvk));
  if (
    (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion) ||
    (body['kind'] !== undefined && body['kind'] !== review.kind)
  )
    throw statusErrors.badRequest(
      `the body holds ${str(body['apiVersion'])} ${str(body['kind'])}, but this endpoint takes ${apiVersion} ${review.kind}`,
    );
  const answer: Rec = {
    kind: review.kind,
    apiVersion,
    metadata: { creationTimestamp: null },
  };
  if (review === SELF_SUBJECT_REVIEWS) {
    answer['status'] = { userInfo: userInfoOf(user) };
  } else if (review === TOKEN_REVIEWS) {
    const spec = rec(body['spec']);
    const token = str(spec['token']);
    // Checked before anything else, as upstream's REST.Create does: a 400, not a 422.
    if (token === '') throw statusErrors.badRequest('token is required for TokenReview in authentication');
    const audiences = Array.isArray(spec['audiences'])
      ? spec['audiences'].filter((a): a is string => typeof a === 'string')
      : [];
    answer['spec'] = { token, ...(audiences.length > 0 ? { audiences } : {}) };
    answer['status'] =
      reviewToken === undefined ? {} : tokenReviewStatus(await reviewToken(token, audiences));
  } else if (review === SELF_SUBJECT_RULES_REVIEWS) {
    const namespace = str(rec(body['spec'])['namespace']);
    if (namespace === '')
      throw statusErrors.invalid({ group: review.group, kind: review.kind }, '', [
        required('spec.namespace', ''),
      ]);
    answer['spec'] = { namespace };
    // A server without a rule resolver cannot list anything: say so rather than answer "nothing".
    answer['status'] = rulesFor?.(user, namespace) ?? {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
    };
  } else {
    const subject = review === SUBJECT_ACCESS_REVIEWS ? subjectOf(review, body['spec']) : user;
    const asked = accessReviewAttributes(subject, body['spec']);
    if ('errors' in asked)
      throw statusErrors.invalid({ group: review.group, kind: review.kind }, '', asked.errors);
    answer['spec'] = body['spec'];
    answer['status'] = { allowed: authorize(asked.attrs) };
  }
  writeJson(res, 201, answer);
}

/** authentication/v1 UserInfo as served: uid and extra only when set (omitempty). */
function userInfoOf(user: Identity): Rec {
  return {
    username: user.name,
    ...(user.uid === '' ? {} : { uid: user.uid }),
    groups: [...user.groups],
    ...(user.extra === undefined || Object.keys(user.extra).length === 0 ? {} : { extra: user.extra }),
  };
}

/**
 * TokenReviewStatus as upstream serializes it: `authenticated`, `audiences` and `error` are omitted when
 * false or empty; `user` is always there (an empty object when the token authenticates no one).
 */
function tokenReviewStatus(r: TokenReviewResult): Rec {
  return {
    ...(r.user === undefined ? {} : { authenticated: true }),
    user: r.user === undefined ? {} : userInfoOf(r.user),
    ...(r.user === undefined || r.audiences.length === 0 ? {} : { audiences: [...r.audiences] }),
    ...(r.error === undefined || r.error === '' ? {} : { error: r.error }),
  };
}

/**
 * The identity a SubjectAccessReview asks about: spec.user, spec.uid and spec.groups exactly (no
 * system:authenticated is added, as upstream); kube's 422 when it names neither a user nor a group.
 */
function subjectOf(review: ReviewResource, spec: unknown): Identity {
  const s = rec(spec);
  const groups = Array.isArray(s['groups'])
    ? s['groups'].filter((g): g is string => typeof g === 'string')
    : [];
  const name = str(s['user']);
  if (name === '' && groups.length === 0)
    throw statusErrors.invalid({ group: review.group, kind: review.kind }, '', [
      invalid('spec.user', name, 'at least one of user or group must be specified'),
    ]);
  return { name, uid: str(s['uid']), groups };
}
