// kube-apiserver's NodeRestriction admission plugin (plugin/pkg/admission/noderestriction): the writes a
// node identity may make once the Node mode has let them through. The Node mode allows any node to
// update any Node or pod status (it cannot see the objects); this check, run on the object being
// written, keeps each node to its own: its Node (without steering labels or taints), the pods bound to
// it, its Lease. Anyone who is not a node passes untouched. Pure: the one fact it needs beyond the
// objects, a Node's uid, comes in through `lookups`.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { nodeIdentity, NODE_LEASE_NAMESPACE, NODE_USER_PREFIX } from './node-authorizer.js';

export type AdmissionOperation = 'create' | 'update' | 'delete';

/** One write, as admission sees it (kube's admission.Attributes). */
export interface NodeWrite {
  readonly user: { readonly name: string; readonly groups: readonly string[] };
  readonly operation: AdmissionOperation;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  /** The object's name (on create, the name in the body). */
  readonly name: string;
  /** The object as it would be stored (create, update). */
  readonly object?: KObject;
  /** The stored object (update, delete). */
  readonly old?: KObject;
}

export interface NodeRestrictionLookups {
  /** metadata.uid of Node `name`; undefined when there is no such Node. */
  nodeUid(name: string): string | undefined;
}

/** Why the write is refused (a 403 around `reason`), a missing Node (404), or undefined to admit it. */
export type NodeRestrictionVerdict =
  | { readonly kind: 'forbidden'; readonly reason: string }
  | { readonly kind: 'node-not-found'; readonly name: string }
  | undefined;

/** Labels under this namespace (and its subdomains) are for the cluster's admins to set on nodes. */
export const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';
/** kube's MirrorPodAnnotationKey: a static pod's mirror, the only pod a node may create. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** k8s.io/kubelet's well-known labels a kubelet may set on its own Node. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const forbid = (reason: string): NodeRestrictionVerdict => ({ kind: 'forbidden', reason });
const OPERATION = { create: 'CREATE', update: 'UPDATE', delete: 'DELETE' } as const;

/** The NodeRestriction verdict on one write. */
export function admitNodeWrite(w: NodeWrite, lookups: NodeRestrictionLookups): NodeRestrictionVerdict {
  const node = nodeIdentity(w.user);
  if (node === undefined) return undefined;
  if (node === '') return forbid(`could not determine node from user "${NODE_USER_PREFIX}"`);
  if (w.apiGroup === '' && w.resource === 'pods') {
    switch (w.subresource) {
      case '':
        return admitPod(node, w, lookups);
      case 'status':
        return admitPodStatus(node, w);
      default:
        return forbid(
          `unexpected pod subresource "${w.subresource}", only 'status' and 'eviction' are allowed`,
        );
    }
  }
  if (w.apiGroup === '' && w.resource === 'nodes') return admitNode(node, w);
  if (w.apiGroup === 'coordination.k8s.io' && w.resource === 'leases') return admitLease(node, w);
  return undefined;
}

const nodeNameOf = (pod: KObject | undefined): string => {
  const spec = pod?.spec;
  return isPlainObject(spec) && typeof spec.nodeName === 'string' ? spec.nodeName : '';
};

function admitPod(node: string, w: NodeWrite, lookups: NodeRestrictionLookups): NodeRestrictionVerdict {
  switch (w.operation) {
    case 'create':
      return admitMirrorPod(node, w.object, lookups);
    case 'delete':
      return nodeNameOf(w.old) === node
        ? undefined
        : forbid(`node "${node}" can only delete pods with spec.nodeName set to itself`);
    default:
      return forbid(
        `unexpected operation "${OPERATION[w.operation]}", node "${node}" can only create and delete mirror pods`,
      );
  }
}

function admitMirrorPod(
  node: string,
  pod: KObject | undefined,
  lookups: NodeRestrictionLookups,
): NodeRestrictionVerdict {
  if (pod === undefined) return forbid('unexpected type <nil>');
  const annotations = pod.metadata.annotations ?? {};
  if (!Object.hasOwn(annotations, MIRROR_POD_ANNOTATION)) {
    return forbid(
      `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`,
    );
  }
  if (nodeNameOf(pod) !== node)
    return forbid(`node "${node}" can only create pods with spec.nodeName set to itself`);
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.length > 1) {
    return forbid(`node "${node}" can only create pods with a single owner reference set to itself`);
  }
  const owner = owners[0];
  if (owner === undefined || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) {
    return forbid(`node "${node}" can only create pods with an owner reference set to itself`);
  }
  if (owner.controller !== true) {
    return forbid(`node "${node}" can only create pods with a controller owner reference set to itself`);
  }
  if (owner.blockOwnerDeletion === true) {
    return forbid(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
  }
  const uid = lookups.nodeUid(node);
  if (uid === undefined) return { kind: 'node-not-found', name: node };
  if (owner.uid !== uid) return forbid(`node ${node} UID mismatch: expected ${owner.uid} got ${uid}`);
  const refs = podReferences(pod.spec);
  if (refs.serviceAccount)
    return forbid(`node "${node}" can not create pods that reference a service account`);
  for (const kind of ['secrets', 'configmaps', 'clustertrustbundles', 'persistentvolumeclaims'] as const) {
    if (refs[kind]) return forbid(`node "${node}" can not create pods that reference ${kind}`);
  }
  return undefined;
}

function admitPodStatus(node: string, w: NodeWrite): NodeRestrictionVerdict {
  if (w.operation !== 'update') return forbid(`unexpected operation "${OPERATION[w.operation]}"`);
  if (nodeNameOf(w.old) !== node) {
    return forbid(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
  }
  if (!sameStrings(w.old?.metadata.labels, w.object?.metadata.labels)) {
    return forbid(`node "${node}" cannot update labels through pod status`);
  }
  if (claimStatuses(w.old) !== claimStatuses(w.object)) {
    return forbid(`node "${node}" cannot update resource claim statues`);
  }
  return undefined;
}

/** The names and claims of status.resourceClaimStatuses, which a node may not change. */
function claimStatuses(pod: KObject | undefined): string {
  const status = pod?.status;
  const list =
    isPlainObject(status) && Array.isArray(status.resourceClaimStatuses) ? status.resourceClaimStatuses : [];
  return JSON.stringify(
    list.map((s: unknown) => (isPlainObject(s) ? [s.name ?? '', s.resourceClaimName ?? null] : null)),
  );
}

function admitNode(node: string, w: NodeWrite): NodeRestrictionVerdict {
  if (w.name !== node) return forbid(`node "${node}" is not allowed to modify node "${w.name}"`);
  const spec = isPlainObject(w.object?.spec) ? w.object.spec : {};
  if (w.operation === 'create') {
    if (spec.configSource !== undefined && spec.configSource !== null) {
      return forbid(`node "${node}" is not allowed to create pods with a non-nil configSource`);
    }
    const bad = forbiddenLabels(w.object?.metadata.labels, undefined);
    if (bad.length > 0)
      return forbid(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
  }
  if (w.operation === 'update') {
    const oldSpec = isPlainObject(w.old?.spec) ? w.old.spec : {};
    if (
      spec.configSource !== undefined &&
      spec.configSource !== null &&
      JSON.stringify(spec.configSource) !== JSON.stringify(oldSpec.configSource)
    ) {
      return forbid(`node "${node}" is not allowed to update configSource to a new non-nil configSource`);
    }
    if (!sameTaints(spec.taints, oldSpec.taints))
      return forbid(`node "${node}" is not allowed to modify taints`);
    const bad = forbiddenLabels(w.object?.metadata.labels, w.old?.metadata.labels);
    // Upstream's message for an update names no node.
    if (bad.length > 0) return forbid(`is not allowed to modify labels: ${bad.join(', ')}`);
  }
  return undefined;
}

function admitLease(node: string, w: NodeWrite): NodeRestrictionVerdict {
  if (w.namespace !== NODE_LEASE_NAMESPACE) {
    return forbid(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  }
  if (w.name !== node) return forbid('can only access node lease with the same name as the requesting node');
  return undefined;
}

/** Taints compared as upstream's semantic equality does: an empty list is no list. */
function sameTaints(a: unknown, b: unknown): boolean {
  const norm = (t: unknown): string => (Array.isArray(t) && t.length > 0 ? JSON.stringify(t) : '[]');
  return norm(a) === norm(b);
}

/** labels.Equals: the same keys with the same values. */
function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && y[k] === x[k]);
}

const labelNamespace = (key: string): string => {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
};
const inNamespace = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

const isKubeletLabel = (key: string): boolean =>
  KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((d) => inNamespace(labelNamespace(key), d));

/** The labels added, removed or changed that a node may not touch, sorted (upstream's sets.List). */
function forbiddenLabels(
  next: Record<string, string> | undefined,
  prev: Record<string, string> | undefined,
): string[] {
  const a = next ?? {};
  const b = prev ?? {};
  const changed = new Set<string>();
  for (const k of Object.keys(a)) if (!Object.hasOwn(b, k) || a[k] !== b[k]) changed.add(k);
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k) || a[k] !== b[k]) changed.add(k);
  const out: string[] = [];
  for (const key of changed) {
    const ns = labelNamespace(key);
    const restricted = inNamespace(ns, NODE_RESTRICTION_LABEL_NAMESPACE);
    const kubernetes = inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io');
    if (restricted || (kubernetes && !isKubeletLabel(key))) out.push(key);
  }
  return out.sort();
}

/** What in a pod spec names another API object (upstream's VisitPodSecretNames and friends). */
function podReferences(spec: unknown): {
  serviceAccount: boolean;
  secrets: boolean;
  configmaps: boolean;
  clustertrustbundles: boolean;
  persistentvolumeclaims: boolean;
} {
  const refs = {
    serviceAccount: false,
    secrets: false,
    configmaps: false,
    clustertrustbundles: false,
    persistentvolumeclaims: false,
  };
  if (!isPlainObject(spec)) return refs;
  refs.serviceAccount = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '';
  const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
  if (list(spec.imagePullSecrets).length > 0) refs.secrets = true;
  const containers = [
    ...list(spec.initContainers),
    ...list(spec.containers),
    ...list(spec.ephemeralContainers),
  ];
  for (const c of containers) {
    for (const from of list(c.envFrom)) {
      if (isPlainObject(from.secretRef)) refs.secrets = true;
      if (isPlainObject(from.configMapRef)) refs.configmaps = true;
    }
    for (const env of list(c.env)) {
      const vf = env.valueFrom;
      if (!isPlainObject(vf)) continue;
      if (isPlainObject(vf.secretKeyRef)) refs.secrets = true;
      if (isPlainObject(vf.configMapKeyRef)) refs.configmaps = true;
    }
  }
  for (const vol of list(spec.volumes)) {
    if (isPlainObject(vol.secret)) refs.secrets = true;
    if (isPlainObject(vol.configMap)) refs.configmaps = true;
    if (isPlainObject(vol.persistentVolumeClaim)) refs.persistentvolumeclaims = true;
    // Volume plugins that take their credentials from a Secret.
    for (const plugin of [
      'azureFile',
      'cephfs',
      'cinder',
      'flexVolume',
      'iscsi',
      'rbd',
      'scaleIO',
      'storageos',
      'csi',
    ]) {
      const src = vol[plugin];
      if (!isPlainObject(src)) continue;
      if (
        isPlainObject(src.secretRef) ||
        isPlainObject(src.nodePublishSecretRef) ||
        typeof src.secretName === 'string'
      )
        refs.secrets = true;
    }
    const projected = vol.projected;
    if (!isPlainObject(projected)) continue;
    for (const source of list(projected.sources)) {
      if (isPlainObject(source.secret)) refs.secrets = true;
      if (isPlainObject(source.configMap)) refs.configmaps = true;
      if (isPlainObject(source.clusterTrustBundle)) refs.clustertrustbundles = true;
    }
  }
  return refs;
}
