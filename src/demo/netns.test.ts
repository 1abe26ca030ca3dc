// The namespace layout for real: three node namespaces and a hub, TCP between them, then removal. Every
// server binds inside a namespace this suite creates, and every namespace is removed in `after`. Needs
// root; without it the suite fails with that reason, it never skips.
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLayout, exec, removeStale, type NetnsLayout } from './netns.js';

const prefix = `svcp-${randomBytes(3).toString('hex')}`;
const mine = new RegExp(`^${prefix}`);
const children: ChildProcess[] = [];

const SERVER = `
const [ip, port, name] = process.argv.slice(1);
require('node:net')
  .createServer((s) => s.end(name + ' saw ' + s.remoteAddress))
  .listen(Number(port), ip, () => console.log('ready'));
`;
const CLIENT = `
const [ip, port] = process.argv.slice(1);
let got = '';
const s = require('node:net').connect(Number(port), ip);
s.on('data', (b) => (got += b));
s.on('end', () => { console.log(got); process.exit(0); });
s.on('error', (e) => { console.error(e.message); process.exit(1); });
setTimeout(() => { console.error('no answer within 5 s'); process.exit(2); }, 5000);
`;

/** A TCP server in `netns` on ip:port answering "<name> saw <client address>"; resolves once listening. */
function serve(netns: string, ip: string, port: number, name: string): Promise<void> {
  const child = exec(netns, [process.execPath, '-e', SERVER, ip, String(port), name], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      if (out.includes('ready')) resolve();
    });
    child.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) =>
      reject(new Error(`server in ${netns} on ${ip}:${port} exited ${code}: ${err}`)),
    );
  });
}

/** Connects from `netns` to ip:port and resolves with the answer. */
function connect(netns: string, ip: string, port: number): Promise<string> {
  const child = exec(netns, [process.execPath, '-e', CLIENT, ip, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out.trim());
      else reject(new Error(`connect from ${netns} to ${ip}:${port} failed (exit ${code}): ${err.trim()}`));
    });
  });
}

// `ip` lives in an sbin directory that a non-login shell's PATH may lack.
const env = { ...process.env, PATH: `${process.env['PATH'] ?? ''}:/usr/sbin:/sbin` };
const netnsList = (): string[] =>
  spawnSync('ip', ['netns', 'list'], { encoding: 'utf8', env })
    .stdout.split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
const ip = (...args: string[]): string => {
  const r = spawnSync('ip', args, { encoding: 'utf8', env });
  assert.equal(r.status, 0, `ip ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

describe('network namespace layout', () => {
  let layout: NetnsLayout;

  before(async () => {
    assert.equal(
      process.getuid?.(),
      0,
      'these tests need root (they create network namespaces); run them as root',
    );
    layout = await createLayout({
      prefix,
      nodes: [
        { name: 'node0', podCIDR: '10.244.0.0/24' },
        { name: 'node1', podCIDR: '10.244.1.0/24' },
        { name: 'node2', podCIDR: '10.244.2.0/24' },
      ],
      serviceCIDR: '10.96.0.0/12',
    });
  });

  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await layout?.remove();
    await removeStale(mine);
  });

  it('names the hub and the nodes, with node IPs .1, .2, .3 and the hub at .254', () => {
    assert.equal(layout.hub, `${prefix}-hub`);
    assert.equal(layout.hubIP, '10.231.0.254');
    assert.equal(layout.subnet, '10.231.0.0/24');
    assert.deepEqual(
      layout.nodes.map((n) => [n.name, n.netns, n.ip, n.podCIDR]),
      [
        ['node0', `${prefix}-node0`, '10.231.0.1', '10.244.0.0/24'],
        ['node1', `${prefix}-node1`, '10.231.0.2', '10.244.1.0/24'],
        ['node2', `${prefix}-node2`, '10.231.0.3', '10.244.2.0/24'],
      ],
    );
    const names = netnsList();
    for (const n of [layout.hub, ...layout.nodes.map((x) => x.netns)]) assert.ok(names.includes(n), n);
  });

  it('creates no interface in the root namespace', () => {
    assert.doesNotMatch(ip('-o', 'link', 'show'), new RegExp(`${prefix}|10\\.231\\.0\\.`));
  });

  it('a server on a pod IP of node1 answers a connect from node0, which it sees unNATed', async () => {
    const node1 = layout.nodes[1]!;
    await serve(node1.netns, '10.244.1.7', 8080, 'node1');
    assert.equal(await connect(layout.nodes[0]!.netns, '10.244.1.7', 8080), 'node1 saw 10.231.0.1');
  });

  it('node2 reaches a server on the hub IP', async () => {
    await serve(layout.hub, layout.hubIP, 6443, 'hub');
    assert.equal(await connect(layout.nodes[2]!.netns, layout.hubIP, 6443), 'hub saw 10.231.0.3');
  });

  it('the hub reaches a pod IP through its route to the podCIDR', async () => {
    await serve(layout.nodes[2]!.netns, '10.244.2.9', 80, 'node2');
    assert.equal(await connect(layout.hub, '10.244.2.9', 80), 'node2 saw 10.231.0.254');
  });

  it('a ClusterIP has a route (the default via the hub) in each node, and forwarding is on in the hub only', () => {
    for (const n of layout.nodes) {
      assert.match(ip('-n', n.netns, 'route', 'get', '10.96.0.10'), /via 10\.231\.0\.254 dev eth0/);
    }
    const readForward = "require('node:fs').readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8')";
    const forward = (ns: string): string =>
      ip('netns', 'exec', ns, process.execPath, '-p', readForward).trim();
    assert.equal(forward(layout.hub), '1');
    assert.equal(forward(layout.nodes[0]!.netns), '0');
  });

  it('remove() leaves no namespace with the prefix, and a second remove() is fine', async () => {
    for (const c of children) c.kill('SIGKILL');
    await layout.remove();
    await layout.remove();
    assert.deepEqual(
      netnsList().filter((n) => mine.test(n)),
      [],
    );
  });

  it('removeStale() removes a leftover namespace and returns its name', async () => {
    ip('netns', 'add', `${prefix}-stale`);
    assert.deepEqual(await removeStale(mine), [`${prefix}-stale`]);
    assert.ok(!netnsList().includes(`${prefix}-stale`));
    assert.deepEqual(await removeStale(mine), []);
  });

  it('createLayout() removes what it made when a step fails', async () => {
    // node1's podCIDR is the bridge subnet itself: node0's route to it clashes with its connected route.
    await assert.rejects(
      createLayout({
        prefix: `${prefix}-rb`,
        nodes: [
          { name: 'node0', podCIDR: '10.244.0.0/24' },
          { name: 'node1', podCIDR: '10.231.0.0/24' },
        ],
        serviceCIDR: '10.96.0.0/12',
      }),
      /createLayout .*-rb: .*exists/i,
    );
    assert.deepEqual(
      netnsList().filter((n) => mine.test(n)),
      [],
    );
  });

  it('createLayout() refuses, and deletes nothing, when one of its namespaces exists', async () => {
    ip('netns', 'add', `${prefix}-x-hub`);
    await assert.rejects(
      createLayout({
        prefix: `${prefix}-x`,
        nodes: [{ name: 'node0', podCIDR: '10.244.0.0/24' }],
        serviceCIDR: '10.96.0.0/12',
      }),
      /already exist/,
    );
    assert.ok(netnsList().includes(`${prefix}-x-hub`));
    assert.deepEqual(await removeStale(mine), [`${prefix}-x-hub`]);
  });

  it('createLayout() rejects bad options before creating anything', async () => {
    const base = { prefix: `${prefix}-v`, serviceCIDR: '10.96.0.0/12' };
    await assert.rejects(createLayout({ ...base, nodes: [{ name: 'n', podCIDR: 'nope' }] }), /podCIDR of n/);
    await assert.rejects(
      createLayout({ ...base, nodes: [{ name: 'Bad_Name', podCIDR: '10.0.0.0/24' }] }),
      /node name/,
    );
    await assert.rejects(
      createLayout({ ...base, nodes: [], serviceCIDR: '10.96.0.0/12' }),
      /at least one node/,
    );
    await assert.rejects(
      createLayout({
        ...base,
        subnet: '10.231.0.0/30',
        nodes: [
          { name: 'a', podCIDR: '10.0.0.0/24' },
          { name: 'b', podCIDR: '10.0.1.0/24' },
        ],
      }),
      /too small/,
    );
    assert.deepEqual(
      netnsList().filter((n) => mine.test(n)),
      [],
    );
  });
});
