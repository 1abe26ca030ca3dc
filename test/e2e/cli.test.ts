// The `svcplane` command as a user runs it: the compiled bin, real processes, real files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

const bin = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

function svcplane(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: work, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const oneLineError = (r: { stderr: string }, pattern: RegExp): void => {
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
  assert.match(lines[0]!, pattern);
};

describe('svcplane CLI', () => {
  it('--help lists the commands and exits 0; no command prints help and exits 2', () => {
    const help = svcplane('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage: svcplane <command>/);
    assert.match(help.stdout, /\bstore\b/);
    assert.equal(svcplane().status, 2);
    assert.equal(svcplane('store', '--help').status, 0);
    assert.equal(svcplane('up', '--help').status, 0);
  });

  it('a bad flag or command exits 2 with a one-line reason', () => {
    for (const args of [
      ['--frobnicate'],
      ['store', 'status', '--frobnicate'],
      ['store', 'list', '/', '--limit', 'x'],
      ['nosuch'],
    ]) {
      const r = svcplane(...args);
      assert.equal(r.status, 2, args.join(' '));
      oneLineError(r, /^svcplane: /);
    }
  });

  it('up prepares the embedded store in --data-dir and exits 0', () => {
    const r = svcplane('up', '--data-dir', 'upd');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /embedded store ready at upd\/svcplane\.db \(revision 0\)/);
    assert.deepEqual(readdirSync(path.join(work, 'upd')), ['svcplane.db']);
  });

  it('store get/list/status/compact read what the store holds', async () => {
    const dir = path.join(work, 'filled');
    const s = SqliteStore.open({ dataDir: dir });
    const a = await s.create('/services/specs/default/web', Buffer.from('{"kind":"Service"}'));
    await s.update('/services/specs/default/web', Buffer.from('{"kind":"Service","v":2}'), a.modRevision);
    await s.create('/pods/default/p', Buffer.from('{}'));
    await s.close();
    const status = svcplane('store', 'status', '--data-dir', dir, '-o', 'json');
    assert.equal(status.status, 0, status.stderr);
    assert.deepEqual(JSON.parse(status.stdout), {
      backend: 'sqlite',
      revision: 3,
      compactRevision: 0,
      file: path.join(dir, 'svcplane.db'),
    });
    const get = svcplane(
      'store',
      'get',
      '/services/specs/default/web',
      '--data-dir',
      dir,
      '--revision',
      String(a.modRevision),
    );
    assert.equal(get.stdout, '/services/specs/default/web\n{"kind":"Service"}\n');
    const list = svcplane('store', 'list', '/services/', '--data-dir', dir, '--keys-only');
    assert.equal(list.stdout, '/services/specs/default/web\n');
    assert.equal(svcplane('store', 'compact', '2', '--data-dir', dir).status, 0);
    const old = svcplane('store', 'get', '/services/specs/default/web', '--data-dir', dir, '--revision', '1');
    assert.equal(old.status, 1);
    oneLineError(old, /^svcplane: required revision 1 has been compacted/);
  });

  it('store refuses a file that is not a svcplane database, one line, exit 1, file untouched', () => {
    const dir = path.join(work, 'bad');
    mkdirSync(dir);
    const file = path.join(dir, 'svcplane.db');
    writeFileSync(file, 'not a database\n');
    const before = createHash('sha256').update(readFileSync(file)).digest('hex');
    const r = svcplane('store', 'status', '--data-dir', dir);
    assert.equal(r.status, 1);
    oneLineError(r, /is not a svcplane database/);
    assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), before);
    assert.deepEqual(readdirSync(dir), ['svcplane.db']);
  });

  it('store against an unreachable etcd fails with one line and exit 1', () => {
    const r = svcplane(
      'store',
      'status',
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      'http://127.0.0.1:1',
    );
    assert.equal(r.status, 1);
    oneLineError(r, /^svcplane: etcd at http:\/\/127\.0\.0\.1:1 is unreachable: connection refused/);
    const missing = svcplane('store', 'status', '--storage-backend', 'etcd3');
    assert.equal(missing.status, 2);
    oneLineError(missing, /--etcd-servers is required/);
  });
});
