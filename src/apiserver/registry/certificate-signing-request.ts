// The CertificateSigningRequest strategies of kube-apiserver (pkg/registry/certificates): a new
// request names its requester (spec.username, uid, groups, extra) from who created it, whatever the
// body says; its spec never changes; /status writes the certificate and conditions other than Approved
// and Denied, /approval only those two; and the CSR admission plugins.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { hasApproval } from '../../api/subresources.js';
import type { ResourceInfo } from '../../api/resources.js';
import { SYSTEM_MASTERS, type RequestAttributes, type UserInfo } from '../auth/types.js';
import {
  APISERVER_CLIENT_SIGNER,
  decodeBytesField,
  type CertificateRequestParser,
} from '../../api/certificate-request.js';
import { statusErrors } from '../../api/status.js';
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

/** May `user` do `verb` (approve, sign) for requests of `signerName`? The server's authorizer, asked. */
export type SignerPermission = (user: UserInfo, verb: 'approve' | 'sign', signerName: string) => boolean;

/** kube's signer permission check: the signer's own name, or its domain's wildcard (`example.com/*`). */
export function signerPermission(authorize: (attrs: RequestAttributes) => boolean): SignerPermission {
  return (user, verb, signerName) =>
    [signerName, `${signerName.split('/')[0]}/*`].some((name) =>
      authorize({
        user,
        verb,
        resourceRequest: true,
        apiGroup: 'certificates.k8s.io',
        namespace: '',
        resource: 'signers',
        subresource: '',
        name,
        path: '',
      }),
    );
}

const typesOf = (o: KObject): Set<string> =>
  new Set(
    conditionsOf(o)
      .map((c) => (isApproval(c) ? String(c['type']) : ''))
      .filter((t) => t !== ''),
  );
const certificateOf = (o: KObject): unknown =>
  isPlainObject(o.status) ? o.status['certificate'] : undefined;
const signerOf = (o: KObject): string =>
  isPlainObject(o.spec) && typeof o.spec['signerName'] === 'string' ? o.spec['signerName'] : '';

/**
 * kube-apiserver's CSR admission plugins, for a request's writer (none for the server's own writes):
 * CertificateSubjectRestriction refuses a kube-apiserver-client request for the system:masters group;
 * CertificateApproval wants `approve` on the signer to add Approved or Denied, CertificateSigning
 * `sign` on it to set or change the certificate. Throws Forbidden.
 */
export function admitCsr(
  r: ResourceInfo,
  obj: KObject,
  old: KObject | undefined,
  user: UserInfo | undefined,
  o: { may?: SignerPermission; parse?: CertificateRequestParser; subresource?: string },
): void {
  if (!hasApproval(r) || user === undefined) return;
  const signer = signerOf(obj);
  const name = obj.metadata.name ?? '';
  if (old === undefined) {
    if (signer !== APISERVER_CLIENT_SIGNER || o.parse === undefined) return;
    let groups: readonly string[];
    try {
      groups = o.parse(
        decodeBytesField(isPlainObject(obj.spec) ? obj.spec['request'] : undefined),
      ).organizations;
    } catch {
      return; // validation reports it
    }
    if (groups.includes(SYSTEM_MASTERS))
      throw statusErrors.forbidden(
        r,
        name,
        `use of ${APISERVER_CLIENT_SIGNER} signer with ${SYSTEM_MASTERS} group is not allowed`,
      );
    return;
  }
  if (o.may === undefined) return;
  const before = typesOf(old);
  const added = [...typesOf(obj)].some((t) => !before.has(t));
  // Every write to /approval needs `approve` (upstream's CertificateApproval), whatever it changes.
  if ((added || o.subresource === 'approval') && !o.may(user, 'approve', signer))
    throw statusErrors.forbidden(
      r,
      name,
      `user not permitted to approve requests with signerName "${signer}"`,
    );
  if (
    JSON.stringify(certificateOf(obj)) !== JSON.stringify(certificateOf(old)) &&
    !o.may(user, 'sign', signer)
  )
    throw statusErrors.forbidden(r, name, `user not permitted to sign requests with signerName "${signer}"`);
}
