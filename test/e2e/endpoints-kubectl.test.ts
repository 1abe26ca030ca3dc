// The Endpoints controller end to end: kubectl against `svcplane up` (controllers in-process). Pods
// get their status through the status subresource (svcplane has no kubelet), as a user would do it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startUp, type TestServer } from './testing/server.js';
import { KUBECTL } from './testing/kubectl.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-ep-'));
after(() => rmSync(work, { recursive: true, force: true }));

function kubectl(srv: TestServer, args: string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      KUBECTL,
      [`--cache-dir=${path.join(work, 'cache')}`, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: work, KUBECONFIG: srv.kubeconfig }, timeout: 60_000 },
      (err, stdout, stderr) =>
        err === null ? resolve(stdout) : reject(new Error(`${args.join(' ')}: ${stderr}`)),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

const pod = (name: string, labels: Record<string, string>, node: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: {
    nodeName: node,
    containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: 8080 }] }],
  },
});

/** What a kubelet would report: Running with an IP, Ready or not. */
async function setStatus(srv: TestServer, name: string, ip: string, ready: boolean): Promise<void> {
  const r = await call(srv, 'PATCH', `/api/v1/namespaces/default/pods/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          {
            type: 'Ready',
            status: ready ? 'True' : 'False',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    },
  });
  assert.equal(r.status, 200, r.text);
}

interface Endpoints {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  subsets?: {
    addresses?: { ip: string }[];
    notReadyAddresses?: { ip: string }[];
    ports?: { port: number }[];
  }[];
}

const getEndpoints = async (srv: TestServer, name: string): Promise<Endpoints | undefined> => {
  const r = await call(srv, 'GET', `/api/v1/namespaces/default/endpoints/${name}`);
  return r.status === 200 ? r.json<Endpoints>() : undefined;
};
const ips = (ep: Endpoints, which: 'addresses' | 'notReadyAddresses'): string[] =>
  (ep.subsets ?? []).flatMap((s) => (s[which] ?? []).map((a) => a.ip)).sort();

describe('Endpoints controller: kubectl against svcplane up', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
  });
  after(async () => srv?.destroy());

  it('pods with status set through the status subresource show up in the Endpoints', async () => {
    const docs = [
      pod('web-1', { app: 'web' }, 'node-a'),
      pod('web-2', { app: 'web' }, 'node-b'),
      pod('other', { app: 'other' }, 'node-a'),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', labels: { team: 'x' } },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      },
    ];
    await kubectl(srv, ['apply', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));
    await kubectl(srv, [
      'patch',
      'pod',
      'web-1',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Running","podIP":"10.244.1.1","podIPs":[{"ip":"10.244.1.1"}],"conditions":[{"type":"Ready","status":"True"}]}}',
    ]);
    await setStatus(srv, 'web-2', '10.244.1.2', false);
    await setStatus(srv, 'other', '10.244.1.3', true);
    const ep = await until('the endpoints', 10_000, async () => {
      const e = await getEndpoints(srv, 'web');
      return e !== undefined && ips(e, 'addresses').length + ips(e, 'notReadyAddresses').length === 2
        ? e
        : undefined;
    });
    assert.deepEqual(ips(ep, 'addresses'), ['10.244.1.1']);
    assert.deepEqual(ips(ep, 'notReadyAddresses'), ['10.244.1.2']);
    assert.deepEqual(ep.subsets![0]!.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.equal(ep.metadata.labels?.['team'], 'x', "the Service's labels are copied");
    assert.ok(ep.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']);
    const table = await kubectl(srv, ['get', 'endpoints', 'web']);
    assert.match(table, /^web\s+10\.244\.1\.1:8080\s+/m);
  });

  it('flipping a pod to Ready moves it from notReadyAddresses to addresses, and back', async () => {
    await setStatus(srv, 'web-2', '10.244.1.2', true);
    await until('web-2 ready', 10_000, async () => {
      const e = await getEndpoints(srv, 'web');
      return e !== undefined && ips(e, 'addresses').length === 2 ? e : undefined;
    });
    await setStatus(srv, 'web-2', '10.244.1.2', false);
    const ep = await until('web-2 not ready', 10_000, async () => {
      const e = await getEndpoints(srv, 'web');
      return e !== undefined && ips(e, 'notReadyAddresses').length === 1 ? e : undefined;
    });
    assert.deepEqual(ips(ep, 'addresses'), ['10.244.1.1']);
  });

  it('deleting the Service deletes its Endpoints; a selectorless Service keeps user-managed Endpoints', async () => {
    await kubectl(srv, ['delete', 'svc', 'web']);
    await until('the endpoints to go', 10_000, async () =>
      (await getEndpoints(srv, 'web')) === undefined ? true : undefined,
    );
    const manual = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'manual' }, spec: { ports: [{ port: 80 }] } },
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'manual' },
        subsets: [{ addresses: [{ ip: '192.0.2.10' }], ports: [{ port: 80 }] }],
      },
    ];
    await kubectl(srv, ['apply', '-f', '-'], manual.map((d) => JSON.stringify(d)).join('\n'));
    await new Promise((r) => setTimeout(r, 500));
    const ep = await getEndpoints(srv, 'manual');
    assert.deepEqual(ips(ep!, 'addresses'), ['192.0.2.10']);
  });

  it('250 pods fit one Endpoints; 1,200 ready pods are truncated to 1,000 with the over-capacity annotation', async () => {
    const make = async (svc: string, n: number): Promise<void> => {
      const docs = [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: svc },
          spec: { selector: { app: svc }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      ];
      const names = Array.from({ length: n }, (_, i) => `${svc}-${i}`);
      let next = 0;
      const worker = async (): Promise<void> => {
        for (;;) {
          const i = next++;
          if (i >= n) return;
          const r = await call(srv, 'POST', '/api/v1/namespaces/default/pods', {
            body: pod(names[i]!, { app: svc }, 'node-a'),
          });
          assert.equal(r.status, 201, r.text);
          await setStatus(
            srv,
            names[i]!,
            `10.${svc === 'big' ? 1 : 2}.${Math.floor(i / 250)}.${i % 250}`,
            true,
          );
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      // The Service comes last: the subject here is the cap, not churn (with the Service first, each of
      // the 2,900 pod writes would rebuild an Endpoints of up to 1,000 addresses).
      await call(srv, 'POST', '/api/v1/namespaces/default/services', { body: docs[0] });
    };
    await make('mid', 250);
    await make('big', 1200);
    const mid = await until('250 addresses', 30_000, async () => {
      const e = await getEndpoints(srv, 'mid');
      return e !== undefined && ips(e, 'addresses').length === 250 ? e : undefined;
    });
    assert.equal(mid.metadata.annotations?.['endpoints.kubernetes.io/over-capacity'], undefined);
    const big = await until('1,000 addresses', 60_000, async () => {
      const e = await getEndpoints(srv, 'big');
      return e !== undefined &&
        e.metadata.annotations?.['endpoints.kubernetes.io/over-capacity'] === 'truncated' &&
        ips(e, 'addresses').length === 1000
        ? e
        : undefined;
    });
    assert.equal(ips(big, 'notReadyAddresses').length, 0);
  });
});
