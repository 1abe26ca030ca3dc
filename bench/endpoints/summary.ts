// Everything one run measured, as the table, the goals and the JSON.
import { loadavg } from 'node:os';
import { type SvcplaneRuntime } from '../lib/cluster.js';
import { type PreloadFigures } from '../lib/preload.js';
import { type BenchResult } from '../run.js';
import { type Sizes, type Target } from './shape.js';
import { type Sample, type LatencyFigures } from './latency.js';

interface Measured {
  runtime: SvcplaneRuntime;
  controllers: string[];
  missing: string[];
  measured: Target[];
  preload: PreloadFigures;
  apiStartS: number;
  convergence: {
    controllerReadyS: number;
    seconds: number;
    perTargetS: Record<string, number>;
    firstWriteS: Record<string, number>;
    watchEvents: Record<string, number>;
    controllerCpuS: number;
    controllerCpuToReadyS: number;
    controllerRssMiB: number;
    controllerHwmMiB: number;
    apiserverRequests: Record<string, { requests: number; meanMs: number }>;
  };
  settle: { seconds: number; busyS: number; quiet: boolean; controllerCpuS: number };
  idleCores: number;
  flips: {
    flips: number;
    toNotReady: number;
    toReady: number;
    ratePerSec: number;
    patchP50Ms: number;
    patchP99Ms: number;
    latency: Partial<Record<Target, LatencyFigures>>;
    podWatch: LatencyFigures;
    afterPodEvent: Partial<Record<Target, { n: number; p50Ms: number; p99Ms: number; maxMs: number }>>;
    watchEvents: Record<string, number>;
    windowS: number;
    series: Array<Array<number | null>>;
    lastSeenAfterLastAcceptedMs: number;
    controllerCpuS: number;
    controllerCores: number;
    apiserverCpuS: number;
    apiserverRequests: Record<string, { requests: number; meanMs: number }>;
  };
  memory: {
    controllerPeakRssMiB: number;
    controllerRssEndMiB: number;
    apiserverPeakRssMiB: number;
    apiserverRssEndMiB: number;
    apiserverRssAtStartMiB: number;
  };
  watchHealth: Record<string, unknown>;
  samples: Sample[];
  loadAtStart: number[];
}

export function summarize(z: Sizes, m: Measured): BenchResult {
  const shape = z.shape;
  const round = (x: number | undefined): number | string =>
    x === undefined || Number.isNaN(x) ? '' : Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100;
  const yn = (b: boolean): string => (b ? 'yes' : 'no');
  const GiB = 1024;
  const slices = m.flips.latency.slices;
  const goals = {
    ...(slices === undefined ? {} : { sliceFlipP99AtMost100Ms: slices.p99Ms <= 100 }),
    controllerRssAtMost1GiB: m.memory.controllerPeakRssMiB <= GiB,
  };
  const label: Record<Target, string> = { slices: 'EndpointSlices', endpoints: 'Endpoints' };
  const table: Array<Record<string, string | number>> = [
    {
      metric: `cold convergence, ${shape.services} services × ${shape.podsPerService} pods (s)`,
      value: round(m.convergence.seconds),
      goal: '',
      met: '',
    },
    ...m.measured.map((t) => ({
      metric: `  ${label[t]} all converged (s)`,
      value: round(m.convergence.perTargetS[t]),
      goal: '',
      met: '',
    })),
    {
      metric: '  controller-manager informers synced (s)',
      value: round(m.convergence.controllerReadyS),
      goal: '',
      met: '',
    },
    {
      metric: 'controller CPU during convergence (s)',
      value: round(m.convergence.controllerCpuS),
      goal: '',
      met: '',
    },
    {
      metric: 'controller busy after convergence (s, CPU-s)',
      value: `${round(m.settle.busyS)}${m.settle.quiet ? '' : '+'}, ${round(m.settle.controllerCpuS)}`,
      goal: '',
      met: '',
    },
    ...m.measured.flatMap((t) => {
      const l = m.flips.latency[t]!;
      const g = t === 'slices';
      return [
        {
          metric: `flip → ${label[t]} watch p50 (ms)`,
          value: round(l.p50Ms),
          goal: '',
          met: '',
        },
        {
          metric: `flip → ${label[t]} watch p99 (ms)`,
          value: round(l.p99Ms),
          goal: g ? '≤ 100' : '',
          met: g ? yn(l.p99Ms <= 100) : '',
        },
        { metric: `flip → ${label[t]} watch max (ms)`, value: round(l.maxMs), goal: '', met: '' },
        {
          metric: `flips lost (${label[t]})`,
          value: `${l.lost} of ${l.flips}`,
          goal: '0',
          met: yn(l.lost === 0),
        },
      ];
    }),
    {
      metric: 'flip → pod watch p50 / p99 (ms)',
      value: `${round(m.flips.podWatch.p50Ms)} / ${round(m.flips.podWatch.p99Ms)}`,
      goal: '',
      met: '',
    },
    ...m.measured.map((t) => ({
      metric: `pod watch → ${label[t]} watch p50 / p99 (ms)`,
      value: `${round(m.flips.afterPodEvent[t]!.p50Ms)} / ${round(m.flips.afterPodEvent[t]!.p99Ms)}`,
      goal: '',
      met: '',
    })),
    {
      metric: 'status PATCH p50 / p99 (ms)',
      value: `${round(m.flips.patchP50Ms)} / ${round(m.flips.patchP99Ms)}`,
      goal: '',
      met: '',
    },
    {
      metric: `controller CPU during ${z.flipSeconds} s of flips (s)`,
      value: round(m.flips.controllerCpuS),
      goal: '',
      met: '',
    },
    { metric: 'controller cores during flips', value: round(m.flips.controllerCores), goal: '', met: '' },
    { metric: 'controller cores idle (once settled)', value: round(m.idleCores), goal: '', met: '' },
    {
      metric: 'controller-manager peak RSS (MiB)',
      value: round(m.memory.controllerPeakRssMiB),
      goal: '≤ 1024',
      met: yn(goals.controllerRssAtMost1GiB),
    },
    {
      metric: 'apiserver peak RSS (MiB, context)',
      value: round(m.memory.apiserverPeakRssMiB),
      goal: '',
      met: '',
    },
  ];
  const loadEnd = loadavg();
  return {
    table,
    data: {
      sizes: z,
      setup: {
        svcplane: `${m.runtime.kind}: ${m.runtime.why}`,
        controllers: m.controllers,
        controllersNotAvailable: m.missing,
        processes:
          '`svcplane apiserver` (embedded sqlite, synchronous=FULL) and `svcplane controller-manager ' +
          '--kubeconfig` (token auth, default worker counts) as separate child processes on 127.0.0.1; a ' +
          'watcher process (watches on endpointslices and endpoints, all namespaces) and a flipper process',
        preload:
          'written straight into the store before the apiserver starts: namespaces, nodes (zone label, ' +
          'allocatable cpu), ClusterIP Services with their /allocations/serviceips records, Running pods ' +
          'with Ready=True; every object defaulted and passing create (and status) validation, with ' +
          'uid/creationTimestamp/generation as the registry sets them, but without managedFields',
        shape:
          `${shape.nodes} nodes in ${shape.zones} zones; ${shape.services} services over ` +
          `${shape.namespaces} namespace(s), one named port (http → containerPort 8080); ` +
          `${shape.podsPerService} pods per service on ${shape.podsPerService} nodes in distinct zones`,
        convergence:
          'from the controller-manager spawn to the arrival at the watcher of the event that made the ' +
          'last service list podsPerService ready endpoints (in its EndpointSlices; in its Endpoints)',
        flips:
          `${z.flipRate}/s for ${z.flipSeconds} s, alternately Ready True→False on a pod never flipped ` +
          `before and False→True on the oldest pod flipped down at least ${z.restoreAfterMs} ms earlier; ` +
          'each a strategic-merge PATCH of pods/NAME/status (ContainersReady and Ready conditions) on a ' +
          'keep-alive connection; latency = arrival at the watcher of the slice (Endpoints) event whose ' +
          "endpoint for that pod has the new ready value − arrival of the PATCH's 200 response; lost = not " +
          `seen within ${z.seenTimeoutMs} ms`,
        cpu: 'utime + stime of the controller-manager process (/proc/<pid>/stat), all threads',
        rss: 'VmHWM (peak) and VmRSS of /proc/<pid>/status',
        sharedCpu: 'apiserver, controller-manager, watcher and flipper share the machine and its CPUs',
        loadAverage: { start: m.loadAtStart, end: loadEnd },
      },
      preload: m.preload,
      apiserverStartS: m.apiStartS,
      convergence: m.convergence,
      settleAfterConvergence: m.settle,
      idleControllerCores: m.idleCores,
      flips: m.flips,
      memory: m.memory,
      watchHealth: m.watchHealth,
      goals,
      timeline: m.samples.map((s) => ({
        t: Math.round(s.t * 10) / 10,
        cmCpuS: s.cmCpuS === undefined ? null : Math.round(s.cmCpuS * 100) / 100,
        cmRssMiB: s.cmRssMiB === undefined ? null : Math.round(s.cmRssMiB),
        apiCpuS: Math.round(s.apiCpuS * 100) / 100,
        apiRssMiB: Math.round(s.apiRssMiB),
      })),
    },
  };
}
