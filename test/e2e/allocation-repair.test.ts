// Repair end to end against `svcplane up` on its embedded store:
// - crash: SIGKILL the server 10 times during a storm of creates; after every restart no two
//   Services share an address or a node port and every acknowledged create is there; allocations
//   leaked by killed requests are freed after 3 repair passes;
// - injected drift: with the server stopped, write to the store directly (delete a record, add a
//   stray one, move a Service out of the range, give two Services one address, and the same for
//   node ports); the restarted server's repair reports each problem with upstream's reason as an
//   Event on the Service and fixes the records;
// - a changed --service-cluster-ip-range: records outside the new range are dropped, Services that
//   still use such addresses get ClusterIPOutOfRange.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { cidrContains, parseAddress, parseCidrRange } from '../../src/core/allocator/cidr.js';
import { IPAllocator } from '../../src/core/allocator/ip-allocator.js';
import { PortAllocator } from '../../src/core/allocator/port-allocator.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-alloc-repair-'));
after(() => rmSync(work, { recursive: true, force: true }));

const FAST_REPAIR = ['--repair-interval', '300ms'];
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

interface Svc {
  metadata: { name: string; uid: string };
  spec: { type: string; clusterIP?: string; ports?: { nodePort?: number; protocol: string }[] };
}

async function services(srv: TestServer): Promise<Svc[]> {
  const r = await call(srv, 'GET', '/api/v1/namespaces/default/services');
  assert.equal(r.status, 200, r.text);
  return r.json<{ items: Svc[] }>().items;
}

/** What the RangeAllocation view says is taken. */
async function recorded(srv: TestServer): Promise<{ ips: string[]; ports: number[] }> {
  const r = await call(srv, 'GET', '/debug/svcplane/rangeallocations');
  const ips: string[] = [];
  const ports: number[] = [];
  for (const item of r.json<{ items: { metadata: { name: string }; range: string; data: string }[] }>()
    .items) {
    const snap = { range: item.range, data: new Uint8Array(Buffer.from(item.data, 'base64')) };
    if (item.metadata.name === 'servicenodeports')
      PortAllocator.fromSnapshot(snap).forEach((p) => ports.push(p));
    else IPAllocator.fromSnapshot(snap).forEach((ip) => ips.push(ip));
  }
  return { ips: ips.sort(), ports: ports.sort((a, b) => a - b) };
}

/** What the Services use. */
function used(list: Svc[]): { ips: string[]; ports: number[] } {
  const ips = list.flatMap((s) =>
    s.spec.clusterIP && s.spec.clusterIP !== 'None' ? [s.spec.clusterIP] : [],
  );
  const ports = list.flatMap((s) => (s.spec.ports ?? []).flatMap((p) => (p.nodePort ? [p.nodePort] : [])));
  return { ips: [...new Set(ips)].sort(), ports: [...new Set(ports)].sort((a, b) => a - b) };
}

async function kill(srv: TestServer): Promise<void> {
  if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) return;
  const gone = new Promise((r) => srv.proc.once('exit', r));
  srv.proc.kill('SIGKILL');
  await gone;
}

describe('allocation repair: crash during a storm of creates', () => {
  it('10 SIGKILLs: no duplicates, every acknowledged create kept, leaks freed after 3 passes', async () => {
    const dataDir = path.join(work, 'crash');
    const acked = new Map<string, Svc>();
    let n = 0;
    let leakedSeen = 0;
    for (let round = 0; round < 10; round++) {
      const srv = await startUp({ dataDir, args: ['--repair-interval', '1h'] });
      try {
        // After the restart: everything acknowledged is there as acknowledged; nothing is shared.
        const list = await services(srv);
        const byName = new Map(list.map((s) => [s.metadata.name, s]));
        for (const [name, svc] of acked) {
          assert.deepEqual(byName.get(name)?.spec, svc.spec, `round ${round}: ${name} was acknowledged`);
        }
        const ips = list.map((s) => s.spec.clusterIP);
        assert.equal(new Set(ips).size, ips.length, `round ${round}: an address is shared`);
        const ports = list.flatMap((s) => (s.spec.ports ?? []).map((p) => `${p.protocol}/${p.nodePort}`));
        assert.equal(new Set(ports).size, ports.length, `round ${round}: a node port is shared`);
        const rec = await recorded(srv);
        leakedSeen += rec.ips.length - used(list).ips.length;

        // The storm: 16 writers until the kill.
        let stop = false;
        const writer = async (): Promise<void> => {
          while (!stop) {
            const name = `c${n++}`;
            const body = {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name },
              spec: { type: 'NodePort', ports: [{ port: 80 }] },
            };
            try {
              const r = await call(srv, 'POST', '/api/v1/namespaces/default/services', { body });
              if (r.status === 201) acked.set(name, r.json<Svc>());
            } catch {
              return; // the server is gone
            }
          }
        };
        const writers = Array.from({ length: 16 }, writer);
        await new Promise((r) => setTimeout(r, 300 + ((round * 137) % 400)));
        await kill(srv);
        stop = true;
        await Promise.all(writers);
      } finally {
        await kill(srv);
      }
    }
    assert.ok(acked.size > 100, `the storm created ${acked.size} Services`);

    // A last start with a fast repair: the records end up exactly what the Services use.
    const srv = await startUp({ dataDir, args: FAST_REPAIR });
    try {
      await until('leaks to be freed', 10_000, async () => {
        const want = used(await services(srv));
        const rec = await recorded(srv);
        return JSON.stringify(rec) === JSON.stringify(want) ? true : undefined;
      });
      // The killed requests did leak (or the test proved nothing about freeing leaks).
      assert.ok(leakedSeen > 0, 'no allocation leaked across 10 kills');
      const metrics = await call(srv, 'GET', '/metrics');
      assert.match(metrics.text, /apiserver_clusterip_repair_ip_errors_total\{type="leak"\} [1-9]/);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });
});

describe('allocation repair: injected drift', () => {
  const dataDir = path.join(work, 'drift');

  const create = async (srv: TestServer, name: string, spec: Record<string, unknown>): Promise<Svc> => {
    const r = await call(srv, 'POST', '/api/v1/namespaces/default/services', {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: { ports: [{ port: 80 }], ...spec },
      },
    });
    assert.equal(r.status, 201, r.text);
    return r.json<Svc>();
  };

  it('each problem gets its upstream reason as an Event, and the records are fixed', async () => {
    let srv = await startUp({ dataDir });
    await create(srv, 'lost-record', { clusterIP: '10.96.0.20' });
    await create(srv, 'moved-out', { clusterIP: '10.96.0.21' });
    await create(srv, 'first', { clusterIP: '10.96.0.22' });
    await create(srv, 'second', { clusterIP: '10.96.0.23' });
    await create(srv, 'np-lost', { type: 'NodePort', ports: [{ port: 80, nodePort: 30010 }] });
    await create(srv, 'np-first', { type: 'NodePort', ports: [{ port: 80, nodePort: 30011 }] });
    await create(srv, 'np-second', { type: 'NodePort', ports: [{ port: 80, nodePort: 30012 }] });
    await create(srv, 'np-out', { type: 'NodePort', ports: [{ port: 80, nodePort: 30013 }] });
    assert.equal(await srv.stop(), 0);

    // Drift, written straight into the store while no apiserver runs.
    const store = await SqliteStore.open({ dataDir });
    const rewrite = async (name: string, edit: (spec: Record<string, unknown>) => void): Promise<void> => {
      const key = `/services/specs/default/${name}`;
      const kv = (await store.get(key))!;
      const obj = JSON.parse(new TextDecoder().decode(kv.value)) as { spec: Record<string, unknown> };
      edit(obj.spec);
      await store.update(key, enc(obj), kv.modRevision);
    };
    try {
      await store.delete('/allocations/serviceips/10.96.0.20');
      await store.create('/allocations/serviceips/10.96.0.99', enc({}));
      await rewrite('moved-out', (s) => {
        s['clusterIP'] = '192.168.0.1';
        s['clusterIPs'] = ['192.168.0.1'];
      });
      await rewrite('second', (s) => {
        s['clusterIP'] = '10.96.0.22';
        s['clusterIPs'] = ['10.96.0.22'];
      });
      await store.delete('/allocations/servicenodeports/30010');
      await store.create('/allocations/servicenodeports/30099', enc({}));
      await rewrite('np-second', (s) => {
        (s['ports'] as { nodePort: number }[])[0]!.nodePort = 30011;
      });
      await rewrite('np-out', (s) => {
        (s['ports'] as { nodePort: number }[])[0]!.nodePort = 20000;
      });
    } finally {
      await store.close();
    }

    srv = await startUp({ dataDir, args: FAST_REPAIR });
    try {
      const events = await until('the repair events', 10_000, async () => {
        const r = await call(srv, 'GET', '/api/v1/namespaces/default/events');
        const items = r.json<{
          items: {
            involvedObject: { name: string };
            reason: string;
            message: string;
            type: string;
            source: { component: string };
          }[];
        }>().items;
        return items.length >= 6 ? items : undefined;
      });
      const seen = events
        .map((e) => `${e.involvedObject.name} ${e.type} ${e.reason} ${e.source.component}: ${e.message}`)
        .sort();
      assert.deepEqual(seen, [
        'lost-record Warning ClusterIPNotAllocated ipallocator-repair-controller: Cluster IP [IPv4]:10.96.0.20 is not allocated; repairing',
        'moved-out Warning ClusterIPOutOfRange ipallocator-repair-controller: Cluster IP [IPv4]:192.168.0.1 is not within the service CIDR 10.96.0.0/12; please recreate service',
        'np-lost Warning PortNotAllocated portallocator-repair-controller: Port 30010 is not allocated; repairing',
        'np-out Warning PortOutOfRange portallocator-repair-controller: Port 20000 is not within the port range 30000-32767; please recreate service',
        'np-second Warning PortAlreadyAllocated portallocator-repair-controller: Port 30011 was assigned to multiple services; please recreate service',
        'second Warning ClusterIPAlreadyAllocated ipallocator-repair-controller: Cluster IP [IPv4]:10.96.0.22 was assigned to multiple services; please recreate service',
      ]);
      // The lost records are back at once; the stray ones (and the orphans of the moved Services)
      // go on the 3rd pass.
      let last = '';
      await until(
        () => `the records to match the Services: ${last}`,
        10_000,
        async () => {
          const rec = await recorded(srv);
          const want = used(await services(srv));
          const inRange = {
            ips: want.ips.filter((ip) => cidrContains(parseCidrRange('10.96.0.0/12')!, parseAddress(ip)!)),
            ports: want.ports.filter((p) => p >= 30000),
          };
          last = `${JSON.stringify(rec)} vs ${JSON.stringify(inRange)}`;
          return JSON.stringify(rec) === JSON.stringify(inRange) ? true : undefined;
        },
      );
      const rec = await recorded(srv);
      assert.ok(rec.ips.includes('10.96.0.20') && !rec.ips.includes('10.96.0.99'));
      assert.ok(rec.ports.includes(30010) && !rec.ports.includes(30099));
      // Repeats of a problem aggregate on one Event.
      const metrics = await call(srv, 'GET', '/metrics');
      assert.match(metrics.text, /apiserver_clusterip_repair_ip_errors_total\{type="duplicate"\} [1-9]/);
      assert.match(metrics.text, /apiserver_nodeport_repair_port_errors_total\{type="outOfRange"\} [1-9]/);
      const again = await until('a repeated event', 5_000, async () => {
        const r = await call(srv, 'GET', '/api/v1/namespaces/default/events');
        const e = r
          .json<{ items: { reason: string; count: number }[] }>()
          .items.find((x) => x.reason === 'ClusterIPOutOfRange');
        return e !== undefined && e.count > 1 ? e : undefined;
      });
      assert.ok(again.count > 1);
      const describe = await call(
        srv,
        'GET',
        '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=second',
      );
      assert.equal(describe.json<{ items: unknown[] }>().items.length, 1);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });

  it('a changed --service-cluster-ip-range: old records are dropped, their Services reported', async () => {
    const srv = await startUp({
      dataDir,
      args: ['--service-cluster-ip-range', '10.200.0.0/16', ...FAST_REPAIR],
    });
    try {
      const rec = await until('the old records to go', 10_000, async () => {
        const r = await recorded(srv);
        return r.ips.every((ip) => ip.startsWith('10.200.')) ? r : undefined;
      });
      assert.deepEqual(rec.ips, []);
      const r = await call(
        srv,
        'GET',
        '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=first',
      );
      const reasons = r.json<{ items: { reason: string; message: string }[] }>().items.map((e) => e.message);
      assert.ok(
        reasons.includes(
          'Cluster IP [IPv4]:10.96.0.22 is not within the service CIDR 10.200.0.0/16; please recreate service',
        ),
        reasons.join('\n'),
      );
      // New Services come from the new range.
      const fresh = await create(srv, 'fresh', {});
      assert.match(fresh.spec.clusterIP!, /^10\.200\./);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });
});
