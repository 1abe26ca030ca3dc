// Objects a typed client cannot decode, written straight into the embedded store (as an older svcplane
// could have): `svcplane store check` names each one, and `svcplane up` on that data directory logs
// each, keeps serving, and names them in a Warning on the LISTs that serve them (docs/storage.md).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { KUBECTL } from './testing/kubectl.js';
import { call, startUp } from './testing/server.js';

const bin = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-store-check-'));
after(() => rmSync(work, { recursive: true, force: true }));

const svcplane = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
  spawnSync(process.execPath, [bin, ...args], { cwd: work, encoding: 'utf8', timeout: 30_000 });

const node = (name: string, extra: Record<string, unknown> = {}): Buffer =>
  Buffer.from(
    JSON.stringify({
      kind: 'Node',
      apiVersion: 'v1',
      metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
      ...extra,
    }),
  );

const BROKEN = [
  'nodes garbage: status: string where an object is expected',
  'nodes conds: status.conditions: string where an array is expected',
  'leases.coordination.k8s.io default/bad: spec.leaseDurationSeconds: string where an integer is expected',
];

async function brokenStore(dir: string): Promise<void> {
  const s = SqliteStore.open({ dataDir: dir });
  await s.create('/minions/good', node('good', { status: { capacity: { cpu: '4', pods: 110 } } }));
  await s.create('/minions/garbage', node('garbage', { status: 'garbage' }));
  await s.create('/minions/conds', node('conds', { status: { conditions: 'x' } }));
  await s.create(
    '/leases/default/bad',
    Buffer.from(
      JSON.stringify({
        metadata: { name: 'bad', namespace: 'default' },
        spec: { leaseDurationSeconds: '40' },
      }),
    ),
  );
  await s.create('/pods/default/torn', Buffer.from('{"metadata":'));
  await s.close();
}

describe('undecodable stored objects', () => {
  const dir = path.join(work, 'data');

  it('svcplane store check names each one and exits 1; a clean store exits 0; bad flags exit 2', async () => {
    const clean = path.join(work, 'clean');
    const s = SqliteStore.open({ dataDir: clean });
    await s.create('/minions/good', node('good'));
    await s.close();
    const ok = svcplane('store', 'check', '--data-dir', clean);
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, '1 objects checked at revision 1: every one decodes\n');

    await brokenStore(dir);
    const r = svcplane('store', 'check', '--data-dir', dir);
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(
      lines.slice(0, -1).sort(),
      [...BROKEN, lines.find((l) => l.startsWith('pods '))!].sort(),
    );
    assert.match(
      lines.find((l) => l.startsWith('pods '))!,
      /^pods default\/torn: not JSON: /,
    );
    assert.equal(
      lines.at(-1),
      '4 of 5 objects at revision 5 cannot be decoded by typed clients; fix or delete them',
    );
    const json = svcplane('store', 'check', '--data-dir', dir, '-o', 'json');
    assert.equal(json.status, 1);
    const parsed = JSON.parse(json.stdout) as {
      checked: number;
      undecodable: { resource: string; name: string }[];
    };
    assert.equal(parsed.checked, 5);
    assert.deepEqual(parsed.undecodable.map((o) => `${o.resource} ${o.name}`).sort(), [
      'leases.coordination.k8s.io bad',
      'nodes conds',
      'nodes garbage',
      'pods torn',
    ]);
    assert.equal(svcplane('store', 'check', 'extra', '--data-dir', dir).status, 2);
    assert.equal(svcplane('store', 'check', '--storage-backend', 'nope').status, 2);
  });

  it('svcplane up logs each one, keeps serving, and names them in a Warning on the LISTs that serve them', async () => {
    // The node lifecycle controller would rewrite the overdue nodes' conditions, mending `garbage` (a
    // merge over a string status): left out, so that what the server serves stays as stored.
    const srv = await startUp({ dataDir: dir, args: ['--controllers', '*,-nodelifecycle'] });
    try {
      const log = srv.stderr();
      for (const line of BROKEN) assert.ok(log.includes(`cannot be decoded by typed clients: ${line}`), log);
      // The torn JSON never reaches the cache: the cache itself logs it as skipped.
      assert.match(log, /undecodable object in store; skipped.*\/pods\/default\/torn/);
      assert.match(log, /stored objects typed clients cannot decode.*"undecodable":3/);

      const nodes = await call(srv, 'GET', '/api/v1/nodes');
      assert.equal(nodes.status, 200);
      assert.deepEqual(
        nodes
          .json<{ items: { metadata: { name: string } }[] }>()
          .items.map((n) => n.metadata.name)
          .sort(),
        ['conds', 'garbage', 'good'],
        'broken objects are served, never hidden',
      );
      const warning = [nodes.headers['warning']].flat().join('\n');
      assert.match(
        warning,
        /299 - "nodes conds cannot be decoded by typed clients \(status\.conditions: string/,
      );
      assert.match(
        warning,
        /nodes garbage cannot be decoded by typed clients \(status: string where an object/,
      );
      // Only the LISTs that serve one: a list of another resource, or a page without them, is clean.
      assert.equal((await call(srv, 'GET', '/api/v1/namespaces')).headers['warning'], undefined);
      const good = await call(srv, 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dgood');
      assert.equal(good.headers['warning'], undefined);

      // kubectl (which decodes lists without types) shows them and prints the server's warning.
      const k = spawnSync(KUBECTL, ['get', 'nodes', '-o', 'name'], {
        encoding: 'utf8',
        env: { PATH: process.env['PATH'] ?? '', HOME: work, KUBECONFIG: srv.kubeconfig },
      });
      assert.equal(k.status, 0, k.stderr);
      assert.deepEqual(k.stdout.trim().split('\n').sort(), ['node/conds', 'node/garbage', 'node/good']);
      assert.match(k.stderr, /Warning: nodes garbage cannot be decoded by typed clients/);

      // Mended through the status subresource, or deleted: the warnings go away.
      const fix = await call(srv, 'PATCH', '/api/v1/nodes/garbage/status', {
        rawBody: JSON.stringify({ status: { capacity: { cpu: '1' } } }),
        contentType: 'application/merge-patch+json',
      });
      assert.equal(fix.status, 200, fix.text);
      const mended = await call(srv, 'GET', '/api/v1/nodes');
      assert.doesNotMatch(String(mended.headers['warning']), /nodes garbage/);
      assert.match(String(mended.headers['warning']), /nodes conds/);
      assert.equal((await call(srv, 'DELETE', '/api/v1/nodes/conds')).status, 200);
      assert.equal((await call(srv, 'GET', '/api/v1/nodes')).headers['warning'], undefined);
    } finally {
      assert.equal(await srv.stop(), 0, srv.stderr());
    }
  });
});
