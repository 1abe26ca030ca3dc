// One node as the scheduler keeps it (kube-scheduler's framework.NodeInfo): what the node object says,
// computed once per node update, plus what the pods on it use, kept up to date as pods come and go.
// Every per-pod check reads these fields directly, so filtering a pod against a node is a few
// comparisons.
import type { NodeLabels } from './node-affinity.js';
import { resourceMilli, type HostPort, type PodInfo } from './pod-info.js';
import { LABEL_ZONE, type SchedNode, type Taint } from './types.js';

export class NodeInfo implements NodeLabels {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly unschedulable: boolean;
  /** Ready condition True. */
  readonly ready: boolean;
  /** NoSchedule and NoExecute taints, in node order: the ones that filter. */
  readonly filterTaints: readonly Taint[];
  /** PreferNoSchedule taints: the ones that score. */
  readonly preferTaints: readonly Taint[];
  /** Allocatable, milli-units per resource. */
  readonly allocatable: ReadonlyMap<string, number>;
  /** Allocatable pods (a count, not milli-units). */
  readonly allowedPods: number;
  readonly zone: string | undefined;

  /** Pods counted on this node: assigned (or assumed) and not terminal. */
  podCount = 0;
  /** Σ requests of those pods (milli-units), for the fit filter. */
  readonly requested = new Map<string, number>();
  /** Σ non-zero cpu/memory of those pods, for scoring. */
  nonZeroCpu = 0;
  nonZeroMemory = 0;
  /** `protocol/port` → host IPs in use. */
  readonly usedPorts = new Map<string, string[]>();
  /** Pods per controller owner uid. */
  readonly ownerCounts = new Map<string, number>();

  constructor(node: SchedNode) {
    this.name = node.metadata.name ?? '';
    this.labels = node.metadata.labels ?? {};
    this.unschedulable = node.spec?.unschedulable === true;
    this.ready = (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    const taints = node.spec?.taints ?? [];
    this.filterTaints = taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    this.preferTaints = taints.filter((t) => t.effect === 'PreferNoSchedule');
    const alloc = resourceMilli(node.status?.allocatable);
    this.allocatable = alloc;
    this.allowedPods = Math.floor((alloc.get('pods') ?? 0) / 1000);
    const zone = this.labels[LABEL_ZONE];
    this.zone = zone === undefined || zone === '' ? undefined : zone;
  }

  /** Counts a pod on this node (sign 1) or takes it off again (sign -1). */
  account(pod: PodInfo, sign: 1 | -1): void {
    this.podCount += sign;
    for (const [k, v] of pod.requests) this.requested.set(k, (this.requested.get(k) ?? 0) + sign * v);
    this.nonZeroCpu += sign * pod.nonZeroCpu;
    this.nonZeroMemory += sign * pod.nonZeroMemory;
    for (const p of pod.hostPorts) {
      const k = portKey(p);
      const ips = this.usedPorts.get(k) ?? [];
      if (sign === 1) ips.push(p.hostIP);
      else {
        const i = ips.indexOf(p.hostIP);
        if (i >= 0) ips.splice(i, 1);
      }
      if (ips.length === 0) this.usedPorts.delete(k);
      else this.usedPorts.set(k, ips);
    }
    if (pod.ownerUid !== undefined) {
      const n = (this.ownerCounts.get(pod.ownerUid) ?? 0) + sign;
      if (n <= 0) this.ownerCounts.delete(pod.ownerUid);
      else this.ownerCounts.set(pod.ownerUid, n);
    }
  }

  /** Moves the pods counted on `from` (an older NodeInfo of the same node) onto this one. */
  inherit(from: NodeInfo): void {
    this.podCount = from.podCount;
    for (const [k, v] of from.requested) this.requested.set(k, v);
    this.nonZeroCpu = from.nonZeroCpu;
    this.nonZeroMemory = from.nonZeroMemory;
    for (const [k, v] of from.usedPorts) this.usedPorts.set(k, v);
    for (const [k, v] of from.ownerCounts) this.ownerCounts.set(k, v);
  }

  /** Whether a host port of the pod is taken (NodePorts: the same protocol and port, and either IP wildcard or equal). */
  portsConflict(wanted: readonly HostPort[]): boolean {
    for (const p of wanted) {
      const ips = this.usedPorts.get(portKey(p));
      if (ips === undefined) continue;
      if (p.hostIP === '0.0.0.0') return true;
      for (const ip of ips) if (ip === '0.0.0.0' || ip === p.hostIP) return true;
    }
    return false;
  }
}

const portKey = (p: HostPort): string => `${p.protocol}/${p.port}`;
