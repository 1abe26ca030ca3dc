// pods/binding (kube's BindingREST and setPodHostAndAnnotations): checks of a v1 Binding and the pod
// it binds, the bound pod, and its write straight to storage.
import { FieldPath, notSupported, required, type FieldError } from '../../api/field-errors.js';
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { mustFindResource } from '../../api/resources.js';
import { isStatusError, statusErrors, type StatusError } from '../../api/status.js';
import type { Store } from '../../storage/store.js';
import { decodeObject, encodeObject, objectKey } from '../codec.js';
import { guaranteedUpdate, storeWrite } from './guaranteed-update.js';
import { atRevision } from './object-meta.js';
import type { WriteContext } from './types.js';

export interface Binding {
  readonly name: string;
  readonly namespace: string | undefined;
  readonly uid: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly annotations: Readonly<Record<string, string>>;
  readonly targetKind: string;
  readonly targetName: string;
}

const BINDING_RESOURCE = { group: '', resource: 'pods/binding' };
const PODS = mustFindResource('', 'pods');
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Reads a decoded Binding body; 400 for what is not one, 422 for a bad target (ValidatePodBinding). */
export function readBinding(body: unknown): Binding {
  if (!isPlainObject(body)) throw statusErrors.badRequest('the body of a binding must be a Binding object');
  const kind = body['kind'];
  if (kind !== undefined && kind !== 'Binding') {
    throw statusErrors.badRequest(
      `the kind in the data (${String(kind)}) does not match the expected kind (Binding)`,
    );
  }
  const meta = isPlainObject(body['metadata']) ? body['metadata'] : {};
  const target = isPlainObject(body['target']) ? body['target'] : {};
  const annotations: Record<string, string> = {};
  if (isPlainObject(meta['annotations'])) {
    for (const [k, v] of Object.entries(meta['annotations'])) if (typeof v === 'string') annotations[k] = v;
  }
  const binding: Binding = {
    name: str(meta['name']) ?? '',
    namespace: str(meta['namespace']),
    uid: str(meta['uid']) || undefined,
    resourceVersion: str(meta['resourceVersion']) || undefined,
    annotations,
    targetKind: str(target['kind']) ?? '',
    targetName: str(target['name']) ?? '',
  };
  const errs: FieldError[] = [];
  const targetPath = FieldPath.root('target');
  if (binding.targetKind !== '' && binding.targetKind !== 'Node') {
    errs.push(notSupported(targetPath.child('kind'), binding.targetKind, ['Node', '<empty>']));
  }
  if (binding.targetName === '') errs.push(required(targetPath.child('name'), ''));
  if (errs.length > 0) throw statusErrors.invalid({ group: '', kind: 'Binding' }, binding.name, errs);
  return binding;
}

/** Why `pod` may not be bound now, as the 409 upstream answers with; undefined when it may. */
export function bindingRefusal(pod: KObject, binding: Binding): StatusError | undefined {
  const name = pod.metadata.name ?? binding.name;
  const conflict = (detail: string): StatusError => statusErrors.conflict(BINDING_RESOURCE, name, detail);
  if (binding.uid !== undefined && binding.uid !== pod.metadata.uid) {
    return conflict(
      `Precondition failed: UID in precondition: ${binding.uid}, UID in object meta: ${pod.metadata.uid ?? ''}`,
    );
  }
  if (binding.resourceVersion !== undefined && binding.resourceVersion !== pod.metadata.resourceVersion) {
    return conflict(
      `Precondition failed: ResourceVersion in precondition: ${binding.resourceVersion}, ResourceVersion in object meta: ${pod.metadata.resourceVersion ?? ''}`,
    );
  }
  if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) {
    return conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
  }
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  const node = str(spec['nodeName']) ?? '';
  if (node !== '') return conflict(`pod ${name} is already assigned to node ${JSON.stringify(node)}`);
  const gates = spec['schedulingGates'];
  if (Array.isArray(gates) && gates.length > 0) {
    return conflict(`pod ${name} has non-empty .spec.schedulingGates`);
  }
  return undefined;
}

/** The pod bound to the binding's node: nodeName, the binding's annotations, PodScheduled True. */
export function boundPod(pod: KObject, binding: Binding, now: string): KObject {
  const next = structuredClone(pod);
  next.spec = { ...(isPlainObject(next.spec) ? next.spec : {}), nodeName: binding.targetName };
  if (Object.keys(binding.annotations).length > 0) {
    next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...binding.annotations };
  }
  const status = isPlainObject(next.status) ? next.status : {};
  // podutil.UpdatePodCondition: replaced in place; the transition time moves only when the status does.
  const conditions: unknown[] = Array.isArray(status['conditions']) ? [...status['conditions']] : [];
  const at = conditions.findIndex((c) => isPlainObject(c) && c['type'] === 'PodScheduled');
  const before = at < 0 ? undefined : (conditions[at] as Record<string, unknown>);
  const scheduled: Record<string, unknown> = {
    type: 'PodScheduled',
    status: 'True',
    lastTransitionTime:
      before?.['status'] === 'True' && typeof before['lastTransitionTime'] === 'string'
        ? before['lastTransitionTime']
        : now,
  };
  if (at < 0) conditions.push(scheduled);
  else conditions[at] = scheduled;
  next.status = { ...status, conditions };
  return next;
}

/**
 * POST pods/{name}/binding (and the legacy bindings) at the time `now` gives: sets spec.nodeName once,
 * merges the binding's annotations and sets PodScheduled, written straight to storage as kube's
 * setPodHostAndAnnotations does (no pod strategy: nodeName is otherwise immutable).
 */
export async function bindPod(
  store: Store,
  namespace: string,
  binding: Binding,
  ctx: WriteContext,
  now: () => string,
): Promise<KObject> {
  const key = objectKey(PODS, namespace, binding.name);
  return guaranteedUpdate(
    async () => {
      const kv = await store.get(key);
      return kv === undefined ? undefined : decodeObject(kv.value, kv.modRevision);
    },
    (old) => {
      if (old === undefined) throw statusErrors.notFound(PODS, binding.name);
      const refusal = bindingRefusal(old, binding);
      if (refusal !== undefined) throw refusal;
      const next = boundPod(old, binding, now());
      if (ctx.dryRun) return { done: next };
      return {
        write: () =>
          storeWrite(PODS, binding.name, async () => {
            const kv = await store.update(key, encodeObject(next), Number(old.metadata.resourceVersion));
            return atRevision(next, kv.modRevision);
          }),
      };
    },
    (err) => isStatusError(err, 'Conflict'),
  );
}
