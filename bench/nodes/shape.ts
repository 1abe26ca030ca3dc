// The nodes benchmark's sizes (SVCPLANE_BENCH_NODES_COUNT / _DEPLOYMENTS / _REPLICAS override the full
// ones) and the Deployments it rolls out.

export const NAMESPACE = 'bench-nodes';
export const BENCH_LABEL = 'svcplane-bench';
export const CLUSTER_CIDR = '10.128.0.0/9';
export const NODE_PREFIX = 'simnode';
export const MAX_PODS = 110;

export interface Sizes {
  readonly nodes: number;
  readonly deployments: number;
  readonly replicas: number;
  readonly concurrency: number;
  /** Lease-write and CPU windows (s): before the rollout (nodes only) and after it (every pod running). */
  readonly idleWindowS: number;
  readonly steadyWindowS: number;
  /** Wait after registration before the idle window, so every node's first renewal is due. */
  readonly warmupS: number;
  readonly rolloutTimeoutS: number;
  readonly pollMs: number;
}

const envInt = (k: string, d: number): number => {
  const v = Number(process.env[k]);
  return Number.isInteger(v) && v > 0 ? v : d;
};

export const FULL: Sizes = {
  nodes: envInt('SVCPLANE_BENCH_NODES_COUNT', 1000),
  deployments: envInt('SVCPLANE_BENCH_NODES_DEPLOYMENTS', 100),
  replicas: envInt('SVCPLANE_BENCH_NODES_REPLICAS', 100),
  concurrency: 16,
  idleWindowS: 20,
  steadyWindowS: 20,
  warmupS: 10,
  rolloutTimeoutS: 600,
  pollMs: 200,
};
export const QUICK: Sizes = {
  nodes: 20,
  deployments: 5,
  replicas: 10,
  concurrency: 5,
  idleWindowS: 1.5,
  steadyWindowS: 1.5,
  warmupS: 0.5,
  rolloutTimeoutS: 60,
  pollMs: 50,
};

export const deploymentName = (d: number): string => `web-${String(d).padStart(3, '0')}`;

export function deploymentBody(d: number, replicas: number): string {
  const name = deploymentName(d);
  const labels = { app: name, [BENCH_LABEL]: 'nodes' };
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.9', ports: [{ containerPort: 80 }] }],
        },
      },
    },
  });
}
