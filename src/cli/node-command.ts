// `svcplane node`: simulated kubelets (as KWOK runs them), one or thousands per process. Flags → the
// nodes' names, labels and pod CIDRs → registerNodes (src/nodes/register.ts) → SimulatedKubelets
// (src/nodes/kubelets.ts) and the kubelet API (node-kubelet-api.ts) until SIGINT/SIGTERM. Works against
// any API server the kubeconfig names.
//
// When the API server cannot be reached and every node has a checkpoint under --root-dir, the nodes
// start OFFLINE from it: their pods run, their kubelet API answers, and registration is retried (every
// 250 ms, doubling to 5 s) until it works; then the kubelets report to the API as after a normal start.
import { hostname } from 'node:os';
import { jsonLogger } from '../runtime/logger.js';
import { formatAddress, parseAddress } from '../core/allocator/cidr.js';
import { parseCidrList } from '../core/nodes/pod-cidrs.js';
import { SimulatedKubelets, type KubeletNode } from '../nodes/kubelets.js';
import { registerNodes, RegistrationError, type CidrSource, type RegisteredNode } from '../nodes/register.js';
import { Client } from '../runtime/client.js';
import { firstLine, transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { UsageError, intFlag, commandFlags, noExtraArgs } from './flags.js';
import { BootstrapError } from '../nodes/tls-bootstrap.js';
import { bootstrapFlags, nodeIdentities, type NodeIdentities } from './node-bootstrap.js';
import { CheckpointError, type NodeCheckpoint } from '../core/nodes/checkpoint.js';
import { POD_IP_ON_RESTART, type PodIPOnRestart } from '../core/nodes/pod-ip-restart.js';
import { DEFAULT_ROOT_DIR, readCheckpoint } from '../nodes/checkpoint-store.js';
import type { KubeletServer } from '../nodes/kubelet-server.js';
import { isApiError } from '../runtime/client.js';
import {
  KUBELET_API_FLAGS,
  KubeletApiError,
  kubeletApiFlags,
  kubeconfigCA,
  startKubeletApis,
  type KubeletApiSettings,
} from './node-kubelet-api.js';
import { signalled } from './signals.js';

export const NODE_HELP = `Usage: svcplane node --name NAME [--count N] [flags]

Runs simulated kubelets: registers Nodes (capacity, allocatable with 110 pods, addresses, nodeInfo, the
kubelet's conditions, spec.podCIDRs), renews their Leases in kube-node-lease every 10 s, and runs the
pods bound to them: each gets an IP from its node's pod CIDR and reports Pending, then Running and
Ready (after its readinessProbe.initialDelaySeconds); a deleted pod is reported terminated, then
confirmed with a grace-0 DELETE. SIGINT/SIGTERM stop the kubelets and leave the nodes registered.
Each node keeps a checkpoint of its pods under --root-dir, from which it starts offline when the API
server cannot be reached, and serves the kubelet's read API (GET /pods) on its InternalIP.

Examples:
  svcplane node --name node0 --pod-cidr 127.10.0.0/24 --serve-pods
  svcplane node --name edge --count 3 --labels zone=z1 --pod-cidr 127.10.0.0/16   edge-0..2, a /24 each
  svcplane node --name sim --count 1000                       ranges from --cluster-cidr 10.244.0.0/16
  svcplane node --name edge --pod-cidr 127.10.0.0/24 --serve-pods --pod-ip-on-restart new

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
  --root-dir DIR              each node's checkpoint (its pods, their status and IPs, its IP pool
                              position), kept API and serving certificate: DIR/NAME/ (default
                              .svcplane/node). When the API server cannot be reached and every node has
                              a checkpoint, the nodes start offline from it and register once it answers
  --pod-ip-on-restart MODE    keep (default): pods keep their IPs across a restart of this process;
                              new: every running pod gets a new IP from the pool on each start (a CNI that
                              does not keep addresses), reported upstream as soon as the API answers
  --kubelet-port P            the kubelet API (GET /pods, /healthz) over HTTPS on each node's InternalIP
                              (default 10250; 0 turns it off)
  --tls-cert-file FILE        its serving certificate (with --tls-private-key-file); default: a
  --tls-private-key-file FILE self-signed one per node in DIR/NAME/pki (kubelet-ca.crt is its CA)
  --client-ca-file FILE       client certificates signed by this CA authenticate (default: the CA of the
                              kubeconfig's cluster); bearer tokens are checked with a TokenReview
  --authorization-mode MODE   Webhook (default: a SubjectAccessReview for get nodes/proxy) or AlwaysAllow.
                              Offline, the last allowed decision (at most 24 h old) is used
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
  'root-dir': { type: 'string' },
  'pod-ip-on-restart': { type: 'string' },
  ...KUBELET_API_FLAGS,
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

/** The nodes' checkpoints, and the first one that could not be read (by node). */
function readCheckpoints(rootDir: string, names: readonly string[]) {
  const found = new Map<string, NodeCheckpoint>();
  let corrupt: CheckpointError | undefined;
  for (const name of names) {
    try {
      const cp = readCheckpoint(rootDir, name);
      if (cp !== undefined) found.set(name, cp);
    } catch (err) {
      if (!(err instanceof CheckpointError)) throw err;
      corrupt ??= err;
    }
  }
  return { found, corrupt };
}

/** Whether a failed registration means the API server cannot be reached (rather than a refusal). */
const unreachable = (err: unknown): boolean =>
  !(err instanceof RegistrationError) &&
  !(err instanceof BootstrapError) &&
  (!isApiError(err) || err.code >= 500);

const processGone = (holder: string): boolean => {
  const m = /^(.*)\/(\d+)$/.exec(holder);
  if (m === null || m[1] !== hostname()) return false;
  try {
    process.kill(Number(m[2]), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
};

function podIPOnRestartFlag(raw: string | boolean | undefined): PodIPOnRestart {
  if (raw === undefined) return 'keep';
  const v = String(raw);
  if (!(POD_IP_ON_RESTART as readonly string[]).includes(v))
    throw new UsageError(`--pod-ip-on-restart: ${JSON.stringify(v)} is not keep or new`);
  return v as PodIPOnRestart;
}

/** Retries registration until it works: 250 ms, doubling to 5 s, so a returning API server is seen quickly. */
async function registerWhenReachable(
  register: () => Promise<RegisteredNode[]>,
  stopped: () => boolean,
): Promise<RegisteredNode[] | undefined> {
  let delay = 250;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (stopped()) return undefined;
    try {
      return await register();
    } catch (err) {
      if (!unreachable(err)) throw err;
      delay = Math.min(delay * 2, 5000);
    }
  }
}

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
  const rootDirFlag = values['root-dir'];
  if (rootDirFlag !== undefined && (typeof rootDirFlag !== 'string' || rootDirFlag === ''))
    throw new UsageError('--root-dir: must name a directory');
  const rootDir = typeof rootDirFlag === 'string' ? rootDirFlag : DEFAULT_ROOT_DIR;
  const podIPOnRestart = podIPOnRestartFlag(values['pod-ip-on-restart']);
  const api: KubeletApiSettings = kubeletApiFlags(values);
  const bootstrap = bootstrapFlags(values);
  const transport =
    bootstrap === undefined ? transportFromFlags(values, (message) => new UsageError(message)) : undefined;
  const log = jsonLogger(undefined, 'node');
  const { found: checkpoints, corrupt } = readCheckpoints(rootDir, nodeNames);
  let kubelets: SimulatedKubelets[] = [];
  let servers: KubeletServer[] = [];
  let identities: NodeIdentities | undefined;
  let stopping = false;
  const closeAll = async (): Promise<void> => {
    stopping = true;
    await Promise.all(servers.map((x) => x.close()));
    await Promise.all(kubelets.map((k) => k.stop()));
    transport?.close();
    identities?.close();
  };
  let reconnect: Promise<void> | undefined;
  try {
    let client: Client;
    let clientFor: ((name: string) => Client) | undefined;
    if (bootstrap === undefined) client = new Client(transport!);
    else {
      // Certificates kept in --cert-dir need no API server; a node without one does.
      identities = await nodeIdentities(bootstrap, nodeNames, log);
      const own = identities.clients;
      clientFor = (name) => own.get(name)!;
      client = clientFor(nodeNames[0]!);
    }
    const register = (): Promise<RegisteredNode[]> =>
      registerNodes({
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
        processGone,
      });
    let registered: RegisteredNode[] | undefined;
    let offlineWhy: unknown;
    try {
      registered = await register();
    } catch (err) {
      if (!unreachable(err) || (corrupt === undefined && checkpoints.size < nodeNames.length)) throw err;
      // The node runs from its checkpoint, which must be whole.
      if (corrupt !== undefined)
        throw new CheckpointError(
          `${corrupt.message}; the API server cannot be reached either (${firstLine(err)}), so the node cannot start`,
          { cause: err },
        );
      offlineWhy = err;
    }
    // The API server answers: it is the truth, and a checkpoint that cannot be read is only a warning.
    if (registered !== undefined && corrupt !== undefined)
      log.warn('ignoring a node checkpoint that cannot be read; the API server has the pods', {
        problem: corrupt.message,
      });
    const nodes: KubeletNode[] =
      registered ??
      nodeNames.map((name, index) => ({
        name,
        index,
        podCIDRs: checkpoints.get(name)!.podCIDRs,
        internalIP: internalIP(index),
      }));
    const servePods = values['serve-pods'] === true;
    const common = { servePods, log, rootDir, checkpoints, podIPOnRestart };
    // With their own identities, each node watches and writes as itself (its pods by
    // spec.nodeName=NAME, as a kubelet); with one identity, one informer serves all of them.
    kubelets =
      clientFor === undefined
        ? [new SimulatedKubelets({ client, nodes, ...common })]
        : nodes.map((n) => new SimulatedKubelets({ client: clientFor(n.name), nodes: [n], ...common }));
    const kubeletOf = (name: string): SimulatedKubelets =>
      kubelets.length === 1 ? kubelets[0]! : kubelets[nodes.findIndex((n) => n.name === name)]!;
    const startOnline = (regs: readonly RegisteredNode[]): Promise<unknown> =>
      Promise.all(
        kubelets.map((k, i) =>
          k.start(kubelets.length === 1 ? regs : regs.filter((r) => r.name === nodes[i]!.name)),
        ),
      );
    if (registered !== undefined) await startOnline(registered);
    else for (const k of kubelets) k.startOffline();
    if (api.port !== undefined) {
      const ca =
        api.clientCAPem ??
        (await kubeconfigCA(
          bootstrap?.kubeconfig ??
            (typeof values['kubeconfig'] === 'string' ? values['kubeconfig'] : undefined),
          typeof values['context'] === 'string' && values['context'] !== '' ? values['context'] : undefined,
        ).catch((err: unknown) => {
          log.warn('no client CA for the kubelet API: the kubeconfig names none that can be read', {
            err: firstLine(err),
          });
          return undefined;
        }));
      servers = await startKubeletApis(
        { ...api, port: api.port },
        nodes.map((n) => ({
          name: n.name,
          internalIP: n.internalIP,
          client: clientFor?.(n.name) ?? client,
          pods: () => kubeletOf(n.name).podsOf(n.name),
        })),
        rootDir,
        ca,
        log,
      );
    }
    const cidrText =
      nodes.length === 1 ? nodes[0]!.podCIDRs.join(',') : span(nodes.map((r) => r.podCIDRs.join(',')));
    const what = `${nodes.length === 1 ? 'node' : `${nodes.length} nodes`} ${span(nodeNames)}`;
    if (registered !== undefined) out(`svcplane: ${what} running, pod CIDRs ${cidrText}`);
    else {
      out(`svcplane: ${what} running offline from the checkpoint in ${rootDir}, pod CIDRs ${cidrText}`);
      log.warn(
        'the API server cannot be reached; the nodes run from their checkpoints and register once it answers',
        {
          err: firstLine(offlineWhy),
        },
      );
      reconnect = registerWhenReachable(register, () => stopping).then(async (regs) => {
        if (regs === undefined) return;
        await startOnline(regs);
        log.info('the API server answers again; the nodes are registered and report their pods', {
          nodes: span(nodeNames),
        });
      });
    }
  } catch (err) {
    await closeAll();
    if (
      err instanceof RegistrationError ||
      err instanceof BootstrapError ||
      err instanceof CheckpointError ||
      err instanceof KubeletApiError
    )
      throw err;
    // The API's own message or the connection's, on one line.
    throw new Error(
      `cannot register ${nodeNames.length === 1 ? `node "${nodeNames[0]}"` : 'the nodes'}: ${firstLine(err)}`,
      {
        cause: err,
      },
    );
  }
  // A registration refused after an offline start (a live node took the name meanwhile) ends the process.
  let failure: unknown;
  const never = new Promise<void>(() => {});
  await Promise.race([
    signalled(),
    reconnect?.then(
      () => never,
      (err: unknown) => void (failure = err),
    ) ?? never,
  ]);
  // Like a kubelet that is stopped: no more heartbeats; the Nodes and Leases stay, and the node
  // lifecycle controller notices the silence.
  await closeAll();
  if (failure !== undefined) {
    if (failure instanceof RegistrationError) throw failure;
    throw new Error(`cannot register the nodes after starting offline: ${firstLine(failure)}`, {
      cause: failure,
    });
  }
  return 0;
}
