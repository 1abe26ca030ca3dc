// A simulated container that cannot start: `svcplane node --serve-pods` runs each container as the echo
// listeners on its ports, so a port someone else holds is a container whose process exited at once.
// The kubelet's answer (pkg/kubelet/kuberuntime, by behaviour): the first exit is restarted at once;
// after that the container waits in CrashLoopBackOff, its failed run as lastState, and is started again
// after a back-off of 10 s that doubles with each failure up to 5 min. Each start after the first counts
// in restartCount, so the first CrashLoopBackOff already shows one restart. The pod stays Running and is
// not ready, so no Service sends it traffic. Once a start works, the container runs and keeps its
// restartCount.
//
// Pure: the kubelet keeps one CrashLoop per pod UID and feeds its restarts to planPod.
import { recordOf as rec } from '../../api/json.js';
import type { ContainerCrash, ContainerRestarts } from '../pods/pod-status.js';

/** The kubelet's container restart back-off: 10 s, doubling, at most 300 s. */
export const CRASH_BACKOFF_INITIAL_MS = 10_000;
export const CRASH_BACKOFF_MAX_MS = 300_000;

export interface CrashLoop {
  readonly uid: string;
  /** How many times the containers below have been started; restartCount is one less. */
  readonly starts: number;
  /** Failed starts in a row (the back-off doubles with each); 0 once a start worked. */
  readonly failures: number;
  /** The containers that have crashed at least once (they carry restartCount from here on). */
  readonly restarted: readonly string[];
  /** The containers whose last start failed, with that failure; empty once a start worked. */
  readonly crashed: Readonly<Record<string, ContainerCrash>>;
  /** When the next start may be tried (ms). */
  readonly nextStartMs: number;
}

/** A listener that could not be opened: its port, and the error. */
export interface StartFailure {
  readonly port: number;
  readonly message: string;
}

type Rec = Record<string, unknown>;
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.map(rec) : []);

/** The wait before the start after `failures` failed ones in a row: none after the first. */
export const crashBackoffMs = (failures: number): number =>
  failures <= 1
    ? 0
    : Math.min(CRASH_BACKOFF_MAX_MS, CRASH_BACKOFF_INITIAL_MS * 2 ** Math.min(failures - 2, 20));

/** Seconds as Go prints a time.Duration of whole seconds (the kubelet's back-off message): 1m20s, 5m0s. */
export function goSeconds(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h${m}m${r}s` : m > 0 ? `${m}m${r}s` : `${r}s`;
}

/** Every TCP containerPort of the pod, with the container that declares it, in spec order. */
export function tcpContainerPorts(pod: { readonly spec?: unknown }): { container: string; port: number }[] {
  return recs(rec(pod.spec)['containers']).flatMap((c) =>
    recs(c['ports'])
      .filter((p) => typeof p['containerPort'] === 'number' && (p['protocol'] ?? 'TCP') === 'TCP')
      .map((p) => ({
        container: typeof c['name'] === 'string' ? c['name'] : '',
        port: p['containerPort'] as number,
      })),
  );
}

/** The containers that declare one of these TCP ports (by name, in spec order). */
export function containersOfPorts(pod: { readonly spec?: unknown }, ports: readonly number[]): string[] {
  const want = new Set(ports);
  const names = tcpContainerPorts(pod)
    .filter((p) => want.has(p.port) && p.container !== '')
    .map((p) => p.container);
  return [...new Set(names)];
}

/** The highest restartCount the pod's status shows. */
function reported(pod: { readonly status?: unknown }): number {
  let restarts = 0;
  for (const c of recs(rec(pod.status)['containerStatuses'])) {
    const n = c['restartCount'];
    if (typeof n === 'number' && Number.isInteger(n) && n > restarts) restarts = n;
  }
  return restarts;
}

/**
 * A start that failed (or a running container found dead). Without a loop yet, the count goes on from
 * the pod's status: the run that failed is the one after the restarts it shows.
 */
export function startFailed(
  loop: CrashLoop | undefined,
  pod: { readonly metadata: { readonly uid?: string }; readonly spec?: unknown; readonly status?: unknown },
  failures: readonly StartFailure[],
  nowMs: number,
  now: string,
): CrashLoop {
  const starts = loop !== undefined ? loop.starts + 1 : reported(pod) + 1;
  const n = (loop?.failures ?? 0) + 1;
  const backoff = crashBackoffMs(n);
  const message = [...new Set(failures.map((f) => f.message))].join('; ');
  let names = containersOfPorts(
    pod,
    failures.map((f) => f.port),
  );
  // A port no container declares as TCP (not a listener this simulator opens) fails every container.
  if (names.length === 0)
    names = recs(rec(pod.spec)['containers'])
      .map((c) => String(c['name'] ?? ''))
      .filter((n) => n !== '');
  const crash: ContainerCrash = {
    message,
    startedAt: now,
    finishedAt: now,
    backoff: goSeconds(backoff / 1000),
  };
  return {
    uid: pod.metadata.uid ?? '',
    starts,
    failures: n,
    restarted: [...new Set([...(loop?.restarted ?? []), ...names])],
    crashed: Object.fromEntries(names.map((name) => [name, crash])),
    nextStartMs: nowMs + backoff,
  };
}

/** A start that worked: the containers run again (a loop whose containers were running stays as it is). */
export function startWorked(loop: CrashLoop): CrashLoop {
  if (Object.keys(loop.crashed).length === 0) return loop;
  return { ...loop, starts: loop.starts + 1, failures: 0, crashed: {} };
}

/** Whether the loop's containers wait out a back-off at `nowMs` (no start may be tried yet). */
export const backingOff = (loop: CrashLoop | undefined, nowMs: number): boolean =>
  loop !== undefined && Object.keys(loop.crashed).length > 0 && nowMs < loop.nextStartMs;

/** The loop as planPod's `containers`: restartCount for each restarted container, and its crash if any. */
export function restartsOf(loop: CrashLoop): Record<string, ContainerRestarts> {
  return Object.fromEntries(
    loop.restarted.map((name) => {
      const crash = loop.crashed[name];
      return [name, { restartCount: loop.starts - 1, ...(crash === undefined ? {} : { crash }) }];
    }),
  );
}
