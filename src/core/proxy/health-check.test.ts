// Health-check node ports: which Services get one (kube-proxy's NeedsHealthCheck, through state.ts), how
// many local endpoints each reports, and the exact answer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { healthCheckAnswer, healthCheckServices } from './health-check.js';
import { servicePortStates } from './state.js';
import { ep, portState, service, stateOf, topoEp, view, type ServiceSpec } from './testing/builders.js';
import type { ProxyState } from './types.js';
import type { TopologyEndpoint } from '../topology/types.js';

const NODE = 'n1';
const TWO_PORTS = [
  { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
  { name: 'https', port: 443, protocol: 'TCP', nodePort: 30443 },
];
const POOL = 'IPv4|http:TCP:8080,https:TCP:8443';

/** The proxy state of one Service, as the sync computes it, with the view's endpoints on both sides. */
function stateFor(spec: ServiceSpec, eps: readonly TopologyEndpoint[]): ProxyState {
  const states = servicePortStates(service(spec), view(eps, eps), NODE);
  return stateOf(...states);
}

const LB_LOCAL: ServiceSpec = {
  type: 'LoadBalancer',
  externalTrafficPolicy: 'Local',
  healthCheckNodePort: 32000,
  ports: TWO_PORTS,
};

describe('healthCheckServices()', () => {
  const rows: Array<[string, ServiceSpec, TopologyEndpoint[], number | undefined]> = [
    [
      'LoadBalancer + Local: local ready endpoints, counted by address over both ports',
      LB_LOCAL,
      [
        topoEp('10.0.0.1', { pool: POOL, node: NODE }),
        topoEp('10.0.0.2', { pool: POOL, node: NODE }),
        topoEp('10.0.0.3', { pool: POOL, node: 'n2' }),
      ],
      2,
    ],
    [
      'a terminating local endpoint does not count, even while it serves',
      LB_LOCAL,
      [
        topoEp('10.0.0.1', { pool: POOL, node: NODE, ready: false }),
        topoEp('10.0.0.3', { pool: POOL, node: 'n2' }),
      ],
      0,
    ],
    ['no endpoints at all: 0', LB_LOCAL, [], 0],
    [
      'LoadBalancer with externalTrafficPolicy Cluster: no health check',
      { ...LB_LOCAL, externalTrafficPolicy: 'Cluster' },
      [topoEp('10.0.0.1', { pool: POOL, node: NODE })],
      undefined,
    ],
    [
      'NodePort + Local: no health check (only load balancers probe)',
      { ...LB_LOCAL, type: 'NodePort' },
      [topoEp('10.0.0.1', { pool: POOL, node: NODE })],
      undefined,
    ],
    [
      'a healthCheckNodePort of 0: none',
      { ...LB_LOCAL, healthCheckNodePort: 0 },
      [topoEp('10.0.0.1', { pool: POOL, node: NODE })],
      undefined,
    ],
    [
      'a healthCheckNodePort out of range: none',
      { ...LB_LOCAL, healthCheckNodePort: 70000 },
      [topoEp('10.0.0.1', { pool: POOL, node: NODE })],
      undefined,
    ],
    [
      'a Service another proxy owns: none',
      { ...LB_LOCAL, labels: { 'service.kubernetes.io/service-proxy-name': 'other' } },
      [topoEp('10.0.0.1', { pool: POOL, node: NODE })],
      undefined,
    ],
  ];
  for (const [title, spec, eps, want] of rows)
    it(title, () => {
      const got = healthCheckServices(stateFor(spec, eps)).get('default/web');
      if (want === undefined) assert.equal(got, undefined);
      else assert.deepEqual(got, { namespace: 'default', name: 'web', port: 32000, localEndpoints: want });
    });

  it('counts an endpoint found only on one side (internal or external) once', () => {
    const state = stateOf(
      portState('ns/a:http', {
        healthCheckNodePort: 31000,
        internal: [ep('10.0.0.1', 8080, true), ep('10.0.0.9', 8080, false)],
        external: [ep('10.0.0.1', 8080, true), ep('10.0.0.2', 8080, true)],
      }),
      portState('ns/a:dns', {
        healthCheckNodePort: 31000,
        internal: [ep('10.0.0.2', 53, true), ep('10.0.0.3', 53, true, false)],
        external: [],
      }),
      portState('ns/b', { internal: [ep('10.0.0.5', 80, true)] }),
    );
    assert.deepEqual(
      [...healthCheckServices(state)],
      [['ns/a', { namespace: 'ns', name: 'a', port: 31000, localEndpoints: 2 }]],
    );
  });
});

describe('healthCheckAnswer()', () => {
  const svc = { namespace: 'default', name: 'nginx' };
  it("answers 200 and kube-proxy's body when the node has an endpoint and the proxy is healthy", () => {
    assert.deepEqual(healthCheckAnswer({ ...svc, localEndpoints: 2 }, true), {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' },
      body:
        '{\n\t"service": {\n\t\t"namespace": "default",\n\t\t"name": "nginx"\n\t},\n' +
        '\t"localEndpoints": 2,\n\t"serviceProxyHealthy": true\n}',
    });
  });

  const rows: Array<[string, number, boolean, 200 | 503]> = [
    ['no local endpoint', 0, true, 503],
    ['the proxy unhealthy (a change waiting too long)', 3, false, 503],
    ['both', 0, false, 503],
    ['one endpoint', 1, true, 200],
  ];
  for (const [title, n, healthy, status] of rows)
    it(`${title}: ${status}`, () => {
      const a = healthCheckAnswer({ ...svc, localEndpoints: n }, healthy);
      assert.equal(a.status, status);
      assert.deepEqual(JSON.parse(a.body), {
        service: svc,
        localEndpoints: n,
        serviceProxyHealthy: healthy,
      });
    });
});
