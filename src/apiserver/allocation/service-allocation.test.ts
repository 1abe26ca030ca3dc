import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { StatusError } from '../../api/status.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { prng } from '../../storage/testing/helpers.js';
import { silentLogger } from '../../runtime/logger.js';
import { ensureSystemNamespaces } from '../namespace-lifecycle.js';
import { Registry, type WriteContext } from '../registry/registry.js';
import { WatchCache } from '../watch-cache/watch-cache.js';
import { SERVICES, ServiceAllocators, type AllocationConfig } from './service-allocation.js';

const ctx = (dryRun = false): WriteContext => ({
  dryRun,
  fieldManager: 'test',
  fieldValidation: 'Strict',
  warnings: [],
});

interface Harness {
  store: MemoryStore;
  registry: Registry;
  alloc: ServiceAllocators;
  stop(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

async function harness(cfg: Partial<AllocationConfig> = {}, store = new MemoryStore()): Promise<Harness> {
  const alloc = new ServiceAllocators(
    store,
    {
      serviceClusterIPRange: ['10.96.0.0/24'],
      serviceNodePortRange: { base: 30000, size: 100 },
      random: prng(7),
      ...cfg,
    },
    silentLogger,
  );
  const cache = new WatchCache(store, {});
  cache.start();
  await cache.ready;
  const registry = new Registry(store, cache, { hooks: alloc.hooks() });
  await ensureSystemNamespaces(registry);
  await alloc.start();
  const h = {
    store,
    registry,
    alloc,
    async stop() {
      await alloc.stop();
      await cache.stop();
    },
  };
  cleanups.push(() => h.stop());
  return h;
}

const svc = (name: string, spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], ...spec },
});

type Spec = {
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ports?: { port: number; nodePort?: number; protocol?: string }[];
  healthCheckNodePort?: number;
};
const specOf = (o: KObject): Spec => (o as unknown as { spec: Spec }).spec;

async function records(h: Harness): Promise<{ ips: string[]; ports: number[] }> {
  const ips = await h.alloc.ips.list();
  const ports = await h.alloc.ports.list();
  return {
    ips: ips.items.map((s) => s.value!).sort(),
    ports: ports.items.map((s) => s.value!).sort((a, b) => a - b),
  };
}

async function rejects(p: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof StatusError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.status.message, message);
    return true;
  });
}

describe('Service allocation through the registry', () => {
  it('a ClusterIP Service gets an address of the upper block and a record owned by its uid', async () => {
    const h = await harness();
    const created = await h.registry.create(SERVICES, 'default', svc('web', {}), ctx());
    const ip = specOf(created).clusterIP!;
    assert.match(ip, /^10\.96\.0\.\d+$/);
    assert.ok(Number(ip.split('.')[3]) > 16, `${ip} is outside the static block`);
    assert.deepEqual(specOf(created).clusterIPs, [ip]);
    assert.deepEqual(specOf(created).ipFamilies, ['IPv4']);
    const rec = (await h.alloc.ips.list()).items;
    assert.equal(rec.length, 1);
    assert.equal(rec[0]!.owner?.uid, created.metadata.uid);
  });

  it('NodePort ports that share a port number share one node port; others get their own', async () => {
    const h = await harness();
    const created = await h.registry.create(
      SERVICES,
      'default',
      svc('dns', {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 53, protocol: 'TCP' },
          { name: 'b', port: 53, protocol: 'UDP' },
          { name: 'c', port: 80, protocol: 'TCP' },
        ],
      }),
      ctx(),
    );
    const ports = specOf(created).ports!;
    assert.equal(ports[0]!.nodePort, ports[1]!.nodePort);
    assert.notEqual(ports[0]!.nodePort, ports[2]!.nodePort);
    assert.deepEqual(
      (await records(h)).ports,
      [ports[0]!.nodePort!, ports[2]!.nodePort!].sort((a, b) => a - b),
    );
  });

  it('a LoadBalancer with externalTrafficPolicy Local also gets a healthCheckNodePort', async () => {
    const h = await harness();
    const lb = await h.registry.create(
      SERVICES,
      'default',
      svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }),
      ctx(),
    );
    const hc = specOf(lb).healthCheckNodePort!;
    assert.ok(hc >= 30000 && hc < 30100);
    assert.notEqual(hc, specOf(lb).ports![0]!.nodePort);
    assert.equal((await records(h)).ports.length, 2);
    const off = await h.registry.create(
      SERVICES,
      'default',
      svc('lb2', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }),
      ctx(),
    );
    assert.equal(specOf(off).ports![0]!.nodePort, undefined);
  });

  it('a rejected write (name taken, invalid spec) leaves no record behind', async () => {
    const h = await harness();
    await h.registry.create(SERVICES, 'default', svc('web', { type: 'NodePort' }), ctx());
    const before = await records(h);
    await assert.rejects(
      h.registry.create(SERVICES, 'default', svc('web', { type: 'NodePort' }), ctx()),
      /already exists/,
    );
    await assert.rejects(
      h.registry.create(SERVICES, 'default', svc('bad', { type: 'NodePort', ports: [] }), ctx()),
      /spec.ports: Required value/,
    );
    assert.deepEqual(await records(h), before);
  });

  it('a specific address that is taken or out of range gives upstream 422 texts, and nothing leaks', async () => {
    const h = await harness();
    const a = await h.registry.create(SERVICES, 'default', svc('a', { clusterIP: '10.96.0.5' }), ctx());
    assert.equal(specOf(a).clusterIP, '10.96.0.5');
    const before = await records(h);
    await rejects(
      h.registry.create(SERVICES, 'default', svc('b', { clusterIP: '10.96.0.5' }), ctx()),
      422,
      'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: provided IP is already allocated',
    );
    await rejects(
      h.registry.create(SERVICES, 'default', svc('c', { clusterIP: '192.168.0.1' }), ctx()),
      422,
      'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.0.1"}: failed to allocate IP 192.168.0.1: provided IP 192.168.0.1 is not in the valid range',
    );
    await rejects(
      h.registry.create(
        SERVICES,
        'default',
        svc('d', { type: 'NodePort', ports: [{ port: 80, nodePort: 20000 }] }),
        ctx(),
      ),
      422,
      'Service "d" is invalid: spec.ports[0].nodePort: Invalid value: 20000: provided port is not in the valid range. The range of valid ports is 30000-30099',
    );
    // The IP is free but the port is taken: the IP taken on the way is given back.
    await h.registry.create(
      SERVICES,
      'default',
      svc('e', { type: 'NodePort', ports: [{ port: 80, nodePort: 30001 }] }),
      ctx(),
    );
    const mid = await records(h);
    await rejects(
      h.registry.create(
        SERVICES,
        'default',
        svc('f', { type: 'NodePort', clusterIP: '10.96.0.6', ports: [{ port: 80, nodePort: 30001 }] }),
        ctx(),
      ),
      422,
      'Service "f" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated',
    );
    assert.deepEqual(await records(h), mid);
    assert.notDeepEqual(mid, before);
  });

  it('bad topologyKeys are a 422 Invalid with one cause each, and nothing is allocated', async () => {
    const h = await harness();
    const before = await records(h);
    const create = h.registry.create(
      SERVICES,
      'default',
      svc('topo', { type: 'NodePort', externalTrafficPolicy: 'Local', topologyKeys: ['*', 'zone', 'zone'] }),
      ctx(),
    );
    await assert.rejects(create, (err: unknown) => {
      assert.ok(err instanceof StatusError, String(err));
      assert.equal(err.code, 422);
      assert.equal(err.status.reason, 'Invalid');
      assert.equal(
        err.status.message,
        'Service "topo" is invalid: [spec.topologyKeys: Forbidden: may not be specified when `externalTrafficPolicy=Local`, ' +
          'spec.topologyKeys[0]: Invalid value: "*": "*" must be the last value specified, ' +
          'spec.topologyKeys[2]: Duplicate value: "zone"]',
      );
      assert.deepEqual(err.status.details?.causes, [
        {
          reason: 'FieldValueForbidden',
          message: 'Forbidden: may not be specified when `externalTrafficPolicy=Local`',
          field: 'spec.topologyKeys',
        },
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "*": "*" must be the last value specified',
          field: 'spec.topologyKeys[0]',
        },
        { reason: 'FieldValueDuplicate', message: 'Duplicate value: "zone"', field: 'spec.topologyKeys[2]' },
      ]);
      return true;
    });
    assert.deepEqual(await records(h), before);
    const ok = await h.registry.create(
      SERVICES,
      'default',
      svc('topo', { topologyKeys: ['kubernetes.io/hostname', '*'] }),
      ctx(),
    );
    assert.deepEqual((ok as unknown as { spec: { topologyKeys: string[] } }).spec.topologyKeys, [
      'kubernetes.io/hostname',
      '*',
    ]);
  });

  it('a full range gives 500 "failed to allocate a serviceIP: range is full"', async () => {
    const h = await harness({ serviceClusterIPRange: ['10.0.0.0/29'] });
    for (let i = 0; i < 6; i++) await h.registry.create(SERVICES, 'default', svc(`s${i}`, {}), ctx());
    await rejects(
      h.registry.create(SERVICES, 'default', svc('s6', {}), ctx()),
      500,
      'Internal error occurred: failed to allocate a serviceIP: range is full',
    );
    assert.equal((await records(h)).ips.length, 6);
  });

  it('NodePort → ClusterIP frees the node ports after the update, and they can be taken again', async () => {
    const h = await harness();
    const np = await h.registry.create(
      SERVICES,
      'default',
      svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30007 }] }),
      ctx(),
    );
    await h.registry.patch(SERVICES, 'default', 'np', 'merge', { spec: { type: 'ClusterIP' } }, ctx(), {
      subresource: '',
      force: false,
    });
    assert.deepEqual((await records(h)).ports, []);
    const again = await h.registry.create(
      SERVICES,
      'default',
      svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30007 }] }),
      ctx(),
    );
    assert.equal(specOf(again).ports![0]!.nodePort, 30007);
    assert.equal((await records(h)).ips.length, 2, `${specOf(np).clusterIP} stays with np`);
  });

  it('changing a nodePort takes the new one first and frees the old one once stored', async () => {
    const h = await harness();
    await h.registry.create(
      SERVICES,
      'default',
      svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] }),
      ctx(),
    );
    await h.registry.create(
      SERVICES,
      'default',
      svc('other', { type: 'NodePort', ports: [{ port: 80, nodePort: 30011 }] }),
      ctx(),
    );
    await rejects(
      h.registry.patch(
        SERVICES,
        'default',
        'np',
        'merge',
        { spec: { ports: [{ port: 80, nodePort: 30011 }] } },
        ctx(),
        { subresource: '', force: false },
      ),
      422,
      'Service "np" is invalid: spec.ports[0].nodePort: Invalid value: 30011: provided port is already allocated',
    );
    assert.deepEqual((await records(h)).ports, [30010, 30011]);
    await h.registry.patch(
      SERVICES,
      'default',
      'np',
      'merge',
      { spec: { ports: [{ port: 80, nodePort: 30012 }] } },
      ctx(),
      { subresource: '', force: false },
    );
    assert.deepEqual((await records(h)).ports, [30011, 30012]);
  });

  it('an update that loses the compare-and-swap gives back what it took', async () => {
    const h = await harness();
    const np = await h.registry.create(SERVICES, 'default', svc('np', { type: 'ClusterIP' }), ctx());
    await h.registry.patch(SERVICES, 'default', 'np', 'merge', { metadata: { labels: { x: 'y' } } }, ctx(), {
      subresource: '',
      force: false,
    });
    const before = await records(h);
    const stale = { ...structuredClone(np), spec: { ...specOf(np), type: 'NodePort' } };
    await assert.rejects(
      h.registry.update(SERVICES, 'default', 'np', stale, ctx()),
      (e: unknown) => e instanceof StatusError && e.code === 409,
    );
    assert.deepEqual(await records(h), before);
  });

  it('delete frees every address and port the Service held', async () => {
    const h = await harness();
    await h.registry.create(
      SERVICES,
      'default',
      svc('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }),
      ctx(),
    );
    assert.equal((await records(h)).ports.length, 2);
    await h.registry.delete(SERVICES, 'default', 'lb', {}, ctx());
    assert.deepEqual(await records(h), { ips: [], ports: [] });
  });

  it('dryRun takes nothing, shows plausible values, and predicts an already-allocated failure', async () => {
    const h = await harness();
    await h.registry.create(SERVICES, 'default', svc('a', { clusterIP: '10.96.0.5' }), ctx());
    const before = await records(h);
    const dry = await h.registry.create(SERVICES, 'default', svc('d', { type: 'NodePort' }), ctx(true));
    assert.match(specOf(dry).clusterIP!, /^10\.96\.0\.\d+$/);
    assert.ok(specOf(dry).ports![0]!.nodePort! >= 30000);
    await assert.rejects(
      h.registry.create(SERVICES, 'default', svc('e', { clusterIP: '10.96.0.5' }), ctx(true)),
      /provided IP is already allocated/,
    );
    assert.deepEqual(await records(h), before);
  });

  it('concurrent creates asking for one address: exactly one wins, and no record leaks', async () => {
    const h = await harness();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        h.registry.create(SERVICES, 'default', svc(`c${i}`, { clusterIP: '10.96.0.9' }), ctx()),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.deepEqual((await records(h)).ips, ['10.96.0.9']);
  });

  it('two allocators on one store (two apiservers) never hand out the same value', async () => {
    const store = new MemoryStore();
    const a = await harness({ serviceClusterIPRange: ['10.0.0.0/26'], random: prng(1) }, store);
    const b = await harness({ serviceClusterIPRange: ['10.0.0.0/26'], random: prng(1) }, store);
    const made = await Promise.allSettled(
      Array.from({ length: 70 }, (_, i) =>
        (i % 2 === 0 ? a : b).registry.create(SERVICES, 'default', svc(`s${i}`, {}), ctx()),
      ),
    );
    const ips = made.flatMap((r) => (r.status === 'fulfilled' ? [specOf(r.value).clusterIP!] : []));
    assert.equal(ips.length, 62, 'a /26 has 62 usable addresses');
    assert.equal(new Set(ips).size, ips.length);
    for (const r of made) {
      if (r.status === 'rejected') assert.match(String(r.reason), /range is full/);
    }
  });

  it('releasing on delete leaves a record that another Service owns (drift) alone', async () => {
    const h = await harness();
    const a = await h.registry.create(SERVICES, 'default', svc('a', {}), ctx());
    await h.alloc.ips.release(specOf(a).clusterIP!, 'someone-else');
    assert.equal((await records(h)).ips.length, 1);
  });

  it('dual-stack: PreferDualStack gets one address per family; SingleStack one', async () => {
    const h = await harness({ serviceClusterIPRange: ['10.96.0.0/24', 'fd00::/120'] });
    const dual = await h.registry.create(
      SERVICES,
      'default',
      svc('dual', { ipFamilyPolicy: 'PreferDualStack' }),
      ctx(),
    );
    assert.deepEqual(specOf(dual).ipFamilies, ['IPv4', 'IPv6']);
    assert.match(specOf(dual).clusterIPs![1]!, /^fd00::[0-9a-f]+$/);
    const single = await h.registry.create(SERVICES, 'default', svc('single', {}), ctx());
    assert.equal(specOf(single).clusterIPs!.length, 1);
    // Downgrade by intent releases the secondary once stored.
    await h.registry.patch(
      SERVICES,
      'default',
      'dual',
      'merge',
      { spec: { ipFamilyPolicy: 'SingleStack' } },
      ctx(),
      { subresource: '', force: false },
    );
    assert.deepEqual(
      (await records(h)).ips.filter((ip) => ip.includes(':')),
      [],
    );
  });
});
