// The subresources served beside each resource, the single source for discovery, routing and OpenAPI:
// `status` for every resource with a status, `scale` (autoscaling/v1 Scale) on Deployments and
// ReplicaSets, `binding` (v1 Binding) on Pods, `token` (authentication/v1 TokenRequest) on
// ServiceAccounts, `approval` on CertificateSigningRequests; plus the legacy core `bindings` resource.
import type { ResourceInfo } from './resources.js';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface SubresourceInfo {
  readonly name: 'approval' | 'binding' | 'scale' | 'status' | 'token';
  /** The kind the subresource takes and returns; for status, the resource's own kind. */
  readonly kind: GroupVersionKind;
  readonly verbs: readonly string[];
}

export const SCALE_KIND: GroupVersionKind = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
export const BINDING_KIND: GroupVersionKind = { group: '', version: 'v1', kind: 'Binding' };
export const TOKEN_REQUEST_KIND: GroupVersionKind = {
  group: 'authentication.k8s.io',
  version: 'v1',
  kind: 'TokenRequest',
};

/** Whether `r` serves autoscaling/v1 Scale at `/scale`. */
export const hasScale = (r: ResourceInfo): boolean =>
  r.group === 'apps' && (r.resource === 'deployments' || r.resource === 'replicasets');

/** Whether `r` serves authentication/v1 TokenRequest at `/token` (serviceaccounts). */
export const hasToken = (r: ResourceInfo): boolean => r.group === '' && r.resource === 'serviceaccounts';

/** Whether `r` serves v1 Binding at `/binding` (pods). */
export const hasBinding = (r: ResourceInfo): boolean => r.group === '' && r.resource === 'pods';

/** Whether `r` serves `/approval` (CertificateSigningRequests: the Approved and Denied conditions). */
export const hasApproval = (r: ResourceInfo): boolean =>
  r.group === 'certificates.k8s.io' && r.resource === 'certificatesigningrequests';

/** The subresources of `r`, in the order discovery lists them (by name). */
export function subresourcesOf(r: ResourceInfo): SubresourceInfo[] {
  const out: SubresourceInfo[] = [];
  if (hasApproval(r)) {
    out.push({
      name: 'approval',
      kind: { group: r.group, version: r.version, kind: r.kind },
      verbs: ['get', 'patch', 'update'],
    });
  }
  if (hasBinding(r)) out.push({ name: 'binding', kind: BINDING_KIND, verbs: ['create'] });
  if (hasScale(r)) out.push({ name: 'scale', kind: SCALE_KIND, verbs: ['get', 'patch', 'update'] });
  if (hasToken(r)) out.push({ name: 'token', kind: TOKEN_REQUEST_KIND, verbs: ['create'] });
  if (r.hasStatus) {
    out.push({
      name: 'status',
      kind: { group: r.group, version: r.version, kind: r.kind },
      verbs: ['get', 'patch', 'update'],
    });
  }
  return out;
}

/**
 * The legacy `POST /api/v1/namespaces/{ns}/bindings`: listed by discovery as a create-only resource of
 * the core group (it has no storage of its own; it binds the pod the body names).
 */
export const LEGACY_BINDINGS = {
  resource: 'bindings',
  singular: 'binding',
  kind: 'Binding',
  verbs: ['create'],
} as const;
