// Defaulting for every kind we serve, as kube-apiserver's v1 defaulting and create strategies do it.
// applyDefaults mutates the object in place and is idempotent; it never assigns cluster IPs, IP
// families or node ports (the allocator does). prepareForUpdate carries over, from the stored object,
// values a client may leave out of a full update (kubectl replace) that the server owns.
import type { KObject } from '../object.js';
import type { ResourceInfo } from '../resources.js';
import { defaultDeploymentSpec } from './deployment.js';
import { defaultPod, defaultPodTemplate } from './pod.js';
import { defaultBinding } from './rbac.js';
import { defaultServiceSpec, prepareServiceUpdate } from './service.js';
import { type Obj, absent, child, ensureChild, isObj, items, setDefault, setDefaultString } from './util.js';

export { defaultPullPolicy, podQOSClass } from './pod.js';

export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

function defaultNamespace(obj: Obj): void {
  const meta = child(obj, 'metadata');
  const name = meta?.['name'];
  if (meta !== undefined && typeof name === 'string' && name !== '') {
    const labels = ensureChild(meta, 'labels');
    if (labels !== undefined) labels[NAMESPACE_NAME_LABEL] = name;
  }
  // The "kubernetes" finalizer is added on create; once deletion has started, the finalize
  // subresource removes it and must not see it come back.
  if (meta === undefined || absent(meta, 'deletionTimestamp')) {
    const spec = ensureChild(obj, 'spec');
    if (spec !== undefined) setDefault(spec, 'finalizers', ['kubernetes']);
  }
  const status = ensureChild(obj, 'status');
  if (status !== undefined) setDefaultString(status, 'phase', 'Active');
}

function defaultNode(obj: Obj): void {
  const status = child(obj, 'status');
  const capacity = status === undefined ? undefined : child(status, 'capacity');
  if (status !== undefined && capacity !== undefined && absent(status, 'allocatable')) {
    status['allocatable'] = { ...capacity };
  }
}

function defaultEndpoints(obj: Obj): void {
  for (const subset of items(obj, 'subsets')) {
    for (const port of items(subset, 'ports')) setDefaultString(port, 'protocol', 'TCP');
  }
}

function defaultEndpointSlice(obj: Obj): void {
  for (const port of items(obj, 'ports')) {
    setDefault(port, 'name', '');
    setDefault(port, 'protocol', 'TCP');
  }
}

function defaultTemplate(obj: Obj, apply: (spec: Obj) => void): void {
  const spec = child(obj, 'spec');
  const template = spec === undefined ? undefined : ensureChild(spec, 'template');
  if (template !== undefined) apply(template);
}

/** Fill in every default of the kind, in place. Idempotent; unknown kinds are left alone. */
export function applyDefaults(r: ResourceInfo, obj: KObject): void {
  const o = obj as unknown as Obj;
  if (!isObj(o)) return;
  switch (`${r.group}/${r.kind}`) {
    case '/Service': {
      const spec = ensureChild(o, 'spec');
      if (spec !== undefined) defaultServiceSpec(spec);
      break;
    }
    case '/Pod':
      defaultPod(o);
      break;
    case '/Namespace':
      defaultNamespace(o);
      break;
    case '/Node':
      defaultNode(o);
      break;
    case '/Endpoints':
      defaultEndpoints(o);
      break;
    case 'discovery.k8s.io/EndpointSlice':
      defaultEndpointSlice(o);
      break;
    case 'apps/Deployment': {
      const spec = ensureChild(o, 'spec');
      if (spec !== undefined) defaultDeploymentSpec(spec);
      break;
    }
    case 'apps/ReplicaSet': {
      // SetDefaults_ReplicaSet: replicas 1; the template gets the pod defaults.
      const spec = ensureChild(o, 'spec');
      if (spec !== undefined) {
        setDefault(spec, 'replicas', 1);
        defaultPodTemplate(child(spec, 'template'));
      }
      break;
    }
    case 'superedge.io/ServiceGrid':
      defaultTemplate(o, defaultServiceSpec);
      break;
    case 'superedge.io/DeploymentGrid': {
      defaultTemplate(o, defaultDeploymentSpec);
      const pool = child(child(o, 'spec') ?? {}, 'templatePool');
      for (const entry of Object.values(pool ?? {})) if (isObj(entry)) defaultDeploymentSpec(entry);
      break;
    }
    case 'rbac.authorization.k8s.io/RoleBinding':
    case 'rbac.authorization.k8s.io/ClusterRoleBinding':
      defaultBinding(o);
      break;
    default:
      break;
  }
}

/**
 * Before validating an update of the main resource: keep what the server owns when the client left
 * it out — uid and creationTimestamp for every kind; a Service's clusterIP(s), IP families and node
 * ports; a Namespace's spec.finalizers (changed only through /finalize). Call before applyDefaults.
 */
export function prepareForUpdate(r: ResourceInfo, obj: KObject, old: KObject): void {
  const o = obj as unknown as Obj;
  const before = old as unknown as Obj;
  if (!isObj(o) || !isObj(before)) return;
  const meta = child(o, 'metadata');
  const oldMeta = child(before, 'metadata');
  if (meta !== undefined && oldMeta !== undefined) {
    for (const key of ['uid', 'creationTimestamp']) {
      if ((absent(meta, key) || meta[key] === '') && !absent(oldMeta, key)) meta[key] = oldMeta[key];
    }
    if (!absent(oldMeta, 'deletionTimestamp')) meta['deletionTimestamp'] = oldMeta['deletionTimestamp'];
    if (absent(meta, 'deletionGracePeriodSeconds') && !absent(oldMeta, 'deletionGracePeriodSeconds')) {
      meta['deletionGracePeriodSeconds'] = oldMeta['deletionGracePeriodSeconds'];
    }
  }
  switch (`${r.group}/${r.kind}`) {
    case '/Service': {
      const spec = ensureChild(o, 'spec');
      const oldSpec = child(before, 'spec');
      if (spec !== undefined && oldSpec !== undefined) prepareServiceUpdate(spec, oldSpec);
      break;
    }
    case '/Namespace': {
      const spec = ensureChild(o, 'spec');
      const oldSpec = child(before, 'spec');
      if (spec !== undefined) {
        if (oldSpec !== undefined && !absent(oldSpec, 'finalizers'))
          spec['finalizers'] = oldSpec['finalizers'];
        else delete spec['finalizers'];
      }
      break;
    }
    default:
      break;
  }
}

export { defaultPodTemplate };
