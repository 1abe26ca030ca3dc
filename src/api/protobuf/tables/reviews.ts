// k8s.io/api/authorization/v1 SelfSubjectAccessReview and k8s.io/api/authentication/v1 SelfSubjectReview
// (field numbers from their generated.proto): what `kubectl auth can-i` and `kubectl auth whoami` post;
// authentication/v1 TokenReview, what a webhook token authenticator built on client-go may post.
import { message } from '../decode.js';
import { labelSelectorRequirement, objectMeta } from './meta.js';

const AUTHZ = 'k8s.io.api.authorization.v1';
const AUTHN = 'k8s.io.api.authentication.v1';

const fieldSelectorRequirement = message(`${AUTHZ}.FieldSelectorRequirement`, {
  1: ['key', 'string', 'keep'],
  2: ['operator', 'string', 'keep'],
  3: ['values', 'string', 'repeated'],
});

const fieldSelectorAttributes = message(`${AUTHZ}.FieldSelectorAttributes`, {
  1: ['rawSelector', 'string'],
  2: ['requirements', fieldSelectorRequirement, 'repeated'],
});

const labelSelectorAttributes = message(`${AUTHZ}.LabelSelectorAttributes`, {
  1: ['rawSelector', 'string'],
  2: ['requirements', labelSelectorRequirement, 'repeated'],
});

const resourceAttributes = message(`${AUTHZ}.ResourceAttributes`, {
  1: ['namespace', 'string'],
  2: ['verb', 'string'],
  3: ['group', 'string'],
  4: ['version', 'string'],
  5: ['resource', 'string'],
  6: ['subresource', 'string'],
  7: ['name', 'string'],
  8: ['fieldSelector', fieldSelectorAttributes],
  9: ['labelSelector', labelSelectorAttributes],
});

const nonResourceAttributes = message(`${AUTHZ}.NonResourceAttributes`, {
  1: ['path', 'string'],
  2: ['verb', 'string'],
});

const subjectAccessReviewStatus = message(`${AUTHZ}.SubjectAccessReviewStatus`, {
  1: ['allowed', 'bool', 'keep'],
  4: ['denied', 'bool'],
  2: ['reason', 'string'],
  3: ['evaluationError', 'string'],
});

export const selfSubjectAccessReview = message(`${AUTHZ}.SelfSubjectAccessReview`, {
  1: ['metadata', objectMeta],
  2: [
    'spec',
    message(`${AUTHZ}.SelfSubjectAccessReviewSpec`, {
      1: ['resourceAttributes', resourceAttributes],
      2: ['nonResourceAttributes', nonResourceAttributes],
    }),
  ],
  3: ['status', subjectAccessReviewStatus],
});

/** UserInfo without `extra` (a client never sends one; a field missing here is refused, never dropped). */
const userInfo = message(`${AUTHN}.UserInfo`, {
  1: ['username', 'string'],
  2: ['uid', 'string'],
  3: ['groups', 'string', 'repeated'],
});

export const selfSubjectReview = message(`${AUTHN}.SelfSubjectReview`, {
  1: ['metadata', objectMeta],
  2: ['status', message(`${AUTHN}.SelfSubjectReviewStatus`, { 1: ['userInfo', userInfo] })],
});

/** authentication/v1 TokenReview: a bearer token to check, for some audiences (a status is never read). */
export const tokenReview = message(`${AUTHN}.TokenReview`, {
  1: ['metadata', objectMeta],
  2: [
    'spec',
    message(`${AUTHN}.TokenReviewSpec`, {
      1: ['token', 'string'],
      2: ['audiences', 'string', 'repeated'],
    }),
  ],
  3: [
    'status',
    message(`${AUTHN}.TokenReviewStatus`, {
      1: ['authenticated', 'bool'],
      2: ['user', userInfo],
      4: ['audiences', 'string', 'repeated'],
      3: ['error', 'string'],
    }),
  ],
});

const resourceRule = message(`${AUTHZ}.ResourceRule`, {
  1: ['verbs', 'string', 'repeated'],
  2: ['apiGroups', 'string', 'repeated'],
  3: ['resources', 'string', 'repeated'],
  4: ['resourceNames', 'string', 'repeated'],
});

const nonResourceRule = message(`${AUTHZ}.NonResourceRule`, {
  1: ['verbs', 'string', 'repeated'],
  2: ['nonResourceURLs', 'string', 'repeated'],
});

export const selfSubjectRulesReview = message(`${AUTHZ}.SelfSubjectRulesReview`, {
  1: ['metadata', objectMeta],
  2: ['spec', message(`${AUTHZ}.SelfSubjectRulesReviewSpec`, { 1: ['namespace', 'string'] })],
  3: [
    'status',
    message(`${AUTHZ}.SubjectRulesReviewStatus`, {
      1: ['resourceRules', resourceRule, 'repeated'],
      2: ['nonResourceRules', nonResourceRule, 'repeated'],
      3: ['incomplete', 'bool', 'keep'],
      4: ['evaluationError', 'string'],
    }),
  ],
});

/** authentication/v1 TokenRequest: what `kubectl create token` posts to serviceaccounts/NAME/token. */
export const tokenRequest = message(`${AUTHN}.TokenRequest`, {
  1: ['metadata', objectMeta],
  2: [
    'spec',
    message(`${AUTHN}.TokenRequestSpec`, {
      1: ['audiences', 'string', 'repeated'],
      4: ['expirationSeconds', 'int64', 'keep'],
      3: [
        'boundObjectRef',
        message(`${AUTHN}.BoundObjectReference`, {
          1: ['kind', 'string'],
          2: ['apiVersion', 'string'],
          3: ['name', 'string'],
          4: ['uid', 'string'],
        }),
      ],
    }),
  ],
  3: [
    'status',
    message(`${AUTHN}.TokenRequestStatus`, {
      1: ['token', 'string'],
      2: ['expirationTimestamp', 'time'],
    }),
  ],
});
