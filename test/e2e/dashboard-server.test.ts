// The dashboard's server end to end: `svcplane up` serves it at /dashboard/ behind the API server's
// authentication and authorization, reading in-process; `svcplane dashboard` serves the same routes on
// its own, reading through a kubeconfig, also as deploy/rbac's svcplane-dashboard ServiceAccount. Real
// kubectl makes the changes; the event stream must report them. api/explain must answer what `svcplane
// explain -o json` prints, byte for byte.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const DEPLOY = new URL('../../deploy', import.meta.url).pathname;
const ZONE = 'topology.kubernetes.io/zone';

const node = (name: string, labels: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
});

const objects = [
  node('edge-1', { unit: 'u1', [ZONE]: 'z1' }),
  node('edge-2', { unit: 'u2', [ZONE]: 'z2' }),
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'zoned', namespace: 'default' },
    spec: { ports: [{ port: 80 }], topologyKeys: [ZONE] },
  },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'zoned-a', namespace: 'default', labels: { 'kubernetes.io/service-name': 'zoned' } },
    addressType: 'IPv4',
    ports: [{ port: 80, protocol: 'TCP' }],
    endpoints: [
      { addresses: ['10.1.0.1'], conditions: { ready: true }, nodeName: 'edge-1' },
      { addresses: ['10.1.0.2'], conditions: { ready: true }, nodeName: 'edge-2' },
    ],
  },
];

interface Layout {
  version: number;
  rows: { node: string; group: string | null }[];
  columns: { key: string }[];
}

/** An event stream over HTTPS: the text received so far, and a way to close it. */
function events(
  srv: TestServer,
  path: string,
): { text: () => string; close: () => void; open: Promise<number> } {
  let text = '';
  const u = new URL(path, srv.url);
  let req: ReturnType<typeof httpsRequest>;
  const open = new Promise<number>((resolve, reject) => {
    req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        ca: srv.ca,
        headers: { Authorization: `Bearer ${srv.token}`, Accept: 'text/event-stream' },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('error', () => {});
      },
    );
    req.on('error', reject);
    req.end();
  });
  return { text: () => text, close: () => req.destroy(), open };
}

/** `svcplane dashboard` with a kubeconfig; resolves once it prints its URL. */
async function dashboard(
  kubeconfig: string,
): Promise<{ url: string; proc: ChildProcess; err: () => string }> {
  const proc = spawn(
    process.execPath,
    [BIN, 'dashboard', '--kubeconfig', kubeconfig, '--bind-address', '127.0.0.1:0'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL:\n${out}\n${err}`)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /dashboard at (http:\/\/\S+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}\n${err}`)));
  });
  return { url, proc, err: () => err };
}

const exitOf = (proc: ChildProcess): Promise<number | null> =>
  proc.exitCode !== null ? Promise.resolve(proc.exitCode) : new Promise((r) => proc.once('exit', r));

describe('dashboard server (svcplane up at /dashboard/, svcplane dashboard)', () => {
  let srv: TestServer;
  let home: string;
  let kubectl: Kubectl;
  before(async () => {
    srv = await startUp();
    home = mkdtempSync(path.join(tmpdir(), 'svcplane-dash-e2e-'));
    kubectl = kubectlFor(srv, home);
    await kubectl(['apply', '-f', '-'], objects.map((o) => stringify(o)).join('---\n'));
  });
  after(async () => {
    await srv?.destroy();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  it("answers the API server's 401 without credentials, and 403 to a user without the role", async () => {
    for (const p of ['/dashboard/', '/dashboard', '/dashboard/api/layout', '/dashboard/api/events']) {
      const r = await call(srv, 'GET', p, { token: null });
      assert.equal(r.status, 401, p);
      assert.equal(r.json()['reason'], 'Unauthorized', p);
    }
    await kubectl(['create', 'serviceaccount', 'nobody']);
    const token = (await kubectl(['create', 'token', 'nobody'])).trim();
    const r = await call(srv, 'GET', '/dashboard/api/layout', { token });
    assert.equal(r.status, 403);
    assert.match(String(r.json()['message']), /cannot get path "\/dashboard\/api\/layout"/);
  });

  it('serves the layout to the admin, listing the nodes and Services kubectl created', async () => {
    assert.equal((await call(srv, 'GET', '/dashboard')).status, 301);
    const layout = await until('the created nodes and Service in the layout', 20_000, async () => {
      const r = await call(srv, 'GET', '/dashboard/api/layout?group=unit');
      assert.equal(r.status, 200);
      const l = r.json<Layout>();
      return l.rows.length === 2 && l.columns.some((c) => c.key === 'default/zoned') ? l : undefined;
    });
    assert.deepEqual(
      layout.rows.map((r) => [r.node, r.group]),
      [
        ['edge-1', 'u1'],
        ['edge-2', 'u2'],
      ],
    );
    const bad = await call(srv, 'GET', '/dashboard/api/cells?version=1&rows=3-1&cols=0-0');
    assert.equal(bad.status, 400);
    assert.equal(bad.json()['reason'], 'BadRequest');
  });

  it('streams a change event after `kubectl label node`', async () => {
    const stream = events(srv, '/dashboard/api/events');
    try {
      assert.equal(await stream.open, 200);
      await until('the stream to open', 10_000, () => stream.text().includes(': connected'));
      await kubectl(['label', 'node', 'edge-2', 'unit=u1', '--overwrite']);
      const e = await until('a change event naming edge-2', 10_000, () => {
        for (const m of stream.text().matchAll(/event: change\ndata: (.*)\n\n/g)) {
          const data = JSON.parse(m[1]!) as { nodes: string[] };
          if (data.nodes.includes('edge-2')) return data;
        }
        return undefined;
      });
      assert.deepEqual(e.nodes, ['edge-2']);
      const l = (await call(srv, 'GET', '/dashboard/api/layout?group=unit')).json<Layout>();
      assert.deepEqual(
        l.rows.map((r) => r.group),
        ['u1', 'u1'],
      );
    } finally {
      stream.close();
    }
  });

  it('svcplane dashboard: explain byte for byte, and deploy/rbac is enough to read', async () => {
    const d = await dashboard(srv.kubeconfig);
    try {
      await until('the Service in the standalone layout', 20_000, async () => {
        const l = (await (await fetch(`${d.url}api/layout`)).json()) as Layout;
        return l.columns.some((c) => c.key === 'default/zoned') && l.rows.length === 2;
      });
      for (const nodeName of ['edge-1', 'edge-2']) {
        const printed = await new Promise<string>((resolve, reject) =>
          execFile(
            process.execPath,
            [BIN, 'explain', 'svc/zoned', '--node', nodeName, '-o', 'json', '--kubeconfig', srv.kubeconfig],
            (err, stdout, stderr) => (err === null ? resolve(stdout) : reject(new Error(stderr))),
          ),
        );
        const answer = (await (
          await fetch(`${d.url}api/explain?node=${nodeName}&service=default/zoned`)
        ).json()) as {
          json: unknown;
        };
        assert.equal(`${JSON.stringify(answer.json, null, 2)}\n`, printed, nodeName);
      }
    } finally {
      d.proc.kill('SIGINT');
      assert.equal(await exitOf(d.proc), 0);
    }

    // The ServiceAccount deploy/rbac/dashboard.yaml grants: every watch lists, none is refused.
    await kubectl(['apply', '-k', path.join(DEPLOY, 'rbac')]);
    const token = (await kubectl(['-n', 'svcplane-system', 'create', 'token', 'svcplane-dashboard'])).trim();
    const config = parse(readFileSync(srv.kubeconfig, 'utf8')) as { users: { user: { token: string } }[] };
    for (const u of config.users) u.user = { token };
    const kubeconfig = path.join(home, 'dashboard.kubeconfig');
    writeFileSync(kubeconfig, stringify(config));
    const sa = await dashboard(kubeconfig);
    try {
      const l = (await (await fetch(`${sa.url}api/layout`)).json()) as Layout;
      assert.equal(l.rows.length, 2);
      assert.ok(l.columns.some((c) => c.key === 'default/zoned'));
      assert.doesNotMatch(sa.err(), /dashboard watch failed/);
    } finally {
      sa.proc.kill('SIGTERM');
      assert.equal(await exitOf(sa.proc), 0);
    }
  });
});
