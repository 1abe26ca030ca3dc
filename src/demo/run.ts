// Starts the demo's cluster (one `svcplane up`, and per node a simulated kubelet, a wrapper and a proxy),
// runs the scenario against it, and stops everything in reverse order.
//
// Two layouts:
// - netns (root): this process runs in the hub namespace of a layout the caller made (demo-command.ts);
//   the API server listens on the hub's bridge address, and each node's processes run in its own
//   namespace, where its pods answer on their IPs and its proxy writes nftables or iptables rules.
// - userspace (no root): everything on loopback; pods on 127.P.N.x, and each node's proxy listens for
//   a cluster IP at the address with the same host bits in its own 127.(S+N).0.0/16. P and S are the
//   first blocks nobody listens in (10 and 20 on a quiet machine; core/demo/loopback.ts).
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { chooseLoopbackBlocks, parseProcNetTcp, type Listener } from '../core/demo/loopback.js';
import type { NodeRules } from '../core/demo/node-rules.js';
import { listenAddress } from '../core/proxy/listen.js';
import { NFT_TABLE } from '../core/proxy/nftables.js';
import { Client } from '../runtime/client.js';
import { makeDirs } from '../storage/make-dirs.js';
import { kubeconfigTransport } from '../runtime/kubeconfig.js';
import { ipPath } from './netns.js';
import { Proc, stopAll } from './processes.js';
import { sample, sampleInNetns } from './probe.js';
import { Scenario, UNIT_KEY, ZONE_KEY, type DemoNode } from './scenario.js';

export const SERVICE_CIDR = '10.96.0.0/16';

export const DEMO_NODES: readonly DemoNode[] = [
  { name: 'node0', unit: 'nodeunit1', zone: 'zone-a' },
  { name: 'node1', unit: 'nodeunit2', zone: 'zone-b' },
  { name: 'node2', unit: 'nodeunit2', zone: 'zone-b' },
];

/** Where each node lives in the netns layout (from demo-command's createLayout). */
export interface NetnsPlacement {
  readonly hub: string;
  readonly hubIP: string;
  readonly nodes: ReadonlyArray<{ name: string; netns: string; ip: string; podCIDR: string }>;
}

export interface RunOptions {
  /** bin/svcplane.js. */
  readonly bin: string;
  readonly dataDir: string;
  readonly keep: boolean;
  readonly out: (s: string) => void;
  readonly netns?: NetnsPlacement;
  /** The proxies' --proxy-mode: a kernel mode with `netns`, userspace without. */
  readonly proxyMode: 'nftables' | 'iptables' | 'userspace';
  /** Kernel modes: reads what the rules in a node's namespace do with a cluster IP and port. */
  readonly readRules?: (netns: string, ip: string, port: number) => Promise<NodeRules>;
  readonly timeoutMs: number;
  /** Resolves when the user asks to stop (Ctrl-C). */
  readonly stopped: Promise<void>;
  /** The processes started, for the caller to stop on an interrupt (runDemo stops them when it ends). */
  readonly procs: Proc[];
}

/** What each node's proxy writes, by mode (userspace runs on loopback only, kernel modes in namespaces). */
const RULES = {
  nftables: `nftables rules (its table ip ${NFT_TABLE})`,
  iptables: 'iptables rules (KUBE-* chains)',
  userspace: 'no rules (it forwards in its process)',
} as const;

/** Userspace listeners take Service port + this: binding port 80 needs root. */
const PORT_OFFSET = 10_000;
/** The port the demo's echo pods listen on, and the ones its proxies take: its Services' 80, `kubernetes`' 443. */
const POD_PORT = 8080;
const STAND_IN_PORTS = [80 + PORT_OFFSET, 443 + PORT_OFFSET];

/** The TCP listeners on this machine's loopback, from /proc/net (none where it cannot be read). */
function listeners(): Listener[] {
  const le = endianness() === 'LE';
  const read = (file: string, family: 4 | 6): Listener[] => {
    try {
      return parseProcNetTcp(readFileSync(file, 'utf8'), family, le);
    } catch {
      return [];
    }
  };
  return [...read('/proc/net/tcp', 4), ...read('/proc/net/tcp6', 6)];
}

/** Userspace mode: the pod block and the first stand-in block, free of other listeners. */
const loopbackBlocks = (): ReturnType<typeof chooseLoopbackBlocks> =>
  chooseLoopbackBlocks(listeners(), {
    nodes: DEMO_NODES.length,
    ports: [POD_PORT, ...STAND_IN_PORTS],
    podBlocks: [10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
    firstStandIn: 20,
  });

export async function runDemo(o: RunOptions): Promise<number> {
  const logs = join(o.dataDir, 'logs');
  makeDirs(logs);
  const procs = o.procs;
  const place = (name: string) => o.netns?.nodes.find((n) => n.name === name);
  const start = (name: string, node: string | undefined, args: string[]): Proc => {
    const ns = node === undefined ? undefined : place(node)?.netns;
    const p = new Proc(
      name,
      [...(ns === undefined ? [] : [ipPath(), 'netns', 'exec', ns]), process.execPath, o.bin, ...args],
      logs,
    );
    procs.push(p);
    return p;
  };
  const mode = o.proxyMode;
  const choice = o.netns === undefined ? loopbackBlocks() : undefined;
  if (choice !== undefined && 'conflict' in choice) {
    o.out(
      `svcplane demo: ${choice.conflict}. Stop what listens there, or run the demo as root (netns mode).`,
    );
    return 1;
  }
  const blocks = choice;
  const userspaceCidr = (i: number): string => `127.${blocks!.standIns + i}.0.0/16`;
  try {
    o.out(
      o.netns === undefined
        ? "svcplane demo: userspace mode, no root needed: every node shares this machine's loopback, and its proxy\n" +
            '  forwards in userspace.' +
            '\n' +
            `  Pods answer on 127.${blocks!.pods}.N.x (node N). A node reaches a cluster IP at a loopback stand-in with\n` +
            '  the same host bits, on the Service port + 10000 (binding port 80 needs root); the stand-ins are shown below.'
        : `svcplane demo: three network namespaces (${o.netns.nodes.map((n) => n.netns).join(', ')}), one per node; ` +
            `pods answer on their IPs inside them, and each proxy writes ${RULES[mode]} there.`,
    );
    const up = start('up', undefined, [
      'up',
      '--data-dir',
      join(o.dataDir, 'server'),
      '--bind-address',
      o.netns?.hubIP ?? '127.0.0.1',
      '--secure-port',
      o.netns === undefined ? '0' : '6443',
      '--service-cluster-ip-range',
      SERVICE_CIDR,
    ]);
    const ready = await up.waitFor(/ready at (\S+); kubeconfig: (\S+)/, 90_000);
    const kubeconfig = ready[2]!;
    o.out(`  API server ${ready[1]!}; kubeconfig ${kubeconfig}`);

    const nodeProcs = DEMO_NODES.map((n, i) =>
      start(n.name, n.name, [
        'node',
        '--kubeconfig',
        kubeconfig,
        '--name',
        n.name,
        '--labels',
        `${UNIT_KEY}=${n.unit},${ZONE_KEY}=${n.zone}`,
        '--pod-cidr',
        place(n.name)?.podCIDR ?? `127.${blocks!.pods}.${i}.0/24`,
        '--node-ip',
        place(n.name)?.ip ?? `127.0.1.${i + 1}`,
        '--serve-pods',
        // The checkpoints stay with the demo's data, not in the working directory (which a user who is
        // not root may not be able to write).
        '--root-dir',
        join(o.dataDir, 'nodes'),
      ]),
    );
    for (const p of nodeProcs) await p.waitFor(/running/, 60_000);
    const wrappers = DEMO_NODES.map((n) =>
      start(`wrapper-${n.name}`, n.name, [
        'wrapper',
        '--kubeconfig',
        kubeconfig,
        '--hostname',
        n.name,
        '--data-dir',
        join(o.dataDir, `wrapper-${n.name}`),
        '--bind-address',
        o.netns === undefined ? '127.0.0.1:0' : '127.0.0.1:51006',
      ]),
    );
    const wrapperKubeconfigs: string[] = [];
    for (const w of wrappers) wrapperKubeconfigs.push((await w.waitFor(/kubeconfig: (\S+)/, 60_000))[1]!);
    const proxies = DEMO_NODES.map((n, i) =>
      start(`proxy-${n.name}`, n.name, [
        'proxy',
        '--kubeconfig',
        wrapperKubeconfigs[i]!,
        '--hostname-override',
        n.name,
        '--proxy-mode',
        mode,
        ...(o.netns === undefined
          ? ['--userspace-cidr', userspaceCidr(i), '--userspace-port-offset', String(PORT_OFFSET)]
          : []),
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--healthz-bind-address',
        '127.0.0.1:0',
      ]),
    );
    for (const p of proxies) await p.waitFor(/in sync/, 60_000);
    o.out(`  per node: a simulated kubelet, a wrapper, and a proxy in ${mode} mode (logs in ${logs})`);

    const transport = kubeconfigTransport({ path: kubeconfig });
    const scenario = new Scenario({
      client: new Client(transport),
      nodes: DEMO_NODES,
      ...(o.readRules === undefined || o.netns === undefined
        ? {}
        : {
            rules: {
              title: `RULES (${mode})`,
              read: (n: DemoNode, ip: string, port: number) => o.readRules!(place(n.name)!.netns, ip, port),
            },
          }),
      out: o.out,
      timeoutMs: o.timeoutMs,
      reach: (n, ip, port) =>
        o.netns === undefined
          ? { host: listenAddress(ip, userspaceCidr(DEMO_NODES.indexOf(n))) ?? ip, port: port + PORT_OFFSET }
          : { host: ip, port },
      probe: (n, ip, port, count) => {
        const p = place(n.name);
        return p === undefined ? sample(ip, port, count) : sampleInNetns(p.netns, ip, port, count);
      },
    });
    try {
      await scenario.run();
    } finally {
      transport.close();
    }
    // A "refused" row proves nothing if the proxy behind it died: every component must still run.
    const dead = procs.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    for (const p of dead) o.out(`svcplane demo: ${p.name} exited during the run (see ${logs}/${p.name}.log)`);
    scenario.failures += dead.length;
    o.out(
      scenario.failures === 0
        ? '\nsvcplane demo: every node reached exactly the endpoints its topology allows.'
        : `\nsvcplane demo: ${scenario.failures} table(s) did not match the topology rules' expectations (logs in ${logs})`,
    );
    if (o.keep) {
      const kc =
        o.netns === undefined
          ? `kubectl --kubeconfig ${kubeconfig}`
          : `ip netns exec ${o.netns.hub} kubectl --kubeconfig ${kubeconfig}`;
      const node0 = o.netns?.nodes[0]?.netns;
      const rules =
        node0 === undefined
          ? ''
          : `\n  ip netns exec ${node0} ${mode === 'nftables' ? `nft list table ip ${NFT_TABLE}` : 'iptables-save -t nat'}`;
      o.out(
        `\n--keep: the cluster keeps running until Ctrl-C. Try:\n  ${kc} get nodes,svc,endpointslices${rules}`,
      );
      await o.stopped;
    }
    return scenario.failures === 0 ? 0 : 1;
  } finally {
    await stopAll(procs);
  }
}
