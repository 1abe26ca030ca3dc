// `svcplane pod-status`: report a Pod's status the way a kubelet would, since svcplane has none. It
// reads the pod, builds the status (core/pods/pod-status.ts: IPs, phase, the kubelet's conditions,
// container statuses) and writes it through the status subresource with the pod's resourceVersion
// as a precondition, retrying on a conflict. Works against any API server the kubeconfig names.
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import {
  ipListProblem,
  NEEDS_IP,
  podStatus,
  podStatusProblems,
  POD_PHASES,
  type PodStatus,
  type PodStatusInput,
} from '../core/pods/pod-status.js';
import { Client, isApiError } from '../runtime/client.js';
import { firstLine, transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { UsageError, oneOf, commandFlags, noExtraArgs } from './flags.js';

const PODS = mustFindResource('', 'pods');

export const POD_STATUS_HELP = `Usage: svcplane pod-status POD [--ip IP[,IP]] [flags]

Sets a Pod's status as a kubelet would report it (svcplane has no kubelet): status.podIP(s), phase,
the conditions PodReadyToStartContainers, Initialized, Ready, ContainersReady and PodScheduled, and
container statuses. A condition that does not change keeps its lastTransitionTime. The Endpoints and
EndpointSlice controllers then publish the pod's IP as ready or not ready.

Examples:
  svcplane pod-status web-1 --ip 10.244.1.5                  Running and ready
  svcplane pod-status web-1 --ready=false                    not ready; the IP stays
  svcplane pod-status -n shop web-2 --ip 10.244.1.6,fd00::6  dual-stack
  svcplane pod-status web-1 --phase Succeeded                finished

Flags:
  --ip IP[,IP]                  status.podIPs: one address, or one IPv4 and one IPv6 (primary first);
                                required when the pod has no IP yet and the phase is Running
  --ready true|false            the Ready condition (default true when Running; only a Running pod can be ready)
  --phase PHASE                 Running (default), Pending, Succeeded or Failed
  --host-ip IP[,IP]             status.hostIP(s): the node's address
  -n, --namespace NS            default: the kubeconfig context's namespace, else "default"
${kubeconfigFlagsHelp(30)}
`;

const FLAGS = {
  ...KUBECONFIG_FLAGS,
  namespace: { type: 'string', short: 'n' },
  ip: { type: 'string' },
  ready: { type: 'string' },
  phase: { type: 'string' },
  'host-ip': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** How often a write that lost a race with another writer is tried again from a fresh read. */
const CONFLICT_RETRIES = 5;

function ipsFlag(name: string, raw: string | boolean | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const ips = String(raw)
    .split(',')
    .map((s) => s.trim());
  const problem = ipListProblem(ips.length === 1 && ips[0] === '' ? [] : ips);
  if (problem !== undefined) throw new UsageError(`--${name}: ${problem}`);
  return ips;
}

function readyFlag(raw: string | boolean | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UsageError(`invalid value ${JSON.stringify(raw)} for --ready: want true or false`);
}

function podName(positionals: string[]): string {
  if (positionals.length === 0)
    throw new UsageError('a pod name is required (svcplane pod-status POD --ip IP)');
  noExtraArgs(positionals, 1);
  // kubectl's TYPE/NAME form is accepted for pods.
  const name = positionals[0]!.replace(/^(pods?|po)\//, '');
  if (name === '' || name.includes('/')) {
    throw new UsageError(`${JSON.stringify(positionals[0])} is not a pod name`);
  }
  return name;
}

const summary = (s: PodStatus): string =>
  [
    s.phase,
    s.conditions.find((c) => c.type === 'Ready')?.status === 'True' ? 'ready' : 'not ready',
    ...(s.podIPs === undefined ? [] : [`podIPs ${s.podIPs.map((p) => p.ip).join(',')}`]),
    ...(s.hostIPs === undefined ? [] : [`hostIPs ${s.hostIPs.map((p) => p.ip).join(',')}`]),
  ].join(', ');

/** RFC 3339 at second precision, as the kubelet writes condition times. */
const nowRfc3339 = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Reads the pod, builds its next status and writes it through pods/status with the resourceVersion it
 * read as a precondition; a conflict (someone else wrote the pod in between) starts over from a fresh
 * read. Input the status builder refuses is a UsageError; the API's errors are ApiErrors.
 */
export async function setPodStatus(
  client: Client,
  namespace: string,
  name: string,
  input: Omit<PodStatusInput, 'now' | 'pod'>,
  now: () => string = nowRfc3339,
): Promise<PodStatus> {
  for (let attempt = 0; ; attempt++) {
    const pod: KObject = await client.get(PODS, namespace, name);
    const full: PodStatusInput = { ...input, now: now(), pod };
    const problems = podStatusProblems(full);
    if (problems.includes(NEEDS_IP)) {
      throw new UsageError(`--ip is required: pod ${namespace}/${name} has no IP yet`);
    }
    if (problems.length > 0) throw new UsageError(problems.join('; '));
    const status = podStatus(full);
    try {
      const patch = { metadata: { resourceVersion: pod.metadata.resourceVersion }, status };
      await client.patch(PODS, namespace, name, 'merge', patch, { sub: 'status' });
      return status;
    } catch (err) {
      if (isApiError(err, 409) && attempt < CONFLICT_RETRIES) continue;
      throw err;
    }
  }
}

export async function podStatusCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, POD_STATUS_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  const name = podName(positionals);
  const ips = ipsFlag('ip', values['ip']);
  const hostIPs = ipsFlag('host-ip', values['host-ip']);
  const ready = readyFlag(values['ready']);
  const phase = oneOf('phase', values['phase'], POD_PHASES, 'Running');
  if (ready === true && phase !== 'Running') {
    throw new UsageError(`--ready=true needs --phase Running: a ${phase} pod cannot be ready`);
  }
  const nsFlag = values['namespace'];
  if (nsFlag === '') throw new UsageError('--namespace: must not be empty');
  const transport = transportFromFlags(values, (message, cause) => new Error(message, { cause }));
  const namespace = typeof nsFlag === 'string' ? nsFlag : (transport.namespace ?? 'default');
  try {
    const status = await setPodStatus(new Client(transport), namespace, name, {
      ...(ips === undefined ? {} : { ips }),
      ...(hostIPs === undefined ? {} : { hostIPs }),
      ...(ready === undefined ? {} : { ready }),
      phase,
    });
    out(`pod/${name} status set: ${summary(status)}`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // The API's own message (e.g. `pods "web-9" not found`) or the connection's, on one line.
    throw new Error(firstLine(err), { cause: err });
  } finally {
    transport.close();
  }
}
