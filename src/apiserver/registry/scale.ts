// The autoscaling/v1 Scale view of a Deployment or ReplicaSet (kube's deployment and replicaset
// ScaleREST): spec.replicas and status.replicas, and the selector in its string form.
import type { KObject } from '../../api/object.js';
import { formatLabelSelector } from '../../api/printers/fields.js';
import { isPlainObject } from '../../api/json.js';

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
