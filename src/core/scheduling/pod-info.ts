// What the scheduler needs of a pod, computed once per pod: its resource requests (as
// k8s.io/component-helpers/resource computes them), the node matchers, tolerations, host ports and the
// owner it spreads under.
import { parseMilliValue } from '../endpointslices/quantity.js';
import type { Projection } from '../projection/projection.js';
import { compilePreferredTerms, requiredNodeMatcher, type NodeLabels } from './node-affinity.js';
import type { Container, ResourceList, SchedPod, Toleration } from './types.js';

/** Milli-units per resource name. */
export type Requests = ReadonlyMap<string, number>;

export interface HostPort {
  readonly protocol: string;
  readonly hostIP: string;
  readonly port: number;
}

export interface PodInfo {
  readonly key: string;
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** What counts against a node's allocatable (resources requested > 0 only). */
  readonly requests: Requests;
  /** CPU and memory for scoring, with kube's defaults (100m, 200Mi) for containers that request none. */
  readonly nonZeroCpu: number;
  readonly nonZeroMemory: number;
  readonly tolerations: readonly Toleration[];
  readonly matchesNode: ((n: NodeLabels) => boolean) | undefined;
  readonly preferred: readonly { readonly weight: number; readonly matches: (n: NodeLabels) => boolean }[];
  readonly hostPorts: readonly HostPort[];
  /** The uid of the controller owner (ReplicaSet, StatefulSet, ...): pods sharing it are spread. */
  readonly ownerUid: string | undefined;
  readonly preemptionNever: boolean;
}

export const DEFAULT_MILLI_CPU = 100;
export const DEFAULT_MEMORY = 200 * 1024 * 1024;

const milli = (v: string | number | undefined): number => {
  if (v === undefined) return 0;
  const m = parseMilliValue(String(v));
  return m === undefined || m < 0n ? 0 : Number(m);
};

/** A ResourceList as milli-units. */
export function resourceMilli(list: ResourceList | null | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(list ?? {})) out.set(k, milli(v));
  return out;
}

function add(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
}

function maxInto(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [k, v] of from) if (v > (into.get(k) ?? 0)) into.set(k, v);
}

/** A container's requests; with `nonZero`, cpu and memory get kube's scoring defaults when unset. */
function containerRequests(c: Container, nonZero: boolean): Map<string, number> {
  const r = resourceMilli(c.resources?.requests);
  if (nonZero) {
    if (!r.has('cpu')) r.set('cpu', DEFAULT_MILLI_CPU);
    if (!r.has('memory')) r.set('memory', DEFAULT_MEMORY * 1000);
  }
  return r;
}

/**
 * The pod's effective request: max(Σ regular containers + Σ restartable (sidecar) init containers,
 * each non-restartable init container + the sidecars started before it) + overhead.
 */
export function podRequests(pod: SchedPod, nonZero = false): Map<string, number> {
  const sum = new Map<string, number>();
  for (const c of pod.spec?.containers ?? []) add(sum, containerRequests(c, nonZero));
  const sidecars = new Map<string, number>();
  const initMax = new Map<string, number>();
  for (const c of pod.spec?.initContainers ?? []) {
    const r = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      add(sidecars, r);
      add(sum, r);
    } else {
      const peak = new Map(sidecars);
      add(peak, r);
      maxInto(initMax, peak);
    }
  }
  maxInto(sum, initMax);
  add(sum, resourceMilli(pod.spec?.overhead));
  return sum;
}

export function hostPortsOf(pod: SchedPod): HostPort[] {
  const out: HostPort[] = [];
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const c of all) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined || p.hostPort <= 0) continue;
      out.push({
        protocol: p.protocol ?? 'TCP',
        hostIP: p.hostIP === undefined || p.hostIP === '' ? '0.0.0.0' : p.hostIP,
        port: p.hostPort,
      });
    }
  }
  return out;
}

export const controllerUidOf = (pod: SchedPod): string | undefined =>
  pod.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

export function podInfoOf(pod: SchedPod): PodInfo {
  const namespace = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const requests = new Map([...podRequests(pod)].filter(([, v]) => v > 0));
  const nonZero = podRequests(pod, true);
  return {
    key: `${namespace}/${name}`,
    uid: pod.metadata.uid ?? '',
    namespace,
    name,
    requests,
    nonZeroCpu: nonZero.get('cpu') ?? 0,
    nonZeroMemory: nonZero.get('memory') ?? 0,
    tolerations: pod.spec?.tolerations ?? [],
    matchesNode: requiredNodeMatcher(pod),
    preferred: compilePreferredTerms(
      pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
    ),
    hostPorts: hostPortsOf(pod),
    ownerUid: controllerUidOf(pod),
    preemptionNever: pod.spec?.preemptionPolicy === 'Never',
  };
}

/** Succeeded and Failed pods hold nothing on their node. */
export const isTerminal = (pod: SchedPod): boolean =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * Whether the default scheduler should place this pod now: no node yet, our scheduler name (or none),
 * not being deleted, not terminal, no scheduling gates.
 */
export function needsScheduling(pod: SchedPod, schedulerName: string): boolean {
  const spec = pod.spec ?? {};
  if (spec.nodeName !== undefined && spec.nodeName !== '') return false;
  if ((spec.schedulerName ?? '') !== '' && spec.schedulerName !== schedulerName) return false;
  if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) return false;
  if (isTerminal(pod)) return false;
  return (spec.schedulingGates ?? []).length === 0;
}

/** What the scheduler reads of a pod: the shared pod informer keeps at least this for it. */
export const SCHEDULER_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  spec: {
    nodeName: true,
    schedulerName: true,
    nodeSelector: true,
    affinity: true,
    tolerations: true,
    containers: { name: true, resources: true, ports: true },
    initContainers: { name: true, resources: true, ports: true, restartPolicy: true },
    overhead: true,
    schedulingGates: true,
    preemptionPolicy: true,
    priority: true,
  },
  status: { phase: true, conditions: true },
};
