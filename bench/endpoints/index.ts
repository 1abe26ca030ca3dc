// `npm run bench -- endpoints`: the Endpoints and EndpointSlice controllers in `svcplane controller-manager`
// against `svcplane apiserver` preloaded with 10,000 Services and 100,000 pods: cold convergence, then pod
// readiness flips to the slices, CPU and RSS. Method and latest figures: docs/benchmarks.md (endpoints).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  scratchDir,
  startApiServer,
  startSvcplane,
  stopChild,
  svcplaneRuntime,
  writeKubeconfig,
  type ApiServerProc,
  type Proc,
} from '../lib/cluster.js';
import { epochMs } from '../lib/http.js';
import { preloadCluster, type PreloadFigures } from '../lib/preload.js';
import { cpuSeconds, memory, sleep, Worker } from '../lib/process.js';
import { type BenchContext, type BenchResult } from '../run.js';
import { CONTROLLERS, FULL, QUICK, type Target } from './shape.js';
import { type WatcherRequest, type WatcherStatus } from './watcher.js';
import { WORKER_MODULE, ROLE_ENV } from './worker.js';
import { type Sample } from './latency.js';
import { apiRequests, apiDelta, API_RESOURCES } from './api-metrics.js';
import { knownControllers } from '../lib/cluster.js';
import { summarize } from './summary.js';
import { measureFlips } from './readiness-flips.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const shape = z.shape;
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1) {
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
        'compete for the CPUs, so times and latencies are pessimistic',
    );
  }
  const runtime = svcplaneRuntime();
  const known = knownControllers(runtime);
  const controllers = CONTROLLERS.filter((c) => known.includes(c));
  const missing = CONTROLLERS.filter((c) => !known.includes(c));
  ctx.log(`svcplane from ${runtime.kind} (${runtime.why}); controllers: ${controllers.join(',')}`);
  if (missing.length > 0)
    ctx.log(`note: the controller-manager does not know ${missing.join(', ')} yet: not measured`);
  if (controllers.length === 0) throw new Error('no controller to measure');
  const measured: Target[] = [
    ...(controllers.includes('endpointslice') ? (['slices'] as const) : []),
    ...(controllers.includes('endpoints') ? (['endpoints'] as const) : []),
  ];

  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-endpoints-')));
  const dataDir = path.join(root, 'data');
  mkdirSync(dataDir, { recursive: true });
  const workers: Array<Worker<unknown>> = [];
  let api: ApiServerProc | undefined;
  let cm: Proc | undefined;
  const samples: Sample[] = [];
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    // ---- preload
    const pods = shape.services * shape.podsPerService;
    ctx.log(
      `preload: ${shape.nodes} nodes in ${shape.zones} zones, ${shape.services} services in ` +
        `${shape.namespaces} namespace(s), ${pods} pods`,
    );
    const preload: PreloadFigures = await preloadCluster(dataDir, shape, ctx.log);
    ctx.log(
      `preload: ${preload.objects} keys in ${preload.seconds.toFixed(1)} s ` +
        `(${Math.round(preload.avgPodBytes)} bytes per pod)`,
    );

    // ---- API server
    const tApi = performance.now();
    api = await startApiServer(runtime, dataDir, ['--service-cluster-ip-range', shape.serviceCidr], {
      timeoutMs: 300_000,
      nodeArgs: nodeArgs('SVCPLANE_BENCH_SERVER_NODE_ARGS'),
    });
    const apiStartS = (performance.now() - tApi) / 1000;
    const apiRssStartMiB = memory(api.pid).rssMiB;
    ctx.log(
      `apiserver ready in ${apiStartS.toFixed(1)} s (pid ${api.pid}, RSS ${apiRssStartMiB.toFixed(0)} MiB)`,
    );
    const kubeconfig = path.join(root, 'kubeconfig');
    writeKubeconfig(kubeconfig, api);

    // ---- watcher, before the controllers start
    const watcher = new Worker<WatcherRequest>(WORKER_MODULE, { [ROLE_ENV]: 'watcher' }, 'watcher');
    workers.push(watcher as Worker<unknown>);
    await watcher.call({
      op: 'start',
      conn: api.conn,
      services: shape.services,
      podsPerService: shape.podsPerService,
    });
    const apiPid = api.pid;
    /** Set once the controller-manager runs. */
    const cmRef: { pid?: number } = {};
    const t0 = epochMs();
    const sample = (): Sample => {
      const s: Sample = {
        t: (epochMs() - t0) / 1000,
        apiCpuS: cpuSeconds(apiPid),
        apiRssMiB: memory(apiPid).rssMiB,
      };
      if (cmRef.pid !== undefined) {
        try {
          s.cmCpuS = cpuSeconds(cmRef.pid);
          s.cmRssMiB = memory(cmRef.pid).rssMiB;
        } catch {
          /* exited */
        }
      }
      return s;
    };
    sampler = setInterval(() => samples.push(sample()), 1000);

    // ---- cold convergence
    const api0 = await apiRequests(api.conn, API_RESOURCES);
    const cmSpawnAt = epochMs();
    cm = await startSvcplane(
      'controller-manager',
      runtime,
      ['controller-manager', '--kubeconfig', kubeconfig, '--controllers', controllers.join(',')],
      /controller-manager running/,
      { timeoutMs: 600_000, nodeArgs: nodeArgs('SVCPLANE_BENCH_CONTROLLER_NODE_ARGS') },
    );
    cmRef.pid = cm.pid;
    const cmReadyS = (epochMs() - cmSpawnAt) / 1000;
    const cmCpuAtReady = cpuSeconds(cm.pid);
    ctx.log(
      `controller-manager running (informers synced) after ${cmReadyS.toFixed(1)} s, ${cmCpuAtReady.toFixed(1)} CPU-s`,
    );
    let status: WatcherStatus;
    let lastLog = performance.now();
    for (;;) {
      status = await watcher.call<WatcherStatus>({ op: 'status' });
      if (measured.every((t) => status[t].convergedAt !== undefined)) break;
      if (cm.child.exitCode !== null)
        throw new Error(`controller-manager exited: ${cm.stderrTail().slice(-2000)}`);
      const elapsed = (epochMs() - cmSpawnAt) / 1000;
      if (elapsed > z.convergeTimeoutS) {
        throw new Error(
          `not converged after ${z.convergeTimeoutS} s: ` +
            measured.map((t) => `${t} ${status[t].converged}/${shape.services}`).join(', '),
        );
      }
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        ctx.log(
          `  ${elapsed.toFixed(0)} s: converged ` +
            measured.map((t) => `${t} ${status[t].converged}/${shape.services}`).join(', ') +
            `; controller-manager ${cpuSeconds(cm.pid).toFixed(1)} CPU-s, ${memory(cm.pid).rssMiB.toFixed(0)} MiB`,
        );
      }
      await sleep(100);
    }
    const cmCpuAtConverged = cpuSeconds(cm.pid);
    const convergedAt = Math.max(...measured.map((t) => status[t].convergedAt!));
    const api1 = await apiRequests(api.conn, API_RESOURCES);
    const convergence = {
      /** Requests the controllers made meanwhile (watches excluded), with the server's mean latency. */
      apiserverRequests: apiDelta(api0, api1),
      controllerReadyS: cmReadyS,
      seconds: (convergedAt - cmSpawnAt) / 1000,
      perTargetS: Object.fromEntries(measured.map((t) => [t, (status[t].convergedAt! - cmSpawnAt) / 1000])),
      firstWriteS: Object.fromEntries(
        measured.map((t) => [t, ((status[t].firstEventAt ?? NaN) - cmSpawnAt) / 1000]),
      ),
      watchEvents: Object.fromEntries(measured.map((t) => [t, status[t].events])),
      controllerCpuS: cmCpuAtConverged,
      controllerCpuToReadyS: cmCpuAtReady,
      controllerRssMiB: memory(cm.pid).rssMiB,
      controllerHwmMiB: memory(cm.pid).hwmMiB,
    };
    ctx.log(
      `converged in ${convergence.seconds.toFixed(1)} s (` +
        measured.map((t) => `${t} ${convergence.perTargetS[t]!.toFixed(1)} s`).join(', ') +
        `); controller-manager ${cmCpuAtConverged.toFixed(1)} CPU-s, peak RSS ${convergence.controllerHwmMiB.toFixed(0)} MiB`,
    );

    const fmtRequests = (r: Record<string, { requests: number; meanMs: number }>): string =>
      Object.entries(r)
        .sort((a, b) => b[1].requests - a[1].requests)
        .map(([k, v]) => `${k} ${v.requests} (${v.meanMs.toFixed(1)} ms)`)
        .join(', ');
    ctx.log(`apiserver served meanwhile (mean server time): ${fmtRequests(convergence.apiserverRequests)}`);

    // ---- settle: until the controllers have nothing left to do
    const settle0 = performance.now();
    const settleCpu0 = cpuSeconds(cm.pid);
    let quietFor = 0;
    let idleCores = NaN;
    for (let last = settleCpu0; performance.now() - settle0 < z.settleMaxSeconds * 1000;) {
      await sleep(1000);
      const now = cpuSeconds(cm.pid);
      quietFor = now - last < 0.05 ? quietFor + 1 : 0;
      last = now;
      if (quietFor >= z.quietSeconds) break;
    }
    const settleS = (performance.now() - settle0) / 1000;
    const settle = {
      seconds: settleS,
      /** Until the first of the quiet seconds (the whole settle time when never quiet). */
      busyS: quietFor >= z.quietSeconds ? Math.max(0, settleS - z.quietSeconds) : settleS,
      quiet: quietFor >= z.quietSeconds,
      controllerCpuS: cpuSeconds(cm.pid) - settleCpu0,
    };
    {
      const c0 = cpuSeconds(cm.pid);
      await sleep(z.idleSeconds * 1000);
      idleCores = (cpuSeconds(cm.pid) - c0) / z.idleSeconds;
    }
    ctx.log(
      `settle: ${settle.quiet ? 'quiet' : 'still busy'} after ${settle.busyS.toFixed(0)} s ` +
        `(${settle.controllerCpuS.toFixed(1)} CPU-s); then ${idleCores.toFixed(2)} cores idle`,
    );
    const eventsBeforeFlips = await watcher.call<WatcherStatus>({ op: 'status' });

    // ---- readiness flips
    const { flipFigures, watchHealth } = await measureFlips({
      ctx,
      z,
      shape,
      measured,
      workers,
      watcher,
      cm,
      api,
      api1,
      eventsBeforeFlips,
    });

    // ---- memory
    const cmMem = memory(cm.pid);
    const apiMem = memory(api.pid);
    samples.push(sample());
    const memoryFigures = {
      controllerPeakRssMiB: cmMem.hwmMiB,
      controllerRssEndMiB: cmMem.rssMiB,
      apiserverPeakRssMiB: apiMem.hwmMiB,
      apiserverRssEndMiB: apiMem.rssMiB,
      apiserverRssAtStartMiB: apiRssStartMiB,
    };
    return summarize(z, {
      runtime,
      controllers,
      missing,
      measured,
      preload,
      apiStartS,
      convergence,
      settle,
      idleCores,
      flips: flipFigures,
      memory: memoryFigures,
      watchHealth,
      samples,
      loadAtStart,
    });
  } catch (err) {
    if (cm !== undefined) ctx.log(`controller-manager stderr tail: ${cm.stderrTail().slice(-2000)}`);
    if (api !== undefined) ctx.log(`apiserver stderr tail: ${api.stderrTail().slice(-2000)}`);
    throw err;
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    for (const w of workers) w.stop();
    if (cm !== undefined) await stopChild(cm.child);
    if (api !== undefined) await stopChild(api.child);
    rmSync(root, { recursive: true, force: true });
  }
}

const nodeArgs = (env: string): string[] => (process.env[env] ?? '').split(' ').filter((a) => a !== '');
