// `svcplane node`: simulated kubelets (as KWOK runs them), one or thousands per process. Flags → the
// nodes' names, labels and pod CIDRs → registerNodes (src/nodes/register.ts) → SimulatedKubelets
// (src/nodes/kubelets.ts) until SIGINT/SIGTERM. Works against any API server the kubeconfig names.
import { hostname } from 'node:os';
import { jsonLogger } from '../runtime/logger.js';
import { formatAddress, parseAddress } from '../core/allocator/cidr.js';
import { parseCidrList } from '../core/nodes/pod-cidrs.js';
import { SimulatedKubelets } from '../nodes/kubelets.js';
import { registerNodes, RegistrationError, type CidrSource } from '../nodes/register.js';
import { Client } from '../runtime/client.js';
import { firstLine, transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { UsageError, intFlag, commandFlags, noExtraArgs } from './flags.js';
import { BootstrapError } from '../nodes/tls-bootstrap.js';
import { bootstrapFlags, nodeIdentities, type NodeIdentities } from './node-bootstrap.js';
import { signalled } from './signals.js';

export const NODE_HELP = `Usage: svcplane node --name NAME [--count N] [flags]

Runs simulated kubelets: registers Nodes (capacity, allocatable with 110 pods, addresses, nodeInfo, the
kubelet's conditions, spec.podCIDRs), renews their Leases in kube-node-lease every 10 s, and runs the
pods bound to them: each gets an IP from its node's pod CIDR and reports Pending, then Running and
Ready (after its readinessProbe.initialDelaySeconds); a deleted pod is reported terminated, then
confirmed with a grace-0 DELETE. SIGINT/SIGTERM stop the kubelets and leave the nodes registered.

Examples:
  svcplane node --name node0 --pod-cidr 127.10.0.0/24 --serve-pods
  svcplane node --name edge --count 3 --labels zone=z1 --pod-cidr 127.10.0.0/16   edge-0..2, a /24 each
  svcplane node --name sim --count 1000                       ranges from --cluster-cidr 10.244.0.0/16

Flags:
  --name NAME                 the node name; with --count, the prefix of NAME-0..NAME-(N-1) (required)
  --count N                   how many nodes this process runs (default 1)
  --labels k=v,...            labels on every node (besides kubernetes.io/hostname, os and arch)
  --pod-cidr CIDR[,CIDR]      the node's pod range (one per family for dual-stack); with --count, node i
                              gets the i-th /--node-cidr-mask-size subnet of it
  --cluster-cidr CIDR[,CIDR]  without --pod-cidr: allocate each node a subnet of this range, after the
                              podCIDRs every other node has, as the node IPAM controller does
                              (default 10.244.0.0/16)
  --node-cidr-mask-size N     the per-node subnet size for the primary family (default /24 IPv4, /64
                              IPv6, smaller when --pod-cidr is too small for --count)
  --node-ip IP                node 0's InternalIP, node i's is IP+i (default 127.0.1.1)
  --max-pods N                allocatable pods per node (default 110)
  --serve-pods                answer HTTP on every container port of every running pod, on the pod's IP,
                              with an echo (pod name, namespace, node name, pod IP, client address); a
                              127.0.0.0/8 pod CIDR needs no root. A port another process holds is a
                              container that fails to start: CrashLoopBackOff, not Ready, retried
${kubeconfigFlagsHelp(28)}
  --bootstrap-kubeconfig FILE TLS bootstrapping, as a kubelet: each node gets its own client certificate
                              (CN=system:node:NAME, O=system:nodes) through a CertificateSigningRequest
                              made with FILE's identity, and does all its API traffic with it
  --cert-dir DIR              where each node keeps it: DIR/NAME/kubelet-client-current.pem, reused
                              while valid (default .svcplane/node-pki)
  --bootstrap-timeout D       how long to wait for a request to be issued (default 5m)
`;

const FLAGS = {
  ...KUBECONFIG_FLAGS,
  name: { type: 'string' },
  count: { type: 'string' },
  labels: { type: 'string' },
  'pod-cidr': { type: 'string' },
  'cluster-cidr': { type: 'string' },
  'node-cidr-mask-size': { type: 'string' },
  'node-ip': { type: 'string' },
  'max-pods': { type: 'string' },
  'serve-pods': { type: 'boolean' },
  'bootstrap-kubeconfig': { type: 'string' },
  'cert-dir': { type: 'string' },
  'bootstrap-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const DEFAULT_CLUSTER_CIDR = '10.244.0.0/16';
const DEFAULT_NODE_IP = '127.0.1.1';
/** Node names are DNS subdomains (RFC 1123), at most 253 characters. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function labelsFlag(raw: string | boolean | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined || raw === '') return out;
  for (const part of String(raw).split(',')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part.trim() : part.slice(0, eq).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (eq < 0 || !LABEL_KEY.test(key) || key.length > 316 || !LABEL_VALUE.test(value) || value.length > 63) {
      throw new UsageError(`--labels: ${JSON.stringify(part)} is not a valid key=value label`);
    }
    out[key] = value;
  }
  return out;
}

function names(base: string, count: number | undefined): string[] {
  const list = count === undefined ? [base] : Array.from({ length: count }, (_, i) => `${base}-${i}`);
  for (const n of list) {
    if (n.length > 253 || !SUBDOMAIN.test(n)) {
      throw new UsageError(
        `--name: ${JSON.stringify(n)} is not a valid node name (lower-case letters, digits, '-' and '.')`,
      );
    }
  }
  return list;
}

function nodeIPs(raw: string | boolean | undefined, count: number): (i: number) => string {
  const text = raw === undefined ? DEFAULT_NODE_IP : String(raw);
  const a = parseAddress(text);
  if (a === undefined) throw new UsageError(`--node-ip: ${JSON.stringify(text)} is not an IP address`);
  const limit = a.family === 'IPv4' ? 1n << 32n : 1n << 128n;
  if (a.value + BigInt(count) > limit)
    throw new UsageError(`--node-ip: ${text} + ${count} nodes runs past the address space`);
  return (i) => formatAddress({ family: a.family, value: a.value + BigInt(i) });
}

function cidrSource(values: Record<string, string | boolean | undefined>): CidrSource {
  const mask = intFlag('node-cidr-mask-size', values['node-cidr-mask-size'], 1);
  const podCidr = values['pod-cidr'];
  const clusterCidr = values['cluster-cidr'];
  if (podCidr !== undefined && clusterCidr !== undefined) {
    throw new UsageError('give --pod-cidr or --cluster-cidr, not both');
  }
  const flag = podCidr !== undefined ? 'pod-cidr' : 'cluster-cidr';
  const cidrs = parseCidrList(String(podCidr ?? clusterCidr ?? DEFAULT_CLUSTER_CIDR));
  if (typeof cidrs === 'string') throw new UsageError(`--${flag}: ${cidrs}`);
  if (mask !== undefined && mask > cidrs[0]!.bits) {
    throw new UsageError(`--node-cidr-mask-size: /${mask} is longer than an ${cidrs[0]!.family} address`);
  }
  return {
    kind: flag,
    cidrs,
    ...(mask === undefined ? {} : { maskSize: mask }),
  };
}

const span = (list: readonly string[]): string =>
  list.length <= 3 ? list.join(',') : `${list[0]},…,${list[list.length - 1]}`;

export async function nodeCommand(
  args: string[],
  out: (s: string) => void,
  version: string,
): Promise<number> {
  const flags = commandFlags(args, FLAGS, NODE_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  const base = values['name'];
  if (typeof base !== 'string' || base === '') throw new UsageError('--name is required');
  const count = intFlag('count', values['count'], 1);
  const nodeNames = names(base, count);
  const labels = labelsFlag(values['labels']);
  const cidrs = cidrSource(values);
  const internalIP = nodeIPs(values['node-ip'], nodeNames.length);
  const maxPods = intFlag('max-pods', values['max-pods'], 1);
  const bootstrap = bootstrapFlags(values);
  const transport =
    bootstrap === undefined ? transportFromFlags(values, (message) => new UsageError(message)) : undefined;
  const log = jsonLogger(undefined, 'node');
  let kubelets: SimulatedKubelets[] = [];
  let identities: NodeIdentities | undefined;
  try {
    let client: Client;
    let clientFor: ((name: string) => Client) | undefined;
    if (bootstrap === undefined) client = new Client(transport!);
    else {
      identities = await nodeIdentities(bootstrap, nodeNames, log);
      const own = identities.clients;
      clientFor = (name) => own.get(name)!;
      client = clientFor(nodeNames[0]!);
    }
    const registered = await registerNodes({
      client,
      ...(clientFor === undefined ? {} : { clientFor }),
      names: nodeNames,
      labels,
      cidrs,
      internalIP,
      version: `v1.33.0-svcplane.${version}`,
      ...(maxPods === undefined ? {} : { maxPods }),
      nowMs: Date.now,
      process: `${hostname()}/${process.pid}`,
      processGone: (holder) => {
        const m = /^(.*)\/(\d+)$/.exec(holder);
        if (m === null || m[1] !== hostname()) return false;
        try {
          process.kill(Number(m[2]), 0);
          return false;
        } catch (err) {
          return (err as NodeJS.ErrnoException).code === 'ESRCH';
        }
      },
    });
    const servePods = values['serve-pods'] === true;
    // With their own identities, each node watches and writes as itself (its pods by
    // spec.nodeName=NAME, as a kubelet); with one identity, one informer serves all of them.
    kubelets =
      clientFor === undefined
        ? [new SimulatedKubelets({ client, nodes: registered, servePods, log })]
        : registered.map(
            (reg) => new SimulatedKubelets({ client: clientFor(reg.name), nodes: [reg], servePods, log }),
          );
    await Promise.all(kubelets.map((k) => k.start()));
    const cidrText =
      registered.length === 1
        ? registered[0]!.podCIDRs.join(',')
        : span(registered.map((r) => r.podCIDRs.join(',')));
    out(
      `svcplane: ${registered.length === 1 ? 'node' : `${registered.length} nodes`} ${span(nodeNames)} running, pod CIDRs ${cidrText}`,
    );
  } catch (err) {
    await Promise.all(kubelets.map((k) => k.stop()));
    transport?.close();
    identities?.close();
    if (err instanceof RegistrationError || err instanceof BootstrapError) throw err;
    // The API's own message or the connection's, on one line.
    throw new Error(
      `cannot register ${nodeNames.length === 1 ? `node "${nodeNames[0]}"` : 'the nodes'}: ${firstLine(err)}`,
      {
        cause: err,
      },
    );
  }
  await signalled();
  // Like a kubelet that is stopped: no more heartbeats; the Nodes and Leases stay, and the node
  // lifecycle controller notices the silence.
  await Promise.all(kubelets.map((k) => k.stop()));
  transport?.close();
  identities?.close();
  return 0;
}
