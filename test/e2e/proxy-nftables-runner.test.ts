// The nft runner (src/proxy/nft-runner.ts) against the real nft and kernel, as root, in a network namespace
// this suite creates and always removes: nothing touches the root namespace's ruleset. A hand-written
// table (a test fixture, not the proxy's renderer) dispatches a cluster-IP-like address through a verdict
// map to a DNAT chain; real TCP from inside the namespace must reach the echo server behind it. Then the
// table is deleted and no trace of it is left; and the iptables mode's chains are removed as a mode switch
// does. Without root or nft the suite fails, naming scripts/ensure-deps.sh; it never skips.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ipPath } from '../../src/demo/netns.js';
import { removeIptablesRules } from '../../src/proxy/iptables-backend.js';
import { iptablesRunner } from '../../src/proxy/iptables-runner.js';
import { NftError, type NftRunner } from '../../src/proxy/nft-runner.js';
import { ip, nftNetns } from './testing/nft-netns.js';

const netns = `svcp-nft-${randomBytes(3).toString('hex')}`;
const TABLE = 'svcp-e2e';
const CLUSTER_IP = '10.96.0.10';
const POD_IP = '10.244.1.5';

// The fixture: a verdict map keyed like kube-proxy's service-ips map, in front of a DNAT chain.
const FIXTURE = `
table ip ${TABLE} {
  map service-ips {
    type ipv4_addr . inet_proto . inet_service : verdict
  }
  chain nat-output {
    type nat hook output priority -100; policy accept;
    ip daddr . meta l4proto . th dport vmap @service-ips
  }
  chain service-echo {
    meta l4proto tcp dnat to ${POD_IP}:8080
  }
}
add element ip ${TABLE} service-ips { ${CLUSTER_IP} . tcp . 80 : goto service-echo }
`;

// A TCP server on POD_IP:8080 answering each connection with the address it was reached on.
const ECHO = `
const net = require('node:net');
net.createServer((s) => s.end('reached ' + s.localAddress + ':' + s.localPort + '\\n'))
  .listen(8080, '${POD_IP}', () => process.stdout.write('listening\\n'));
`;

// A TCP client that prints what the server says, or the error.
const CLIENT = `
const net = require('node:net');
const s = net.connect(80, '${CLUSTER_IP}');
let out = '';
s.setTimeout(10000, () => { process.stdout.write('timeout'); process.exit(1); });
s.on('data', (d) => (out += d));
s.on('end', () => process.stdout.write(out));
s.on('error', (e) => { process.stdout.write('error ' + e.message); process.exit(1); });
`;

function inNetns(argv: readonly string[]): ChildProcess {
  return spawn(ipPath(), ['netns', 'exec', netns, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function output(child: ChildProcess): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('nftRunner against nft, in a throwaway network namespace', () => {
  let runner: NftRunner;
  let remove: (() => void) | undefined;
  let echo: ChildProcess | undefined;

  before(async () => {
    ({ runner, remove } = await nftNetns(netns));
    // The "pod" address on lo, and a route for the cluster range so a connect has a way out before DNAT
    // rewrites its destination (no address answers on the cluster IP itself).
    ip('-n', netns, 'link', 'set', 'lo', 'up');
    ip('-n', netns, 'addr', 'add', `${POD_IP}/32`, 'dev', 'lo');
    ip('-n', netns, 'route', 'add', '10.96.0.0/16', 'dev', 'lo');
    echo = inNetns([process.execPath, '-e', ECHO]);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      echo?.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('listening')) resolve();
      });
      echo?.once('exit', (code) => reject(new Error(`echo server exited ${code}: ${out}`)));
    });
  });

  after(() => {
    echo?.kill();
    remove?.();
  });

  it('validate() accepts the fixture without committing it', async () => {
    await runner.validate(FIXTURE);
    assert.equal(await runner.listTable('ip', TABLE), undefined);
  });

  it('apply() commits the table; TCP to the cluster IP is DNATed to the echo server', async () => {
    await runner.apply(FIXTURE);
    const items = await runner.listTable('ip', TABLE);
    assert.ok(items !== undefined);
    const names = items.flatMap((i) => {
      const o = i as { chain?: { name: string }; map?: { name: string } };
      return o.chain !== undefined
        ? [`chain ${o.chain.name}`]
        : o.map !== undefined
          ? [`map ${o.map.name}`]
          : [];
    });
    assert.deepEqual(names.sort(), ['chain nat-output', 'chain service-echo', 'map service-ips']);
    const r = await output(inNetns([process.execPath, '-e', CLIENT]));
    assert.equal(r.out, `reached ${POD_IP}:8080\n`, `exit ${r.code}`);
    assert.equal(r.code, 0);
  });

  it('a failing transaction names its line and changes nothing', async () => {
    const before = await runner.listTable('ip', TABLE);
    const text = [
      `add chain ip ${TABLE} service-new`,
      `add rule ip ${TABLE} service-new meta l4proto tcp dnat to ${POD_IP}:9090`,
      `add element ip ${TABLE} service-ips { ${CLUSTER_IP} . tcp . 81 : goto service-missing }`,
      '',
    ].join('\n');
    await assert.rejects(runner.apply(text), (e: unknown) => {
      assert.ok(e instanceof NftError, String(e));
      assert.equal(e.line, 3);
      assert.equal(e.lineText, text.split('\n')[2]);
      assert.match(e.stderr, /Error:/);
      return true;
    });
    assert.deepEqual(await runner.listTable('ip', TABLE), before);
  });

  it('deleteTable() removes the table and leaves no trace; a second delete answers false', async () => {
    assert.match(await runner.listRuleset(), new RegExp(`table ip ${TABLE}`));
    assert.equal(await runner.deleteTable('ip', TABLE), true);
    assert.equal(await runner.listTable('ip', TABLE), undefined);
    const rest = await runner.listRuleset();
    assert.ok(!rest.includes(TABLE) && !rest.includes('service-') && !rest.includes(CLUSTER_IP), rest);
    assert.equal(await runner.deleteTable('ip', TABLE), false);
  });

  it("removeIptablesRules() removes the iptables mode's chains and jumps when another mode takes over", async () => {
    const ipt = iptablesRunner({ family: 4, netns });
    const ok = await ipt.check();
    assert.ok(
      ok.ok,
      `iptables does not work here: ${ok.ok ? '' : ok.reason} (run scripts/ensure-deps.sh as root)`,
    );
    await ipt.ensureRule(
      'nat',
      'OUTPUT',
      ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'],
      'KUBE-SERVICES',
    );
    await ipt.restore(
      '*nat\n:KUBE-SVC-ABCDEFGHIJKLMNOP - [0:0]\n-A KUBE-SVC-ABCDEFGHIJKLMNOP -j RETURN\nCOMMIT\n',
    );
    assert.match(await ipt.save('nat'), /KUBE-SVC-ABCDEFGHIJKLMNOP/);
    const { chains } = await removeIptablesRules(ipt);
    assert.equal(chains, 2);
    const left = await ipt.save('nat');
    assert.ok(!/KUBE-/.test(left), left);
  });
});
