// Builders for scheduler tests: pods and nodes with only what a test cares about.
import type { NodeAffinity, ResourceList, SchedNode, SchedPod, Taint, Toleration } from '../types.js';

export interface PodOptions {
  name?: string;
  namespace?: string;
  uid?: string;
  nodeName?: string;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
  nodeAffinity?: NodeAffinity;
  tolerations?: Toleration[];
  requests?: ResourceList;
  hostPort?: number;
  owner?: string;
  phase?: string;
  preemptionPolicy?: string;
  deleting?: boolean;
}

let seq = 0;

export function pod(o: PodOptions = {}): SchedPod {
  const name = o.name ?? `p${seq++}`;
  return {
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-${name}`,
      ...(o.owner === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: o.owner,
                uid: `rs-${o.owner}`,
                controller: true,
              },
            ],
          }),
      ...(o.deleting === true ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec: {
      ...(o.nodeName === undefined ? {} : { nodeName: o.nodeName }),
      ...(o.schedulerName === undefined ? {} : { schedulerName: o.schedulerName }),
      ...(o.nodeSelector === undefined ? {} : { nodeSelector: o.nodeSelector }),
      ...(o.nodeAffinity === undefined ? {} : { affinity: { nodeAffinity: o.nodeAffinity } }),
      ...(o.tolerations === undefined ? {} : { tolerations: o.tolerations }),
      ...(o.preemptionPolicy === undefined ? {} : { preemptionPolicy: o.preemptionPolicy }),
      containers: [
        {
          name: 'c',
          ...(o.requests === undefined ? {} : { resources: { requests: o.requests } }),
          ...(o.hostPort === undefined ? {} : { ports: [{ containerPort: 80, hostPort: o.hostPort }] }),
        },
      ],
    },
    status: { phase: o.phase ?? 'Pending' },
  };
}

export interface NodeOptions {
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  ready?: boolean | 'none';
  pods?: number;
  cpu?: string;
  memory?: string;
  allocatable?: ResourceList;
}

export function node(name: string, o: NodeOptions = {}): SchedNode {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } },
    spec: {
      ...(o.taints === undefined ? {} : { taints: o.taints }),
      ...(o.unschedulable === undefined ? {} : { unschedulable: o.unschedulable }),
    },
    status: {
      allocatable: o.allocatable ?? {
        pods: String(o.pods ?? 110),
        cpu: o.cpu ?? '4',
        memory: o.memory ?? '8Gi',
      },
      conditions: o.ready === 'none' ? [] : [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}
