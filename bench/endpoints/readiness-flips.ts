// The readiness flips: pod readiness flipped at a steady rate by the flipper process, each timed from its
// PATCH response to the watcher seeing that endpoint's condition change in the EndpointSlices (and the
// Endpoints), split at the moment a pod watch sees the change; the controller's and the API server's CPU.
import { performance } from 'node:perf_hooks';
import type { ApiServerProc, Proc } from '../lib/cluster.js';
import { epochMs } from '../lib/http.js';
import type { ClusterShape } from '../lib/preload.js';
import { cpuSeconds, sleep, Worker } from '../lib/process.js';
import { percentile, type BenchContext } from '../run.js';
import { apiDelta, apiRequests, API_RESOURCES, type ApiRequests } from './api-metrics.js';
import type { FlipRequest } from './flipper.js';
import { latencyFigures, type LatencyFigures } from './latency.js';
import { TARGETS, type Sizes, type Target } from './shape.js';
import type { Flip, MatchReply, WatcherRequest, WatcherStatus } from './watcher.js';
import { ROLE_ENV, WORKER_MODULE } from './worker.js';

export interface FlipInputs {
  readonly ctx: BenchContext;
  readonly z: Sizes;
  readonly shape: ClusterShape;
  /** The objects measured: EndpointSlices, and Endpoints when the controller-manager runs it. */
  readonly measured: readonly Target[];
  /** The run's worker processes; the flipper joins them, and the run stops them all at the end. */
  readonly workers: Array<Worker<unknown>>;
  readonly watcher: Worker<WatcherRequest>;
  readonly cm: Proc;
  readonly api: ApiServerProc;
  /** The API server's request counts before the flips, and the watcher's status. */
  readonly api1: ApiRequests;
  readonly eventsBeforeFlips: WatcherStatus;
}

export async function measureFlips(inputs: FlipInputs) {
  const { ctx, z, shape, measured, workers, watcher, cm, api, api1, eventsBeforeFlips } = inputs;
  const flipper = new Worker<FlipRequest>(WORKER_MODULE, { [ROLE_ENV]: 'flipper' }, 'flipper');
  workers.push(flipper as Worker<unknown>);
  await watcher.call({ op: 'record' });
  const fCpu0 = cpuSeconds(cm.pid);
  const fApiCpu0 = cpuSeconds(api.pid);
  const fT0 = performance.now();
  ctx.log(`flips: ${z.flipRate}/s for ${z.flipSeconds} s`);
  const flips = await flipper.call<Flip[]>({
    op: 'flips',
    conn: api.conn,
    shape,
    rate: z.flipRate,
    durationMs: z.flipSeconds * 1000,
    restoreAfterMs: z.restoreAfterMs,
    seed: 5,
  });
  const failed = flips.filter((f) => f.status !== 200);
  if (failed.length > 0)
    throw new Error(
      `${failed.length} of ${flips.length} status PATCHes failed: ${failed[0]!.status} ${failed[0]!.error}`,
    );
  const lastAccepted = Math.max(...flips.map((f) => f.acceptedAt));
  let seen: MatchReply;
  for (;;) {
    seen = await watcher.call<MatchReply>({ op: 'match', flips });
    const all = measured.every((t) => seen[t].every((x) => x !== undefined));
    if (all || epochMs() - lastAccepted > z.seenTimeoutMs) break;
    await sleep(100);
  }
  const lastSeen = Math.max(
    lastAccepted,
    ...measured.flatMap((t) => seen[t].filter((x): x is number => x !== undefined)),
  );
  const flipWindowS = (performance.now() - fT0) / 1000;
  const flipCpuS = cpuSeconds(cm.pid) - fCpu0;
  const flipApiCpuS = cpuSeconds(api.pid) - fApiCpu0;
  const eventsAfterFlips = await watcher.call<WatcherStatus>({ op: 'status' });
  const api2 = await apiRequests(api.conn, API_RESOURCES);
  const patchMs = flips.map((f) => f.acceptedAt - f.sentAt);
  const latency = Object.fromEntries(
    measured.map((t) => [t, latencyFigures(flips, seen[t], z.seenTimeoutMs)]),
  ) as Partial<Record<Target, LatencyFigures>>;
  // Where the time goes: accepted → the pod change reaches watchers (the API server's share), then
  // pod change → slice change at the watcher (the controller's read, plan and write, and fan-out).
  const podWatch = latencyFigures(flips, seen.pods, z.seenTimeoutMs);
  const afterPodEvent = Object.fromEntries(
    measured.map((t) => {
      const d = flips.flatMap((_, i) => {
        const a = seen.pods[i];
        const b = seen[t][i];
        return a === undefined || b === undefined ? [] : [b - a];
      });
      return [
        t,
        d.length === 0
          ? { n: 0, p50Ms: NaN, p99Ms: NaN, maxMs: NaN }
          : { n: d.length, p50Ms: percentile(d, 50), p99Ms: percentile(d, 99), maxMs: Math.max(...d) },
      ];
    }),
  ) as Partial<Record<Target, { n: number; p50Ms: number; p99Ms: number; maxMs: number }>>;
  const flipFigures = {
    flips: flips.length,
    toNotReady: flips.filter((f) => !f.ready).length,
    toReady: flips.filter((f) => f.ready).length,
    ratePerSec: flips.length / z.flipSeconds,
    patchP50Ms: percentile(patchMs, 50),
    patchP99Ms: percentile(patchMs, 99),
    latency,
    podWatch,
    afterPodEvent,
    watchEvents: Object.fromEntries(
      measured.map((t) => [t, eventsAfterFlips[t].events - eventsBeforeFlips[t].events]),
    ),
    windowS: flipWindowS,
    /**
     * Per flip: [sent, accepted, pod change seen, seen in slices, seen in Endpoints], in ms after the
     * first send (null: not seen).
     */
    series: flips.map((f, i) => {
      const rel = (at: number | undefined): number | null =>
        at === undefined ? null : Math.round(at - flips[0]!.sentAt);
      return [
        rel(f.sentAt),
        rel(f.acceptedAt),
        rel(seen.pods[i]),
        ...TARGETS.map((t) => rel(measured.includes(t) ? seen[t][i] : undefined)),
      ];
    }),
    lastSeenAfterLastAcceptedMs: lastSeen - lastAccepted,
    controllerCpuS: flipCpuS,
    controllerCores: flipCpuS / flipWindowS,
    apiserverCpuS: flipApiCpuS,
    apiserverRequests: apiDelta(api1, api2),
  };
  ctx.log(
    `flips → pod watch: p50 ${podWatch.p50Ms.toFixed(1)} ms, p99 ${podWatch.p99Ms.toFixed(1)} ms, ` +
      `max ${podWatch.maxMs.toFixed(1)} ms`,
  );
  for (const t of measured) {
    const l = latency[t]!;
    const a = afterPodEvent[t]!;
    ctx.log(
      `pod change → ${t} change at the watcher: p50 ${a.p50Ms.toFixed(1)} ms, p99 ${a.p99Ms.toFixed(1)} ms, ` +
        `max ${a.maxMs.toFixed(1)} ms`,
    );
    ctx.log(
      `flips → ${t}: p50 ${l.p50Ms.toFixed(1)} ms, p99 ${l.p99Ms.toFixed(1)} ms, max ${l.maxMs.toFixed(1)} ms, ` +
        `${l.lost} of ${l.flips} lost`,
    );
  }
  const watchHealth = Object.fromEntries(
    TARGETS.map((t) => [
      t,
      {
        connects: eventsAfterFlips[t].connects,
        relists: eventsAfterFlips[t].relists,
        errors: eventsAfterFlips[t].errors,
        ...(eventsAfterFlips[t].lastError === undefined ? {} : { lastError: eventsAfterFlips[t].lastError }),
      },
    ]),
  );
  return { flipFigures, watchHealth };
}
