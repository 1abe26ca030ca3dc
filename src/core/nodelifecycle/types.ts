// What the node lifecycle and pod GC decisions read of Nodes, Leases and Pods, and the names upstream
// gives the taints, conditions and reasons they write. Pure: no I/O, no clock (callers pass `now`).
import type { KObject } from '../../api/object.js';
import { formatTimestamp, parseTimestamp } from '../../api/printers/time.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: string;
  status: ConditionStatus | string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
  timeAdded?: string | null;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

export interface Node extends KObject {
  spec?: { unschedulable?: boolean; taints?: Taint[] | null; [k: string]: unknown };
  status?: { conditions?: NodeCondition[] | null; [k: string]: unknown };
}

export interface Lease extends KObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string | null };
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
}

export interface Pod extends KObject {
  spec?: { nodeName?: string; tolerations?: Toleration[] | null; [k: string]: unknown };
  status?: { phase?: string; reason?: string; conditions?: PodCondition[] | null; [k: string]: unknown };
}

/** The namespace kubelets renew their Leases in. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

// Taint keys (k8s.io/api/core/v1 well_known_taints.go).
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/** Zone labels, and the label that keeps a node out of the disruption count. */
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_ZONE_BETA = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_REGION_BETA = 'failure-domain.beta.kubernetes.io/region';
export const LABEL_EXCLUDE_DISRUPTION = 'node.kubernetes.io/exclude-disruption';

/** The conditions the controller turns Unknown when heartbeats stop (node_lifecycle_controller.go). */
export const MONITORED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

export const REASON_STATUS_UNKNOWN = 'NodeStatusUnknown';
export const MESSAGE_STATUS_UNKNOWN = 'Kubelet stopped posting node status.';
export const REASON_NEVER_UPDATED = 'NodeStatusNeverUpdated';
export const MESSAGE_NEVER_UPDATED = 'Kubelet never posted node status.';

/** Kubernetes timestamps: RFC 3339 in whole seconds (metav1.Time). */
export const rfc3339 = (ms: number): string => formatTimestamp(ms);

/** Parses a metav1.Time or MicroTime; undefined when absent, unparsable or Go's zero time. */
export const parseTime = (s: string | null | undefined): number | undefined => parseTimestamp(s);

export const conditionOf = <C extends { type: string }>(
  conditions: readonly C[] | null | undefined,
  type: string,
): C | undefined => (conditions ?? []).find((c) => c.type === type);
