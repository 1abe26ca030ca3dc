// The cluster the kernel proxy modes' end-to-end tests run against, as root, in network namespaces they
// create and always remove: `svcplane up` in the hub, two node namespaces (nodea, nodeb) with echo "pods"
// listening on their IPs (nodea: 10.244.0.10; nodeb: 10.244.1.10 and .11, port 8080), the Nodes
// registered (labels unit=a, unit=b), and `svcplane proxy` started in a node's namespace on demand, reading
// the API server directly (so the topology engine runs in the proxy). Nothing touches the root namespace.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLayout, ipPath, type NetnsLayout } from '../../../src/demo/netns.js';
import { KUBECTL } from './kubectl.js';
import { logOnFailure } from './server.js';
import { until } from './until.js';

const BIN = new URL('../../../bin/svcplane.js', import.meta.url).pathname;
export const WAIT = 30_000;

/** An HTTP server answering "node name: <its IP>" on each IP:port it is given (the demo probe parses it). */
export const ECHO = `
const http = require('node:http');
for (const hp of process.argv.slice(1)) {
  const at = hp.lastIndexOf(':');
  const host = hp.slice(0, at);
  http.createServer((req, res) => res.end('node name: ' + host + '\\n')).listen(Number(hp.slice(at + 1)), host);
}
process.stdout.write('listening\\n');
`;

/** A UDP server answering each datagram with its own IP, on each IPv4:port it is given. */
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

/** A UDP client that keeps one source port and sends every 50 ms, printing each answer on a line. */
const UDP_CLIENT = `
const dgram = require('node:dgram');
const [host, port] = process.argv.slice(1);
const s = dgram.createSocket('udp4');
s.on('message', (m) => process.stdout.write(m.toString() + '\\n'));
s.bind(40053, () => setInterval(() => s.send('hi', Number(port), host), 50));
`;

/** Runs argv (no shell) with `stdin`; resolves with stdout, rejects with stderr. */
export function run(argv: readonly string[], stdin?: string): Promise<string> {
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

/** Resolves with the first group of `re` (or the whole match) once the child's stdout matches it. */
export function started(child: ChildProcess, re: RegExp, what: string): Promise<string> {
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

/** A `svcplane proxy` running in a node's namespace. */
export interface ProxyProcess {
  readonly proc: ChildProcess;
  /** Its stderr (JSON log lines) so far. */
  log(): string;
  /** SIGTERM, and its exit. */
  stop(): Promise<void>;
}

/** [IP, node name, ready (default true)]. */
export type SliceEndpoint = readonly [string, string, boolean?];

export interface ProxyCluster {
  readonly layout: NetnsLayout;
  readonly nsA: string;
  readonly nsB: string;
  kubectl(args: string[], stdin?: string): Promise<string>;
  apply(objs: unknown[]): Promise<string>;
  /** `kubectl get svc NAME -o jsonpath=PATH`, trimmed. */
  svcField(name: string, jsonpath: string): Promise<string>;
  /** Spawns argv inside `ns`; stopped by close(). */
  inNs(ns: string, argv: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** `svcplane proxy --kubeconfig … --hostname-override NODE ARGS` in `ns`, resolved once in sync. */
  startProxy(ns: string, node: string, args: string[], env?: NodeJS.ProcessEnv): Promise<ProxyProcess>;
  /** `svcplane ARGS` run to its end inside `ns`: its stdout. */
  svcplane(ns: string, args: string[]): Promise<string>;
  close(): Promise<void>;
}

/** A Service `NAME` in default with port http 80 → 8080 and `spec` merged in. */
export const service = (
  name: string,
  spec: Record<string, unknown> = {},
  annotations: Record<string, string> = {},
) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', annotations },
  spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
});

/** An EndpointSlice of Service `svc` with port http 8080/TCP (IPv6 when its first address is). */
export const slice = (name: string, svc: string, eps: readonly SliceEndpoint[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
  addressType: eps[0]?.[0].includes(':') === true ? 'IPv6' : 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: eps.map(([ip, nodeName, ready]) => ({
    addresses: [ip],
    nodeName,
    conditions: { ready: ready ?? true },
  })),
});

/**
 * Creates the namespaces, starts `svcplane up` in the hub (Service range `serviceCIDRs`, default
 * 10.96.0.0/16), the echo pods and the Nodes. On failure everything made so far is removed.
 */
export async function startProxyCluster(o: { serviceCIDRs?: string } = {}): Promise<ProxyCluster> {
  assert.equal(
    process.getuid?.(),
    0,
    'this test needs root (network namespaces, iptables, nft): run it as root',
  );
  const work = mkdtempSync(path.join(tmpdir(), 'svcplane-proxy-netns-'));
  const children: ChildProcess[] = [];
  const layout = await createLayout({
    prefix: `svp${Math.random().toString(16).slice(2, 7)}`,
    nodes: [
      { name: 'nodea', podCIDR: '10.244.0.0/24' },
      { name: 'nodeb', podCIDR: '10.244.1.0/24' },
    ],
    serviceCIDR: '10.96.0.0/16',
  });
  const close = async (): Promise<void> => {
    for (const c of children.reverse()) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await layout.killProcesses();
    await layout.remove();
    rmSync(work, { recursive: true, force: true });
  };
  const inNs = (ns: string, argv: string[], env?: NodeJS.ProcessEnv): ChildProcess => {
    const child = spawn(ipPath(), ['netns', 'exec', ns, ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env === undefined ? {} : { env }),
    });
    children.push(child);
    return child;
  };
  try {
    const up = inNs(layout.hub, [
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
      o.serviceCIDRs ?? '10.96.0.0/16',
    ]);
    const kubeconfig = await started(up, /kubeconfig: (\S+)/, 'svcplane up');
    const [nsA, nsB] = [layout.nodes[0]!.netns, layout.nodes[1]!.netns];
    const a = inNs(nsA, [process.execPath, '-e', ECHO, '10.244.0.10:8080']);
    const b = inNs(nsB, [process.execPath, '-e', ECHO, '10.244.1.10:8080', '10.244.1.11:8080']);
    await Promise.all([started(a, /listening/, 'pods on nodea'), started(b, /listening/, 'pods on nodeb')]);
    const kubectl = (args: string[], stdin?: string): Promise<string> =>
      run([ipPath(), 'netns', 'exec', layout.hub, KUBECTL, '--kubeconfig', kubeconfig, ...args], stdin);
    const apply = (objs: unknown[]): Promise<string> =>
      kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }));
    await apply([
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'nodea', labels: { unit: 'a' } } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'nodeb', labels: { unit: 'b' } } },
    ]);
    return {
      layout,
      nsA,
      nsB,
      kubectl,
      apply,
      svcField: async (name, jsonpath) =>
        (await kubectl(['get', 'svc', name, '-o', `jsonpath=${jsonpath}`])).trim(),
      inNs,
      async startProxy(ns, node, args, env) {
        const proc = inNs(
          ns,
          [
            process.execPath,
            BIN,
            'proxy',
            '--kubeconfig',
            kubeconfig,
            '--hostname-override',
            node,
            '--min-sync-period',
            '0s',
            '--metrics-bind-address',
            '127.0.0.1:0',
            '--healthz-bind-address',
            '127.0.0.1:0',
            ...args,
          ],
          env,
        );
        let log = '';
        proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        logOnFailure(`svcplane proxy in ${ns}`, () => log, exited);
        await started(proc, /in sync/, `svcplane proxy in ${ns}`);
        return {
          proc,
          log: () => log,
          stop: async () => {
            proc.kill('SIGTERM');
            await exited;
          },
        };
      },
      svcplane: (ns, args) => run([ipPath(), 'netns', 'exec', ns, process.execPath, BIN, ...args]),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * A UDP flow that keeps its source port follows its Service's endpoint from 10.244.1.10 to 10.244.1.11
 * (both on nodeb) once the proxy in nodea's namespace deletes the stale conntrack entry, as kube-proxy does.
 */
export async function udpFlowMoves(c: ProxyCluster, proxy: ProxyProcess): Promise<void> {
  const echo = c.inNs(c.nsB, [process.execPath, '-e', UDP_ECHO, '10.244.1.10:5353', '10.244.1.11:5353']);
  await started(echo, /listening/, 'UDP pods');
  const udpSlice = (ip: string) => ({
    ...slice('dns-1', 'dns', [[ip, 'nodeb']]),
    ports: [{ name: 'dns', port: 5353, protocol: 'UDP' }],
  });
  await c.apply([
    { ...service('dns'), spec: { ports: [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 5353 }] } },
    udpSlice('10.244.1.10'),
  ]);
  const ip = await c.svcField('dns', '{.spec.clusterIP}');
  const client = c.inNs(c.nsA, [process.execPath, '-e', UDP_CLIENT, ip, '53']);
  try {
    let answers = '';
    client.stdout!.on('data', (d: Buffer) => (answers += d.toString()));
    await until('answers from .10', WAIT, () => answers.includes('10.244.1.10'));
    await c.apply([udpSlice('10.244.1.11')]);
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
    assert.match(proxy.log(), /"conntrackDeletes":[1-9]/);
  } finally {
    client.kill('SIGTERM');
    echo.kill('SIGTERM');
  }
}
