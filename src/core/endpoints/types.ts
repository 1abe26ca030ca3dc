// The shapes the Endpoints controller reads and writes (core/v1 Service, Pod and Endpoints), and the
// constants it shares with upstream. Objects arrive as JSON from the API or from a cache, so every field is
// optional here and is read through the guards in read.ts, never trusted to have its declared type.
import type { KObject } from '../../api/object.js';
import type { Projection } from '../projection/projection.js';

/** Upper bound on the addresses (ready + not ready) one Endpoints object carries (upstream maxCapacity). */
export const MAX_ENDPOINT_ADDRESSES = 1000;
/** Annotation set to `truncated` when the subsets were cut down to MAX_ENDPOINT_ADDRESSES. */
export const OVER_CAPACITY_ANNOTATION = 'endpoints.kubernetes.io/over-capacity';
export const TRUNCATED = 'truncated';
/** Annotation holding the time (UTC, RFC 3339 with nanoseconds) of the change that caused this write. */
export const LAST_CHANGE_TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
/** Label (value "") on Endpoints of a Service without a cluster IP. */
export const HEADLESS_SERVICE_LABEL = 'service.kubernetes.io/headless';

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KObject {
  subsets?: EndpointSubset[];
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port?: number;
  /** IntOrString: a number, or the name of a container port. 0, "" and absent mean `port`. */
  targetPort?: number | string;
}

export interface ServiceSpec {
  type?: string;
  /** null or absent: selectorless, Endpoints are managed by the user. `{}` selects every pod. */
  selector?: Record<string, string> | null;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ports?: ServicePort[];
  publishNotReadyAddresses?: boolean;
}

export interface Service extends KObject {
  spec?: ServiceSpec;
}

export interface ContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}

export interface Container {
  name?: string;
  ports?: ContainerPort[];
  /** Only on init containers: `Always` makes it a restartable (sidecar) init container. */
  restartPolicy?: string;
}

export interface PodCondition {
  type?: string;
  status?: string;
  lastTransitionTime?: string | null;
}

export interface PodSpec {
  nodeName?: string;
  hostname?: string;
  subdomain?: string;
  containers?: Container[];
  initContainers?: Container[];
}

export interface PodStatus {
  phase?: string;
  podIP?: string;
  podIPs?: { ip?: string }[];
  conditions?: PodCondition[];
}

export interface Pod extends KObject {
  spec?: PodSpec;
  status?: PodStatus;
}

/**
 * Every field of a pod that the endpoints and EndpointSlice controllers read (the Pod type above, plus
 * metadata): their pod informer keeps only these, so 100,000 cached pods hold no images, probes or
 * container statuses. A property test checks that plans made from projected pods equal plans made from
 * whole ones.
 */
export const ENDPOINTS_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  spec: {
    nodeName: true,
    hostname: true,
    subdomain: true,
    containers: { name: true, ports: true },
    initContainers: { name: true, ports: true, restartPolicy: true },
  },
  status: { phase: true, podIP: true, podIPs: true, conditions: true },
};
