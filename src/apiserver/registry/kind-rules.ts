// Per-kind rules of kube's registry strategies that the generic registry consults.
import { type KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { mustFindResource, type ResourceInfo } from '../../api/resources.js';
import { admitPodCreate } from '../../api/defaults/pod-admission.js';
import { statusErrors } from '../../api/status.js';

const NAMESPACES = mustFindResource('', 'namespaces');

/** kube's AllowCreateOnUpdate: true for services (svcStrategy), the kinds whose writers PUT blindly (endpoints, leases, events) and the four RBAC kinds. */
export const allowCreateOnUpdate = (r: ResourceInfo): boolean =>
  (r.group === '' && r.resource === 'services') ||
  r.resource === 'endpoints' ||
  r.resource === 'leases' ||
  r.resource === 'events' ||
  r.group === 'rbac.authorization.k8s.io';

export function resetStatusOnCreate(r: ResourceInfo, obj: KObject): void {
  if (!r.hasStatus) return;
  switch (r.resource) {
    case 'nodes':
      return; // kubelets register nodes with their status
    case 'pods':
      obj.status = { phase: 'Pending', ...(isPlainObject(obj.status) ? obj.status : {}) };
      return;
    case 'namespaces':
      obj.status = { phase: 'Active' };
      return;
    default:
      delete obj.status;
  }
}

/** kube's default admission plugins that change a new object (only Pods have any here); throws Forbidden. */
export function admitOnCreate(r: ResourceInfo, obj: KObject): void {
  if (r.group !== '' || r.resource !== 'pods') return;
  const why = admitPodCreate(obj as unknown as Record<string, unknown>);
  if (why !== undefined) throw statusErrors.forbidden(r, obj.metadata.name ?? '', why);
}

export function patchSetsResourceVersion(patch: unknown): boolean {
  if (Array.isArray(patch))
    return patch.some((op) => isPlainObject(op) && String(op['path']) === '/metadata/resourceVersion');
  if (!isPlainObject(patch)) return false;
  const m = patch['metadata'];
  return isPlainObject(m) && m['resourceVersion'] !== undefined && m['resourceVersion'] !== null;
}

/** Whether anything still holds an object that is being deleted: its finalizers (and a namespace's spec.finalizers). */
export function holdsDeletion(r: ResourceInfo, obj: KObject): boolean {
  if ((obj.metadata.finalizers ?? []).length > 0) return true;
  const spec = obj.spec as { finalizers?: unknown } | undefined;
  return r === NAMESPACES && Array.isArray(spec?.finalizers) && spec.finalizers.length > 0;
}

export function sameList(a: readonly string[], b: readonly string[] | undefined): boolean {
  return a.length === (b ?? []).length && a.every((x, i) => x === b![i]);
}

/**
 * What an update through /status may change besides status. Most kinds keep the stored metadata; the
 * apps status strategies reset only spec (and a Deployment's labels), so a Deployment's annotations
 * (the controller writes its revision annotation through /status) and a ReplicaSet's labels and
 * annotations are taken from the request (kube's deploymentStatusStrategy and rsStatusStrategy).
 */
export function statusSubresourceMetadata(r: ResourceInfo, next: KObject, incoming: KObject): void {
  if (r.group !== 'apps') return;
  const keys =
    r.resource === 'replicasets' ? (['labels', 'annotations'] as const) : (['annotations'] as const);
  for (const k of keys) {
    const v = incoming.metadata[k];
    if (v === undefined) delete next.metadata[k];
    else next.metadata[k] = structuredClone(v);
  }
}
