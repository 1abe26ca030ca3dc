// The objects the benchmark POSTs: namespaces, nodes and the grids.
import {
  GRID_API,
  UNIT_KEY,
  type Shape,
  unitValue,
  nodeName,
  serviceGridName,
  deploymentGridName,
  serviceGridNamespace,
  deploymentGridNamespace,
  unitOfNode,
} from './shape.js';

export function namespaceBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

export function nodeBody(shape: Shape, n: number): string {
  const name = nodeName(n);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        [UNIT_KEY]: unitValue(unitOfNode(shape, n)),
      },
    },
  });
}

function serviceGridBody(shape: Shape, i: number): { path: string; body: string } {
  const name = serviceGridName(i);
  const ns = serviceGridNamespace(shape, i);
  return {
    path: `/apis/${GRID_API}/namespaces/${ns}/servicegrids`,
    body: JSON.stringify({
      apiVersion: GRID_API,
      kind: 'ServiceGrid',
      metadata: { name, namespace: ns },
      spec: {
        gridUniqKey: UNIT_KEY,
        template: {
          selector: { app: name },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      },
    }),
  };
}

function deploymentGridBody(shape: Shape, j: number): { path: string; body: string } {
  const name = deploymentGridName(j);
  const ns = deploymentGridNamespace(shape, j);
  return {
    path: `/apis/${GRID_API}/namespaces/${ns}/deploymentgrids`,
    body: JSON.stringify({
      apiVersion: GRID_API,
      kind: 'DeploymentGrid',
      metadata: { name, namespace: ns },
      spec: {
        gridUniqKey: UNIT_KEY,
        template: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'registry.k8s.io/e2e-test-images/agnhost:2.53',
                  args: ['netexec', '--http-port=8080'],
                  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                },
              ],
            },
          },
        },
      },
    }),
  };
}

/** Every grid, ServiceGrids and DeploymentGrids interleaved so that both controllers work at once. */
export function gridBodies(shape: Shape): Array<{ path: string; body: string }> {
  const out: Array<{ path: string; body: string }> = [];
  const every = Math.max(1, Math.floor(shape.serviceGrids / Math.max(1, shape.deploymentGrids)));
  let j = 0;
  for (let i = 0; i < shape.serviceGrids; i++) {
    out.push(serviceGridBody(shape, i));
    if ((i + 1) % every === 0 && j < shape.deploymentGrids) out.push(deploymentGridBody(shape, j++));
  }
  while (j < shape.deploymentGrids) out.push(deploymentGridBody(shape, j++));
  return out;
}
