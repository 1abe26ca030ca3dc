// `svcplane wrapper --service-autonomy-enhancement` end to end (SuperEdge's edge autonomy): a real
// `svcplane up`, a real wrapper for edge-0, and an edge-health stand-in on loopback whose /localinfo
// answer the test changes. A node it reports not Normal leaves every Service's slices as kubectl sees
// them through the wrapper, topology rules or not; reported Normal again, its endpoints come back.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { startWrapper, type TestWrapper } from './testing/wrapper.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';

describe('svcplane wrapper --service-autonomy-enhancement', () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-autonomy-'));
  let up: TestServer;
  let wrapper: TestWrapper;
  let health: Server;
  let localinfo: Record<string, { Normal: boolean }> = {};
  let asked = 0;
  let healthAddress = '';

  before(async () => {
    health = createServer((_req, res) => {
      asked++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(localinfo));
    });
    await new Promise<void>((r) => health.listen(0, '127.0.0.1', r));
    healthAddress = `http://127.0.0.1:${(health.address() as AddressInfo).port}/localinfo`;
    const address = healthAddress;
    up = await startUp();
    for (const [name, unit] of [
      ['edge-0', 'u1'],
      ['edge-1', 'u1'],
      ['edge-2', 'u1'],
    ])
      assert.equal(
        (await call(up, 'POST', '/api/v1/nodes', { body: { metadata: { name, labels: { unit } } } })).status,
        201,
      );
    // A plain Service and a unit-keyed one, each with an endpoint on every node (slices of our own).
    for (const [svc, annotations] of [
      ['plain', {}],
      ['grid', { topologyKeys: '["unit"]' }],
    ] as const) {
      const made = await call(up, 'POST', '/api/v1/namespaces/default/services', {
        body: { metadata: { name: svc, annotations }, spec: { ports: [{ port: 80 }] } },
      });
      assert.equal(made.status, 201, made.text);
      const slice = await call(up, 'POST', SLICES, {
        body: {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: {
            name: `${svc}-1`,
            labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'e2e' },
          },
          addressType: 'IPv4',
          ports: [{ port: 8080, protocol: 'TCP' }],
          endpoints: [0, 1, 2].map((i) => ({
            addresses: [`10.9.0.${i + 1}`],
            nodeName: `edge-${i}`,
            conditions: { ready: true },
          })),
        },
      });
      assert.equal(slice.status, 201, slice.text);
    }
    localinfo = { 'edge-0': { Normal: true }, 'edge-1': { Normal: false } };
    wrapper = await startWrapper({
      upstreamKubeconfig: up.kubeconfig,
      hostname: 'edge-0',
      dataDir: join(work, 'wrapper'),
      args: ['--service-autonomy-enhancement', `enabled=true,interval=1,address=${address}`],
    });
  });

  after(async () => {
    await wrapper?.stop();
    await up?.destroy();
    health?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const kubectl = () => {
    const home = join(work, 'home');
    mkdirSync(home, { recursive: true });
    return kubectlFor({ kubeconfig: wrapper.kubeconfig }, home);
  };
  let seen = '';
  const addresses = async (slice: string): Promise<string> => {
    const got = (
      await kubectl()(['get', 'endpointslice', slice, '-o', 'jsonpath={.endpoints[*].addresses[0]}'])
    ).trim();
    seen = `${slice}: ${got}`;
    return got;
  };
  const metric = async (name: string): Promise<number> => {
    const text = await kubectl()(['get', '--raw', '/metrics']);
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1]);
  };

  it('leaves out the endpoints on a node edge-health reports not Normal, from every Service', async () => {
    await until(
      () => `edge-1 left out of both slices (${seen})`,
      15_000,
      async () => {
        return (
          (await addresses('plain-1')) === '10.9.0.1 10.9.0.3' &&
          (await addresses('grid-1')) === '10.9.0.1 10.9.0.3'
        );
      },
    );
    assert.equal(await metric('svcplane_wrapper_health_unhealthy_nodes'), 1);
    assert.match(
      wrapper.stderr(),
      /"msg":"node reported unhealthy: its endpoints are left out of every Service","node":"edge-1"/,
    );
  });

  it('brings them back when it reports the node Normal, or mentions it no more', async () => {
    const before = asked;
    localinfo = { 'edge-0': { Normal: true }, 'edge-1': { Normal: true }, 'edge-2': { Normal: false } };
    await until('the next poll', 10_000, () => Promise.resolve(asked > before));
    await until('edge-1 back, edge-2 out', 15_000, async () => {
      return (
        (await addresses('plain-1')) === '10.9.0.1 10.9.0.2' &&
        (await addresses('grid-1')) === '10.9.0.1 10.9.0.2'
      );
    });
    localinfo = {};
    await until('every node back once edge-health mentions none', 15_000, async () => {
      return (await addresses('plain-1')) === '10.9.0.1 10.9.0.2 10.9.0.3';
    });
    assert.equal(await metric('svcplane_wrapper_health_unhealthy_nodes'), 0);
    assert.equal(await metric('svcplane_wrapper_health_poll_failures_total'), 0);
  });

  it('svcplane proxy takes the flag too: its verdicts logged and on its /metrics', async () => {
    localinfo = { 'edge-1': { Normal: false } };
    const octet = 20 + (process.pid % 200);
    const proxy = spawn(
      process.execPath,
      [
        BIN,
        'proxy',
        '--kubeconfig',
        up.kubeconfig,
        '--hostname-override',
        'edge-0',
        '--proxy-mode',
        'userspace',
        '--userspace-cidr',
        `127.81.${octet}.0/24`,
        '--userspace-port-offset',
        '20000',
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--healthz-bind-address',
        '127.0.0.1:0',
        '--service-autonomy-enhancement',
        `enabled=true,interval=1,address=${healthAddress}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    proxy.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proxy.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const metricsUrl = await until(
        () => `the proxy in sync:\n${out}\n${err}`,
        30_000,
        () => Promise.resolve(/metrics on (http:\/\/\S+\/metrics)/.exec(out)?.[1]),
      );
      await until('the verdict on /metrics', 15_000, async () => {
        const text = await (await fetch(metricsUrl)).text();
        return /^svcplane_proxy_health_unhealthy_nodes 1$/m.test(text);
      });
      assert.match(
        err,
        /"msg":"node reported unhealthy: its endpoints are left out of every Service","node":"edge-1"/,
      );
      assert.match(await (await fetch(metricsUrl)).text(), /^svcplane_proxy_health_poll_failures_total 0$/m);
    } finally {
      proxy.kill('SIGTERM');
      await new Promise((r) => proxy.once('exit', r));
    }
  });

  it('refuses a bad flag value with exit status 2 and the reason', () => {
    for (const command of [
      ['wrapper', '--hostname', 'edge-0'],
      ['proxy', '--hostname-override', 'edge-0'],
    ]) {
      const r = spawnSync(
        process.execPath,
        [BIN, ...command, '--service-autonomy-enhancement', 'enabled=true,interval=0'],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      assert.equal(r.status, 2, `${command[0]}: ${r.stderr}`);
      assert.match(r.stderr, /--service-autonomy-enhancement: interval=0: want whole seconds, at least 1/);
    }
  });
});
