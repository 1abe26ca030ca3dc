// Both subjects' figures as the table and the JSON.
import { loadavg } from 'node:os';
import { type SvcplaneRuntime } from '../lib/cluster.js';
import { type BenchResult } from '../run.js';
import { CONTROLLERS, UNIT_KEY, type Sizes, unitValue, relabelOf } from './shape.js';
import { type SubjectName } from './subjects.js';
import { type SubjectFigures } from './measure.js';

const SUBJECT_LABEL: Record<SubjectName, string> = {
  up: 'svcplane up',
  split: 'apiserver + controller-manager',
};

export function summarize(
  z: Sizes,
  runtime: SvcplaneRuntime,
  figures: Partial<Record<SubjectName, SubjectFigures>>,
  loadAtStart: number[],
): BenchResult {
  const shape = z.shape;
  const round = (x: number | null | undefined): number | string =>
    x === null || x === undefined || Number.isNaN(x)
      ? ''
      : Math.abs(x) >= 100
        ? Math.round(x)
        : Math.round(x * 100) / 100;
  const r = relabelOf(shape);
  const nDeployments = shape.deploymentGrids * shape.units;
  const row = (
    metric: string,
    f: (x: SubjectFigures) => number | string | null,
  ): Record<string, string | number> => {
    const out: Record<string, string | number> = { metric };
    for (const name of ['up', 'split'] as const) {
      const x = figures[name];
      if (x === undefined) continue;
      const v = f(x);
      out[SUBJECT_LABEL[name]] = typeof v === 'string' ? v : round(v);
    }
    return out;
  };
  const pair = (a: number | null, b: number | null): string => `${round(a)} / ${round(b)}`;
  const table = [
    row(`grids created: ${shape.serviceGrids} SG + ${shape.deploymentGrids} DG (s)`, (x) => x.create.seconds),
    row('  grid POST p50 / p99 (ms)', (x) => pair(x.create.postP50Ms, x.create.postP99Ms)),
    row(
      `converged: ${shape.serviceGrids} Services + ${nDeployments} Deployments (s after 1st grid POST)`,
      (x) => x.convergence.seconds,
    ),
    row('  all Services / all Deployments there (s)', (x) =>
      pair(x.convergence.servicesS, x.convergence.deploymentsS),
    ),
    row('  grid statuses current: SG / DG (s)', (x) =>
      pair(x.convergence.statusesS.servicegrids, x.convergence.statusesS.deploymentgrids),
    ),
    row(
      'controllers CPU to converge (s; up: all but the main thread)',
      (x) => x.convergence.cpu.controllersS,
    ),
    row(
      `  Services there when the last Deployment was (of ${shape.serviceGrids})`,
      (x) => x.convergence.servicesWhenDeploymentsDone,
    ),
    row('  reconciles: ServiceGrid / DeploymentGrid (mean ms each)', (x) => {
      const q = x.convergence.queues;
      const f = (n: string): string => `${q[n]?.reconciles ?? 0} (${round(q[n]?.meanMs)})`;
      return `${f('servicegrid')} / ${f('deploymentgrid')}`;
    }),
    row('  Warning Events about grids (healed write errors)', (x) =>
      Object.values(x.convergence.warnings).reduce((a, w) => a + w.count, 0),
    ),
    row('API server CPU meanwhile (s; up: main thread)', (x) => x.convergence.cpu.apiserverS),
    row('machine busy meanwhile: under test / bench clients / others (cores)', (x) => {
      const c = x.convergence.cpu;
      const t = x.convergence.seconds;
      return `${round(c.totalS / t)} / ${round(c.benchS / t)} / ${round((c.machineS - c.totalS - c.benchS) / t)}`;
    }),
    row(
      'controllers busy after convergence (s, CPU-s)',
      (x) => `${round(x.settle.busyS)}${x.settle.quiet ? '' : '+'}, ${round(x.settle.cpu.controllersS)}`,
    ),
    row(`relabel ${r.from}→${r.to} settled (s after the PATCH response)`, (x) => x.relabel.seconds),
    row(`  ${r.to}'s Deployments all created / ${r.from}'s all deleted (s)`, (x) =>
      pair(x.relabel.newUnitCreatedS, x.relabel.oldUnitDeletedS),
    ),
    row('  DeploymentGrid statuses current (s)', (x) => x.relabel.deploymentGridStatusesS),
    row('controllers CPU for the relabel: to settle / until quiet (s)', (x) =>
      pair(
        x.relabel.cpuToSettle.controllersS,
        x.relabel.cpuToSettle.controllersS + x.settleAfterRelabel.cpu.controllersS,
      ),
    ),
    row(
      'API server CPU for the relabel, until quiet (s)',
      (x) => x.relabel.cpuToSettle.apiserverS + x.settleAfterRelabel.cpu.apiserverS,
    ),
    row('controller-manager RSS: peak / after settle (MiB)', (x) =>
      x.peak.controllersPeakMiB === null
        ? 'n/a (a thread)'
        : pair(x.peak.controllersPeakMiB, x.settleAfterRelabel.memory.controllersRssMiB),
    ),
    row('  before the grids (MiB)', (x) => x.before.memory.controllersRssMiB ?? 'n/a'),
    row('server process RSS: peak / after settle (MiB; up: API server + controllers)', (x) =>
      pair(x.peak.serverPeakMiB, x.settleAfterRelabel.memory.serverRssMiB),
    ),
    row('  before the grids (MiB)', (x) => x.before.memory.serverRssMiB),
  ];
  const loadEnd = loadavg();
  return {
    table,
    data: {
      sizes: z,
      setup: {
        svcplane: `${runtime.kind}: ${runtime.why}`,
        controllers: [...CONTROLLERS],
        subjects: Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.setup])),
        shape:
          `${shape.nodes} nodes labelled ${UNIT_KEY}=u000…${unitValue(shape.units - 1)} (${r.node} alone in ${r.from}, ` +
          `the rest round-robin over the other ${shape.units - 1}); ${shape.serviceGrids} ServiceGrids (one-port ` +
          `ServiceSpec) and ${shape.deploymentGrids} DeploymentGrids (one-replica DeploymentSpec), gridUniqKey ` +
          `${UNIT_KEY}, over ${shape.namespaces} namespaces, POSTed ${z.concurrency} at a time`,
        convergence:
          'from the first grid POST to the arrival at a watcher (labelSelector superedge.io/grid-selector) of the ' +
          'event that made the set of Services and Deployments exactly the expected one, each with the ' +
          "contract's labels, annotation, nodeSelector and controller ownerReference; then one LIST per kind " +
          'checks the same set (owner UIDs too)',
        relabel:
          `merge PATCH of ${r.node}'s ${UNIT_KEY} label ${r.from}→${r.to}; settled = the watcher's set is exactly ` +
          `the new one (${shape.deploymentGrids} Deployments of ${r.from} gone, ${shape.deploymentGrids} of ${r.to} ` +
          'there), timed from the PATCH response',
        quiet: `the controllers use under 0.05 cores for ${z.quietSeconds} s (up: the whole process)`,
        cpu:
          'utime + stime from /proc: the controller-manager process and the apiserver process; in up, the main ' +
          "thread (/proc/<pid>/task/<pid>) is the API server's and every other thread (the controllers' " +
          "worker, V8's and libuv's helpers) is counted as the controllers'",
        rss: 'VmHWM (peak) and VmRSS of /proc/<pid>/status; in up one process holds both API server and controllers',
        loadAverage: { start: loadAtStart, end: loadEnd },
      },
      subjects: figures,
    },
  };
}
