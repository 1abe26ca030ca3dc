// `svcplane proxy --proxy-mode nftables` end to end, as root, in network namespaces this test creates
// (test/e2e/testing/proxy-netns.ts): the API server in the hub, echo "pods" on their IPs inside two node
// namespaces, real nft, and real TCP and UDP from a namespace to cluster IPs and node ports. nodea's proxy
// (IPv4 and IPv6, --nodeport-addresses) covers load balancing, partial syncs, an endpoint going unready and
// back, REJECT and DROP, ClientIP affinity, node ports, UDP conntrack clean-up, an IPv6 cluster IP and the
// table's shape. nodeb is first programmed by the iptables mode; its nftables proxy (a short
// --sync-period) must remove those chains, serve node ports on every local address, and undo a hand-made
// change at its periodic resync without forgetting ClientIP affinity. Usage errors (--cleanup with the
// userspace mode, nft not usable) exit 2 and touch nothing. Then --cleanup leaves nothing, and no nft
// process is left (partial syncs go through one long-lived nft -i, which a stopped proxy ends).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nftChainTargets } from '../../src/core/demo/node-rules.js';
import { ipPath } from '../../src/demo/netns.js';
import { sampleInNetns } from '../../src/demo/probe.js';
import { nftRunner, type NftFamily } from '../../src/proxy/nft-runner.js';
import { findProgram } from '../../src/proxy/run-program.js';
import {
  ECHO,
  WAIT,
  run,
  service,
  slice,
  started,
  startProxyCluster,
  udpFlowMoves,
  type ProxyCluster,
  type ProxyProcess,
} from './testing/proxy-netns.js';
import { until } from './testing/until.js';

const NODE_A = '10.231.0.1';
const NODE_B = '10.231.0.2';
/** A second address of nodea, outside its --nodeport-addresses. */
const NODE_A_OTHER = '10.231.0.101';
const POD6 = ['fd00:10:244::10', 'fd00:10:244::11'];
const NO_IP6 = 'the kernel takes no ip6 nftables table';

/** nft's JSON for a key, an element or a verdict, written as nft's text writes it. */
function nftText(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number') return String(v);
  const o = v as Record<string, unknown>;
  if (Array.isArray(o['concat'])) return o['concat'].map(nftText).join(' . ');
  if (o['prefix'] !== undefined) {
    const p = o['prefix'] as { addr: string; len: number };
    return `${p.addr}/${p.len}`;
  }
  if (o['elem'] !== undefined) return nftText((o['elem'] as { val: unknown }).val);
  for (const verdict of ['goto', 'jump'])
    if (o[verdict] !== undefined) return `${verdict} ${(o[verdict] as { target: string }).target}`;
  return Object.keys(o)[0] ?? ''; // {"drop": null}, {"accept": null}
}

interface Listed {
  set?: { name: string; elem?: unknown[] };
  map?: { name: string; elem?: unknown[] };
  chain?: { name: string };
  rule?: { chain: string; expr: unknown[] };
}

/** A table as `nft -j list table` shows it. */
class TableView {
  constructor(readonly items: readonly Listed[]) {}
  /** The elements of a set (`key`) or map (`key : verdict`). */
  elements(name: string): string[] {
    const s = this.items.map((i) => i.set ?? i.map).find((x) => x?.name === name);
    return (s?.elem ?? []).map((e) =>
      Array.isArray(e) ? `${nftText(e[0])} : ${nftText(e[1])}` : nftText(e),
    );
  }
  chains(): string[] {
    return this.items.flatMap((i) => (i.chain === undefined ? [] : [i.chain.name]));
  }
  sets(): string[] {
    return this.items.flatMap((i) => (i.set === undefined ? [] : [i.set.name]));
  }
  /** The `ip/port` endpoints a chain DNATs to (through its endpoint map slots). */
  dnats(chain: string): string[] {
    return nftChainTargets(this.items, chain).map((t) => t.replace(/:(\d+)$/, '/$1'));
  }
  /** The rules of a chain, as JSON text. */
  rules(chain: string): string[] {
    return this.items.flatMap((i) => (i.rule?.chain === chain ? [JSON.stringify(i.rule.expr)] : []));
  }
}

describe('svcplane proxy --proxy-mode nftables in network namespaces', { timeout: 600_000 }, () => {
  let c: ProxyCluster;
  let proxyA: ProxyProcess;
  let proxyB: ProxyProcess | undefined;
  let shim: string;
  const nftCalls = () => path.join(shim, 'calls');
  const table = async (ns: string, family: NftFamily = 'ip'): Promise<TableView> => {
    const items = await nftRunner({ netns: ns }).listTable(family, 'svcplane');
    assert.ok(items !== undefined, `no table ${family} svcplane in ${ns}`);
    return new TableView(items as Listed[]);
  };
  const nft = (ns: string, cmd: string) => run([ipPath(), 'netns', 'exec', ns, 'nft', cmd]);
  const save = (ns: string) => run([ipPath(), 'netns', 'exec', ns, 'iptables-save']);
  const clusterIP = (name: string) => c.svcField(name, '{.spec.clusterIP}');
  const nodePort = async (name: string) => Number(await c.svcField(name, '{.spec.ports[0].nodePort}'));
  /** Answers of `count` requests from `ns`, once every one is an echo pod's (none refused or lost). */
  const answered = (ns: string, host: string, port: number, count: number) =>
    until(`answers from ${host}:${port}`, WAIT, async () => {
      const got = await sampleInNetns(ns, host, port, count);
      return got.every((x) => x.startsWith('10.244.') || x.startsWith('fd00:10:244:')) ? got : undefined;
    });
  const ip = (ns: string, ...args: string[]) => run([ipPath(), '-n', ns, ...args]);
  /** `svcplane ARGS` in `ns` (after `wrap`, e.g. setpriv), run to its end: its exit code and stderr. */
  const exited = (ns: string, args: string[], wrap: string[] = []) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const argv = ['netns', 'exec', ns, ...wrap, process.execPath, path.resolve('bin/svcplane.js'), ...args];
      execFile(ipPath(), argv, { timeout: 30_000 }, (err, _out, stderr) =>
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stderr }),
      );
    });
  /** The nft processes running in `ns` (their pids). */
  const nftProcesses = async (ns: string): Promise<string[]> =>
    (await run([ipPath(), 'netns', 'pids', ns])).split('\n').filter((pid) => {
      try {
        return pid !== '' && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'nft';
      } catch {
        return false; // gone meanwhile
      }
    });
  /** The log lines a proxy wrote after `mark` (a length of its log). */
  const since = (p: ProxyProcess, mark: number) => p.log().slice(mark);

  before(async () => {
    c = await startProxyCluster({ serviceCIDRs: '10.96.0.0/16,fd00:96::/112' });
    // nodea: IPv6 pods on lo, an IPv6 address and route out, and a second IPv4 address.
    for (const p of POD6) await ip(c.nsA, 'addr', 'add', `${p}/128`, 'dev', 'lo', 'nodad');
    await ip(c.nsA, 'addr', 'add', 'fd00:231::1/64', 'dev', 'eth0', 'nodad');
    await ip(c.nsA, '-6', 'route', 'add', 'default', 'via', 'fd00:231::fe', 'dev', 'eth0');
    await ip(c.nsA, 'addr', 'add', `${NODE_A_OTHER}/24`, 'dev', 'eth0');
    const pods6 = c.inNs(c.nsA, [process.execPath, '-e', ECHO, ...POD6.map((p) => `${p}:8080`)]);
    await started(pods6, /listening/, 'IPv6 pods on nodea');
    // Every nft the proxy runs goes through a shim that records its arguments.
    const real = findProgram('nft');
    assert.ok(real !== undefined, 'nft not found (Debian package nftables; scripts/ensure-deps.sh)');
    shim = mkdtempSync(path.join(tmpdir(), 'svcplane-nft-shim-'));
    writeFileSync(
      path.join(shim, 'nft'),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${nftCalls()}'\nexec '${real}' "$@"\n`,
    );
    chmodSync(path.join(shim, 'nft'), 0o755);
    proxyA = await c.startProxy(
      c.nsA,
      'nodea',
      ['--proxy-mode', 'nftables', '--nodeport-addresses', `${NODE_A}/32`],
      { ...process.env, PATH: `${shim}${path.delimiter}${process.env['PATH'] ?? ''}` },
    );
  });

  after(async () => {
    await c?.close();
    if (shim !== undefined) rmSync(shim, { recursive: true, force: true });
  });

  it('balances a cluster IP over every endpoint through the service-ips map, and syncs a change partially', async () => {
    await c.apply([
      service('web'),
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const vip = await clusterIP('web');
    const seen = await until('all three endpoints answer', WAIT, async () => {
      const got = new Set(await answered(c.nsA, vip, 80, 30));
      return got.size === 3 ? got : undefined;
    });
    assert.deepEqual([...seen].sort(), ['10.244.0.10', '10.244.1.10', '10.244.1.11']);
    const t = await table(c.nsA);
    const entry = t.elements('service-ips').find((e) => e.startsWith(`${vip} . tcp . 80 : `));
    const chain = /^\S+ \. tcp \. 80 : goto (service-\w{8}-default\/web\/tcp\/http)$/.exec(entry ?? '')?.[1];
    assert.ok(chain !== undefined, `service-ips: ${t.elements('service-ips').join(', ')}`);
    // One rule: numgen picks one of 3 slots of the chain's range in an endpoint map.
    assert.match(
      t.rules(chain).join('\n'),
      /"numgen":\{"mode":"random","mod":3,"offset":\d+\}\},"data":"@endpoints-tcp-\d+"/,
    );
    assert.deepEqual(t.dnats(chain), ['10.244.0.10/8080', '10.244.1.10/8080', '10.244.1.11/8080']);
    assert.ok(!t.chains().some((n) => n.startsWith('endpoint-')), 'no chain per endpoint without affinity');
    // One endpoint removed: a partial sync of that one service port; the choice is of 2.
    const mark = proxyA.log().length;
    await c.apply([
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    await until('the partial sync', WAIT, () =>
      /"msg":"partial sync"[^\n]*"changed":1,/.test(since(proxyA, mark)),
    );
    const t2 = await table(c.nsA);
    assert.deepEqual(t2.dnats(chain), ['10.244.0.10/8080', '10.244.1.10/8080']);
    assert.match(t2.rules(chain).join('\n'), /"numgen":\{"mode":"random","mod":2/);
    assert.ok(t2.elements('service-ips').includes(entry!), 'the element stays');
  });

  it('stops sending to an endpoint that goes unready, and sends to it again once ready', async () => {
    const flip = (ready: boolean) =>
      slice('flip-1', 'flip', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb', ready],
      ]);
    await c.apply([service('flip'), flip(true)]);
    const vip = await clusterIP('flip');
    await until(
      'both endpoints answer',
      WAIT,
      async () => new Set(await answered(c.nsA, vip, 80, 20)).size === 2,
    );
    const mark = proxyA.log().length;
    await c.apply([flip(false)]);
    await until('the partial sync', WAIT, () => /"msg":"partial sync"/.test(since(proxyA, mark)));
    const only = await answered(c.nsA, vip, 80, 12);
    assert.deepEqual([...new Set(only)], ['10.244.0.10'], 'the unready endpoint gets nothing');
    const t = await table(c.nsA);
    const chain = t.chains().find((n) => /^service-\w{8}-default\/flip\/tcp\/http$/.test(n));
    assert.ok(chain !== undefined, t.chains().join(', '));
    assert.deepEqual(t.dnats(chain), ['10.244.0.10/8080'], 'the unready endpoint is not picked');
    await c.apply([flip(true)]);
    await until(
      'both answer again',
      WAIT,
      async () => new Set(await answered(c.nsA, vip, 80, 20)).size === 2,
    );
  });

  it('refuses connections to a Service with no endpoints (REJECT through no-endpoint-services)', async () => {
    await c.apply([service('empty'), slice('empty-1', 'empty', [])]);
    const vip = await clusterIP('empty');
    await until('refused', WAIT, async () =>
      (await sampleInNetns(c.nsA, vip, 80, 3)).every((x) => x === 'refused'),
    );
    const t = await table(c.nsA);
    assert.ok(t.elements('no-endpoint-services').includes(`${vip} . tcp . 80 : goto reject-chain`));
    assert.ok(!t.elements('service-ips').some((e) => e.startsWith(`${vip} `)));
  });

  it('sticks a client to one endpoint with ClientIP affinity', async () => {
    await c.apply([
      service('sticky', { sessionAffinity: 'ClientIP' }),
      slice('sticky-1', 'sticky', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const answers = await answered(c.nsA, await clusterIP('sticky'), 80, 15);
    assert.equal(new Set(answers).size, 1, `one endpoint for one client: ${answers.join(',')}`);
    // The client is remembered in the affinity set of the endpoint that answered, and in no other.
    const t = await table(c.nsA);
    const remembered = t
      .sets()
      .filter((n) => /^affinity-\w{8}-default\/sticky\/tcp\/http__/.test(n))
      .flatMap((n) => t.elements(n).map((e) => `${n.split('__')[1]} ${e}`));
    assert.deepEqual(remembered, [`${answers[0]}/8080 ${NODE_A}`]);
  });

  it('serves a node port on --nodeport-addresses only', async () => {
    await c.apply([service('np', { type: 'NodePort' }), slice('np-1', 'np', [['10.244.0.10', 'nodea']])]);
    const port = await nodePort('np');
    assert.deepEqual([...new Set(await answered(c.nsB, NODE_A, port, 5))], ['10.244.0.10']);
    // nodea's other address is not in --nodeport-addresses: nothing is there, so the kernel refuses.
    assert.deepEqual(await sampleInNetns(c.nsB, NODE_A_OTHER, port, 2), ['refused', 'refused']);
    const t = await table(c.nsA);
    assert.deepEqual(t.elements('nodeport-ips'), [NODE_A]);
    assert.ok(
      t.elements('service-nodeports').some((e) => new RegExp(`^tcp \\. ${port} : goto external-`).test(e)),
    );
  });

  it('drops (no refusal) a Local node port without endpoints on this node', async () => {
    await c.apply([
      service('nplocal', { type: 'NodePort', externalTrafficPolicy: 'Local' }),
      slice('nplocal-1', 'nplocal', [['10.244.1.10', 'nodeb']]),
    ]);
    const port = await nodePort('nplocal');
    await until('the drop element', WAIT, async () =>
      (await table(c.nsA)).elements('no-endpoint-nodeports').includes(`tcp . ${port} : drop`),
    );
    assert.deepEqual(await sampleInNetns(c.nsB, NODE_A, port, 1), ['timeout']);
  });

  it('moves a UDP flow that keeps its source port to the new endpoint (stale conntrack entries deleted)', () =>
    udpFlowMoves(c, proxyA));

  it('reaches an IPv6 cluster IP of a dual-stack Service (the ip6 svcplane table)', async () => {
    assert.ok(
      !proxyA.log().includes(NO_IP6),
      `the proxy programs no IPv6 here, though this kernel has IPv6 (/proc/net/if_inet6): ${proxyA.log()}`,
    );
    await c.apply([
      service('web6', { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] }),
      slice('web6-v4', 'web6', [['10.244.0.10', 'nodea']]),
      slice('web6-v6', 'web6', [
        [POD6[0]!, 'nodea'],
        [POD6[1]!, 'nodea'],
      ]),
    ]);
    const vip6 = await c.svcField('web6', '{.spec.clusterIPs[1]}');
    assert.match(vip6, /^fd00:96:/);
    const seen = await until('both IPv6 endpoints answer', WAIT, async () => {
      const got = new Set(await answered(c.nsA, vip6, 80, 20));
      return got.size === 2 ? got : undefined;
    });
    assert.deepEqual([...seen].sort(), POD6);
    const t6 = await table(c.nsA, 'ip6');
    assert.ok(
      t6.elements('service-ips').some((e) => e.startsWith(`${vip6} . tcp . 80 : goto service-`)),
      t6.elements('service-ips').join(', '),
    );
    // The IPv4 cluster IP goes to the IPv4 endpoint only.
    const vip4 = await c.svcField('web6', '{.spec.clusterIPs[0]}');
    assert.deepEqual([...new Set(await answered(c.nsA, vip4, 80, 5))], ['10.244.0.10']);
  });

  it('never lists the ruleset or a table to sync: nft runs only transactions', () => {
    const calls = readFileSync(nftCalls(), 'utf8').trim().split('\n');
    assert.ok(calls.filter((a) => a === '-f -').length >= 1, calls.join('\n'));
    // Partial syncs go through one long-lived nft -i, started once.
    assert.equal(calls.filter((a) => a === '-i').length, 1, calls.join('\n'));
    const other = calls.filter((a) => a !== '-f -' && a !== '-i');
    // At start: whether nft works here (list tables) and whether the kernel takes an ip6 table (-c).
    assert.deepEqual(other, ['list tables', '-c -f -'], calls.join('\n'));
  });

  it('takes over a node the iptables mode programmed: the KUBE-* chains go', async () => {
    const ipt = await c.startProxy(c.nsB, 'nodeb', ['--proxy-mode', 'iptables']);
    await ipt.stop();
    assert.match(await save(c.nsB), /-A KUBE-SERVICES /);
    proxyB = await c.startProxy(c.nsB, 'nodeb', ['--proxy-mode', 'nftables', '--sync-period', '2s']);
    assert.match(proxyB.log(), /"msg":"removed the iptables mode's chains"[^\n]*"chains":[1-9]/);
    assert.doesNotMatch(await save(c.nsB), /KUBE-/);
    assert.ok((await table(c.nsB)).elements('service-ips').length > 0);
  });

  it('serves node ports on every local address but loopback without --nodeport-addresses', async () => {
    await c.apply([service('npb', { type: 'NodePort' }), slice('npb-1', 'npb', [['10.244.1.10', 'nodeb']])]);
    const port = await nodePort('npb');
    assert.deepEqual([...new Set(await answered(c.nsA, NODE_B, port, 5))], ['10.244.1.10']);
    assert.deepEqual(await sampleInNetns(c.nsB, '127.0.0.1', port, 1), ['refused']);
    assert.ok(!(await table(c.nsB)).sets().includes('nodeport-ips'));
  });

  it('undoes a hand-made change at the periodic resync, keeping ClientIP affinity', async () => {
    const proxy = proxyB!;
    const vip = await clusterIP('sticky');
    const first = await answered(c.nsB, vip, 80, 10);
    assert.equal(new Set(first).size, 1, first.join(','));
    const key = `${vip} . tcp . 80`;
    const entry = (await table(c.nsB)).elements('service-ips').find((e) => e.startsWith(`${key} : `));
    assert.ok(entry !== undefined);
    // Another writer deletes the Service's element and adds one of its own.
    await nft(c.nsB, `delete element ip svcplane service-ips { ${key} }`);
    await nft(c.nsB, 'add element ip svcplane service-ips { 10.96.255.254 . tcp . 9 : goto reject-chain }');
    const mark = proxy.log().length;
    const resynced = /"msg":"full sync"[^\n]*"resync":1/;
    // Both the table and the log line, which the proxy writes just after the transaction.
    const t = await until('the resync', WAIT, async () => {
      if (!resynced.test(since(proxy, mark))) return undefined;
      const now = await table(c.nsB);
      const els = now.elements('service-ips');
      return els.includes(entry) && !els.some((e) => e.startsWith('10.96.255.254 ')) ? now : undefined;
    });
    assert.doesNotMatch(since(proxy, mark), /writing it anew/);
    // The kernel's affinity entry outlived the resync (a table written anew would have lost it) ...
    const remembered = t
      .sets()
      .filter((n) => /^affinity-\w{8}-default\/sticky\/tcp\/http__/.test(n))
      .flatMap((n) => t.elements(n).map((e) => `${n.split('__')[1]} ${e}`));
    assert.ok(
      remembered.includes(`${first[0]}/8080 ${NODE_B}`),
      `affinity entries after the resync: ${remembered.join(', ') || 'none'}`,
    );
    // ... so the client still reaches the same endpoint.
    assert.deepEqual([...new Set(await answered(c.nsB, vip, 80, 10))], [first[0]]);
  });

  it('refuses --cleanup --proxy-mode userspace (exit 2, one line) and removes nothing', async () => {
    const r = await exited(c.nsA, ['proxy', '--cleanup', '--proxy-mode', 'userspace']);
    assert.deepEqual(r, {
      code: 2,
      stderr:
        "svcplane: --cleanup removes the iptables and nftables modes' rules; it takes no --proxy-mode userspace\n",
    });
    assert.match(await nft(c.nsA, 'list ruleset'), /table ip svcplane/);
  });

  it('refuses the nftables mode where nft may not be used (exit 2, one line), before any sync', async () => {
    const nobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
    const r = await exited(c.nsA, ['proxy', '--hostname-override', 'x', '--proxy-mode', 'nftables'], nobody);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^svcplane: --proxy-mode nftables: \S*nft list tables failed \(exit 1: Operation not permitted[^\n]*\) \(without root, use --proxy-mode userspace\)\n$/,
    );
  });

  it('--cleanup removes both families’ tables and every KUBE- chain', async () => {
    await proxyA.stop();
    await proxyB?.stop();
    for (const ns of [c.nsA, c.nsB]) {
      // A stopped proxy leaves no nft -i behind.
      assert.deepEqual(await nftProcesses(ns), []);
      assert.match(await nft(ns, 'list ruleset'), /table ip svcplane/);
      const out = await c.svcplane(ns, ['proxy', '--cleanup']);
      assert.match(out, /removed 0 iptables chains and the jumps to them, and 2 nftables tables/);
      assert.doesNotMatch(await nft(ns, 'list ruleset'), /svcplane/);
      assert.doesNotMatch(await save(ns), /KUBE-/);
      const again = await c.svcplane(ns, ['proxy', '--cleanup']);
      assert.match(again, /removed 0 iptables chains and the jumps to them, and 0 nftables tables/);
      assert.deepEqual(await nftProcesses(ns), []);
    }
  });
});
