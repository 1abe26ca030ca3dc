// The official Python client (Debian's python3-kubernetes) against a real `svcplane up`: kubeconfig
// with certificate-authority-data, a typed 404, and watch.Watch().stream(list_namespaced_service)
// seeing ADDED, MODIFIED, DELETED for changes made by another client. Never skipped: without the
// package the test fails and says how to install it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { call, startUp, type TestServer } from './testing/server.js';

const SCRIPT = path.resolve('test/e2e/fixtures/python/watch_services.py');
const TYPED_SCRIPT = path.resolve('test/e2e/fixtures/python/typed_zero_values.py');

/** The first python that can import kubernetes (PATH's python3 may be a pyenv without Debian's packages). */
function findPython(): string {
  const candidates = [process.env.SVCPLANE_PYTHON, 'python3', '/usr/bin/python3'].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  const tried: string[] = [];
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import kubernetes'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) return py;
    tried.push(`${py}: ${r.error?.message ?? r.stderr.trim().split('\n').pop()}`);
  }
  assert.fail(
    `the Python Kubernetes client is missing; run \`apt-get install -y python3-kubernetes\` (tried ${tried.join('; ')})`,
  );
}

interface Line {
  type: string;
  name?: string;
  rv?: string;
  status?: number;
  reason?: string;
}

describe('python3-kubernetes client', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
  });
  after(async () => {
    await srv?.destroy();
  });

  it('watch.Watch().stream(list_namespaced_service) sees ADDED, MODIFIED, DELETED with increasing RVs', async () => {
    const python = findPython();
    const ns = 'default';
    // Already there when the watch starts: its ADDED (initial state) tells us the stream is up.
    const sentinel = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, {
      body: { metadata: { name: 'sentinel' }, spec: { ports: [{ port: 81 }] } },
    });
    assert.equal(sentinel.status, 201, sentinel.text);

    const proc = spawn(python, [SCRIPT, srv.kubeconfig, ns, 'py1', '20'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
    const lines: Line[] = [];
    let wake: (() => void) | undefined;
    createInterface(proc.stdout).on('line', (l) => {
      lines.push(JSON.parse(l) as Line);
      wake?.();
    });
    const waitLine = async (pred: (l: Line) => boolean, what: string): Promise<Line> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const hit = lines.find(pred);
        if (hit !== undefined) return hit;
        if (proc.exitCode !== null || Date.now() > deadline) {
          assert.fail(`python: no ${what}; lines: ${JSON.stringify(lines)}; stderr: ${stderr}`);
        }
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          wake = () => (clearTimeout(t), r());
        });
      }
    };
    try {
      const nf = await waitLine((l) => l.type === 'NOTFOUND', 'NOTFOUND line');
      assert.deepEqual(nf, { type: 'NOTFOUND', status: 404, reason: 'NotFound' });
      await waitLine((l) => l.name === 'sentinel', 'ADDED sentinel');

      const c = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, {
        body: { metadata: { name: 'py1', labels: { a: '1' } }, spec: { ports: [{ port: 80 }] } },
      });
      assert.equal(c.status, 201, c.text);
      const p = await call(srv, 'PATCH', `/api/v1/namespaces/${ns}/services/py1`, {
        rawBody: JSON.stringify({ metadata: { labels: { a: '2' } } }),
        contentType: 'application/merge-patch+json',
      });
      assert.equal(p.status, 200, p.text);
      const d = await call(srv, 'DELETE', `/api/v1/namespaces/${ns}/services/py1`);
      assert.equal(d.status, 200, d.text);

      await waitLine((l) => l.type === 'END', 'END (the script stops after DELETED py1)');
      assert.equal(await exited, 0, stderr);
      const events = lines.filter((l) => l.name === 'py1');
      assert.deepEqual(
        events.map((l) => l.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
        JSON.stringify(lines),
      );
      const rvs = events.map((l) => Number(l.rv));
      const rvOf = (r: typeof c): number =>
        Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
      assert.equal(rvs[0], rvOf(c));
      assert.equal(rvs[1], rvOf(p));
      assert.ok(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `increasing RVs: ${rvs.join(' ')}`);
      assert.ok(
        lines.every((l) => ['NOTFOUND', 'ADDED', 'MODIFIED', 'DELETED', 'END'].includes(l.type)),
        JSON.stringify(lines),
      );
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    }
  });

  it('typed create, read, patch and list of a Service and a Node from plain dicts read status without None checks', () => {
    const python = findPython();
    const r = spawnSync(python, [TYPED_SCRIPT, srv.kubeconfig, 'default'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    for (const k of ['create', 'read', 'patch', 'list'])
      assert.deepEqual(out[`${k}_load_balancer`], { ingress: null }, k);
    assert.equal(out['create_kubelet_version'], '');
    assert.equal(out['create_kubelet_port'], 0);
    assert.equal(out['read_kubelet_version'], '');
    assert.equal(out['patch_kubelet_version'], '');
    assert.deepEqual(out['patch_labels'], { zone: 'z1' });
  });
});
