// `svcplane demo` end to end: as root in network namespaces with the proxies in nftables mode (the default
// where the kernel takes the mode's table) and in iptables mode (--proxy-mode iptables), and on loopback
// with the proxies in userspace mode. Each run must finish with every table row fitting the topology
// rules' expectations (in the kernel modes, the rules read back from each node too), and leave no
// namespace or process behind, an interrupted run included.
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

/** Whether nft accepts an `ip` table in a fresh namespace (validated only; the namespace is removed). */
function nftTakesATable(): boolean {
  const ns = `svdprobe${process.pid}`;
  execFileSync(IP, ['netns', 'add', ns]);
  try {
    execFileSync(IP, ['netns', 'exec', ns, 'nft', '-c', '-f', '-'], {
      input: 'add table ip svcplane\n',
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    return true;
  } catch {
    return false;
  } finally {
    execFileSync(IP, ['netns', 'del', ns]);
  }
}

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

/** The rows of every printed table: [node, unit, zone, answers, expected, (rules,) verdict]. */
const rows = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => /^ {2}node\d /.test(l))
    .map((l) => l.trim().split(/ {2,}/));

/** `rules`: the kernel mode whose rules each row must show, read back from the node. */
function checkTables(out: string, rules?: 'nftables' | 'iptables'): void {
  const r = rows(out);
  assert.equal(r.length, 12, `four tables of three nodes:\n${out}`);
  for (const row of r) assert.equal(row[row.length - 1], 'ok', `row ${row.join(' | ')}\n${out}`);
  const headers = out.split('\n').filter((l) => /^ {2}NODE /.test(l));
  assert.equal(headers.length, 4);
  for (const h of headers) assert.equal(h.includes(`RULES (${rules})`), rules !== undefined, h);
  // The rules column: DNAT to exactly the expected nodes' pods, or a refusal where nothing is expected.
  for (const row of r)
    if (rules === undefined) assert.equal(row.length, 6, row.join(' | '));
    else assert.equal(row[5], row[4] === 'refused' ? 'reject' : `dnat ${row[4]}`, row.join(' | '));
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
  it('as root, in network namespaces with nftables proxies by default: the tables, the rules, and nothing left after', async () => {
    assert.equal(
      process.getuid?.(),
      0,
      'this test needs root (network namespaces, nftables, iptables): run it as root',
    );
    // The default is nftables where nft takes an ip table in a fresh namespace, else iptables with a note.
    const kernelHasNft = nftTakesATable();
    const dir = path.join(work, 'netns');
    const run = await demo(['--mode', 'netns', '--data-dir', dir]);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    assert.match(run.out, /network namespaces/);
    if (kernelHasNft) {
      assert.match(run.out, /each proxy writes nftables rules \(its table ip svcplane\) there/);
      assert.match(run.out, /a proxy in nftables mode/);
      assert.doesNotMatch(run.out, /nftables mode cannot run here/);
    } else {
      assert.match(
        run.out,
        /^svcplane demo: nftables mode cannot run here \(.+\); the proxies use iptables mode$/m,
      );
    }
    checkTables(run.out, kernelHasNft ? 'nftables' : 'iptables');
    assert.match(run.out, /every node reached exactly the endpoints its topology allows/);
    assert.deepEqual(namespaces(), []);
    assert.deepEqual(survivors(dir), []);
  });

  it('as root with --proxy-mode iptables: the same tables through the iptables rules', async () => {
    const dir = path.join(work, 'iptables');
    const run = await demo(['--proxy-mode', 'iptables', '--data-dir', dir]);
    assert.equal(run.code, 0, `exit ${run.code}\n${run.out}\n${run.err}`);
    assert.match(run.out, /each proxy writes iptables rules \(KUBE-\* chains\) there/);
    assert.match(run.out, /a proxy in iptables mode/);
    checkTables(run.out, 'iptables');
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

  it('bad input: a usage error (exit 2), a kernel proxy mode without root included', async () => {
    const table: Array<[string[], RegExp, string[]?]> = [
      [['--mode', 'sideways'], /--mode/],
      [
        ['--proxy-mode', 'ipvs'],
        /invalid value "ipvs" for --proxy-mode: want one of nftables, iptables, userspace/,
      ],
      [['--mode', 'userspace', '--proxy-mode', 'nftables'], /--mode userspace .* no --proxy-mode nftables/],
      [['--mode', 'netns', '--proxy-mode', 'userspace'], /--mode netns .* no --proxy-mode userspace/],
      [['--proxy-mode', 'nftables'], /--proxy-mode nftables needs root/, NOBODY],
      [['--proxy-mode', 'iptables'], /--proxy-mode iptables needs root/, NOBODY],
    ];
    for (const [args, message, as] of table) {
      const run = await demo(args, as === undefined ? {} : { as });
      assert.equal(run.code, 2, `${args.join(' ')}: exit ${run.code}\n${run.out}\n${run.err}`);
      assert.match(run.err, message);
    }
    assert.deepEqual(namespaces(), []);
  });
});
