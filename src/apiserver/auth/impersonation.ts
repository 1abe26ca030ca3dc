// kube-apiserver's user impersonation (its WithImpersonation filter), run right after authentication:
//
//   Impersonate-User: alice          → may the requester `impersonate` users "alice" (API group "")?
//   Impersonate-Group: g (repeated)  → … groups "g" (API group "")?
//   Impersonate-Uid: u               → … uids "u" (API group "authentication.k8s.io")?
//   Impersonate-Extra-<key>: v       → … userextras/<key> "v" (API group "authentication.k8s.io")?
//
// Each is authorized as the requester, in that order; the first refusal is a 403 for those attributes
// ('users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the
// cluster scope'). When all are allowed the request goes on as the impersonated user, with
// "system:authenticated" added (or "system:unauthenticated" for system:anonymous) unless a group already
// says which. A user "system:serviceaccount:NS:NAME" is checked as serviceaccounts "NAME" in NS and, without
// Impersonate-Group, gets the service-account groups. Groups, a UID or extras without Impersonate-User are
// a 400. svcplane's identities carry no extras, so allowed extras are checked and then dropped.
import {
  SERVICE_ACCOUNT_USER_PREFIX as SA_PREFIX,
  serviceAccountGroups,
  serviceAccountUsername,
} from '../../core/serviceaccount/token-claims.js';
import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER_NAME } from './types.js';
import type { RequestAttributes, UserInfo } from './types.js';

export const IMPERSONATE_USER = 'impersonate-user';
export const IMPERSONATE_GROUP = 'impersonate-group';
export const IMPERSONATE_UID = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';

/** Whether a (lower-case) header name is one of the impersonation headers. */
export const isImpersonationHeader = (name: string): boolean =>
  name === IMPERSONATE_USER ||
  name === IMPERSONATE_GROUP ||
  name === IMPERSONATE_UID ||
  name.startsWith(IMPERSONATE_EXTRA_PREFIX);

/** Request headers as node's `req.headersDistinct` has them: lower-case names, one entry per header line. */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

export type Impersonation =
  /** No impersonation headers: the request goes on as the requester. */
  | { readonly kind: 'none' }
  /** Allowed: the request goes on as `user`. */
  | { readonly kind: 'user'; readonly user: UserInfo }
  /** Refused: answer 403 for these attributes (the requester, verb "impersonate"). */
  | { readonly kind: 'forbidden'; readonly attrs: RequestAttributes }
  /** Malformed (groups, a UID or extras without a user): answer 400 with this message. */
  | { readonly kind: 'bad-request'; readonly message: string };

/** One thing asked for (upstream's ObjectReference, with the fields its error message prints). */
interface Target {
  readonly kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  readonly namespace: string;
  readonly name: string;
  readonly apiVersion: string;
  readonly fieldPath: string;
}

const AUTHENTICATION_V1 = 'authentication.k8s.io/v1';
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** "system:serviceaccount:NS:NAME" → [NS, NAME] when both are valid names (upstream's SplitUsername). */
export function splitServiceAccountUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [ns, name] = parts as [string, string];
  if (ns.length > 63 || !DNS1123_LABEL.test(ns)) return undefined;
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) return undefined;
  return [ns, name];
}

const target = (kind: Target['kind'], name: string, more: Partial<Target> = {}): Target => ({
  kind,
  namespace: '',
  name,
  apiVersion: '',
  fieldPath: '',
  ...more,
});

/** Go's %v of an ObjectReference: its fields in order, space-separated, in braces. */
const goValue = (t: Target): string =>
  `{${[t.kind, t.namespace, t.name, '', t.apiVersion, '', t.fieldPath].join(' ')}}`;

/** url.PathUnescape, keeping the raw key when it is malformed (as upstream does). */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** What the headers ask for, in upstream's order, or the 400 message. */
function targets(headers: DistinctHeaders): Target[] | string {
  const out: Target[] = [];
  const user = headers[IMPERSONATE_USER]?.[0] ?? '';
  if (user !== '') {
    const sa = splitServiceAccountUsername(user);
    out.push(sa === undefined ? target('User', user) : target('ServiceAccount', sa[1], { namespace: sa[0] }));
  }
  const groups = headers[IMPERSONATE_GROUP] ?? [];
  for (const g of groups) out.push(target('Group', g));
  let extras = false;
  for (const [name, values] of Object.entries(headers)) {
    if (!name.toLowerCase().startsWith(IMPERSONATE_EXTRA_PREFIX)) continue;
    extras = true;
    const key = unescapeExtraKey(name.slice(IMPERSONATE_EXTRA_PREFIX.length).toLowerCase());
    for (const v of values ?? [])
      out.push(target('UserExtra', v, { apiVersion: AUTHENTICATION_V1, fieldPath: key }));
  }
  const uid = headers[IMPERSONATE_UID]?.[0] ?? '';
  if (uid !== '') out.push(target('UID', uid, { apiVersion: AUTHENTICATION_V1 }));
  if ((groups.length > 0 || extras || uid !== '') && user === '')
    return `requested [${out.map(goValue).join(' ')}] without impersonating a user`;
  return out;
}

/**
 * Applies the impersonation headers of a request made by `requestor` (at URL path `path`), asking
 * `authorize` about each thing impersonated.
 */
export function impersonate(
  requestor: UserInfo,
  headers: DistinctHeaders,
  path: string,
  authorize: (attrs: RequestAttributes) => boolean,
): Impersonation {
  const wanted = targets(headers);
  if (typeof wanted === 'string') return { kind: 'bad-request', message: wanted };
  if (wanted.length === 0) return { kind: 'none' };
  const groupsSpecified = (headers[IMPERSONATE_GROUP]?.length ?? 0) > 0;
  let name = '';
  let uid = '';
  let groups: string[] = [];
  for (const t of wanted) {
    let resource: string;
    let apiGroup = '';
    let subresource = '';
    switch (t.kind) {
      case 'ServiceAccount':
        resource = 'serviceaccounts';
        name = serviceAccountUsername(t.namespace, t.name);
        if (!groupsSpecified) groups = serviceAccountGroups(t.namespace);
        break;
      case 'User':
        resource = 'users';
        name = t.name;
        break;
      case 'Group':
        resource = 'groups';
        groups.push(t.name);
        break;
      case 'UserExtra':
        resource = 'userextras';
        apiGroup = 'authentication.k8s.io';
        subresource = t.fieldPath;
        break;
      case 'UID':
        resource = 'uids';
        apiGroup = 'authentication.k8s.io';
        uid = t.name;
        break;
    }
    const attrs: RequestAttributes = {
      user: requestor,
      verb: 'impersonate',
      resourceRequest: true,
      apiGroup,
      namespace: t.namespace,
      resource,
      subresource,
      name: t.name,
      path,
    };
    if (!authorize(attrs)) return { kind: 'forbidden', attrs };
  }
  if (name !== ANONYMOUS_USER_NAME) {
    if (!groups.some((g) => g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED))
      groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) {
    groups.push(ALL_UNAUTHENTICATED);
  }
  return { kind: 'user', user: { name, uid, groups } };
}
