// The apiserver benchmark's sizes and the objects it creates (pods, Services, namespaces).
import { epochMs } from '../lib/http.js';

/** The annotation carrying the client's send time (epoch ms, sub-ms precision) in each written pod. */
export const SENT = 'bench.svcplane.io/sent';
export const TABLE_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

export interface Sizes {
  /** Pods created (and not counted) before the measured creates, to warm the server's JIT. */
  warmupPods: number;
  createReps: number;
  createPods: number;
  createClients: number;
  services: number;
  listReps: number;
  tableReps: number;
  /** Pods stored for the big LIST and the RSS figure, spread over namespaces of bigNamespaceSize. */
  bigPods: number;
  bigNamespaceSize: number;
  bigLoadClients: number;
  bigListReps: number;
  watchReps: number;
  watchers: number;
  watchWorkers: number;
  writesPerSec: number;
  watchSeconds: number;
  /** How long the server is left alone before an RSS reading (its GC settles). */
  settleMs: number;
}

export const FULL: Sizes = {
  warmupPods: 1000,
  createReps: 3,
  createPods: 10_000,
  createClients: 32,
  services: 10_000,
  listReps: 30,
  tableReps: 10,
  bigPods: 100_000,
  bigNamespaceSize: 1000,
  bigLoadClients: 64,
  bigListReps: 5,
  watchReps: 3,
  watchers: 1000,
  watchWorkers: 2,
  writesPerSec: 50,
  watchSeconds: 20,
  settleMs: 3000,
};
/** Every step, figure and check of FULL at sizes that take seconds (the figures mean nothing). */
export const QUICK: Sizes = {
  warmupPods: 50,
  createReps: 1,
  createPods: 200,
  createClients: 16,
  services: 200,
  listReps: 3,
  tableReps: 2,
  bigPods: 800,
  bigNamespaceSize: 400,
  bigLoadClients: 16,
  bigListReps: 2,
  watchReps: 1,
  watchers: 50,
  watchWorkers: 2,
  writesPerSec: 50,
  watchSeconds: 2,
  settleMs: 300,
};

type Kind = 'pod' | 'service' | 'namespace';

export interface CreateJob {
  readonly kind: Kind;
  readonly namespace: string;
  /** Objects are named `${prefix}${i}` for from ≤ i < to. */
  readonly prefix: string;
  readonly from: number;
  readonly to: number;
}

export function podBody(namespace: string, name: string, i: number, sent: number): string {
  const app = `app-${i % 50}`;
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app, 'pod-template-hash': '7c9f8d6b5', tier: i % 2 === 0 ? 'frontend' : 'backend' },
      annotations: { [SENT]: sent.toFixed(3), 'kubectl.kubernetes.io/default-container': 'app' },
      ownerReferences: [
        {
          // An owner of a kind the server does not serve: the garbage collector leaves such pods alone
          // (an apps/v1 ReplicaSet that does not exist would have them deleted).
          apiVersion: 'bench.svcplane.io/v1',
          kind: 'BenchReplicaSet',
          name: `${app}-7c9f8d6b5`,
          uid: '6f1c2a8e-3b4d-4c5e-9f60-718293a4b5c6',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      // Neither bound to a node (pod GC would remove pods of nodes that do not exist) nor the default
      // scheduler's (it would report them unschedulable): in `svcplane up` the controllers leave these
      // pods alone, as they leave alone a real workload that is placed and running, and the figures stay
      // the API server's.
      schedulerName: 'bench-scheduler',
      serviceAccountName: 'default',
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/e2e-test-images/agnhost:2.47',
          args: ['netexec', '--http-port=8080'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MODE', value: 'bench' },
          ],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
  });
}

function serviceBody(namespace: string, name: string, i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: `app-${i % 50}`, tier: 'frontend' } },
    spec: {
      selector: { app: `app-${i % 50}` },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ],
    },
  });
}

export function createRequest(job: CreateJob, i: number): { path: string; body: string } {
  const name = `${job.prefix}${i}`;
  switch (job.kind) {
    case 'pod':
      return {
        path: `/api/v1/namespaces/${job.namespace}/pods`,
        body: podBody(job.namespace, name, i, epochMs()),
      };
    case 'service':
      return {
        path: `/api/v1/namespaces/${job.namespace}/services`,
        body: serviceBody(job.namespace, name, i),
      };
    case 'namespace': // one per job: the prefix is the name
      return { path: '/api/v1/namespaces', body: JSON.stringify({ metadata: { name: job.prefix } }) };
  }
}
