// ClusterIP and NodePort allocation end to end: kubectl against `svcplane up` on a dual-stack range
// (v4,v6). 300 mixed Services land with every address and port in range and unique; each documented
// error gives upstream's text and code; a node port freed by a type change can be taken again; and
// deleting everything frees everything (checked against the RangeAllocation view).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { cidrContains, parseAddress } from '../../src/core/allocator/cidr.js';
import { IPAllocator, ipRange } from '../../src/core/allocator/ip-allocator.js';
import { PortAllocator } from '../../src/core/allocator/port-allocator.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { KUBECTL } from './testing/kubectl.js';

const V4 = '10.96.0.0/16';
const V6 = 'fd00:10:96::/112';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-alloc-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function kubectl(srv: TestServer, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      KUBECTL,
      [`--cache-dir=${path.join(work, 'cache')}`, ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: work, KUBECONFIG: srv.kubeconfig },
        timeout: 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

async function ok(srv: TestServer, args: string[], stdin?: string): Promise<string> {
  const r = await kubectl(srv, args, stdin);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}:\n${r.stderr}`);
  return r.stdout;
}

interface Svc {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: {
    type: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    ports?: { port: number; protocol: string; nodePort?: number }[];
    healthCheckNodePort?: number;
  };
}

const service = (name: string, spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, labels: { bulk: 'batch1' } },
  spec,
});

/** 300 Services of every kind the issue names, 20% of them with explicit addresses or ports. */
function mixed(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < 300; i++) {
    const name = `s${i}`;
    const port = [{ name: 'http', port: 80, protocol: 'TCP' }];
    switch (i % 10) {
      case 0:
        out.push(service(name, { ports: port }));
        break;
      case 1:
        // 53/TCP and 53/UDP share one node port.
        out.push(
          service(name, {
            type: 'NodePort',
            ports: [
              { name: 'dns-tcp', port: 53, protocol: 'TCP' },
              { name: 'dns-udp', port: 53, protocol: 'UDP' },
            ],
          }),
        );
        break;
      case 2:
        out.push(service(name, { type: 'LoadBalancer', ports: port }));
        break;
      case 3:
        out.push(service(name, { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: port }));
        break;
      case 4:
        out.push(service(name, { clusterIP: 'None', selector: { app: name }, ports: port }));
        break;
      case 5:
        out.push(service(name, { type: 'ExternalName', externalName: `${name}.example.com` }));
        break;
      case 6:
        out.push(service(name, { ipFamilyPolicy: 'PreferDualStack', ports: port }));
        break;
      case 7:
        out.push(service(name, { type: 'NodePort', ipFamilyPolicy: 'RequireDualStack', ports: port }));
        break;
      case 8:
        // Explicit addresses from the static block (10.96.0.1 is the kubernetes Service's).
        out.push(service(name, { clusterIP: `10.96.0.${10 + Math.floor(i / 10)}`, ports: port }));
        break;
      case 9:
        // Explicit node ports from the static block (30000–30085).
        out.push(
          service(name, {
            type: 'NodePort',
            ports: [{ name: 'http', port: 80, protocol: 'TCP', nodePort: 30000 + Math.floor(i / 10) }],
          }),
        );
        break;
    }
  }
  return out;
}

const yamlOf = (objs: Record<string, unknown>[]): string => objs.map((o) => stringify(o)).join('---\n');

async function services(srv: TestServer): Promise<Svc[]> {
  return (JSON.parse(await ok(srv, ['get', 'svc', '-A', '-o', 'json'])) as { items: Svc[] }).items;
}

interface Ranges {
  items: { metadata: { name: string }; range: string; data: string }[];
}

/** The IPs and ports the RangeAllocation view says are taken. */
async function recorded(srv: TestServer): Promise<{ ips: Set<string>; ports: Set<number> }> {
  const r = await call(srv, 'GET', '/debug/svcplane/rangeallocations');
  assert.equal(r.status, 200, r.text);
  const ips = new Set<string>();
  const ports = new Set<number>();
  for (const item of r.json<Ranges>().items) {
    const data = new Uint8Array(Buffer.from(item.data, 'base64'));
    if (item.metadata.name === 'servicenodeports') {
      const a = PortAllocator.fromSnapshot({ range: item.range, data });
      a.forEach((p) => ports.add(p));
    } else {
      IPAllocator.fromSnapshot({ range: item.range, data }).forEach((ip) => ips.add(ip));
    }
  }
  return { ips, ports };
}

describe('allocation: kubectl against svcplane up (dual-stack v4,v6)', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp({ args: ['--service-cluster-ip-range', `${V4},${V6}`] });
  });
  after(async () => srv?.destroy());

  it('300 mixed Services: every address and port is in range, unique, and recorded', async () => {
    const r = await kubectl(srv, ['create', '-f', '-'], yamlOf(mixed()));
    assert.equal(r.code, 0, r.stderr);
    const all = (await services(srv)).filter((s) => s.metadata.labels?.['bulk'] === 'batch1');
    assert.equal(all.length, 300);
    const v4 = ipRange(V4);
    const v6 = ipRange(V6);
    const seenIPs = new Map<string, string>();
    const seenPorts = new Map<string, string>();
    const usedPorts = new Set<number>();
    for (const s of all) {
      const { spec } = s;
      const i = Number(s.metadata.name.slice(1));
      if (spec.type === 'ExternalName') {
        assert.equal(spec.clusterIPs, undefined, s.metadata.name);
        continue;
      }
      if (i % 10 === 4) {
        assert.deepEqual(spec.clusterIPs, ['None']);
        continue;
      }
      const wantFamilies = i % 10 === 6 || i % 10 === 7 ? ['IPv4', 'IPv6'] : ['IPv4'];
      assert.deepEqual(spec.ipFamilies, wantFamilies, s.metadata.name);
      assert.equal(spec.clusterIPs!.length, wantFamilies.length, s.metadata.name);
      for (const ip of spec.clusterIPs!) {
        const a = parseAddress(ip)!;
        const r2 = a.family === 'IPv4' ? v4 : v6;
        assert.ok(cidrContains(r2.cidr, a), `${ip} in ${r2.spec}`);
        assert.ok(a.value >= r2.base && a.value < r2.base + BigInt(r2.max), `${ip} is usable`);
        assert.equal(seenIPs.get(ip), undefined, `${ip} given to ${s.metadata.name} and ${seenIPs.get(ip)}`);
        seenIPs.set(ip, s.metadata.name);
      }
      if (i % 10 === 8) assert.equal(spec.clusterIP, `10.96.0.${10 + Math.floor(i / 10)}`);
      const nodePorts = (spec.ports ?? []).flatMap((p) =>
        p.nodePort === undefined ? [] : [{ proto: p.protocol, port: p.nodePort }],
      );
      if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
        assert.equal(nodePorts.length, spec.ports!.length, `${s.metadata.name} has all its node ports`);
      } else {
        assert.equal(nodePorts.length, 0);
      }
      if (i % 10 === 1) assert.equal(nodePorts[0]!.port, nodePorts[1]!.port, '53/TCP and 53/UDP share');
      if (i % 10 === 9) assert.equal(nodePorts[0]!.port, 30000 + Math.floor(i / 10));
      const distinct = new Set(nodePorts.map((p) => p.port));
      for (const p of distinct) {
        assert.ok(p >= 30000 && p <= 32767, `${p} in range`);
        assert.ok(!usedPorts.has(p), `node port ${p} used twice (${s.metadata.name})`);
        usedPorts.add(p);
      }
      for (const { proto, port } of nodePorts) {
        const key = `${proto}/${port}`;
        assert.ok(
          seenPorts.get(key) === undefined || seenPorts.get(key) === s.metadata.name,
          `${key} given twice`,
        );
        seenPorts.set(key, s.metadata.name);
      }
      if (i % 10 === 3) {
        const hc = spec.healthCheckNodePort!;
        assert.ok(hc >= 30000 && hc <= 32767, `healthCheckNodePort ${hc}`);
        assert.ok(!usedPorts.has(hc), `healthCheckNodePort ${hc} collides`);
        usedPorts.add(hc);
      } else {
        assert.equal(spec.healthCheckNodePort, undefined);
      }
    }
    // The records are exactly what the Services use (plus default/kubernetes's 10.96.0.1).
    const rec = await recorded(srv);
    assert.deepEqual([...rec.ips].sort(), [...seenIPs.keys(), '10.96.0.1'].sort());
    assert.deepEqual(
      [...rec.ports].sort((a, b) => a - b),
      [...usedPorts].sort((a, b) => a - b),
    );
  });

  const errorTable: [string, Record<string, unknown>, number, string][] = [
    [
      'an address that is taken',
      service('dup-ip', { clusterIP: '10.96.0.10', ports: [{ port: 80 }] }),
      422,
      'The Service "dup-ip" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    ],
    [
      'an address outside the range',
      service('far-ip', { clusterIP: '192.168.0.1', ports: [{ port: 80 }] }),
      422,
      'The Service "far-ip" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.0.1"}: failed to allocate IP 192.168.0.1: provided IP 192.168.0.1 is not in the valid range',
    ],
    [
      'headless NodePort',
      service('np-none', { type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] }),
      422,
      `The Service "np-none" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services`,
    ],
    [
      'headless LoadBalancer',
      service('lb-none', { type: 'LoadBalancer', clusterIP: 'None', ports: [{ port: 80 }] }),
      422,
      `The Service "lb-none" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for LoadBalancer services`,
    ],
    [
      'a node port that is taken',
      // s9 holds 30000.
      service('dup-np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] }),
      422,
      'The Service "dup-np" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided port is already allocated',
    ],
    [
      'a node port outside the range',
      service('far-np', { type: 'NodePort', ports: [{ port: 80, nodePort: 20000 }] }),
      422,
      'The Service "far-np" is invalid: spec.ports[0].nodePort: Invalid value: 20000: provided port is not in the valid range. The range of valid ports is 30000-32767',
    ],
    [
      'SingleStack with two addresses',
      service('two-ips', {
        ipFamilyPolicy: 'SingleStack',
        clusterIP: '10.96.0.200',
        clusterIPs: ['10.96.0.200', 'fd00:10:96::200'],
        ports: [{ port: 80 }],
      }),
      422,
      `The Service "two-ips" is invalid: spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified`,
    ],
    [
      'a nodePort on a ClusterIP Service',
      service('cip-np', { ports: [{ port: 80, nodePort: 30100 }] }),
      422,
      'The Service "cip-np" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is \'ClusterIP\'',
    ],
  ];

  for (const [what, obj, code, text] of errorTable) {
    it(`${what}: ${code} with upstream's text, and nothing recorded`, async () => {
      const before = await recorded(srv);
      const r = await kubectl(srv, ['create', '-f', '-'], JSON.stringify(obj));
      assert.equal(r.code, 1);
      assert.equal(r.stderr.trim(), text);
      const raw = await call(srv, 'POST', '/api/v1/namespaces/default/services', { body: obj });
      assert.equal(raw.status, code, raw.text);
      assert.deepEqual(await recorded(srv), before);
    });
  }

  it('clusterIP may not change once set', async () => {
    const r = await kubectl(srv, ['patch', 'svc', 's0', '-p', '{"spec":{"clusterIP":"10.96.0.250"}}']);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'The Service "s0" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.250"}: may not change once set',
    );
  });

  it('NodePort → ClusterIP frees the node port, and another Service can take it', async () => {
    await ok(
      srv,
      ['create', '-f', '-'],
      JSON.stringify(service('mover', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] })),
    );
    assert.ok((await recorded(srv)).ports.has(30080));
    await ok(srv, ['patch', 'svc', 'mover', '-p', '{"spec":{"type":"ClusterIP"}}']);
    const moved = JSON.parse(await ok(srv, ['get', 'svc', 'mover', '-o', 'json'])) as Svc;
    assert.equal(moved.spec.ports![0]!.nodePort, undefined);
    assert.ok(!(await recorded(srv)).ports.has(30080));
    await ok(
      srv,
      ['create', '-f', '-'],
      JSON.stringify(service('taker', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] })),
    );
    assert.ok((await recorded(srv)).ports.has(30080));
  });

  it('deleting every Service frees everything but the kubernetes Service address', async () => {
    await ok(srv, ['delete', 'svc', '-l', 'bulk=batch1', '--wait=false']);
    const left = await services(srv);
    assert.deepEqual(
      left.map((s) => s.metadata.name),
      ['kubernetes'],
    );
    const rec = await recorded(srv);
    assert.deepEqual([...rec.ips], ['10.96.0.1']);
    assert.deepEqual([...rec.ports], []);
  });
});

describe('allocation: full ranges and single-stack errors', () => {
  let srv: TestServer;
  before(async () => {
    // /29: 6 usable addresses, one of them the kubernetes Service's; two node ports.
    srv = await startUp({
      args: ['--service-cluster-ip-range', '10.0.0.0/29', '--service-node-port-range', '30000-30001'],
    });
  });
  after(async () => srv?.destroy());

  it('a full service CIDR gives 500 "failed to allocate a serviceIP: range is full"', async () => {
    for (let i = 0; i < 5; i++) {
      await ok(srv, ['create', 'service', 'clusterip', `c${i}`, '--tcp=80']);
    }
    const r = await kubectl(srv, ['create', 'service', 'clusterip', 'c5', '--tcp=80']);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'error: failed to create ClusterIP service: Internal error occurred: failed to allocate a serviceIP: range is full',
    );
    const raw = await call(srv, 'POST', '/api/v1/namespaces/default/services', {
      body: service('c6', { ports: [{ port: 80 }] }),
    });
    assert.equal(raw.status, 500);
    assert.equal(raw.json<{ reason: string }>().reason, 'InternalError');
    await ok(srv, ['delete', 'svc', 'c0', 'c1', 'c2']);
  });

  it('a full node port range gives 500 "failed to allocate a nodePort: range is full"', async () => {
    await ok(srv, ['create', 'service', 'nodeport', 'n0', '--tcp=80']);
    await ok(srv, ['create', 'service', 'nodeport', 'n1', '--tcp=80']);
    const raw = await call(srv, 'POST', '/api/v1/namespaces/default/services', {
      body: service('n2', { type: 'NodePort', ports: [{ port: 80 }] }),
    });
    assert.equal(raw.status, 500);
    assert.equal(
      raw.json<{ message: string }>().message,
      'Internal error occurred: failed to allocate a nodePort: range is full',
    );
    const rec = await recorded(srv);
    assert.equal(rec.ips.size, 5, 'the failed create gave its address back');
  });

  it('dual-stack requests on a single-stack cluster', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        service('req', { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80 }] }),
        `The Service "req" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`,
      ],
      [
        service('v6', { clusterIP: 'fd00::5', ports: [{ port: 80 }] }),
        'The Service "v6" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::5"}: IPv6 is not configured on this cluster',
      ],
      [
        service('fam', { ipFamilies: ['IPv6'], ports: [{ port: 80 }] }),
        'The Service "fam" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
      ],
    ];
    for (const [obj, text] of cases) {
      const r = await kubectl(srv, ['create', '-f', '-'], JSON.stringify(obj));
      assert.equal(r.code, 1);
      assert.equal(r.stderr.trim(), text);
    }
    // PreferDualStack on a single-stack cluster gets one address.
    await ok(
      srv,
      ['create', '-f', '-'],
      JSON.stringify(service('pref', { ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 80 }] })),
    );
    const pref = JSON.parse(await ok(srv, ['get', 'svc', 'pref', '-o', 'json'])) as Svc;
    assert.deepEqual(pref.spec.ipFamilies, ['IPv4']);
  });

  it('the kubernetes Service holds the first address and points at the secure port', async () => {
    const k = JSON.parse(await ok(srv, ['get', 'svc', 'kubernetes', '-o', 'json'])) as Svc & {
      spec: { ports: { name: string; port: number; targetPort: number }[] };
    };
    assert.equal(k.spec.clusterIP, '10.0.0.1');
    assert.deepEqual(k.spec.ports, [{ name: 'https', protocol: 'TCP', port: 443, targetPort: srv.port }]);
    const ep = JSON.parse(await ok(srv, ['get', 'endpoints', 'kubernetes', '-o', 'json'])) as {
      subsets: unknown;
    };
    assert.deepEqual(ep.subsets, [
      { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: srv.port, protocol: 'TCP' }] },
    ]);
  });
});
