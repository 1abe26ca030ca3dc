// ProxySync against an in-process API server with a recording backend: what each sync hands the backend
// (full or partial, and which service ports), batching, and what a failed apply does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { ProxyState } from '../core/proxy/types.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { servicePortStates } from '../core/proxy/state.js';
import { TopologyIndex } from '../core/topology/topology-index.js';
import { nodeHostIPs, ProxySync, type BackendResult, type ProxyBackend } from './sync.js';

const NODES = mustFindResource('', 'nodes');
const SERVICES = mustFindResource('', 'services');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

interface Call {
  changed: string[] | 'full';
  state: Map<string, string[]>;
}

/** Records each apply: the changed keys, and each service port's endpoint addresses at that time. */
class RecordingBackend implements ProxyBackend {
  readonly mode = 'recording';
  calls: Call[] = [];
  failNext = 0;
  async apply(state: ProxyState, changed: ReadonlySet<string> | 'full'): Promise<BackendResult> {
    await Promise.resolve();
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('injected failure');
    }
    this.calls.push({
      changed: changed === 'full' ? 'full' : [...changed].sort(),
      state: new Map([...state].map(([k, sp]) => [k, sp.internal.map((e) => `${e.ip}:${e.port}`)])),
    });
    return { partial: changed !== 'full' };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  last(): Call {
    return this.calls[this.calls.length - 1]!;
  }
}

const service = (name: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  metadata: { name, labels, annotations: { topologyKeys: '["unit"]' } },
  spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...extra },
});

const slice = (name: string, svc: string, endpoints: ReadonlyArray<readonly [string, string]>) => ({
  metadata: {
    name,
    labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'test' },
  },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: endpoints.map(([ip, nodeName]) => ({ addresses: [ip], nodeName, conditions: { ready: true } })),
});

async function until(f: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ProxySync', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer();
    for (const [name, unit] of [
      ['n1', 'a'],
      ['n2', 'a'],
      ['n3', 'b'],
    ] as const)
      await api.client.create(NODES, '', { metadata: { name, labels: { unit } } });
    await api.client.create(SERVICES, 'default', service('web'));
    await api.client.create(SERVICES, 'default', service('other'));
    await api.client.create(SERVICES, 'default', service('headless', { clusterIP: 'None' }));
    await api.client.create(
      SERVICES,
      'default',
      service('elsewhere', {}, { 'service.kubernetes.io/service-proxy-name': 'another-proxy' }),
    );
    await api.client.create(
      SLICES,
      'default',
      slice('web-1', 'web', [
        ['10.0.0.2', 'n2'],
        ['10.0.0.3', 'n3'],
      ]),
    );
    await api.client.create(SLICES, 'default', slice('other-1', 'other', [['10.0.1.3', 'n3']]));
  });
  after(() => api?.stop());

  it('starts with a full sync of the topology-filtered state, then syncs only the changed service ports', async () => {
    const backend = new RecordingBackend();
    const sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 0 });
    sync.start();
    try {
      await sync.waitForFirstSync();
      const first = backend.calls[0]!;
      assert.equal(first.changed, 'full');
      // headless and another proxy's Services are not ours; `default/kubernetes` may exist too
      assert.deepEqual(first.state.get('default/web:http'), ['10.0.0.2:8080'], 'unit a only (n1 is in a)');
      assert.deepEqual(first.state.get('default/other:http'), [], 'unit b only: nothing for n1');
      assert.equal(first.state.has('default/headless:http'), false);
      assert.equal(first.state.has('default/elsewhere:http'), false);

      // A slice change: one partial sync, of web's port only.
      await api.client.patch(SLICES, 'default', 'web-1', 'merge', {
        endpoints: [
          { addresses: ['10.0.0.2'], nodeName: 'n2', conditions: { ready: true } },
          { addresses: ['10.0.0.4'], nodeName: 'n1', conditions: { ready: true } },
        ],
      });
      await until(() => backend.calls.length === 2);
      assert.deepEqual(backend.last().changed, ['default/web:http']);
      assert.deepEqual(backend.last().state.get('default/web:http'), ['10.0.0.2:8080', '10.0.0.4:8080']);

      // n3 joins unit a: `other` now has an endpoint for n1; web's view is unchanged.
      await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'a' } } });
      await until(() => backend.calls.length === 3);
      assert.deepEqual(backend.last().changed, ['default/other:http']);
      assert.deepEqual(backend.last().state.get('default/other:http'), ['10.0.1.3:8080']);

      // The Service deleted: its port leaves the state, as a change.
      await api.client.delete(SERVICES, 'default', 'other');
      await until(() => backend.calls.length === 4);
      assert.deepEqual(backend.last().changed, ['default/other:http']);
      assert.equal(backend.last().state.has('default/other:http'), false);
    } finally {
      await sync.stop();
      await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'b' } } });
      await api.client.create(SERVICES, 'default', service('other'));
    }
  });

  it('a node reported unhealthy: a partial sync without its endpoints; no opinion brings them back', async () => {
    const backend = new RecordingBackend();
    const sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 0 });
    sync.start();
    try {
      await sync.waitForFirstSync();
      const web = () => backend.last().state.get('default/web:http');
      assert.ok(web()?.includes('10.0.0.2:8080'));
      const calls = backend.calls.length;
      sync.setNodeHealth('n2', false);
      await until(() => backend.calls.length === calls + 1);
      assert.deepEqual(backend.last().changed, ['default/web:http']);
      assert.ok(!web()?.includes('10.0.0.2:8080'));
      sync.setNodeHealth('n2', undefined);
      await until(() => backend.calls.length === calls + 2);
      assert.ok(web()?.includes('10.0.0.2:8080'));
    } finally {
      await sync.stop();
    }
  });

  it('batches changes that arrive within --min-sync-period into one sync', async () => {
    const backend = new RecordingBackend();
    const sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 400 });
    sync.start();
    try {
      await sync.waitForFirstSync();
      await sync.idle();
      const before = backend.calls.length;
      for (const ip of ['10.0.0.5', '10.0.0.6', '10.0.0.7'])
        await api.client.patch(SLICES, 'default', 'web-1', 'merge', {
          endpoints: [{ addresses: [ip], nodeName: 'n2', conditions: { ready: true } }],
        });
      await until(() => backend.last().state.get('default/web:http')?.[0] === '10.0.0.7:8080');
      assert.equal(backend.calls.length - before, 1, 'one sync for the three changes');
    } finally {
      await sync.stop();
    }
  });

  it('a failed apply makes the next sync a full one that still carries the change', async () => {
    const backend = new RecordingBackend();
    const sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 10 });
    sync.start();
    try {
      await sync.waitForFirstSync();
      await sync.idle();
      const before = backend.calls.length;
      backend.failNext = 1;
      await api.client.patch(SLICES, 'default', 'web-1', 'merge', {
        endpoints: [{ addresses: ['10.0.0.9'], nodeName: 'n1', conditions: { ready: true } }],
      });
      await until(() => backend.calls.length > before);
      assert.equal(sync.syncs.failed, 1);
      assert.equal(backend.last().changed, 'full');
      assert.deepEqual(backend.last().state.get('default/web:http'), ['10.0.0.9:8080']);
      assert.equal(sync.health().healthy, true);
    } finally {
      await sync.stop();
    }
  });

  it("recomputes the Services when this node's address moves into or out of a load-balancer source range", async () => {
    let last: ProxyState | undefined;
    const backend: ProxyBackend = {
      mode: 'capture',
      apply: (state) => {
        last = new Map(state);
        return Promise.resolve({ partial: false });
      },
      close: () => Promise.resolve(),
    };
    await api.client.create(
      SERVICES,
      'default',
      service('lb', {
        type: 'LoadBalancer',
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        loadBalancerSourceRanges: ['10.9.0.0/16'],
      }),
    );
    const sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 0 });
    sync.start();
    const holds = () => last?.get('default/lb:http')?.sourceRangesHoldNode;
    try {
      await sync.waitForFirstSync();
      await sync.idle();
      assert.deepEqual(last?.get('default/lb:http')?.loadBalancerSourceRanges, ['10.9.0.0/16']);
      assert.equal(holds(), undefined);
      const address = (ip: string) => ({ status: { addresses: [{ type: 'InternalIP', address: ip }] } });
      await api.client.patch(NODES, '', 'n1', 'merge', address('10.9.0.5'), { sub: 'status' });
      await until(() => holds() !== undefined);
      assert.deepEqual(holds(), [4]);
      await api.client.patch(NODES, '', 'n1', 'merge', address('10.8.0.5'), { sub: 'status' });
      await until(() => holds() === undefined);
    } finally {
      await sync.stop();
      await api.client.delete(SERVICES, 'default', 'lb');
    }
  });
});

describe('ProxySync: what its informers keep', () => {
  it('gives every service port the state the objects as the API sent them give', async () => {
    const api = await startInProcessApiServer();
    const backend = new RecordingBackend();
    let sync: ProxySync | undefined;
    try {
      for (const [name, zone] of [
        ['n1', 'z1'],
        ['n2', 'z2'],
      ] as const)
        await api.client.create(NODES, '', {
          metadata: { name, labels: { 'topology.kubernetes.io/zone': zone, 'kubernetes.io/hostname': name } },
        });
      await api.client.patch(
        NODES,
        '',
        'n1',
        'merge',
        { status: { addresses: [{ type: 'InternalIP', address: '10.9.0.5' }] } },
        { sub: 'status' },
      );
      // Every field a rule depends on: traffic policies, node ports, a health check port, source ranges,
      // affinity, topology annotations, hints, terminating endpoints, a slice of another family.
      await api.client.create(SERVICES, 'default', {
        metadata: {
          name: 'rich',
          labels: { app: 'rich' },
          annotations: { 'service.kubernetes.io/topology-mode': 'Auto', 'example.com/other': 'x' },
        },
        spec: {
          type: 'LoadBalancer',
          selector: { app: 'rich' },
          externalTrafficPolicy: 'Local',
          externalIPs: ['192.0.2.7'],
          loadBalancerSourceRanges: ['10.9.0.0/16'],
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
          ports: [
            { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
            { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
          ],
        },
      });
      await api.client.patch(
        SERVICES,
        'default',
        'rich',
        'merge',
        { status: { loadBalancer: { ingress: [{ ip: '198.51.100.1' }] } } },
        { sub: 'status' },
      );
      await api.client.create(SLICES, 'default', {
        metadata: { name: 'rich-1', labels: { 'kubernetes.io/service-name': 'rich' } },
        addressType: 'IPv4',
        ports: [
          { name: 'http', port: 8080, protocol: 'TCP' },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
        endpoints: [
          {
            addresses: ['10.0.2.1'],
            nodeName: 'n1',
            zone: 'z1',
            conditions: { ready: true },
            hints: { forZones: [{ name: 'z1' }] },
          },
          {
            addresses: ['10.0.2.2'],
            nodeName: 'n2',
            zone: 'z2',
            conditions: { ready: true },
            hints: { forZones: [{ name: 'z2' }] },
          },
          {
            addresses: ['10.0.2.3'],
            nodeName: 'n1',
            zone: 'z1',
            conditions: { ready: false, serving: true, terminating: true },
            targetRef: { kind: 'Pod', namespace: 'default', name: 'p3' },
          },
        ],
      });
      sync = new ProxySync({ client: api.client, node: 'n1', backend, log: quiet, minSyncPeriodMs: 0 });
      sync.start();
      await sync.waitForFirstSync();
      await sync.idle();
      // The same objects, as the API serves them, through a fresh index and the pure state function.
      const index = new TopologyIndex('n1', { targetRefs: false });
      for (const n of (await api.client.list(NODES)).items)
        index.setNode(n.metadata.name!, n.metadata.labels ?? {});
      const svc = await api.client.get(SERVICES, 'default', 'rich');
      index.setService('default/rich', svc);
      index.setSlice('default/rich', 'rich-1', await api.client.get(SLICES, 'default', 'rich-1'));
      const n1 = await api.client.get(NODES, '', 'n1');
      const want = servicePortStates(svc, index.view('default/rich'), 'n1', nodeHostIPs(n1));
      assert.equal(want.length, 2);
      assert.ok(
        want.every(
          (sp) =>
            sp.sourceRangesHoldNode !== undefined &&
            sp.nodePort !== undefined &&
            sp.loadBalancerIPs.length > 0,
        ),
      );
      for (const sp of want) assert.deepEqual(sync.current().get(sp.key), sp);
    } finally {
      await sync?.stop();
      await api.stop();
    }
  });
});

describe('nodeHostIPs()', () => {
  it("takes each family's first InternalIP, else its first ExternalIP", () => {
    const node = (addresses: unknown) => ({ metadata: { name: 'n' }, status: { addresses } });
    assert.deepEqual(
      nodeHostIPs(
        node([
          { type: 'Hostname', address: 'n' },
          { type: 'ExternalIP', address: '203.0.113.1' },
          { type: 'ExternalIP', address: '2001:db8::1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.2' },
        ]),
      ),
      ['10.0.0.1', '2001:db8::1'],
    );
    assert.deepEqual(nodeHostIPs(node(undefined)), []);
    assert.deepEqual(nodeHostIPs(node([null, { type: 'InternalIP' }])), []);
  });
});

describe('ProxySync: the upstream away', () => {
  it('one line when it starts without the upstream, one when it goes after the first sync', async () => {
    const lines: string[] = [];
    const log = { ...quiet, warn: (m: string) => (m.startsWith('upstream') ? lines.push(m) : 0) };
    const gone = await startInProcessApiServer();
    await gone.stop();
    const cold = new ProxySync({ client: gone.client, node: 'n1', backend: new RecordingBackend(), log });
    cold.start();
    await until(() => lines.length > 0);
    await new Promise((r) => setTimeout(r, 1_500)); // the informers retry meanwhile
    assert.deepEqual(lines, ['upstream unreachable: no rules until the first sync; retrying']);
    await cold.stop();

    lines.length = 0;
    const api = await startInProcessApiServer();
    const backend = new RecordingBackend();
    const warm = new ProxySync({ client: api.client, node: 'n1', backend, log, minSyncPeriodMs: 0 });
    warm.start();
    await warm.waitForFirstSync();
    await api.stop();
    await until(() => lines.length > 0);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(lines, ['upstream unreachable: keeping the rules of the last sync']);
    assert.equal(backend.calls.length, 1, 'the rules of the last sync stay');
    await warm.stop();
  });
});
