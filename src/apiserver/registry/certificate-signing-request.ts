// The CertificateSigningRequest strategies of kube-apiserver (pkg/registry/certificates): a new
// request names its requester (spec.username, uid, groups, extra) from who created it, whatever the
// body says; its spec never changes; /status writes the certificate and conditions other than Approved
// and Denied, /approval only those two.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { hasApproval } from '../../api/subresources.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { UserInfo } from '../auth/types.js';
import type { Subresource } from './types.js';

const APPROVAL_TYPES = new Set(['Approved', 'Denied']);

type Conditions = Array<Record<string, unknown>>;
const conditionsOf = (o: KObject): Conditions => {
  const status = isPlainObject(o.status) ? o.status : {};
  return Array.isArray(status['conditions']) ? (status['conditions'] as Conditions) : [];
};
const isApproval = (c: unknown): boolean => isPlainObject(c) && APPROVAL_TYPES.has(String(c['type']));

/** On create: the requester is the authenticated user (kube's csrStrategy.PrepareForCreate). */
export function fillRequester(r: ResourceInfo, obj: KObject, user: UserInfo | undefined): void {
  if (!hasApproval(r)) return;
  const spec: Record<string, unknown> = isPlainObject(obj.spec) ? obj.spec : {};
  obj.spec = spec;
  for (const k of ['username', 'uid', 'groups', 'extra']) delete spec[k];
  if (user === undefined) return;
  spec['username'] = user.name;
  if (user.uid !== '') spec['uid'] = user.uid;
  if (user.groups.length > 0) spec['groups'] = [...user.groups];
}

/**
 * An update of a request, after the generic subresource split (`next` already has old's status on the
 * main resource, incoming's on /status and /approval): the spec is always the stored one; /status keeps
 * the stored Approved and Denied conditions, /approval keeps everything but them.
 */
export function prepareCsrUpdate(
  r: ResourceInfo,
  next: KObject,
  old: KObject,
  subresource: Subresource,
): void {
  if (!hasApproval(r)) return;
  next.spec = structuredClone(old.spec);
  if (subresource !== 'status' && subresource !== 'approval') return;
  const incoming = conditionsOf(next);
  const stored = conditionsOf(old);
  const conditions =
    subresource === 'status'
      ? [...stored.filter(isApproval), ...incoming.filter((c) => !isApproval(c))]
      : [...incoming.filter(isApproval), ...stored.filter((c) => !isApproval(c))];
  const status: Record<string, unknown> = {
    ...(isPlainObject(subresource === 'status' ? next.status : old.status)
      ? ((subresource === 'status' ? next.status : old.status) as Record<string, unknown>)
      : {}),
  };
  if (conditions.length > 0) status['conditions'] = structuredClone(conditions);
  else delete status['conditions'];
  next.status = status;
}
