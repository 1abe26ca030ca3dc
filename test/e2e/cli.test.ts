// The `svcplane` command as a user runs it: the compiled bin, real processes, real files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { call, startUp } from './testing/server.js';

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
      ['crds', '--frobnicate'],
      ['crds', '-o', 'xml'],
      ['nosuch'],
    ]) {
      const r = svcplane(...args);
      assert.equal(r.status, 2, args.join(' '));
      oneLineError(r, /^svcplane: /);
    }
  });

  it('crds prints the two grid CRDs as YAML documents, or as a v1 List with -o json', () => {
    const yaml = svcplane('crds');
    assert.equal(yaml.status, 0, yaml.stderr);
    const docs = parseAllDocuments(yaml.stdout);
    assert.ok(Array.isArray(docs));
    assert.deepEqual(
      docs.map((d) => {
        const c = d.toJS() as { kind: string; metadata: { name: string } };
        return [c.kind, c.metadata.name];
      }),
      [
        ['CustomResourceDefinition', 'servicegrids.superedge.io'],
        ['CustomResourceDefinition', 'deploymentgrids.superedge.io'],
      ],
    );
    const json = svcplane('crds', '-o', 'json');
    assert.equal(json.status, 0, json.stderr);
    const list = JSON.parse(json.stdout) as {
      kind: string;
      items: Array<{ spec: { names: { shortNames: string[] } } }>;
    };
    assert.equal(list.kind, 'List');
    assert.deepEqual(
      list.items.map((c) => c.spec.names.shortNames),
      [['sg'], ['dg']],
    );
    assert.equal(svcplane('crds', '--help').status, 0);
    assert.match(svcplane('--help').stdout, /\bcrds\b/);
  });

  it('crds into a pipe that closes early ends quietly', () => {
    const r = spawnSync(
      'bash',
      ['-c', `set -o pipefail; "${process.execPath}" "${bin}" crds | head -c 100 >/dev/null`],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  it('up generates its PKI, token and kubeconfig, serves, stops on SIGTERM with exit 0, and restarts with the same identity and data', async () => {
    const dir = path.join(work, 'upd');
    const first = await startUp({ dataDir: dir });
    let firstCa: string;
    try {
      for (const f of [
        'pki/ca.crt',
        'pki/ca.key',
        'pki/apiserver.crt',
        'pki/apiserver.key',
        'pki/tokens.csv',
        'kubeconfig',
        'svcplane.db',
      ]) {
        assert.ok(existsSync(path.join(dir, f)), f);
      }
      assert.equal(statSync(path.join(dir, 'pki/ca.key')).mode & 0o077, 0, 'the CA key is private');
      const kubeconfig = readFileSync(path.join(dir, 'kubeconfig'), 'utf8');
      assert.match(kubeconfig, new RegExp(`server: ${first.url}`));
      assert.match(kubeconfig, /certificate-authority-data: /);
      const created = await call(first, 'POST', '/api/v1/namespaces', {
        body: { metadata: { name: 'kept' } },
      });
      assert.equal(created.status, 201, created.text);
      assert.equal((await call(first, 'GET', '/readyz', { token: null })).status, 200);
      firstCa = first.ca;
      // A second server on the same embedded store is refused with one line, exit 1.
      const again = svcplane('up', '--data-dir', dir, '--secure-port', '0');
      assert.equal(again.status, 1, again.stderr);
      oneLineError(again, /^svcplane: /);
    } finally {
      assert.equal(await first.stop(), 0, first.stderr());
    }
    const second = await startUp({ dataDir: dir });
    try {
      assert.equal(second.ca, firstCa);
      assert.equal(second.token, first.token);
      const ns = await call(second, 'GET', '/api/v1/namespaces/kept');
      assert.equal(ns.status, 200, ns.text);
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });

  it('up refuses bad flags with exit 2 and one line, and a taken port with exit 1', async () => {
    for (const args of [
      ['--secure-port', 'x'],
      ['--secure-port', '70000'],
      ['--bind-address', 'nope'],
      ['--service-cluster-ip-range', '10.0.0.0/99'],
      ['--service-cluster-ip-range', '10.0.0.0/8,10.1.0.0/16'],
      ['--service-cluster-ip-range', '10.0.0.0/8'],
      ['--service-cluster-ip-range', 'fd00::/96'],
      ['--service-cluster-ip-range', '10.0.0.0/30'],
      ['--service-node-port-range', '3-2'],
      ['--service-node-port-range', '30000-70000'],
      ['--repair-interval', '3 minutes'],
      ['--advertise-address', '0.0.0.0'],
      ['--authorization-mode', 'Webhook'],
      ['--authorization-mode', 'RBAC,RBAC'],
      ['--authorization-mode', 'ABAC'],
      ['--token-auth-file', 'missing.csv'],
    ]) {
      const r = svcplane('up', '--data-dir', 'badflags', ...args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      oneLineError(r, /^svcplane: /);
      if (args[1] === '10.0.0.0/8') {
        assert.match(
          r.stderr,
          /specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12/,
        );
      }
      if (args[1] === 'fd00::/96') assert.match(r.stderr, /for 128-bit addresses, the mask must be >= 108/);
      if (args[1] === 'Webhook') assert.match(r.stderr, /authorization-mode "Webhook" is not a valid mode/);
      if (args[1] === 'RBAC,RBAC')
        assert.match(r.stderr, /authorization-mode \["RBAC" "RBAC"\] has mode specified more than once/);
      assert.equal(existsSync(path.join(work, 'badflags')), false, 'a bad flag writes nothing');
    }
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const r = svcplane('up', '--data-dir', 'busy', '--secure-port', String(port));
      assert.equal(r.status, 1, r.stderr);
      oneLineError(r, /EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it("up replaces a dead server's controllers.sock but never takes over a live one", async () => {
    const dir = path.join(work, 'sock');
    mkdirSync(dir, { recursive: true });
    const sock = path.join(dir, 'controllers.sock');
    // A live server on the socket (another svcplane on the same etcd, say): refused, one line, exit 1.
    const live = createServer();
    await new Promise<void>((resolve) => live.listen(sock, resolve));
    try {
      const r = svcplane('up', '--data-dir', 'sock', '--secure-port', '0');
      assert.equal(r.status, 1, r.stderr);
      oneLineError(r, /^svcplane: cannot serve on .*controllers\.sock: another server is serving on it$/);
    } finally {
      await new Promise((resolve) => live.close(resolve));
    }
    // A socket file left by a process that was killed: replaced, and the server starts.
    const dead = spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    assert.equal(dead.signal, 'SIGKILL');
    assert.ok(existsSync(sock), 'the killed process left its socket file');
    const srv = await startUp({ dataDir: dir });
    try {
      assert.equal((await call(srv, 'GET', '/readyz', { token: null })).status, 200);
    } finally {
      assert.equal(await srv.stop(), 0, srv.stderr());
    }
    assert.equal(existsSync(sock), false, 'a clean stop removes the socket');
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
