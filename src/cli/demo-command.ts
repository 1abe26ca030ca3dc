// `svcplane demo`: flags → layout (network namespaces as root, loopback otherwise) → the demo's run.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createLayout, ipPath, type NetnsLayout } from '../demo/netns.js';
import { stopAll, type Proc } from '../demo/processes.js';
import { DEMO_NODES, SERVICE_CIDR, runDemo, type NetnsPlacement } from '../demo/run.js';
import { demoPlan, nftablesUsable, nodeRulesReader, type DemoProxyMode } from './demo-mode.js';
import { durationFlag, oneOf, commandFlags, noExtraArgs } from './flags.js';
import { ensureDataDir } from './serve.js';

export const DEMO_HELP = `Usage: svcplane demo [--keep] [--mode auto|netns|userspace] [--proxy-mode nftables|iptables|userspace]

Runs SuperEdge's service-group example and an ordered topologyKeys example on this machine, with real
traffic. It starts the all-in-one server
and three simulated nodes (node0 in unit nodeunit1; node1 and node2 in nodeunit2; each in a
topology.kubernetes.io/zone), a wrapper and a proxy per node, applies a DeploymentGrid and
ServiceGrid, and sends requests to the Service's cluster IP from every node, printing which nodes' pods
answered. Then it moves node0 to nodeunit2, and shows ordered topologyKeys without and with "*". It
exits 0 when every node reached exactly what its topology rules allow.

As root, every node is a network namespace the demo creates (and removes): the pods are echo servers on
their IPs inside it, and the proxy writes its rules there, in nftables mode where the kernel takes the
mode's table (nft is installed and accepts an ip table in a new namespace), else in iptables mode. Without
root, everything runs on loopback and the proxies run in userspace mode.

Flags:
  --mode auto|netns|userspace   default auto: netns as root, userspace otherwise
  --proxy-mode MODE             nftables or iptables (netns layout, root), or userspace (loopback layout);
                                default: nftables where the kernel takes it, else iptables, as root;
                                userspace otherwise
  --keep                        leave it running (until Ctrl-C), with a kubeconfig to explore
  --data-dir DIR                logs, the server's store and kubeconfigs (default: a new directory in $TMPDIR)
  --timeout DURATION            how long each step may take to converge (default 60s)
`;

const FLAGS = {
  mode: { type: 'string' },
  'proxy-mode': { type: 'string' },
  keep: { type: 'boolean' },
  'data-dir': { type: 'string' },
  timeout: { type: 'string' },
  inside: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;

/**
 * Resolves on the first SIGINT, SIGTERM or SIGHUP. The handler stays installed for the whole command, so a second
 * Ctrl-C while the demo stops its processes and removes its namespaces cannot cut that short.
 */
function interrupted(out: (s: string) => void): Promise<void> {
  return new Promise((resolve) => {
    let seen = false;
    const on = (): void => {
      if (seen) out('svcplane demo: still stopping; it removes what it started before it exits');
      seen = true;
      resolve();
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
    process.on('SIGHUP', on); // the terminal closed
  });
}

/** Runs the demo in this process; on an interrupt, stops what it started and returns 130. */
async function runHere(
  o: Omit<Parameters<typeof runDemo>[0], 'stopped' | 'procs'>,
  stopped: Promise<void>,
): Promise<number> {
  const procs: Proc[] = [];
  const run = runDemo({ ...o, stopped, procs });
  const first = await Promise.race([run.then((code) => ({ code })), stopped.then(() => undefined)]);
  if (first !== undefined) return first.code;
  if (o.keep) return await run.catch(() => 130);
  o.out('\nsvcplane demo: interrupted; stopping everything');
  await stopAll(procs);
  await run.catch(() => undefined);
  return 130;
}

export async function demoCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, DEMO_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  const root = process.getuid?.() === 0;
  const layoutFlag = oneOf('mode', values['mode'], ['auto', 'netns', 'userspace'] as const, 'auto');
  const proxyFlag =
    values['proxy-mode'] === undefined
      ? undefined
      : oneOf<DemoProxyMode>(
          'proxy-mode',
          values['proxy-mode'],
          ['nftables', 'iptables', 'userspace'],
          'nftables',
        );
  const plan = demoPlan(root, layoutFlag, proxyFlag);
  const timeoutMs = durationFlag('timeout', values['timeout'], 1000) ?? 60_000;
  const keep = values['keep'] === true;
  const dataDir =
    typeof values['data-dir'] === 'string'
      ? resolve(values['data-dir'])
      : mkdtempSync(join(tmpdir(), 'svcplane-demo-'));
  ensureDataDir(dataDir);
  const stopped = interrupted(out);

  // Inside the hub namespace of a layout the outer run made.
  if (typeof values['inside'] === 'string') {
    const placement = JSON.parse(readFileSync(values['inside'], 'utf8')) as NetnsPlacement;
    const proxyMode = plan.proxy === 'nftables' ? 'nftables' : 'iptables';
    const readRules = nodeRulesReader(proxyMode);
    return runHere(
      { bin: BIN, dataDir, keep, out, netns: placement, proxyMode, readRules, timeoutMs },
      stopped,
    );
  }
  if (plan.layout === 'userspace')
    return runHere({ bin: BIN, dataDir, keep, out, proxyMode: 'userspace', timeoutMs }, stopped);

  // As root: make the namespaces, run the demo inside the hub, and remove everything afterwards, however
  // the run ends (an interrupt included). Removing a namespace removes its interfaces and rules.
  const prefix = `svd${randomBytes(3).toString('hex').slice(0, 5)}`;
  let layout: NetnsLayout | undefined;
  try {
    layout = await createLayout({
      prefix,
      nodes: DEMO_NODES.map((n, i) => ({ name: n.name, podCIDR: `10.244.${i}.0/24` })),
      serviceCIDR: SERVICE_CIDR,
    });
    const placement: NetnsPlacement = {
      hub: layout.hub,
      hubIP: layout.hubIP,
      nodes: layout.nodes.map((n) => ({ name: n.name, netns: n.netns, ip: n.ip, podCIDR: n.podCIDR })),
    };
    let proxyMode = plan.proxy;
    if (proxyMode === 'kernel' || proxyMode === 'nftables') {
      const nft = await nftablesUsable(layout.nodes[0]!.netns);
      if (!nft.ok && proxyMode === 'nftables') {
        out(`svcplane demo: --proxy-mode nftables cannot run here: ${nft.reason}`);
        return 1;
      }
      if (!nft.ok)
        out(`svcplane demo: nftables mode cannot run here (${nft.reason}); the proxies use iptables mode`);
      proxyMode = nft.ok ? 'nftables' : 'iptables';
    }
    const file = join(dataDir, 'layout.json');
    writeFileSync(file, JSON.stringify(placement));
    const inner = spawn(
      ipPath(),
      [
        'netns',
        'exec',
        layout.hub,
        process.execPath,
        BIN,
        'demo',
        '--inside',
        file,
        '--proxy-mode',
        proxyMode,
        '--data-dir',
        dataDir,
        '--timeout',
        `${timeoutMs}ms`,
        ...(keep ? ['--keep'] : []),
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const exited = new Promise<number>((r) => inner.once('exit', (code, sig) => r(code ?? (sig ? 130 : 1))));
    void stopped.then(() => inner.kill('SIGTERM'));
    return await exited;
  } finally {
    if (layout !== undefined) {
      await layout.killProcesses();
      await layout.remove();
    }
  }
}
