// Health-check node ports end to end: `svcplane up`, a LoadBalancer Service with externalTrafficPolicy
// Local, and one userspace `svcplane proxy` per node, each taking node ports on a loopback address of its
// own. What a cloud load balancer's probe sees on each node follows where the ready endpoints are; a port
// someone else holds gets kube-proxy's Warning Event and opens once it is free; switching the Service to
// Cluster closes the port on every node.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { logOnFailure, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-proxy-hc-'));
// Loopback addresses of this run's own (two runs at once do not meet).
const OCTET = 100 + (process.pid % 150);
const NODE_IP: Record<string, string> = {
  n1: `127.79.${OCTET}.1`,
  n2: `127.79.${OCTET}.2`,
  n3: `127.79.${OCTET}.3`,
};

interface Probe {
  readonly status: number;
  readonly localEndpoints?: number;
  readonly refused?: true;
}

function probe(host: string, port: number): Promise<Probe> {
  return new Promise((resolve, reject) => {
    http
      .get({ host, port, path: '/', agent: false, timeout: 5_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            localEndpoints: (JSON.parse(text) as { localEndpoints: number }).localEndpoints,
          }),
        );
      })
      .on('error', (e: NodeJS.ErrnoException) =>
        e.code === 'ECONNREFUSED' ? resolve({ status: 0, refused: true }) : reject(e),
      );
  });
}

const slice = (n1Ready: boolean, n2Ready: boolean): Record<string, unknown> => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'lb-1', labels: { 'kubernetes.io/service-name': 'lb' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [
    {
      addresses: ['10.1.0.1'],
      nodeName: 'n1',
      conditions: { ready: n1Ready, serving: true, terminating: !n1Ready },
    },
    {
      addresses: ['10.1.0.2'],
      nodeName: 'n2',
      conditions: { ready: n2Ready, serving: true, terminating: !n2Ready },
    },
    {
      addresses: ['10.1.0.3'],
      nodeName: 'n2',
      conditions: { ready: n2Ready, serving: true, terminating: !n2Ready },
    },
  ],
});

describe('svcplane proxy: health-check node ports', () => {
  let srv: TestServer;
  let k: Kubectl;
  let hcPort = 0;
  const proxies: ChildProcess[] = [];

  async function startProxy(node: string): Promise<void> {
    const p = spawn(
      process.execPath,
      [
        BIN,
        'proxy',
        '--kubeconfig',
        srv.kubeconfig,
        '--hostname-override',
        node,
        '--proxy-mode',
        'userspace',
        '--userspace-cidr',
        `127.80.${OCTET}.0/24`,
        '--userspace-port-offset',
        '20000',
        '--nodeport-addresses',
        NODE_IP[node]!,
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--healthz-bind-address',
        '127.0.0.1:0',
        '--min-sync-period',
        '0s',
        '--sync-period',
        '1s',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proxies.push(p);
    let out = '';
    let err = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    logOnFailure(`svcplane proxy ${node}`, () => err, new Promise((r) => p.once('exit', r)));
    await until(
      () => `proxy ${node} in sync:\n${out}\n${err}`,
      30_000,
      () => out.includes('in sync'),
    );
  }

  before(async () => {
    srv = await startUp();
    k = kubectlFor(srv, work);
    await k(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'lb' },
            spec: {
              type: 'LoadBalancer',
              externalTrafficPolicy: 'Local',
              ports: [{ name: 'http', port: 80, targetPort: 8080 }],
            },
          },
          slice(true, false),
        ],
      }),
    );
    hcPort = Number(await k(['get', 'svc', 'lb', '-o', 'jsonpath={.spec.healthCheckNodePort}']));
    assert.ok(hcPort >= 30000 && hcPort <= 32767, `healthCheckNodePort ${hcPort}`);
    await startProxy('n1');
    await startProxy('n2');
  });

  after(async () => {
    for (const p of proxies) p.kill('SIGTERM');
    await Promise.all(
      proxies.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))),
    );
    await srv?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const answers = async (nodes = ['n1', 'n2']): Promise<Record<string, Probe>> =>
    Object.fromEntries(await Promise.all(nodes.map(async (n) => [n, await probe(NODE_IP[n]!, hcPort)])));

  const expect = (want: Record<string, Probe>): Promise<unknown> => {
    let last: unknown;
    return until(
      () => `health checks ${JSON.stringify(want)} (last: ${JSON.stringify(last)})`,
      20_000,
      async () => {
        last = await answers(Object.keys(want));
        return JSON.stringify(last) === JSON.stringify(want);
      },
    );
  };

  it('answers 200 on the node with a ready endpoint, 503 where its endpoints only terminate', async () => {
    await expect({ n1: { status: 200, localEndpoints: 1 }, n2: { status: 503, localEndpoints: 0 } });
  });

  it('follows readiness: the answers swap when the endpoints do', async () => {
    await k(['apply', '-f', '-'], JSON.stringify(slice(false, true)));
    await expect({ n1: { status: 503, localEndpoints: 0 }, n2: { status: 200, localEndpoints: 2 } });
  });

  it('reports a port someone else holds with a Warning Event, and opens it once it is free', async () => {
    const squatter = net.createServer().listen({ host: NODE_IP['n3']!, port: hcPort });
    await new Promise((r) => squatter.once('listening', r));
    try {
      await startProxy('n3');
      const events = await until('the FailedToStartServiceHealthcheck Event', 20_000, async () => {
        const list = JSON.parse(
          await k(['get', 'events', '--field-selector', 'involvedObject.name=lb', '-o', 'json']),
        ) as {
          items: Array<{ type: string; reason: string; message: string; source?: { component?: string } }>;
        };
        const found = list.items.filter((e) => e.reason === 'FailedToStartServiceHealthcheck');
        return found.length > 0 ? found : undefined;
      });
      assert.equal(events[0]!.type, 'Warning');
      assert.equal(events[0]!.source?.component, 'kube-proxy');
      assert.match(
        events[0]!.message,
        new RegExp(`^node n3 failed to start healthcheck "default/lb" on port ${hcPort}: .*EADDRINUSE`),
      );
    } finally {
      await new Promise((r) => squatter.close(r));
    }
    // The next full sync (--sync-period 1s) opens it.
    await until('n3 answers', 20_000, async () => (await probe(NODE_IP['n3']!, hcPort)).status === 503);
  });

  it('closes the port on every node when the Service goes to externalTrafficPolicy Cluster', async () => {
    await k(['patch', 'svc', 'lb', '--type', 'merge', '-p', '{"spec":{"externalTrafficPolicy":"Cluster"}}']);
    assert.equal(await k(['get', 'svc', 'lb', '-o', 'jsonpath={.spec.healthCheckNodePort}']), '');
    await expect({
      n1: { status: 0, refused: true },
      n2: { status: 0, refused: true },
      n3: { status: 0, refused: true },
    });
  });
});
