// Builders for the ReplicaSet controller's tests: pods and ReplicaSets with only what a test sets.
import { formatTimestamp, parseRFC3339 } from '../../../api/printers/time.js';
import type { Pod, ReplicaSet } from '../replicaset.js';

export const T0 = parseRFC3339('2024-05-01T12:00:00Z')!;
export const at = (ms: number): string => formatTimestamp(ms);

export interface PodOpts {
  name?: string;
  uid?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  node?: string;
  phase?: string;
  /** Ready since this instant (ms); `true` for Ready with no transition time; false/undefined not Ready. */
  ready?: number | boolean;
  restarts?: number;
  created?: number;
  deleting?: boolean;
  owner?: { name: string; uid: string; kind?: string; controller?: boolean };
}

export function pod(o: PodOpts = {}): Pod {
  const name = o.name ?? 'p';
  const conditions =
    o.ready === undefined || o.ready === false
      ? []
      : [
          {
            type: 'Ready',
            status: 'True',
            ...(o.ready === true ? {} : { lastTransitionTime: at(o.ready) }),
          },
        ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.annotations === undefined ? {} : { annotations: o.annotations }),
      creationTimestamp: at(o.created ?? T0),
      ...(o.deleting === true ? { deletionTimestamp: at(T0) } : {}),
      ...(o.owner === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: o.owner.kind ?? 'ReplicaSet',
                name: o.owner.name,
                uid: o.owner.uid,
                controller: o.owner.controller ?? true,
              },
            ],
          }),
    },
    spec: o.node === undefined ? {} : { nodeName: o.node },
    status: {
      phase: o.phase ?? 'Running',
      conditions,
      containerStatuses: [{ restartCount: o.restarts ?? 0 }],
    },
  };
}

export interface RsOpts {
  name?: string;
  uid?: string;
  replicas?: number;
  minReadySeconds?: number;
  generation?: number;
  labels?: Record<string, string>;
  status?: ReplicaSet['status'];
}

export function replicaSet(o: RsOpts = {}): ReplicaSet {
  const labels = o.labels ?? { app: 'web' };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: o.name ?? 'web',
      namespace: 'default',
      uid: o.uid ?? 'rs-uid',
      generation: o.generation ?? 1,
    },
    spec: {
      replicas: o.replicas ?? 3,
      ...(o.minReadySeconds === undefined ? {} : { minReadySeconds: o.minReadySeconds }),
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    },
    ...(o.status === undefined ? {} : { status: o.status }),
  };
}
