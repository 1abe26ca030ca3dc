// The filter plugins, run per node in kube-scheduler's default order; the first plugin that fails
// records its reasons (schedule_one.go stops at the first failing plugin). Reason strings are upstream's.
//
// Order: NodeUnschedulable, TaintToleration, NodeReady, NodeAffinity, NodePorts, NodeResourcesFit.
// NodeName is not needed: pods that name a node are never scheduled. NodeReady is svcplane's: upstream
// filters NotReady nodes only through the node.kubernetes.io/not-ready and /unreachable taints the node
// lifecycle controller adds, so a node whose Ready condition is not True counts as if it had the
// not-ready NoSchedule taint (a pod tolerating that taint passes, as upstream) but reports the old
// CheckNodeCondition reason, `node(s) were not ready`. A node that carries the taint fails in
// TaintToleration first, with upstream's message.
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { firstUntolerated, formatTaint, toleratedBy } from './taints.js';
import { TAINT_NOT_READY, TAINT_UNSCHEDULABLE } from './types.js';

export const REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const REASON_NOT_READY = 'node(s) were not ready';
export const REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports";
export const REASON_TOO_MANY_PODS = 'Too many pods';
export const reasonUntoleratedTaint = (t: {
  readonly key: string;
  readonly value?: string | undefined;
}): string => `node(s) had untolerated taint ${formatTaint(t)}`;
export const reasonInsufficient = (resource: string): string => `Insufficient ${resource}`;

/**
 * A node's failure: the failing plugin's reasons, and whether preemption could help (upstream's
 * Unschedulable) or not (UnschedulableAndUnresolvable).
 */
export interface NodeFailure {
  readonly plugin: string;
  readonly reasons: readonly string[];
  readonly resolvable: boolean;
}

const UNSCHEDULABLE_TAINT = { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' } as const;
const NOT_READY_TAINT = { key: TAINT_NOT_READY, effect: 'NoSchedule' } as const;

const unresolvable = (plugin: string, reason: string): NodeFailure => ({
  plugin,
  reasons: [reason],
  resolvable: false,
});

/** Runs every filter; undefined when the node fits the pod. */
export function filterNode(pod: PodInfo, node: NodeInfo): NodeFailure | undefined {
  if (node.unschedulable && !toleratedBy(pod.tolerations, UNSCHEDULABLE_TAINT))
    return unresolvable('NodeUnschedulable', REASON_UNSCHEDULABLE);
  if (node.filterTaints.length > 0) {
    const taint = firstUntolerated(node.filterTaints, pod.tolerations);
    if (taint !== undefined) return unresolvable('TaintToleration', reasonUntoleratedTaint(taint));
  }
  if (!node.ready && !toleratedBy(pod.tolerations, NOT_READY_TAINT))
    return unresolvable('NodeReady', REASON_NOT_READY);
  if (pod.matchesNode !== undefined && !pod.matchesNode(node))
    return unresolvable('NodeAffinity', REASON_NODE_AFFINITY);
  if (pod.hostPorts.length > 0 && node.portsConflict(pod.hostPorts))
    return { plugin: 'NodePorts', reasons: [REASON_NODE_PORTS], resolvable: true };
  return fitResources(pod, node);
}

/** NodeResourcesFit: every shortfall is reported, `Too many pods` first. */
export function fitResources(pod: PodInfo, node: NodeInfo): NodeFailure | undefined {
  let reasons: string[] | undefined;
  if (node.podCount + 1 > node.allowedPods) reasons = [REASON_TOO_MANY_PODS];
  for (const [resource, want] of pod.requests) {
    if (resource === 'pods') continue;
    const free = (node.allocatable.get(resource) ?? 0) - (node.requested.get(resource) ?? 0);
    if (want > free) (reasons ??= []).push(reasonInsufficient(resource));
  }
  return reasons === undefined ? undefined : { plugin: 'NodeResourcesFit', reasons, resolvable: true };
}
