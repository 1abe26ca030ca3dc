// The shapes the EndpointSlice controller reads and writes (discovery.k8s.io/v1 EndpointSlice, core/v1 Node)
// and the constants it shares with upstream. Objects arrive as JSON from the API or a cache, so whatever is
// read from them goes through the guards in ../endpoints/read.ts; what this module writes has exactly the
// types declared here.
import type { KObject } from '../../api/object.js';
import type { ObjectReference } from '../endpoints/types.js';

export type { ObjectReference, Pod, Service } from '../endpoints/types.js';

/** Upstream's controllerName: the value of the managed-by label on every slice this controller owns. */
export const ENDPOINTSLICE_CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** --max-endpoints-per-slice default. */
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;
/** Label naming the Service a slice belongs to (discovery.LabelServiceName). */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
/** Label naming the controller that manages a slice (discovery.LabelManagedBy). */
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
/** Label (value "") on slices of a Service without a cluster IP. */
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
/** Node label giving the node's zone; copied to `endpoints[].zone`. */
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
/** Annotation enabling Topology Aware Routing (hints) when "Auto" or "auto". */
export const ANNOTATION_TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';
/** The deprecated spelling of ANNOTATION_TOPOLOGY_MODE; when both are set, this one wins (as upstream). */
export const ANNOTATION_TOPOLOGY_AWARE_HINTS = 'service.kubernetes.io/topology-aware-hints';
/** Set on every created or updated slice (see ../endpoints/trigger-time.ts). */
export const LAST_CHANGE_TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
/** Nodes carrying either label (any value) are left out of the zone CPU shares. */
export const CONTROL_PLANE_NODE_LABELS = [
  'node-role.kubernetes.io/control-plane',
  'node-role.kubernetes.io/master',
] as const;

/** Service.spec.trafficDistribution values that produce hints. PreferClose is the old name of PreferSameZone. */
export const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'] as const;
export type TrafficDistribution = (typeof TRAFFIC_DISTRIBUTIONS)[number];

/** The address types this controller produces (FQDN exists in the API but is never produced). */
export type AddressType = 'IPv4' | 'IPv6';

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface ForZone {
  name: string;
}

export interface ForNode {
  name: string;
}

export interface EndpointHints {
  forZones?: ForZone[];
  forNodes?: ForNode[];
}

export interface Endpoint {
  addresses: string[];
  conditions: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: EndpointHints;
}

export interface EndpointSlicePort {
  name?: string;
  protocol?: string;
  /** Absent means "all ports" in the API; this controller always sets it. */
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends KObject {
  /** AddressType for what this controller writes; any string for what it reads. */
  addressType: string;
  endpoints: Endpoint[];
  ports?: EndpointSlicePort[];
}

export interface NodeCondition {
  type?: string;
  status?: string;
}

export interface Node extends KObject {
  status?: {
    /** Resource quantities, e.g. { cpu: "3500m" }. */
    allocatable?: Record<string, string>;
    conditions?: NodeCondition[];
  };
}

/** An Event the controller would record against the Service (the caller records it). */
export interface PlanEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: 'TopologyAwareHintsEnabled' | 'TopologyAwareHintsDisabled';
  readonly message: string;
}
