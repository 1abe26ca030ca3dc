// A Pod's status as a kubelet would report it, for a control plane that has no kubelet: the caller says
// which IPs the pod has, whether it is ready and in which phase, and gets the status object to write
// through the /status subresource: podIP(s), hostIP(s), phase, startTime, the five conditions a
// v1.33 kubelet maintains (PodReadyToStartContainers, Initialized, Ready, ContainersReady,
// PodScheduled) and, when the pod's containers are known, containerStatuses (which `kubectl get pods`
// counts for READY and STATUS).
//
// Given the pod as it is, it behaves like a kubelet across updates: a condition whose status did not
// change keeps its lastTransitionTime, a container that keeps running keeps its startedAt, startTime is
// set once, and conditions it does not own (readiness gates, DisruptionTarget, ...) are kept.
// Terminating is not part of a status: it is metadata.deletionTimestamp, which DELETE sets.
//
// Pure: the time is passed in as an RFC 3339 string.
import { recordOf as rec } from '../../api/json.js';
import { isDualStackIPs, parseIP } from '../../api/validation/ip.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';
export const POD_PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed'];

export interface PodStatusInput {
  /** status.podIPs: one address, or one of each family (primary first). Left out: unchanged. */
  readonly ips?: readonly string[];
  /** Shorthand for `ips: [ip]`. */
  readonly ip?: string;
  /** status.hostIPs, as `ips`. Left out: unchanged. */
  readonly hostIPs?: readonly string[];
  readonly hostIP?: string;
  /** Default Running. */
  readonly phase?: PodPhase;
  /** The Ready and ContainersReady conditions; default: true when Running. Only a Running pod can be ready. */
  readonly ready?: boolean;
  /** RFC 3339, e.g. 2026-11-21T10:00:00Z: the lastTransitionTime of conditions that change. */
  readonly now: string;
  /** The pod as it is now: its containers name the containerStatuses, its status is the previous one. */
  readonly pod?: { readonly spec?: unknown; readonly status?: unknown; readonly [field: string]: unknown };
  /**
   * Containers that have been restarted, by name: their restartCount, and when the last run failed and
   * the container waits to be started again, that failure (CrashLoopBackOff). A crashed container is not
   * ready, so neither is the pod.
   */
  readonly containers?: Readonly<Record<string, ContainerRestarts>>;
}

export interface ContainerRestarts {
  readonly restartCount: number;
  readonly crash?: ContainerCrash;
}

export interface ContainerCrash {
  /** Why the last run ended (lastState.terminated.message). */
  readonly message: string;
  /** When the last run started and ended (RFC 3339). */
  readonly startedAt: string;
  readonly finishedAt: string;
  /** How long the kubelet waits before the next start, as it prints it (`10s`, `1m20s`, `5m0s`). */
  readonly backoff: string;
}

export type ConditionStatus = 'True' | 'False';

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

export type ContainerState =
  | { running: { startedAt: string } }
  | { waiting: { reason: string; message?: string } }
  | {
      terminated: {
        exitCode: number;
        reason: string;
        message?: string;
        startedAt: string;
        finishedAt: string;
      };
    };

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
  /** The previous run's end, once a container has been restarted (kept while it runs again). */
  lastState?: ContainerState;
}

export interface PodStatus {
  phase: PodPhase;
  podIP?: string;
  podIPs?: { ip: string }[];
  hostIP?: string;
  hostIPs?: { ip: string }[];
  startTime: string;
  conditions: PodCondition[];
  containerStatuses?: ContainerStatus[];
}

export class PodStatusError extends Error {
  override readonly name = 'PodStatusError';
}

/** The conditions this builder owns, in the order a kubelet lists them. */
export const POD_CONDITION_TYPES = [
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
] as const;

/** The problem podStatusProblems reports for a Running pod without an IP, given or already set. */
export const NEEDS_IP = 'a Running pod needs an IP address';

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

type Rec = Record<string, unknown>;
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * What is wrong with a list of pod (or host) IPs, as one line, or undefined: each must be an IP
 * address, and two must be one of each family (what the API server accepts in status.podIPs).
 */
export function ipListProblem(ips: readonly string[]): string | undefined {
  if (ips.length === 0) return 'no IP address given';
  for (const ip of ips) {
    if (parseIP(ip) === undefined) return `${JSON.stringify(ip)} is not an IP address`;
  }
  if (ips.length > 2) return `at most two IP addresses (one per family), got ${ips.length}`;
  if (ips.length === 2 && !isDualStackIPs(ips)) {
    return `two IP addresses must be one IPv4 and one IPv6, got ${ips.join(',')}`;
  }
  return undefined;
}

const listOf = (many: readonly string[] | undefined, one: string | undefined): string[] | undefined =>
  many !== undefined ? [...many] : one !== undefined ? [one] : undefined;

/** Every reason the input cannot be turned into a status (empty when it can). */
export function podStatusProblems(input: PodStatusInput): string[] {
  const problems: string[] = [];
  const phase = input.phase ?? 'Running';
  if (!POD_PHASES.includes(phase)) {
    problems.push(`phase ${JSON.stringify(phase)} is not one of ${POD_PHASES.join(', ')}`);
  }
  if (input.ips !== undefined && input.ip !== undefined) problems.push('give ip or ips, not both');
  if (input.hostIPs !== undefined && input.hostIP !== undefined)
    problems.push('give hostIP or hostIPs, not both');
  const ips = listOf(input.ips, input.ip);
  if (ips !== undefined) {
    const p = ipListProblem(ips);
    if (p !== undefined) problems.push(`pod IPs: ${p}`);
  }
  const hostIPs = listOf(input.hostIPs, input.hostIP);
  if (hostIPs !== undefined) {
    const p = ipListProblem(hostIPs);
    if (p !== undefined) problems.push(`host IPs: ${p}`);
  }
  if (input.ready === true && phase !== 'Running') {
    problems.push(`a pod in phase ${phase} cannot be ready; only a Running pod can`);
  }
  const hadIP =
    str(rec(input.pod?.status)['podIP']) !== '' || recs(rec(input.pod?.status)['podIPs']).length > 0;
  if (phase === 'Running' && ips === undefined && !hadIP) {
    problems.push(NEEDS_IP);
  }
  if (!RFC3339.test(input.now)) problems.push(`now: ${JSON.stringify(input.now)} is not an RFC 3339 time`);
  return problems;
}

/** The status to write through pods/status. Throws PodStatusError when podStatusProblems finds any. */
export function podStatus(input: PodStatusInput): PodStatus {
  const problems = podStatusProblems(input);
  if (problems.length > 0) throw new PodStatusError(problems.join('; '));
  const now = input.now;
  const phase = input.phase ?? 'Running';
  const crashed = Object.entries(input.containers ?? {})
    .filter(([, c]) => c.crash !== undefined)
    .map(([name]) => name);
  // `ready` is the containers' readiness (their probes); a crashed container is not ready whatever it says,
  // and the pod is ready only when every container is.
  const containersReady = input.ready ?? phase === 'Running';
  const ready = containersReady && crashed.length === 0;
  const prev = rec(input.pod?.status);
  const containers = recs(rec(input.pod?.spec)['containers']);
  const ips = listOf(input.ips, input.ip);
  const hostIPs = listOf(input.hostIPs, input.hostIP);
  const hasIP =
    ips !== undefined ? ips.length > 0 : str(prev['podIP']) !== '' || recs(prev['podIPs']).length > 0;
  const terminal = phase === 'Succeeded' || phase === 'Failed';

  const prevConditions = recs(prev['conditions']);
  const condition = (
    type: (typeof POD_CONDITION_TYPES)[number],
    status: boolean,
    reason?: string,
    message?: string,
  ): PodCondition => {
    const s: ConditionStatus = status ? 'True' : 'False';
    const before = prevConditions.find((c) => c['type'] === type);
    const since = before !== undefined && before['status'] === s ? str(before['lastTransitionTime']) : '';
    return {
      type,
      status: s,
      lastTransitionTime: since || now,
      ...(reason === undefined ? {} : { reason }),
      ...(message === undefined ? {} : { message }),
    };
  };
  // While some containers crash-loop and the others run, only those are unready.
  const unready =
    crashed.length > 0 && containersReady
      ? crashed
      : containers.map((c) => str(c['name'])).filter((n) => n !== '');
  const notReady: [string, string | undefined] = terminal
    ? ['PodCompleted', undefined]
    : [
        'ContainersNotReady',
        unready.length > 0 ? `containers with unready status: [${unready.join(' ')}]` : undefined,
      ];
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', !terminal && hasIP),
    condition('Initialized', true),
    ready ? condition('Ready', true) : condition('Ready', false, ...notReady),
    ready ? condition('ContainersReady', true) : condition('ContainersReady', false, ...notReady),
    condition('PodScheduled', true),
    ...prevConditions
      .filter((c) => !(POD_CONDITION_TYPES as readonly unknown[]).includes(c['type']))
      .map((c) => c as unknown as PodCondition),
  ];

  const prevContainers = recs(prev['containerStatuses']);
  const containerStatuses = containers.map((c): ContainerStatus => {
    const name = str(c['name']);
    const before = prevContainers.find((p) => p['name'] === name);
    const beforeState = rec(before?.['state']);
    const wasRunning = str(rec(beforeState['running'])['startedAt']);
    const wasTerminated = rec(beforeState['terminated']);
    const startedAt = wasRunning || str(wasTerminated['startedAt']) || now;
    const restarts = input.containers?.[name];
    const crash = phase === 'Running' ? restarts?.crash : undefined;
    let state: ContainerState;
    if (crash !== undefined) {
      const pod = rec(input.pod?.['metadata']);
      state = {
        waiting: {
          reason: 'CrashLoopBackOff',
          message:
            `back-off ${crash.backoff} restarting failed container=${name} ` +
            `pod=${str(pod['name'])}_${str(pod['namespace'])}(${str(pod['uid'])})`,
        },
      };
    } else if (phase === 'Running') state = { running: { startedAt: wasRunning || now } };
    else if (phase === 'Pending') state = { waiting: { reason: 'ContainerCreating' } };
    else {
      const exitCode = phase === 'Succeeded' ? 0 : 1;
      const same = wasTerminated['exitCode'] === exitCode;
      state = {
        terminated: {
          exitCode,
          reason: phase === 'Succeeded' ? 'Completed' : 'Error',
          startedAt,
          finishedAt: (same && str(wasTerminated['finishedAt'])) || now,
        },
      };
    }
    const lastState: ContainerState | undefined =
      crash !== undefined
        ? {
            terminated: {
              exitCode: 1,
              reason: 'Error',
              message: crash.message,
              startedAt: crash.startedAt,
              finishedAt: crash.finishedAt,
            },
          }
        : Object.keys(rec(before?.['lastState'])).length > 0
          ? (before!['lastState'] as ContainerState)
          : undefined;
    return {
      name,
      image: str(c['image']),
      imageID: str(before?.['imageID']),
      ready: containersReady && phase === 'Running' && crash === undefined,
      started: phase === 'Running' && crash === undefined,
      restartCount:
        restarts?.restartCount ?? (typeof before?.['restartCount'] === 'number' ? before['restartCount'] : 0),
      state,
      ...(lastState === undefined ? {} : { lastState }),
    };
  });

  return {
    phase,
    ...(ips === undefined ? {} : { podIP: ips[0]!, podIPs: ips.map((ip) => ({ ip })) }),
    ...(hostIPs === undefined ? {} : { hostIP: hostIPs[0]!, hostIPs: hostIPs.map((ip) => ({ ip })) }),
    startTime: str(prev['startTime']) || now,
    conditions,
    ...(containers.length === 0 ? {} : { containerStatuses }),
  };
}
