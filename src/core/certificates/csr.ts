// What kube-controller-manager's CSR controllers decide, as pure functions of a
// CertificateSigningRequest (and its parsed spec.request):
// - csrapproving (pkg/controller/certificates/approver/sarapprove.go): a kubelet's client certificate
//   request is approved when a SubjectAccessReview says its requester may create
//   certificatesigningrequests/nodeclient, or /selfnodeclient when the requester is the node itself;
// - csrsigning (pkg/controller/certificates/signer): an approved request of a client signer is issued
//   by the cluster CA, or marked Failed when it asks for what the signer does not give.
import {
  APISERVER_CLIENT_SIGNER,
  KUBELET_CLIENT_SIGNER,
  decodeBytesField,
  type ParsedCertificateRequest,
} from '../../api/certificate-request.js';
import { isPlainObject } from '../../api/json.js';
import type { KObject } from '../../api/object.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** The fields the CSR controllers read. */
export interface CsrView {
  readonly name: string;
  readonly signerName: string;
  readonly request: string;
  readonly usages: readonly string[];
  readonly username: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly expirationSeconds: number | undefined;
  readonly approved: boolean;
  readonly denied: boolean;
  readonly failed: boolean;
  readonly issued: boolean;
}

const strs = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

export function csrView(csr: KObject): CsrView {
  const spec = isPlainObject(csr.spec) ? csr.spec : {};
  const status = isPlainObject(csr.status) ? csr.status : {};
  const types = new Set(
    (Array.isArray(status['conditions']) ? status['conditions'] : []).map((c) =>
      isPlainObject(c) && c['status'] === 'True' ? s(c['type']) : '',
    ),
  );
  const exp = spec['expirationSeconds'];
  return {
    name: csr.metadata.name ?? '',
    signerName: s(spec['signerName']),
    request: decodeBytesField(spec['request']),
    usages: strs(spec['usages']),
    username: s(spec['username']),
    uid: s(spec['uid']),
    groups: strs(spec['groups']),
    expirationSeconds: typeof exp === 'number' ? exp : undefined,
    approved: types.has('Approved'),
    denied: types.has('Denied'),
    failed: types.has('Failed'),
    issued: decodeBytesField(status['certificate']) !== '',
  };
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  new Set(a).size === a.length && a.length === b.length && b.every((x) => a.includes(x));

/** Client usages: client auth and digital signature, key encipherment optional (kube's kubelet client usages). */
function clientUsagesProblem(usages: readonly string[]): string | undefined {
  const ok =
    sameSet(usages, ['digital signature', 'client auth']) ||
    sameSet(usages, ['digital signature', 'key encipherment', 'client auth']) ||
    sameSet(usages, ['client auth']) ||
    sameSet(usages, ['key encipherment', 'client auth']);
  return ok
    ? undefined
    : `usages must be "client auth", optionally with "digital signature" and "key encipherment"`;
}

/**
 * Why a request is not a kubelet client certificate request (kube's ValidateKubeletClientCSR), or
 * undefined when it is: signer kube-apiserver-client-kubelet, O exactly [system:nodes], CN
 * system:node:NAME, no subjectAltNames, usages {digital signature, client auth} with key encipherment
 * optional.
 */
export function kubeletClientProblem(v: CsrView, req: ParsedCertificateRequest): string | undefined {
  if (v.signerName !== KUBELET_CLIENT_SIGNER) return `signerName must be ${KUBELET_CLIENT_SIGNER}`;
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP)
    return `subject organization must be exactly ["${NODES_GROUP}"]`;
  if (!req.commonName.startsWith(NODE_USER_PREFIX) || req.commonName.length === NODE_USER_PREFIX.length)
    return `subject common name must begin with "${NODE_USER_PREFIX}"`;
  if (req.dnsNames.length + req.emailAddresses.length + req.ipAddresses.length + req.uris.length > 0)
    return 'subjectAltNames are not allowed';
  const withSignature = v.usages.includes('digital signature');
  return withSignature
    ? clientUsagesProblem(v.usages)
    : 'usages must include "digital signature" and "client auth"';
}

/** The subresource an approving SubjectAccessReview asks about. */
export type NodeClientReview = 'selfnodeclient' | 'nodeclient';

/**
 * The reviews that may approve a request, in the order they are asked: none for a request already
 * approved, denied or issued, or that is not a kubelet client request; `selfnodeclient` first when the
 * requester is the node the certificate names (renewal), then `nodeclient`.
 */
export function approvalReviews(v: CsrView, req: ParsedCertificateRequest): NodeClientReview[] {
  if (v.approved || v.denied || v.issued) return [];
  if (kubeletClientProblem(v, req) !== undefined) return [];
  return v.username === req.commonName ? ['selfnodeclient', 'nodeclient'] : ['nodeclient'];
}

/** The SubjectAccessReview (authorization.k8s.io/v1) that asks whether the requester may use `review`. */
export function subjectAccessReview(v: CsrView, review: NodeClientReview): Record<string, unknown> {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: v.username,
      ...(v.uid === '' ? {} : { uid: v.uid }),
      groups: [...v.groups],
      resourceAttributes: {
        group: 'certificates.k8s.io',
        resource: 'certificatesigningrequests',
        verb: 'create',
        subresource: review,
      },
    },
  };
}

/** The Approved condition the approver adds (kube's reasons and messages). */
export function autoApprovedCondition(review: NodeClientReview, now: string): Record<string, unknown> {
  return {
    type: 'Approved',
    status: 'True',
    reason: 'AutoApproved',
    message:
      review === 'selfnodeclient'
        ? 'Auto approving self kubelet client certificate after SubjectAccessReview.'
        : 'Auto approving kubelet client certificate after SubjectAccessReview.',
    lastUpdateTime: now,
    lastTransitionTime: now,
  };
}

/** The signers svcplane's signing controller serves. */
export const SIGNERS: readonly string[] = [KUBELET_CLIENT_SIGNER, APISERVER_CLIENT_SIGNER];

export type SigningPlan =
  | { readonly kind: 'skip' }
  | { readonly kind: 'fail'; readonly message: string }
  | { readonly kind: 'sign'; readonly durationSeconds: number };

/**
 * What the signer does with a request: nothing unless it is approved, not denied, failed or issued,
 * and for one of SIGNERS; Failed (SignerValidationFailure) when it asks for what the signer does not
 * issue; else a certificate valid for min(spec.expirationSeconds, maxDurationSeconds).
 */
export function signingPlan(
  v: CsrView,
  req: ParsedCertificateRequest | Error,
  maxDurationSeconds: number,
): SigningPlan {
  if (!SIGNERS.includes(v.signerName) || !v.approved || v.denied || v.failed || v.issued)
    return { kind: 'skip' };
  if (req instanceof Error) return { kind: 'fail', message: `unable to parse csr: ${req.message}` };
  const problem =
    v.signerName === KUBELET_CLIENT_SIGNER ? kubeletClientProblem(v, req) : clientUsagesProblem(v.usages);
  if (problem !== undefined) return { kind: 'fail', message: problem };
  const durationSeconds = Math.min(v.expirationSeconds ?? maxDurationSeconds, maxDurationSeconds);
  return { kind: 'sign', durationSeconds };
}

/** The Failed condition the signer adds when it will not issue a request. */
export function signerFailedCondition(message: string, now: string): Record<string, unknown> {
  return {
    type: 'Failed',
    status: 'True',
    reason: 'SignerValidationFailure',
    message,
    lastUpdateTime: now,
    lastTransitionTime: now,
  };
}

/** A request with one more status condition, its resourceVersion kept as the write's precondition. */
export function withCondition(csr: KObject, condition: Record<string, unknown>): KObject {
  const status = isPlainObject(csr.status) ? csr.status : {};
  const conditions = Array.isArray(status['conditions']) ? status['conditions'] : [];
  return { ...csr, status: { ...status, conditions: [...conditions, condition] } };
}
