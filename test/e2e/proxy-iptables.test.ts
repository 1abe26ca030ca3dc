// `svcplane proxy --proxy-mode iptables` end to end, as root, in network namespaces this test creates: the
// API server in the hub, echo "pods" listening on their IPs inside two node namespaces, and the proxy in
// nodeA's namespace reading the API server directly (so the topology engine runs in the proxy). Real
// iptables-restore, real TCP from a namespace to a cluster IP or a node port. Covers load balancing over
// every endpoint, a SuperEdge unit rule, REJECT with no endpoints, ClientIP affinity, a NodePort with
// externalTrafficPolicy Local, partial syncs, the rules' shape, and --cleanup.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLayout, ipPath, type NetnsLayout } from '../../src/demo/netns.js';
import { sampleInNetns } from '../../src/demo/probe.js';
import { KUBECTL } from './testing/kubectl.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-proxy-ipt-'));
const WAIT = 30_000;

// An HTTP server answering "node name: <its IP>" on each IP:port it is given (the demo probe parses it).
const ECHO = `
const http = require('node:http');
for (const hp of process.argv.slice(1)) {
  const [host, port] = hp.split(':');
  http.createServer((req, res) => res.end('node name: ' + host + '\\n')).listen(Number(port), host);
}
process.stdout.write('listening\\n');
`;

// A UDP server answering each datagram with its own IP, on each IP:port it is given.
const UDP_ECHO = `
const dgram = require('node:dgram');
for (const hp of process.argv.slice(1)) {
  const [host, port] = hp.split(':');
  const s = dgram.createSocket('udp4');
  s.on('message', (m, r) => s.send(host, r.port, r.address));
  s.bind(Number(port), host);
}
process.stdout.write('listening\\n');
`;

// A UDP client that keeps one source port and sends every 50 ms, printing each answer on a line.
const UDP_CLIENT = `
const dgram = require('node:dgram');
const [host, port] = process.argv.slice(1);
const s = dgram.createSocket('udp4');
s.on('message', (m) => process.stdout.write(m.toString() + '\\n'));
s.bind(40053, () => setInterval(() => s.send('hi', Number(port), host), 50));
`;

function run(argv: readonly string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      argv[0]!,
      argv.slice(1),
      { maxBuffer: 64 << 20, timeout: 60_000 },
      (err, out, errOut) =>
        err === null ? resolve(out) : reject(new Error(`${argv.join(' ')}: ${errOut || err.message}`)),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

function started(child: ChildProcess, re: RegExp, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`${what} not ready: ${out}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m !== null) {
        clearTimeout(t);
        resolve(m[1] ?? m[0]);
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited ${code}: ${out}`)));
  });
}

describe('svcplane proxy --proxy-mode iptables in a network namespace', { timeout: 300_000 }, () => {
  let layout: NetnsLayout;
  let kubeconfig: string;
  const children: ChildProcess[] = [];
  let proxyLog = '';
  let proxyProc: ChildProcess;
  const nsA = () => layout.nodes[0]!.netns;
  const nsB = () => layout.nodes[1]!.netns;
  const kubectl = (args: string[], stdin?: string) =>
    run([ipPath(), 'netns', 'exec', layout.hub, KUBECTL, '--kubeconfig', kubeconfig, ...args], stdin);
  const apply = (objs: unknown[]) =>
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }));
  const inNs = (ns: string, argv: string[]) =>
    spawn(ipPath(), ['netns', 'exec', ns, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  const save = (ns: string) => run([ipPath(), 'netns', 'exec', ns, 'iptables-save']);
  const clusterIP = async (name: string) =>
    (await kubectl(['get', 'svc', name, '-o', 'jsonpath={.spec.clusterIP}'])).trim();

  const slice = (name: string, svc: string, eps: Array<[string, string]>) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: eps.map(([ip, nodeName]) => ({ addresses: [ip], nodeName, conditions: { ready: true } })),
  });
  const service = (
    name: string,
    spec: Record<string, unknown> = {},
    annotations: Record<string, string> = {},
  ) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', annotations },
    spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
  });

  before(async () => {
    assert.equal(
      process.getuid?.(),
      0,
      'this test needs root (network namespaces, iptables): run it as root',
    );
    layout = await createLayout({
      prefix: `svp${Math.random().toString(16).slice(2, 7)}`,
      nodes: [
        { name: 'nodea', podCIDR: '10.244.0.0/24' },
        { name: 'nodeb', podCIDR: '10.244.1.0/24' },
      ],
      serviceCIDR: '10.96.0.0/16',
    });
    const up = spawn(
      ipPath(),
      [
        'netns',
        'exec',
        layout.hub,
        process.execPath,
        BIN,
        'up',
        '--data-dir',
        path.join(work, 'up'),
        '--bind-address',
        layout.hubIP,
        '--secure-port',
        '6443',
        '--service-cluster-ip-range',
        '10.96.0.0/16',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(up);
    kubeconfig = await started(up, /kubeconfig: (\S+)/, 'svcplane up');
    const a = inNs(nsA(), [process.execPath, '-e', ECHO, '10.244.0.10:8080']);
    const b = inNs(nsB(), [process.execPath, '-e', ECHO, '10.244.1.10:8080', '10.244.1.11:8080']);
    children.push(a, b);
    await Promise.all([started(a, /listening/, 'pods on nodea'), started(b, /listening/, 'pods on nodeb')]);
    await apply([
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'nodea', labels: { unit: 'a' } } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'nodeb', labels: { unit: 'b' } } },
    ]);
    const proxy = inNs(nsA(), [
      process.execPath,
      BIN,
      'proxy',
      '--kubeconfig',
      kubeconfig,
      '--hostname-override',
      'nodea',
      '--proxy-mode',
      'iptables',
      '--min-sync-period',
      '0s',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--healthz-bind-address',
      '127.0.0.1:0',
    ]);
    children.push(proxy);
    proxyProc = proxy;
    proxy.stderr!.on('data', (d: Buffer) => (proxyLog += d.toString()));
    await started(proxy, /in sync/, 'svcplane proxy');
  });

  after(async () => {
    for (const c of children.reverse()) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    if (layout !== undefined) {
      await layout.killProcesses();
      await layout.remove();
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('balances a cluster IP over every endpoint with kube-proxy’s chains, and syncs a change partially', async () => {
    await apply([
      service('web'),
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('web');
    const seen = await until('all three endpoints answer', WAIT, async () => {
      const answers = await sampleInNetns(nsA(), ip, 80, 30);
      return new Set(answers).size === 3 && answers.every((x) => x.startsWith('10.244.'))
        ? new Set(answers)
        : undefined;
    });
    assert.deepEqual([...seen].sort(), ['10.244.0.10', '10.244.1.10', '10.244.1.11']);
    const rules = await save(nsA());
    assert.match(
      rules,
      new RegExp(`-A KUBE-SERVICES -d ${ip.replace(/\./g, '\\.')}/32 .*-j KUBE-SVC-[A-Z2-7]{16}`),
    );
    assert.match(rules, /-m statistic --mode random --probability 0\.33333333\d+ -j KUBE-SEP-/);
    assert.match(rules, /-j DNAT --to-destination 10\.244\.1\.11:8080/);
    // One endpoint replaced: a partial sync of that one service port, and the old DNAT gone.
    const before = proxyLog.length;
    await apply([
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    await until('the partial sync', WAIT, () =>
      /"msg":"partial sync"[^\n]*"changed":1,/.test(proxyLog.slice(before)),
    );
    const after = await save(nsA());
    assert.doesNotMatch(after, /--to-destination 10\.244\.1\.11:8080/);
    assert.doesNotMatch(proxyLog.slice(before), /"msg":"full sync"/);
  });

  it('keeps a SuperEdge unit rule: nodea reaches only the endpoints on nodes of its unit', async () => {
    await apply([
      service('grid', {}, { topologyKeys: '["unit"]' }),
      slice('grid-1', 'grid', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('grid');
    const answers = await until('only unit a answers', WAIT, async () => {
      const got = await sampleInNetns(nsA(), ip, 80, 12);
      return got.every((x) => x === '10.244.0.10') ? got : undefined;
    });
    assert.equal(answers.length, 12);
    // nodeb joins unit a: both endpoints now.
    await kubectl(['label', 'node', 'nodeb', 'unit=a', '--overwrite']);
    await until(
      'both answer after the relabel',
      WAIT,
      async () => new Set(await sampleInNetns(nsA(), ip, 80, 20)).size === 2,
    );
    await kubectl(['label', 'node', 'nodeb', 'unit=b', '--overwrite']);
  });

  it('refuses connections to a Service with no usable endpoints (REJECT), at once', async () => {
    await apply([service('empty'), slice('empty-1', 'empty', [])]);
    const ip = await clusterIP('empty');
    await until('refused', WAIT, async () =>
      (await sampleInNetns(nsA(), ip, 80, 3)).every((x) => x === 'refused'),
    );
    assert.match(await save(nsA()), /default\/empty:http has no endpoints.* -j REJECT/);
  });

  it('sticks a client to one endpoint with ClientIP affinity', async () => {
    await apply([
      service('sticky', { sessionAffinity: 'ClientIP' }),
      slice('sticky-1', 'sticky', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('sticky');
    const answers = await until('answers', WAIT, async () => {
      const got = await sampleInNetns(nsA(), ip, 80, 15);
      return got.every((x) => x.startsWith('10.244.')) ? got : undefined;
    });
    assert.equal(new Set(answers).size, 1, `one endpoint for one client: ${answers.join(',')}`);
    assert.match(await save(nsA()), /-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-/);
  });

  it('serves a NodePort with externalTrafficPolicy Local from this node’s endpoints only', async () => {
    await apply([
      service('np', { type: 'NodePort', externalTrafficPolicy: 'Local' }),
      slice('np-1', 'np', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    const port = Number(
      (await kubectl(['get', 'svc', 'np', '-o', 'jsonpath={.spec.ports[0].nodePort}'])).trim(),
    );
    const nodeA = layout.nodes[0]!.ip;
    const answers = await until('the node port answers', WAIT, async () => {
      const got = await sampleInNetns(nsB(), nodeA, port, 10);
      return got.every((x) => x.startsWith('10.244.')) ? got : undefined;
    });
    assert.deepEqual([...new Set(answers)], ['10.244.0.10']);
  });

  it('lets only loadBalancerSourceRanges reach a load-balancer IP, and accepts its health check node port', async () => {
    const [nodeA, nodeB] = [layout.nodes[0]!.ip, layout.nodes[1]!.ip];
    await apply([
      service('lb', {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        loadBalancerSourceRanges: [`${nodeB}/32`],
      }),
      slice('lb-1', 'lb', [['10.244.0.10', 'nodea']]),
    ]);
    // The load balancer's address is nodea's own, so traffic to it reaches nodea's rules.
    await kubectl([
      'patch',
      'svc',
      'lb',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: nodeA }] } } }),
    ]);
    const inRange = await until('the load-balancer IP answers nodeb', WAIT, async () => {
      const got = await sampleInNetns(nsB(), nodeA, 80, 3);
      return got.every((x) => x === '10.244.0.10') ? got : undefined;
    });
    assert.equal(inRange.length, 3);
    // From the hub (outside the ranges) the SYN is dropped: the client times out.
    assert.deepEqual(await sampleInNetns(layout.hub, nodeA, 80, 1), ['timeout']);
    const hc = (await kubectl(['get', 'svc', 'lb', '-o', 'jsonpath={.spec.healthCheckNodePort}'])).trim();
    // As iptables-save prints them (its own argument order).
    const rules = await save(nsA());
    const b = nodeB.replace(/\./g, '\\.');
    for (const re of [
      /-A KUBE-PROXY-FIREWALL -d \S+\/32 -p tcp -m comment --comment "default\/lb:http traffic not accepted by KUBE-FW-\w+" -m tcp --dport 80 -j DROP/,
      new RegExp(
        `-A KUBE-FW-\\w+ -s ${b}/32 -m comment --comment "default/lb:http loadbalancer IP" -j KUBE-EXT-`,
      ),
      /-A KUBE-FW-\w+ -m comment --comment "other traffic to default\/lb:http will be dropped by KUBE-PROXY-FIREWALL"\n/,
      /-A KUBE-SERVICES -d \S+\/32 -p tcp -m comment --comment "default\/lb:http loadbalancer IP" -m tcp --dport 80 -j KUBE-FW-/,
      new RegExp(
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "default/lb:http health check node port" -m tcp --dport ${hc} -j ACCEPT`,
      ),
    ])
      assert.match(rules, re);
  });

  it('moves a UDP flow that keeps its source port to the new endpoint (stale conntrack entries deleted)', async () => {
    const echo = inNs(nsB(), [process.execPath, '-e', UDP_ECHO, '10.244.1.10:5353', '10.244.1.11:5353']);
    children.push(echo);
    await started(echo, /listening/, 'UDP pods');
    const udpSlice = (ip: string) => ({
      ...slice('dns-1', 'dns', [[ip, 'nodeb']]),
      ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }],
    });
    await apply([
      { ...service('dns'), spec: { ports: [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 5353 }] } },
      udpSlice('10.244.1.10'),
    ]);
    const ip = await clusterIP('dns');
    const client = inNs(nsA(), [process.execPath, '-e', UDP_CLIENT, ip, '53']);
    children.push(client);
    let answers = '';
    client.stdout!.on('data', (d: Buffer) => (answers += d.toString()));
    await until('answers from .10', WAIT, () => answers.includes('10.244.1.10'));
    await apply([udpSlice('10.244.1.11')]);
    const mark = answers.length;
    await until('the same flow answered by .11', WAIT, () => answers.slice(mark).includes('10.244.1.11'));
    await new Promise((r) => setTimeout(r, 500));
    const tail = answers
      .slice(answers.lastIndexOf('10.244.1.11'))
      .split('\n')
      .filter((l) => l !== '');
    assert.ok(
      tail.every((l) => l === '10.244.1.11'),
      `after the switch only .11 answers: ${tail.join(',')}`,
    );
    assert.match(proxyLog, /"conntrackDeletes":[1-9]/);
    client.kill('SIGTERM');
  });

  it('--cleanup removes every KUBE- chain and the jumps to them', async () => {
    const proxy = proxyProc;
    proxy.kill('SIGTERM');
    await new Promise((r) => proxy.once('exit', r));
    assert.match(await save(nsA()), /KUBE-SERVICES/);
    const out = await run([ipPath(), 'netns', 'exec', nsA(), process.execPath, BIN, 'proxy', '--cleanup']);
    assert.match(out, /removed [1-9]\d* chains/);
    assert.doesNotMatch(await save(nsA()), /KUBE-/);
    // Again, and on a node that never had rules: nothing to do, and no error.
    for (const ns of [nsA(), nsB()]) {
      const again = await run([ipPath(), 'netns', 'exec', ns, process.execPath, BIN, 'proxy', '--cleanup']);
      assert.match(again, /removed 0 chains/);
    }
  });
});
