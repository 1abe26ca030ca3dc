// Several apiservers on one etcd: two `svcplane apiserver` processes (127.0.0.2 and 127.0.0.3, one
// port) share a real etcd. 2,000 concurrent Service creates are split across them, 20% with explicit
// addresses or node ports. Every create succeeds, nothing is duplicated or lost, and a repair pass
// run afterwards finds nothing to fix. The kubernetes Endpoints list both apiservers, and a killed
// one drops out once its lease expires.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AllocationRepair } from '../../src/apiserver/allocation/repair.js';
import { ServiceAllocators } from '../../src/apiserver/allocation/service-allocation.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { EtcdStore } from '../../src/storage/etcd/etcd-store.js';
import { startEtcd, type EtcdServer } from '../../src/storage/etcd/testing/etcd-server.js';
import { startApiServersOnEtcd } from './testing/etcd-apiservers.js';
import { call, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const NODE_PORTS = '30000-34095'; // 4,096 ports: a static block of 128 for the explicit ones
const CREATES = 2000;

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-alloc-etcd-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Svc {
  metadata: { name: string };
  spec: { clusterIP?: string; ports?: { nodePort?: number }[] };
}

const noEvents = { warning: async (): Promise<void> => {} };

describe('allocation: two apiservers on one etcd', () => {
  let etcd: EtcdServer;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    etcd = await startEtcd();
    [a, b] = await startApiServersOnEtcd({
      work,
      etcdServers: [etcd.endpoint],
      args: [
        '--service-node-port-range',
        NODE_PORTS,
        '--service-cluster-ip-range',
        '10.96.0.0/12,fd00:96::/112',
      ],
      env: { SVCPLANE_ENDPOINT_INTERVAL_MS: '300' },
    });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('the kubernetes Endpoints list both apiservers', async () => {
    await until('both apiservers in the endpoints', 10_000, async () => {
      const ep = await call(a, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      if (ep.status !== 200) return undefined;
      const subsets = ep.json<{ subsets: { addresses: { ip: string }[]; ports: { port: number }[] }[] }>()
        .subsets;
      const ips = subsets.flatMap((s) => s.addresses.map((x) => x.ip));
      return ips.length === 2 ? ips : undefined;
    });
    const ep = await call(b, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
    assert.deepEqual(ep.json<{ subsets: unknown }>().subsets, [
      {
        addresses: [{ ip: '127.0.0.2' }, { ip: '127.0.0.3' }],
        ports: [{ name: 'https', port: a.port, protocol: 'TCP' }],
      },
    ]);
  });

  it(`${CREATES} concurrent creates across both: 0 duplicates, 0 lost, and repair finds nothing`, async () => {
    // Every 5th create (20%) asks for a specific value, always from a static block (so no dynamic
    // allocation can take it first): 128 node ports, then 254 IPv4 addresses, then IPv6 ones.
    const bodies = Array.from({ length: CREATES }, (_, i) => {
      const spec: Record<string, unknown> = { ports: [{ port: 80 }] };
      const k = i / 5;
      if (i % 5 === 0 && k < 128) {
        spec['type'] = 'NodePort';
        spec['ports'] = [{ port: 80, nodePort: 30000 + k }];
      } else if (i % 5 === 0 && k < 382) {
        spec['clusterIP'] = `10.96.0.${2 + k - 128}`;
      } else if (i % 5 === 0) {
        spec['clusterIP'] = `fd00:96::${(2 + k - 382).toString(16)}`;
      } else if (i % 2 === 1) spec['type'] = 'NodePort';
      return { apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}` }, spec };
    });
    assert.equal(
      bodies.filter(
        (b) => JSON.stringify(b).includes('"clusterIP"') || JSON.stringify(b).includes('"nodePort"'),
      ).length,
      CREATES / 5,
    );
    const acked = new Map<string, Svc>();
    const failures: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= CREATES) return;
        const srv = i % 2 === 0 ? a : b;
        const r = await call(srv, 'POST', '/api/v1/namespaces/default/services', { body: bodies[i] });
        if (r.status === 201) acked.set(`s${i}`, r.json<Svc>());
        else failures.push(`s${i}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 48 }, worker));
    assert.deepEqual(failures, []);
    assert.equal(acked.size, CREATES);

    for (const srv of [a, b]) {
      const list = await call(srv, 'GET', '/api/v1/namespaces/default/services');
      const items = list.json<{ items: Svc[] }>().items.filter((s) => s.metadata.name !== 'kubernetes');
      assert.equal(items.length, CREATES, 'no Service is lost');
      const ips = items.map((s) => s.spec.clusterIP!);
      assert.equal(new Set(ips).size, ips.length, 'no address is given twice');
      const ports = items.flatMap((s) => (s.spec.ports ?? []).map((p) => p.nodePort ?? 0)).filter((p) => p);
      assert.equal(new Set(ports).size, ports.length, 'no node port is given twice');
      for (const s of items) {
        assert.deepEqual(s.spec, acked.get(s.metadata.name)!.spec, `${s.metadata.name} is as acknowledged`);
      }
    }

    // A repair pass over the same etcd, from a third process-like client, has nothing to do.
    const store = await EtcdStore.open({ endpoints: [etcd.endpoint] });
    const allocators = new ServiceAllocators(
      store,
      {
        serviceClusterIPRange: ['10.96.0.0/12', 'fd00:96::/112'],
        serviceNodePortRange: { base: 30000, size: 4096 },
      },
      silentLogger,
    );
    try {
      const repair = new AllocationRepair(store, allocators, noEvents, noEvents, silentLogger);
      const pass = await repair.runOnce();
      assert.deepEqual(pass.clusterIPs, { recorded: 0, freed: 0, leaks: 0, problems: [] });
      assert.deepEqual(pass.nodePorts, { recorded: 0, freed: 0, leaks: 0, problems: [] });
      const records = await allocators.ips.list();
      assert.equal(records.items.length, CREATES + 1, 'one record per address, the kubernetes one too');
    } finally {
      await store.close();
    }
  });

  it('a killed apiserver drops out of the kubernetes Endpoints when its lease expires', async () => {
    b.proc.kill('SIGKILL');
    const ips = await until('127.0.0.3 to drop out', 25_000, async () => {
      const ep = await call(a, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      const got = ep
        .json<{ subsets: { addresses: { ip: string }[] }[] }>()
        .subsets.flatMap((s) => s.addresses.map((x) => x.ip));
      return got.length === 1 ? got : undefined;
    });
    assert.deepEqual(ips, ['127.0.0.2']);
    const slice = await call(
      a,
      'GET',
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes',
    );
    assert.deepEqual(
      slice.json<{ endpoints: { addresses: string[] }[] }>().endpoints.map((e) => e.addresses),
      [['127.0.0.2']],
    );
  });
});
