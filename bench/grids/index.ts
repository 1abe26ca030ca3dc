// `npm run bench -- grids`: 1,000 ServiceGrids and 100 DeploymentGrids over 100 units, in `svcplane up` and
// then in `svcplane apiserver` + `svcplane controller-manager`: convergence, one node relabel, CPU and
// memory. Method and latest figures: docs/benchmarks.md (grids).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { scratchDir, svcplaneRuntime } from '../lib/cluster.js';
import { Worker } from '../lib/process.js';
import { type BenchContext, type BenchResult } from '../run.js';
import { CONTROLLERS, FULL, QUICK, relabelOf } from './shape.js';
import { WORKER_MODULE, ROLE_ENV, type WatcherRequest } from './watcher.js';
import { type SubjectName, type Subject, startUp, startSplit } from './subjects.js';
import { knownControllers } from '../lib/cluster.js';
import { type SubjectFigures, measure } from './measure.js';
import { summarize } from './summary.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const shape = z.shape;
  if (shape.units < 2 || shape.nodes < shape.units)
    throw new Error('grids bench: need units ≥ 2 and nodes ≥ units');
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1)
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes compete ` +
        'for the CPUs, so times are pessimistic',
    );
  const wanted = (process.env.SVCPLANE_BENCH_GRIDS_SUBJECTS ?? 'up,split').split(',').map((x) => x.trim());
  // In the order named (up first by default).
  const subjects = wanted.filter((x): x is SubjectName => x === 'up' || x === 'split');
  if (subjects.length === 0) throw new Error('SVCPLANE_BENCH_GRIDS_SUBJECTS: name up, split or both');
  const runtime = svcplaneRuntime();
  const known = knownControllers(runtime);
  const missing = CONTROLLERS.filter((c) => !known.includes(c));
  if (missing.length > 0)
    throw new Error(
      `this build's controller-manager does not know ${missing.join(', ')} (known: ${known.join(', ')}): nothing to measure`,
    );
  ctx.log(`svcplane from ${runtime.kind} (${runtime.why}); subjects: ${subjects.join(', ')}`);
  ctx.log(
    `shape: ${shape.nodes} nodes in ${shape.units} units (${relabelOf(shape).node} alone in ${relabelOf(shape).from}), ` +
      `${shape.serviceGrids} ServiceGrids and ${shape.deploymentGrids} DeploymentGrids over ${shape.namespaces} namespaces`,
  );

  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-grids-')));
  const started: Subject[] = [];
  let watcher: Worker<WatcherRequest> | undefined;
  try {
    // Every process starts at once (their start-up is not measured); each subject then runs alone.
    const t0 = performance.now();
    watcher = new Worker<WatcherRequest>(WORKER_MODULE, { [ROLE_ENV]: 'watcher' }, 'watcher');
    const starts = await Promise.allSettled(
      subjects.map((x) => (x === 'up' ? startUp(root) : startSplit(root, runtime))),
    );
    for (const st of starts) if (st.status === 'fulfilled') started.push(st.value);
    const failed = starts.find((st): st is PromiseRejectedResult => st.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    ctx.log(`processes ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const figures: Partial<Record<SubjectName, SubjectFigures>> = {};
    for (const s of started) {
      figures[s.name] = await measure(ctx, z, s, watcher);
      await s.stop();
    }
    return summarize(z, runtime, figures, loadAtStart);
  } finally {
    watcher?.stop();
    await Promise.all(started.map((s) => s.stop()));
    rmSync(root, { recursive: true, force: true });
  }
}
