// Validation for every kind we serve: validateCreate, validateUpdate and validateStatusUpdate return
// kube-apiserver's field errors (paths and texts), empty when the object is valid. Pure functions of
// their inputs; they never throw, whatever JSON they are given. Run defaulting (applyDefaults) first:
// like upstream, validation expects defaulted objects (`spec.sessionAffinity: Required value` is what
// an undefaulted Service gets).
import type { FieldError } from '../field-errors.js';
import { FieldPath } from '../field-errors.js';
import type { KObject } from '../object.js';
import type { ResourceInfo } from '../resources.js';
import {
  validateDeploymentSpec,
  validateDeploymentSpecUpdate,
  validateDeploymentStatus,
} from './deployment.js';
import { validateReplicaSetSpec, validateReplicaSetStatus } from './replicaset.js';
import { validateEndpointSlice, validateEndpointSliceUpdate } from './endpointslice.js';
import { validateEndpoints } from './endpoints.js';
import type { ValidationOptions } from './options.js';
export type { ValidationOptions } from './options.js';
import { validateEventCreate, validateEventUpdate } from './event.js';
import { validateDeploymentGrid, validateServiceGrid } from './grids.js';
import { In, isObj } from './json.js';
import { validateLeaseSpec } from './lease.js';
import { validateCsrSpec, validateCsrStatus } from './certificate-signing-request.js';
import { validateNamespaceCreate, validateNamespaceStatusUpdate } from './namespace.js';
import { validateNodeCreate, validateNodeUpdate } from './node.js';
import {
  metaAnnotations,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type ObjectMetaOptions,
} from './object-meta.js';
import { validatePodSpec, validatePodSpecUpdate, validatePodStatus } from './pod.js';
import { validateBinding, validateBindingUpdate, validateRole } from './rbac.js';
import {
  validateLoadBalancerStatus,
  validateServiceSpec,
  validateServiceSpecUpdate,
  serviceView,
} from './service.js';

type KindKey =
  | '/Namespace'
  | '/Node'
  | '/Pod'
  | '/Service'
  | '/Endpoints'
  | '/Event'
  | 'events.k8s.io/Event'
  | 'discovery.k8s.io/EndpointSlice'
  | 'coordination.k8s.io/Lease'
  | 'apps/Deployment'
  | 'apps/ReplicaSet'
  | 'superedge.io/ServiceGrid'
  | 'superedge.io/DeploymentGrid'
  | 'rbac.authorization.k8s.io/Role'
  | 'rbac.authorization.k8s.io/ClusterRole'
  | 'rbac.authorization.k8s.io/RoleBinding'
  | 'rbac.authorization.k8s.io/ClusterRoleBinding'
  | 'certificates.k8s.io/CertificateSigningRequest';

const kindKey = (r: ResourceInfo): KindKey => `${r.group}/${r.kind}` as KindKey;

/** Services' names are DNS-1035 labels upstream (they must start with a letter). */
function nameRuleOf(r: ResourceInfo): ObjectMetaOptions['nameRule'] {
  return r.group === '' && r.kind === 'Service' ? 'dns1035' : r.nameRule;
}

/** Core's extra finalizer-name rule applies to built-in kinds validated by core's ObjectMeta rules. */
const kubeFinalizers = (r: ResourceInfo): boolean => !r.custom && r.group !== 'coordination.k8s.io';

const asRecord = (obj: unknown): Record<string, unknown> => (isObj(obj) ? obj : {});

function specIn(obj: Record<string, unknown>, errs: FieldError[]): In {
  const p = FieldPath.root('spec');
  return In.at(obj['spec'], p, errs) ?? new In({}, p, errs);
}

/** The kind-specific rules shared by create and update (update adds its own on top). */
function validateKind(
  r: ResourceInfo,
  obj: Record<string, unknown>,
  old: Record<string, unknown> | undefined,
  opts: ValidationOptions,
): FieldError[] {
  const errs: FieldError[] = [];
  switch (kindKey(r)) {
    case '/Service': {
      const spec = specIn(obj, errs);
      const opts = { annotations: metaAnnotations(obj['metadata']), rootQuirks: true };
      if (old !== undefined) {
        const oldSpec = specIn(old, []);
        errs.push(...validateServiceSpecUpdate(spec, oldSpec, spec.path));
        errs.push(...validateServiceSpec(spec, spec.path, { ...opts, old: serviceView(oldSpec) }));
      } else {
        errs.push(...validateServiceSpec(spec, spec.path, opts));
      }
      break;
    }
    case '/Pod':
      errs.push(...validatePodSpec(specIn(obj, errs), { isPod: true }));
      if (old !== undefined) errs.push(...validatePodSpecUpdate(obj['spec'], old['spec']));
      break;
    case '/Node':
      errs.push(...validateNodeCreate(obj));
      if (old !== undefined) errs.push(...validateNodeUpdate(obj, old));
      break;
    case '/Namespace':
      if (old === undefined) errs.push(...validateNamespaceCreate(obj));
      break;
    case '/Endpoints':
      errs.push(...validateEndpoints(obj, opts));
      break;
    case '/Event':
    case 'events.k8s.io/Event': {
      const v1 = r.group === 'events.k8s.io';
      errs.push(...(old === undefined ? validateEventCreate(obj, v1) : validateEventUpdate(obj, old, v1)));
      break;
    }
    case 'discovery.k8s.io/EndpointSlice':
      errs.push(...validateEndpointSlice(obj, opts));
      if (old !== undefined) errs.push(...validateEndpointSliceUpdate(obj, old));
      break;
    case 'coordination.k8s.io/Lease':
      errs.push(...validateLeaseSpec(obj));
      break;
    case 'apps/Deployment': {
      const spec = specIn(obj, errs);
      errs.push(...validateDeploymentSpec(spec));
      if (old !== undefined) errs.push(...validateDeploymentSpecUpdate(spec, specIn(old, [])));
      break;
    }
    case 'apps/ReplicaSet': {
      const spec = specIn(obj, errs);
      errs.push(...validateReplicaSetSpec(spec));
      // apps/v1 makes the selector immutable, as for Deployments.
      if (old !== undefined) errs.push(...validateDeploymentSpecUpdate(spec, specIn(old, [])));
      break;
    }
    case 'superedge.io/ServiceGrid':
      errs.push(...validateServiceGrid(obj));
      break;
    case 'superedge.io/DeploymentGrid':
      errs.push(...validateDeploymentGrid(obj));
      break;
    case 'rbac.authorization.k8s.io/Role':
    case 'rbac.authorization.k8s.io/ClusterRole':
      errs.push(...validateRole(obj, r.namespaced));
      break;
    case 'rbac.authorization.k8s.io/RoleBinding':
    case 'rbac.authorization.k8s.io/ClusterRoleBinding':
      errs.push(...validateBinding(obj, r.namespaced));
      if (old !== undefined) errs.push(...validateBindingUpdate(obj, old));
      break;
    case 'certificates.k8s.io/CertificateSigningRequest':
      // The spec is immutable (the registry keeps the stored one), so only a new request is checked.
      if (old === undefined) errs.push(...validateCsrSpec(obj, opts.parseCertificateRequest));
      break;
  }
  return errs;
}

/** Validate an object about to be created (after defaulting). */
export function validateCreate(r: ResourceInfo, obj: KObject, opts: ValidationOptions = {}): FieldError[] {
  const o = asRecord(obj);
  return [
    ...validateObjectMeta(o['metadata'], {
      namespaced: r.namespaced,
      nameRule: nameRuleOf(r),
      isCreate: true,
      kubeFinalizers: kubeFinalizers(r),
    }),
    ...validateKind(r, o, undefined, opts),
  ];
}

/**
 * Validate an update of the main resource: metadata immutability and the kind's update rules
 * (Service clusterIPs/ipFamilies/loadBalancerClass/healthCheckNodePort, Pod spec mutability,
 * Deployment selector, EndpointSlice addressType, Node podCIDRs/providerID, Event fields), plus every
 * create rule of the new object's spec.
 */
export function validateUpdate(
  r: ResourceInfo,
  obj: KObject,
  old: KObject,
  opts: ValidationOptions = {},
): FieldError[] {
  const o = asRecord(obj);
  const before = asRecord(old);
  return [
    ...validateObjectMetaUpdate(o['metadata'], before['metadata'], { kubeFinalizers: kubeFinalizers(r) }),
    ...validateKind(r, o, before, opts),
  ];
}

/** Validate an update through the /status subresource: metadata rules plus the kind's status rules. */
export function validateStatusUpdate(r: ResourceInfo, obj: KObject, old: KObject): FieldError[] {
  const o = asRecord(obj);
  const before = asRecord(old);
  const errs = validateObjectMetaUpdate(o['metadata'], before['metadata'], {
    kubeFinalizers: kubeFinalizers(r),
  });
  const status = In.at(o['status'], FieldPath.root('status'), errs);
  switch (kindKey(r)) {
    case '/Service':
      errs.push(...validateLoadBalancerStatus(status));
      break;
    case '/Pod':
      errs.push(...validatePodStatus(status));
      break;
    case '/Node':
      errs.push(...validateNodeCreate(o), ...validateNodeUpdate(o, before));
      break;
    case '/Namespace':
      errs.push(...validateNamespaceStatusUpdate(o));
      break;
    case 'apps/Deployment':
      errs.push(...validateDeploymentStatus(o, before));
      break;
    case 'apps/ReplicaSet':
      errs.push(...validateReplicaSetStatus(o));
      break;
    case 'certificates.k8s.io/CertificateSigningRequest':
      errs.push(...validateCsrStatus(o, before));
      break;
    default:
      break;
  }
  return errs;
}
