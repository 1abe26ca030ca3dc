// `npm run bench -- allocation`: Service creates (a ClusterIP and a NodePort each) against `svcplane up`
// on sqlite and etcd and four service-cluster-ip-range sizes, with the store bytes each create writes.
// Method and latest figures: docs/benchmarks.md (allocation).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from '../lib/process.js';
import { type BenchContext, type BenchResult } from '../run.js';
import { FULL, QUICK, type CaseId, type Backend } from './shape.js';
import { WORKER_MODULE, WORKER_ENV, type WorkerRequest } from './worker.js';
import { type RepFigures, runBackend } from './backend.js';
import { summarize } from './summary.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  if (z.roundSize > 253) throw new Error('a round must fit a /24 (253 addresses besides `kubernetes`)');
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1) {
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
        'compete for the CPUs, so rates and latencies are pessimistic; CPU-µs per create is less affected',
    );
  }
  const root = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-allocation-'));
  const results = {} as Record<Backend, Record<CaseId, RepFigures[]>>;
  const tRun = performance.now();
  const measure = async (backend: Backend): Promise<void> => {
    const worker = new Worker<WorkerRequest>(WORKER_MODULE, { [WORKER_ENV]: '1' }, `${backend} client`);
    try {
      results[backend] = await runBackend(ctx, z, backend, worker, path.join(root, backend));
    } finally {
      worker.stop();
    }
  };
  try {
    // One backend after the other, so that neither takes CPU from the other's figures. The quick mode,
    // whose figures mean nothing, runs them side by side: its rounds wait on latency, not on the CPUs.
    if (ctx.quick) await Promise.all([measure('sqlite'), measure('etcd')]);
    else for (const backend of ['sqlite', 'etcd'] as const) await measure(backend);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  ctx.log(`whole run: ${((performance.now() - tRun) / 1000).toFixed(0)} s`);
  return summarize(z, results, loadAtStart);
}
