// What a kubelet writes about its own Node: the object it registers (labels, spec.podCIDRs, capacity,
// allocatable, addresses, nodeInfo, daemonEndpoints, conditions), the conditions it re-posts, and its
// Lease in kube-node-lease. Also the rule that tells a live node (some kubelet is heartbeating it) from
// a dead one, which decides whether `svcplane node` may take a name over.
//
// Behaves like the kubelet's nodestatus setters (pkg/kubelet/nodestatus/setters.go) and the node lease
// controller (component-helpers/apimachinery/lease/controller.go), with kubelet defaults: maxPods 110,
// lease 40 s renewed every 10 s, status computed every 10 s and reported when changed or every 5 min.
//
// Pure: the time comes in as milliseconds since the epoch.
import { recordOf as rec } from '../../api/json.js';
import { formatTimestamp, parseTimestamp } from '../../api/printers/time.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const LEASE_DURATION_SECONDS = 40;
/** Renew every 25 % of the lease duration (the lease controller's renewInterval). */
export const LEASE_RENEW_INTERVAL_MS = (LEASE_DURATION_SECONDS * 1000) / 4;
/** nodeStatusUpdateFrequency: how often the kubelet computes its node status. */
export const NODE_STATUS_UPDATE_MS = 10_000;
/** nodeStatusReportFrequency: an unchanged status is still posted this often. */
export const NODE_STATUS_REPORT_MS = 5 * 60_000;
export const DEFAULT_MAX_PODS = 110;

type Rec = Record<string, unknown>;
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** RFC 3339 at second precision, as Kubernetes writes metav1.Time. */
export const rfc3339 = (ms: number): string => formatTimestamp(ms);
/** metav1.MicroTime: RFC 3339 with microseconds (what a Lease's renewTime carries). */
export const microTime = (ms: number): string =>
  `${formatTimestamp(ms).slice(0, -1)}.${String(((ms % 1000) + 1000) % 1000).padStart(3, '0')}000Z`;

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastHeartbeatTime: string;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** The kubelet's conditions, in its order, with its reasons and messages (healthy node). */
const KUBELET_CONDITIONS: readonly Omit<NodeCondition, 'lastHeartbeatTime' | 'lastTransitionTime'>[] = [
  {
    type: 'MemoryPressure',
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  {
    type: 'DiskPressure',
    status: 'False',
    reason: 'KubeletHasNoDiskPressure',
    message: 'kubelet has no disk pressure',
  },
  {
    type: 'PIDPressure',
    status: 'False',
    reason: 'KubeletHasSufficientPID',
    message: 'kubelet has sufficient PID available',
  },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
];

export const KUBELET_CONDITION_TYPES: readonly string[] = KUBELET_CONDITIONS.map((c) => c.type);

/**
 * The kubelet's four conditions at `nowMs`. A condition whose status is the same as in `previous` keeps
 * its lastTransitionTime; conditions the kubelet does not own (e.g. NetworkUnavailable) are kept as
 * they are, after the kubelet's.
 */
export function nodeConditions(nowMs: number, previous: unknown = []): NodeCondition[] {
  const now = rfc3339(nowMs);
  const prev = recs(previous);
  const own = KUBELET_CONDITIONS.map((c): NodeCondition => {
    const before = prev.find((p) => p['type'] === c.type);
    const since =
      before !== undefined && before['status'] === c.status ? str(before['lastTransitionTime']) : '';
    return { ...c, lastHeartbeatTime: now, lastTransitionTime: since || now };
  });
  const foreign = prev.filter((p) => !KUBELET_CONDITION_TYPES.includes(str(p['type'])));
  return [...own, ...(foreign as unknown as NodeCondition[])];
}

/**
 * Whether the conditions a kubelet would post now differ from the stored ones in anything but
 * lastHeartbeatTime (then it patches at once rather than waiting for the report interval).
 */
export function nodeConditionsChanged(stored: unknown): boolean {
  const prev = recs(stored);
  return KUBELET_CONDITIONS.some((c) => {
    const p = prev.find((x) => x['type'] === c.type);
    return p === undefined || p['status'] !== c.status || p['reason'] !== c.reason;
  });
}

export interface NodeInput {
  readonly name: string;
  /** User labels (--labels); the kubelet's own labels are added and win. */
  readonly labels?: Readonly<Record<string, string>>;
  /** spec.podCIDRs, primary first. */
  readonly podCIDRs: readonly string[];
  readonly internalIP: string;
  /** The node software version (nodeInfo.kubeletVersion). */
  readonly version: string;
  readonly nowMs: number;
  readonly maxPods?: number;
  readonly cpu?: string;
  readonly memory?: string;
  readonly ephemeralStorage?: string;
  readonly kubeletPort?: number;
}

/** The labels the kubelet registers with (kubernetes.io/hostname, os and arch, and their beta twins). */
export function kubeletLabels(name: string): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
  };
}

/** The status a healthy kubelet reports (without the Node's metadata and spec). */
export function nodeStatus(input: NodeInput, previousConditions?: unknown): Rec {
  const resources = {
    cpu: input.cpu ?? '32',
    'ephemeral-storage': input.ephemeralStorage ?? '100Gi',
    memory: input.memory ?? '128Gi',
    pods: String(input.maxPods ?? DEFAULT_MAX_PODS),
  };
  return {
    capacity: resources,
    allocatable: resources,
    conditions: nodeConditions(input.nowMs, previousConditions),
    addresses: [
      { type: 'InternalIP', address: input.internalIP },
      { type: 'Hostname', address: input.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: input.kubeletPort ?? 10250 } },
    nodeInfo: {
      machineID: '',
      systemUUID: '',
      bootID: '',
      kernelVersion: 'svcplane',
      osImage: 'svcplane simulated node',
      containerRuntimeVersion: `svcplane://${input.version}`,
      kubeletVersion: input.version,
      kubeProxyVersion: input.version,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/** The Node a kubelet registers (POST /api/v1/nodes). */
export function nodeObject(input: NodeInput): Rec {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: input.name,
      labels: { ...input.labels, ...kubeletLabels(input.name) },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'svcplane.io/simulated': 'true' },
    },
    spec: {
      ...(input.podCIDRs.length === 0 ? {} : { podCIDR: input.podCIDRs[0], podCIDRs: [...input.podCIDRs] }),
      providerID: `svcplane://${input.name}`,
    },
    status: nodeStatus(input),
  };
}

/**
 * On a simulated node's Lease: which `svcplane node` process renews it (`<host>/<pid>`), so that a
 * restart after SIGKILL can tell its own dead predecessor (same host, pid gone) from a live rival.
 */
export const PROCESS_ANNOTATION = 'svcplane.io/node-process';

/** The node's Lease in kube-node-lease, renewed now; the owner reference is added once the Node's UID is known. */
export function leaseObject(node: string, nowMs: number, nodeUID?: string, process?: string): Rec {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: node,
      namespace: NODE_LEASE_NAMESPACE,
      ...(process === undefined ? {} : { annotations: { [PROCESS_ANNOTATION]: process } }),
      ...(nodeUID === undefined || nodeUID === ''
        ? {}
        : { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUID }] }),
    },
    spec: {
      holderIdentity: node,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      renewTime: microTime(nowMs),
    },
  };
}

export interface Liveness {
  readonly live: boolean;
  /** Why, in a few words: "Ready and its lease was renewed 3s ago", "its lease expired 2m ago", … */
  readonly why: string;
}

/** Whether a Node's Ready condition is True (the nodes that count for topology hints, the dashboard's rows). */
export const isNodeReady = (node: unknown): boolean =>
  recs(rec(rec(node)['status'])['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True');

/**
 * Whether some kubelet is running the node now: its Ready condition is True and its Lease was renewed
 * within leaseDurationSeconds. A node without a Lease counts as live while its Ready heartbeat is
 * younger than the node monitor grace period (40 s), as the node lifecycle controller judges it.
 */
export function nodeLiveness(node: unknown, lease: unknown, nowMs: number): Liveness {
  const ready = recs(rec(rec(node)['status'])['conditions']).find((c) => c['type'] === 'Ready');
  if (ready === undefined || ready['status'] !== 'True') {
    return { live: false, why: `it is not Ready (${str(ready?.['status']) || 'never reported'})` };
  }
  const age = (t: number): number => Math.round((nowMs - t) / 1000);
  const spec = rec(rec(lease)['spec']);
  const renew = parseTimestamp(spec['renewTime']);
  if (renew !== undefined) {
    const duration = typeof spec['leaseDurationSeconds'] === 'number' ? spec['leaseDurationSeconds'] : 40;
    const a = age(renew);
    return a <= duration
      ? { live: true, why: `it is Ready and its lease was renewed ${a}s ago` }
      : { live: false, why: `its lease expired ${a - duration}s ago` };
  }
  const beat = parseTimestamp(ready['lastHeartbeatTime']);
  if (beat !== undefined && age(beat) <= LEASE_DURATION_SECONDS) {
    return { live: true, why: `it is Ready and posted status ${age(beat)}s ago` };
  }
  return { live: false, why: 'it has no fresh heartbeat' };
}

/**
 * When node `index` of `count` renews its Lease first: renewals are spread evenly over one interval
 * so that N nodes make N/10 writes each second instead of N writes every 10 s.
 */
export function staggerOffsetMs(index: number, count: number, intervalMs = LEASE_RENEW_INTERVAL_MS): number {
  return count <= 1 ? 0 : Math.floor((index * intervalMs) / count);
}
