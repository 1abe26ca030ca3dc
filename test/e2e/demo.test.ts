// `svcplane demo` end to end: as root in network namespaces with the proxies in iptables mode, and on
// loopback with the proxies in userspace mode. Each run must finish with every table row fitting the
// topology rules' expectations, and leave no namespace or process behind, an interrupted run included.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-demo-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

const IP = process.env['IP_BIN'] ?? 'ip';
const namespaces = (): string[] =>
  execFileSync(IP, ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.startsWith('svd'));

/** svcplane processes started with this data dir still alive. */
const survivors = (dir: string): string[] =>
  execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(dir) && l.includes('svcplane'));

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** `setpriv` to nobody: the userspace demo must work for a user who is not root. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

function demo(args: string[], opts: { interruptOn?: RegExp; as?: string[] } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const argv = [...(opts.as ?? []), process.execPath, BIN, 'demo', ...args];
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: work },
    });
    let out = '';
    let err = '';
    let sent = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (opts.interruptOn !== undefined && !sent && opts.interruptOn.test(out)) {
        sent = true;
        child.kill('SIGINT');
        // An impatient second Ctrl-C must not cut the clean-up short.
        setTimeout(() => child.kill('SIGINT'), 300);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** The rows of every printed table: [node, unit, zone, answers, expected, verdict]. */
const rows = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => /^ {2}node\d /.test(l))
    .map((l) => l.trim().split(/ {2,}/));

function checkTables(out: string): void {
  const r = rows(out);
  assert.equal(r.length, 12, `four tables of three nodes:\n${out}`);
  for (const row of r) assert.equal(row[row.length - 1], 'ok', `row ${row.join(' | ')}\n${out}`);
  // Table 1: node0 (nodeunit1) only ever reaches node0's pods; node1 and node2 never reach node0's.
  const [t1, t2, t3, t4] = [r.slice(0, 3), r.slice(3, 6), r.slice(6, 9), r.slice(9, 12)];
  assert.match(t1[0]![3]!, /^node0 ×12$/);
  for (const row of t1.slice(1)) assert.doesNotMatch(row[3]!, /node0/);
  // Table 2: node0 moved to nodeunit2 reaches other nodes' pods now.
  assert.match(t2[0]![3]!, /node[12]/);
  // Table 3: node2 has no zone: refused every time.
  assert.equal(t3[2]![3], 'refused ×12');
  // Table 4: with "*", node2 gets answers and no refusals.
  assert.doesNotMatch(t4[2]![3]!, /refused/);
}

describe('svcplane demo', { timeout: 600_000 }, () => {
  it('as root, in network namespaces with iptables proxies: the examples’ tables, and nothing left after', async () => {
    assert.equal(
      process.getuid?.(),
      0,
      'this test needs root (network namespaces, iptables): run it as root',
    );
    const dir = path.join(work, 'netns');
    const run = await demo(['--mode', 'netns', '--data-dir', dir]);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    assert.match(run.out, /network namespaces/);
    checkTables(run.out);
    assert.match(run.out, /every node reached exactly the endpoints its topology allows/);
    assert.deepEqual(namespaces(), []);
    assert.deepEqual(survivors(dir), []);
  });

  it('as a user who is not root, on loopback with userspace proxies: the same tables, clear of 127.10 in use', async () => {
    const dir = path.join(work, 'userspace');
    // Another node's pod on 127.10.0.1:8080 (the README's `svcplane node --pod-cidr 127.10.0.0/16`): the
    // demo must put its pods elsewhere, or that pod would answer its traffic.
    const other = createServer((_req, res) => res.end('node name: someone-else\n'));
    await new Promise<void>((resolve, reject) => {
      other.once('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EADDRINUSE' ? resolve() : reject(err),
      );
      other.listen(8080, '127.10.0.1', () => resolve());
    });
    after(() => other.close());
    chmodSync(work, 0o777);
    try {
      execFileSync(NOBODY[0]!, [
        ...NOBODY.slice(1),
        process.execPath,
        '-e',
        `require('fs').accessSync(${JSON.stringify(BIN)})`,
      ]);
    } catch {
      assert.fail(`uid 65534 cannot read ${BIN}: this test runs the demo as a user who is not root`);
    }
    const run = await demo(['--data-dir', dir], { as: NOBODY });
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    assert.match(run.out, /userspace mode/);
    assert.match(run.out, /Pods answer on 127\.1[1-9]\.N\.x/);
    checkTables(run.out);
    assert.deepEqual(survivors(dir), []);
  });

  it('interrupted twice after its first table, it stops and leaves no namespace or process', async () => {
    const dir = path.join(work, 'interrupted');
    const run = await demo(['--mode', 'netns', '--data-dir', dir], { interruptOn: /^ {2}node2 .*$/m });
    assert.notEqual(run.code, 0);
    assert.deepEqual(namespaces(), []);
    assert.deepEqual(survivors(dir), []);
  });

  it('bad input: a usage error', async () => {
    const run = await demo(['--mode', 'sideways']);
    assert.equal(run.code, 2);
    assert.match(run.err, /--mode/);
  });
});
