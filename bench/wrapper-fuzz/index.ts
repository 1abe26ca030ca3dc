// `npm run bench -- wrapper-fuzz`: the wrapper (in this process, over an in-process API server) under
// 100,000 malformed or hostile requests from the seeded generator the fuzz test uses
// (test/support/hostile-requests.ts), over real sockets to its plain-HTTP port, in 3 runs of fresh
// wrappers. Per run: requests, answers ≥ 500, requests that failed the verdict (hung, non-Status
// rejection), crashes (the wrapper no longer serving /healthz), and the process's RSS and heap after a
// full collection before and after. Goals: 0, 0, 0, heap back within 10%. Figures: docs/benchmarks.md.
import { request } from 'node:http';
import { runHostile } from '../../test/support/hostile-requests.js';
import { heapAfterGc, startWrapperUnderTest } from '../../test/support/wrapper-under-test.js';
import { median, round, tableRow as row, type BenchContext, type BenchResult } from '../run.js';

const MiB = 2 ** 20;

const healthz = (port: number): Promise<number> =>
  new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.end();
  });

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Run {
  requests: number;
  fiveXX: number;
  failures: number;
  crashes: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  heapBeforeMiB: number;
  heapAfterMiB: number;
  seconds: number;
  byStatus: Record<string, number>;
}

async function once(n: number, seed: number): Promise<Run> {
  const w = await startWrapperUnderTest();
  try {
    // Warm up: the first ~10,000 requests build what the wrapper builds once (compiled code, lazily
    // rendered documents, metric series): about 5 MiB of heap, not what this measures.
    await runHostile(w.port, seed + 1000, 10_000);
    const heapBefore = heapAfterGc();
    const rssBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    const s = await runHostile(w.port, seed, n);
    const seconds = (performance.now() - t0) / 1000;
    await pause(2_000); // abandoned watches and stalled bodies settle
    const heapAfter = heapAfterGc();
    const rssAfter = process.memoryUsage().rss;
    return {
      requests: s.requests,
      fiveXX: s.fiveXX,
      failures: s.failures.length,
      crashes: (await healthz(w.port)) === 200 ? 0 : 1,
      rssBeforeMiB: rssBefore / MiB,
      rssAfterMiB: rssAfter / MiB,
      heapBeforeMiB: heapBefore / MiB,
      heapAfterMiB: heapAfter / MiB,
      seconds,
      byStatus: s.byStatus,
    };
  } finally {
    await w.stop();
  }
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const n = ctx.quick ? 5_000 : 100_000;
  const runs: Run[] = [];
  for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
    const r = await once(n, 42 + i);
    ctx.log(
      `run ${i + 1}: ${r.requests} requests in ${round(r.seconds)} s, ${r.fiveXX} ≥ 500, ${r.failures} failed, ` +
        `${r.crashes} crashes; RSS ${round(r.rssBeforeMiB)} → ${round(r.rssAfterMiB)} MiB, heap ${round(r.heapBeforeMiB)} → ${round(r.heapAfterMiB)} MiB; ${JSON.stringify(r.byStatus)}`,
    );
    runs.push(r);
  }
  const med = (f: (r: Run) => number): number => round(median(runs.map(f)));
  const heapGrowth = med((r) => r.heapAfterMiB / r.heapBeforeMiB - 1);
  /** A count whose goal is 0: its total over the runs. */
  const zero = (metric: string, f: (r: Run) => number): Record<string, string | number> => {
    const total = runs.reduce((a, r) => a + f(r), 0);
    return row(metric, total, '0', total === 0 ? 'yes' : 'NO');
  };
  return {
    table: [
      row('requests per run', n),
      zero('answers ≥ 500 (all runs)', (r) => r.fiveXX),
      zero('failed verdicts (all runs)', (r) => r.failures),
      zero('crashes (all runs)', (r) => r.crashes),
      row(
        'requests/s (median)',
        med((r) => r.requests / r.seconds),
      ),
      row(
        'RSS before, MiB (median)',
        med((r) => r.rssBeforeMiB),
      ),
      row(
        'RSS after, MiB (median)',
        med((r) => r.rssAfterMiB),
      ),
      row(
        'heap before, MiB (median)',
        med((r) => r.heapBeforeMiB),
      ),
      row(
        'heap after, MiB (median)',
        med((r) => r.heapAfterMiB),
      ),
      row('heap growth (median)', heapGrowth, '≤ 0.1', heapGrowth <= 0.1 ? 'yes' : 'NO'),
    ],
    data: { runs },
  };
}
