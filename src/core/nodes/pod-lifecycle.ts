// What a simulated kubelet does next for one pod bound to its node: the status timeline a kubelet
// reports (pkg/kubelet/kubelet_pods.go generateAPIPodStatus, prober worker) and the deletion handshake
// (pkg/kubelet/status/status_manager.go), reduced to a pure plan over the pod as the API has it.
//
//   new pod            → Pending: sandbox up (pod IPs set), containers waiting ContainerCreating
//   containers created → Running; Ready at once, or once the largest readinessProbe.initialDelaySeconds
//                        has passed since the containers' startedAt (a probe result starts as Failure)
//   a start that fails → Running, the container waiting in CrashLoopBackOff with its failed run as
//                        lastState and restartCount counting the restarts; not ready until a start works
//   deletionTimestamp  → containers terminated, phase Succeeded when they were running (a clean exit on
//                        SIGTERM) or Failed when they never started; once the API shows the terminal
//                        phase, DELETE with gracePeriodSeconds 0 and the pod's UID as a precondition
//
// The status itself comes from core/pods/pod-status.ts, so times that did not change keep their value.
// A Ready condition someone else flipped (the node lifecycle controller marks pods not ready when the
// node stops heartbeating) is re-reported, as the kubelet's status manager re-syncs differing statuses.
//
// Pure: the time is passed in.
import { recordOf as rec } from '../../api/json.js';
import { parseTimestamp } from '../../api/printers/time.js';
import { podStatus, type ContainerRestarts, type PodPhase, type PodStatus } from '../pods/pod-status.js';

type Rec = Record<string, unknown>;
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.map(rec) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface PodLike {
  readonly metadata: { readonly uid?: string; readonly deletionTimestamp?: string | null };
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** The longest readinessProbe.initialDelaySeconds among the pod's containers, in milliseconds. */
export function readinessDelayMs(pod: PodLike): number {
  let max = 0;
  for (const c of recs(rec(pod.spec)['containers'])) {
    const d = rec(c['readinessProbe'])['initialDelaySeconds'];
    if (typeof d === 'number' && Number.isFinite(d) && d > max) max = d;
  }
  return max * 1000;
}

export const isTerminalPhase = (phase: unknown): boolean => phase === 'Succeeded' || phase === 'Failed';

export const isTerminating = (pod: PodLike): boolean =>
  typeof pod.metadata.deletionTimestamp === 'string' && pod.metadata.deletionTimestamp !== '';

/** The pod's status.podIPs as text, primary first (podIP when podIPs is absent). */
export function statusPodIPs(pod: PodLike): string[] {
  const s = rec(pod.status);
  const ips = recs(s['podIPs'])
    .map((p) => str(p['ip']))
    .filter((ip) => ip !== '');
  if (ips.length > 0) return ips;
  const one = str(s['podIP']);
  return one === '' ? [] : [one];
}

/** When the pod's containers started (the earliest running startedAt), or undefined when none runs. */
export function containersStartedMs(pod: PodLike): number | undefined {
  let first: number | undefined;
  for (const c of recs(rec(pod.status)['containerStatuses'])) {
    const t = parseTimestamp(rec(rec(c['state'])['running'])['startedAt']);
    if (t !== undefined && (first === undefined || t < first)) first = t;
  }
  return first;
}

export type PodPlan =
  /** Write this status through pods/status; then come back after `requeueAfterMs` if given. */
  | { readonly kind: 'status'; readonly status: PodStatus; readonly requeueAfterMs?: number }
  /** Confirm the deletion: DELETE with gracePeriodSeconds 0 and preconditions.uid. */
  | { readonly kind: 'delete' }
  /** Nothing to write now; come back after `requeueAfterMs` if given. */
  | { readonly kind: 'wait'; readonly requeueAfterMs?: number };

export interface PodPlanInput {
  readonly pod: PodLike;
  /** The pod's addresses from the node's pool (or the node's for hostNetwork pods), primary first. */
  readonly ips: readonly string[];
  /** The node's InternalIP (status.hostIP). */
  readonly hostIPs: readonly string[];
  readonly nowMs: number;
  /** RFC 3339 of nowMs, for the status builder. */
  readonly now: string;
  /**
   * Containers the kubelet has restarted, and those whose last start failed and that wait out their
   * back-off (CrashLoopBackOff): a pod with one is Running and not ready.
   */
  readonly containers?: Readonly<Record<string, ContainerRestarts>>;
}

/** The parts of a status that decide whether a write is due (times and image IDs do not). */
function statusShape(s: unknown): string {
  const st = rec(s);
  return JSON.stringify([
    str(st['phase']),
    recs(st['podIPs']).map((p) => str(p['ip'])),
    str(st['hostIP']),
    recs(st['conditions'])
      .map((c) => `${str(c['type'])}=${str(c['status'])}`)
      .sort(),
    recs(st['containerStatuses']).map((c) => [
      str(c['name']),
      c['ready'] === true,
      c['started'] === true,
      Object.keys(rec(c['state'])).sort(),
      str(rec(rec(c['state'])['waiting'])['reason']),
      typeof c['restartCount'] === 'number' ? c['restartCount'] : 0,
    ]),
  ]);
}

/** Whether writing `next` would change what the pod reports. */
export const statusDiffers = (pod: PodLike, next: PodStatus): boolean =>
  statusShape(pod.status) !== statusShape(next);

function build(input: PodPlanInput, phase: PodPhase, ready: boolean): PodStatus {
  return podStatus({
    ips: input.ips,
    hostIPs: input.hostIPs,
    phase,
    ready,
    now: input.now,
    pod: input.pod as unknown as { spec?: unknown; status?: unknown },
    ...(input.containers === undefined ? {} : { containers: input.containers }),
  });
}

/** The next step for one pod bound to this node. */
export function planPod(input: PodPlanInput): PodPlan {
  const { pod, nowMs } = input;
  const phase = str(rec(pod.status)['phase']);
  const write = (status: PodStatus, requeueAfterMs?: number): PodPlan =>
    statusDiffers(pod, status)
      ? { kind: 'status', status, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) }
      : { kind: 'wait', ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) };

  if (isTerminating(pod)) {
    if (isTerminalPhase(phase)) return { kind: 'delete' };
    // A container that was running exits 0 on SIGTERM; one that never started is reported failed.
    const ran = phase === 'Running' || containersStartedMs(pod) !== undefined;
    return write(build(input, ran ? 'Succeeded' : 'Failed', false));
  }
  // A pod that finished stays as it is: a terminal phase never changes back.
  if (isTerminalPhase(phase)) return { kind: 'wait' };

  // A container that could not start: Running (it was started), not ready, until a start succeeds.
  const started = containersStartedMs(pod);
  if (Object.values(input.containers ?? {}).some((c) => c.crash !== undefined)) {
    // The others are ready as they would be: their readiness delay since they started (now, if they
    // start with this report).
    const readyAt = (started ?? nowMs) + readinessDelayMs(pod);
    const ready = nowMs >= readyAt;
    return write(build(input, 'Running', ready), ready ? undefined : readyAt - nowMs);
  }
  if (started === undefined) {
    // First the sandbox (IPs, containers creating), then the containers: two reports, as kubectl shows
    // ContainerCreating before Running.
    const creating = build(input, 'Pending', false);
    if (statusDiffers(pod, creating) && phase !== 'Running') return { kind: 'status', status: creating };
    return { kind: 'status', status: build(input, 'Running', readinessDelayMs(pod) === 0) };
  }
  const readyAt = started + readinessDelayMs(pod);
  const ready = nowMs >= readyAt;
  return write(build(input, 'Running', ready), ready ? undefined : readyAt - nowMs);
}
