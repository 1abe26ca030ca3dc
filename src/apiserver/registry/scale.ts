// The autoscaling/v1 Scale view of a Deployment or ReplicaSet (kube's deployment and replicaset
// ScaleREST): spec.replicas and status.replicas, and the selector in its string form.
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { formatLabelSelector } from '../../api/printers/fields.js';
import { isPlainObject } from '../../api/json.js';
import { statusErrors } from '../../api/status.js';
import { validateScale } from '../../api/validation/replicaset.js';

export interface Scale {
  kind: 'Scale';
  apiVersion: 'autoscaling/v1';
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string | null;
  };
  spec: { replicas?: number };
  status: { replicas: number; selector?: string };
}

/** kube's NotFound for a scale of a missing object names `deployments/scale` (or replicasets). */
export const scaleResource = (r: ResourceInfo): { group: string; resource: string } => ({
  group: r.group,
  resource: `${r.resource}/scale`,
});

const record = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});

/** The Scale of `obj` (a Deployment or ReplicaSet). */
export function scaleOf(obj: KObject): Scale {
  const spec = record(obj.spec);
  const status = record(obj.status);
  const selector = formatLabelSelector(spec['selector']);
  const replicas = spec['replicas'];
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name ?? '',
      namespace: obj.metadata.namespace ?? '',
      uid: obj.metadata.uid ?? '',
      resourceVersion: obj.metadata.resourceVersion ?? '',
      creationTimestamp: obj.metadata.creationTimestamp ?? null,
    },
    spec: typeof replicas === 'number' && replicas !== 0 ? { replicas } : {},
    status: {
      replicas: typeof status['replicas'] === 'number' ? status['replicas'] : 0,
      ...(selector === '' ? {} : { selector }),
    },
  };
}

/** `obj` with the replicas a Scale asks for. */
export function withReplicas(obj: KObject, replicas: number): KObject {
  const next = structuredClone(obj);
  next.spec = { ...record(next.spec), replicas };
  return next;
}

/**
 * What a Scale written to .../scale of `name` asks for: spec.replicas (0 when absent) and the
 * resourceVersion it names as a precondition ('' when none). Throws a BadRequest when it names
 * another object and an Invalid when it does not validate.
 */
export function scaleRequest(name: string, wanted: unknown): { replicas: number; resourceVersion: string } {
  const errs = validateScale(wanted);
  const meta = (isPlainObject(wanted) && isPlainObject(wanted['metadata']) ? wanted['metadata'] : {}) as {
    name?: unknown;
    resourceVersion?: unknown;
  };
  if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name) {
    throw statusErrors.badRequest('the name of the object does not match the name on the request');
  }
  if (errs.length > 0) throw statusErrors.invalid({ group: 'autoscaling', kind: 'Scale' }, name, errs);
  const resourceVersion = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
  const spec = (isPlainObject(wanted) && isPlainObject(wanted['spec']) ? wanted['spec'] : {}) as {
    replicas?: unknown;
  };
  return { replicas: typeof spec.replicas === 'number' ? spec.replicas : 0, resourceVersion };
}
