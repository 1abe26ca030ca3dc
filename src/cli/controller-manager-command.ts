// `svcplane controller-manager`: svcplane's controllers against any Kubernetes API server, through a
// kubeconfig (kube-controller-manager's flag names). With --leader-elect, several copies campaign for
// one coordination.k8s.io Lease and only the holder runs the controllers.
import { jsonLogger } from '../runtime/logger.js';
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  MAX_MAX_ENDPOINTS_PER_SLICE,
} from '../core/endpointslices/endpointslices.js';
import { startMetricsServer } from '../controllers/metrics-server.js';
import {
  ControllerManager,
  KNOWN_CONTROLLERS,
  type ControllerName,
  type NodeLifecycleSettings,
  type PodGCSettings,
} from '../controllers/manager.js';
import { Client } from '../runtime/client.js';
import { loadRequiredKubeconfig, requiredKubeconfig } from './kubeconfig-flags.js';
import { UsageError, durationFlag, intFlag, commandFlags, noExtraArgs } from './flags.js';
import { leaderElectionFlags, runManagerUntilSignal } from './run-manager.js';
import {
  CLUSTER_SIGNING_FLAGS,
  CLUSTER_SIGNING_HELP,
  certificateControllers,
  clusterSigningFlags,
} from './cluster-signing.js';

/** The node lifecycle and pod GC controllers' timing flags (kube-controller-manager's), with their help. */
const CONTROLLER_TIMING_FLAG_HELP: readonly (readonly [flag: string, help: string])[] = [
  ['--node-monitor-period D', 'how often node health is checked (default 5s)'],
  ['--node-monitor-grace-period D', 'heartbeats older than this make a node Unknown (default 40s)'],
  ['--node-startup-grace-period D', 'the same for a node that never posted Ready (default 1m)'],
  ['--enable-pod-eviction', 'evict pods from NoExecute-tainted nodes (default: off)'],
  ['--terminated-pod-gc-threshold N', 'finished pods kept before the oldest go (default 12500, 0 = all)'],
  ['--podgc-period D', 'how often pod GC runs (default 20s)'],
  [
    '--podgc-orphan-quarantine D',
    "a pod's node missing this long is looked up, then its pods go (default 40s)",
  ],
];

/** The timing flags' help lines, each description starting `width` characters after the indent. */
export function controllerTimingFlagsHelp(width: number): string {
  return CONTROLLER_TIMING_FLAG_HELP.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`).join('\n');
}

/** The timing flags' parse options: `controller-manager`'s and `up`'s (which passes them to its worker). */
export const CONTROLLER_TIMING_FLAGS = {
  'node-monitor-period': { type: 'string' },
  'node-monitor-grace-period': { type: 'string' },
  'node-startup-grace-period': { type: 'string' },
  'enable-pod-eviction': { type: 'boolean' },
  'terminated-pod-gc-threshold': { type: 'string' },
  'podgc-period': { type: 'string' },
  'podgc-orphan-quarantine': { type: 'string' },
} as const;

export const CONTROLLER_MANAGER_HELP = `Usage: svcplane controller-manager --kubeconfig FILE [flags]

Runs svcplane's controllers against the API server the kubeconfig names (svcplane's or any
Kubernetes API server). The same controllers run inside 'svcplane up'.

Flags:
  --kubeconfig FILE                      required
  --controllers LIST                     comma-separated, '*' for all, -NAME to leave one out (default '*');
                                         known: ${KNOWN_CONTROLLERS.join(', ')}
  --concurrent-endpoint-syncs N          Endpoints workers (default 5)
  --concurrent-service-endpoint-syncs N  EndpointSlice workers (default 5, 1..50)
  --max-endpoints-per-slice N            endpoints per EndpointSlice (default 100, 1..1000)
  --concurrent-gc-syncs N                garbage collector workers (default 20)
  --concurrent-replicaset-syncs N        ReplicaSet workers (default 5)
  --concurrent-deployment-syncs N        Deployment workers (default 5)
  --concurrent-grid-syncs N              ServiceGrid and DeploymentGrid workers, each (default 5)
${controllerTimingFlagsHelp(39)}
${CLUSTER_SIGNING_HELP.map(([f, h]) => `  ${f.padEnd(39)}${h}`).join('\n')}
  --metrics-bind-address HOST:PORT       serve /metrics, /healthz and /readyz over HTTP there (default: off)
  --leader-elect                         campaign for a Lease; only the holder runs the controllers
  --leader-elect-resource-namespace NS   default kube-system
  --leader-elect-resource-name NAME      default svcplane-controller-manager
`;

/** The Lease the controllers campaign for: `controller-manager --leader-elect`'s default, and `up`'s on etcd. */
export const CONTROLLER_MANAGER_LEASE = 'svcplane-controller-manager';

const FLAGS = {
  kubeconfig: { type: 'string' },
  controllers: { type: 'string' },
  'concurrent-endpoint-syncs': { type: 'string' },
  'concurrent-service-endpoint-syncs': { type: 'string' },
  'max-endpoints-per-slice': { type: 'string' },
  'concurrent-gc-syncs': { type: 'string' },
  'concurrent-replicaset-syncs': { type: 'string' },
  'concurrent-deployment-syncs': { type: 'string' },
  'concurrent-grid-syncs': { type: 'string' },
  ...CONTROLLER_TIMING_FLAGS,
  ...CLUSTER_SIGNING_FLAGS,
  'metrics-bind-address': { type: 'string' },
  'leader-elect': { type: 'boolean' },
  'leader-elect-resource-namespace': { type: 'string' },
  'leader-elect-resource-name': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/**
 * --controllers as kube-controller-manager reads it: '*' is every controller, NAME turns one on, -NAME
 * turns one off (whatever '*' says), in any order; a name that is not known is a usage error.
 */
export function controllerList(raw: string | boolean | undefined): ControllerName[] {
  if (raw === undefined || raw === '*') return [...KNOWN_CONTROLLERS];
  const names = String(raw)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const known = (n: string): ControllerName => {
    if ((KNOWN_CONTROLLERS as readonly string[]).includes(n)) return n as ControllerName;
    throw new UsageError(`--controllers: unknown controller "${n}" (known: ${KNOWN_CONTROLLERS.join(', ')})`);
  };
  const on = new Set(names.filter((n) => n !== '*' && !n.startsWith('-')).map(known));
  const off = new Set(names.filter((n) => n.startsWith('-')).map((n) => known(n.slice(1))));
  const all = names.includes('*');
  return KNOWN_CONTROLLERS.filter((k) => !off.has(k) && (all || on.has(k)));
}

/** `HOST:PORT` or `[V6]:PORT`; undefined when the flag is absent or "0" (off). */
function hostPort(raw: string | boolean | undefined): { host: string; port: number } | undefined {
  if (raw === undefined || raw === '0' || raw === '') return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(String(raw));
  const port = Number(m?.[3]);
  if (m === null || port > 65535) {
    throw new UsageError(
      `--metrics-bind-address: want HOST:PORT (e.g. 127.0.0.1:10257), got ${JSON.stringify(raw)}`,
    );
  }
  return { host: m[1] ?? m[2]!, port };
}

/** kube's check: 0 means the default (100); otherwise 1..1000, with upstream's messages. */
function maxEndpointsPerSlice(raw: string | boolean | undefined): number {
  if (raw === undefined) return DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  const n = intFlag('max-endpoints-per-slice', raw, 0) ?? 0;
  if (n === 0) return DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  if (n > MAX_MAX_ENDPOINTS_PER_SLICE) {
    throw new UsageError(
      `--max-endpoints-per-slice: max-endpoints-per-slice must not be more than ${MAX_MAX_ENDPOINTS_PER_SLICE}, but got ${n}`,
    );
  }
  return n;
}

export async function controllerManagerCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, CONTROLLER_MANAGER_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  const kubeconfig = requiredKubeconfig(values);
  const controllers = controllerList(values['controllers']);
  const workers = intFlag('concurrent-endpoint-syncs', values['concurrent-endpoint-syncs'], 1) ?? 5;
  const sliceWorkers =
    intFlag('concurrent-service-endpoint-syncs', values['concurrent-service-endpoint-syncs'], 1) ?? 5;
  if (sliceWorkers > 50) {
    throw new UsageError(
      `--concurrent-service-endpoint-syncs: must not be more than 50, but got ${sliceWorkers}`,
    );
  }
  const maxPerSlice = maxEndpointsPerSlice(values['max-endpoints-per-slice']);
  const gcWorkers = intFlag('concurrent-gc-syncs', values['concurrent-gc-syncs'], 1) ?? 20;
  const rsWorkers = intFlag('concurrent-replicaset-syncs', values['concurrent-replicaset-syncs'], 1) ?? 5;
  const deploymentWorkers =
    intFlag('concurrent-deployment-syncs', values['concurrent-deployment-syncs'], 1) ?? 5;
  const gridWorkers = intFlag('concurrent-grid-syncs', values['concurrent-grid-syncs'], 1) ?? 5;
  const nodeLifecycle = nodeLifecycleFlags(values);
  const podGC = podGCFlags(values);
  const certificates = certificateControllers(clusterSigningFlags(values));
  const metricsAddress = hostPort(values['metrics-bind-address']);
  const transport = loadRequiredKubeconfig(kubeconfig);
  const log = jsonLogger(undefined, 'controller-manager');
  const client = new Client(transport);
  const manager = new ControllerManager(client, {
    controllers,
    concurrentEndpointSyncs: workers,
    concurrentServiceEndpointSyncs: sliceWorkers,
    maxEndpointsPerSlice: maxPerSlice,
    concurrentGCSyncs: gcWorkers,
    concurrentReplicaSetSyncs: rsWorkers,
    concurrentDeploymentSyncs: deploymentWorkers,
    concurrentGridSyncs: gridWorkers,
    nodeLifecycle,
    podGC,
    certificates,
    log,
  });
  let running = false;
  const metricsServer =
    metricsAddress === undefined
      ? undefined
      : await startMetricsServer(metricsAddress.host, metricsAddress.port, manager.metrics, () => running);
  if (metricsServer !== undefined) log.info('serving metrics', { url: metricsServer.url });
  await runManagerUntilSignal({
    client,
    manager,
    log,
    out,
    what: 'controllers',
    banner: `svcplane: controller-manager running (${controllers.join(',')})`,
    ...leaderElectionFlags(values, CONTROLLER_MANAGER_LEASE),
    onRunning: () => {
      running = true;
    },
  });
  await metricsServer?.close();
  transport.close();
  return 0;
}

type FlagValues = Record<string, string | boolean | undefined>;
/** `o` without its undefined fields (exactOptionalPropertyTypes). */
const defined = <T extends object>(o: { [K in keyof T]-?: T[K] | undefined }): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** The node lifecycle controller's flags (kube-controller-manager's names); absent ones keep the defaults. */
export function nodeLifecycleFlags(values: FlagValues): NodeLifecycleSettings {
  return defined<NodeLifecycleSettings>({
    monitorPeriodMs: durationFlag('node-monitor-period', values['node-monitor-period']),
    gracePeriodMs: durationFlag('node-monitor-grace-period', values['node-monitor-grace-period']),
    startupGracePeriodMs: durationFlag('node-startup-grace-period', values['node-startup-grace-period']),
    enablePodEviction: values['enable-pod-eviction'] === true ? true : undefined,
  });
}

/** --terminated-pod-gc-threshold (upstream's), and svcplane's --podgc-period and --podgc-orphan-quarantine. */
export function podGCFlags(values: FlagValues): PodGCSettings {
  return defined<PodGCSettings>({
    terminatedPodThreshold: intFlag('terminated-pod-gc-threshold', values['terminated-pod-gc-threshold'], 0),
    periodMs: durationFlag('podgc-period', values['podgc-period']),
    quarantineMs: durationFlag('podgc-orphan-quarantine', values['podgc-orphan-quarantine'], 0),
  });
}
