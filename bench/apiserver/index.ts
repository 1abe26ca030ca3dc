// `npm run bench -- apiserver`: `svcplane apiserver` and `svcplane up` in the same run, each driven over
// HTTPS by client worker processes: pod creates, LISTs of Services and pods, watch delivery to 1,000
// watchers, RSS. Method and latest figures: docs/benchmarks.md (apiserver).
import { loadavg } from 'node:os';
import { type BenchContext, type BenchResult } from '../run.js';
import { FULL, QUICK } from './shape.js';
import { Turns, turnOrder } from './turns.js';
import { measure } from './measure.js';

/**
 * Both servers: the bare API server and `svcplane up` as users run it, with its controllers converging
 * on what the benchmark writes. Their create repetitions alternate, then each runs the later steps in
 * turn (side by side in quick mode, whose figures mean nothing). The table shows both and
 * up ÷ apiserver; the goals are up's.
 */
export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const loadAtStart = loadavg();
  // Both servers are up together (their setups run one after the other); in full mode their create
  // repetitions alternate and the later steps run one subject after the other (Turns), the other server
  // idle meanwhile; quick mode runs them side by side.
  const turns = ctx.quick ? undefined : new Turns(turnOrder(z.createReps));
  const [apiserver, up] = await Promise.all([
    measure(ctx, z, 'apiserver', turns),
    measure(ctx, z, 'up', turns),
  ]);
  const ratio = (k: string): number => up.m[k]! / apiserver.m[k]!;
  const ratios = {
    upOverApiserverCreatesPerSec: ratio('createsPerSec'),
    upOverApiserverListServicesJsonP50: ratio('listServicesJsonP50Ms'),
    upOverApiserverWatchP99: ratio('watchP99Ms'),
    upOverApiserverServerCpuPerPod: ratio('createServerCpuUsPerPod'),
  };
  const goals = { ...up.goals, upCreatesAtLeast90PctOfApiserver: ratios.upOverApiserverCreatesPerSec >= 0.9 };
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  const table = up.table.map((row, i) => ({
    metric: row.metric!,
    apiserver: apiserver.table[i]!.value!,
    up: row.value!,
    'up ÷ apiserver':
      typeof row.value === 'number' &&
      typeof apiserver.table[i]!.value === 'number' &&
      apiserver.table[i]!.value !== 0
        ? r2(row.value / (apiserver.table[i]!.value as number))
        : '',
    goal: row.goal!,
    'met (up)': row.met!,
  }));
  table.splice(1, 0, {
    metric: "up's pod creates/s ÷ apiserver's",
    apiserver: '',
    up: '',
    'up ÷ apiserver': r2(ratios.upOverApiserverCreatesPerSec),
    goal: '≥ 0.9',
    'met (up)': goals.upCreatesAtLeast90PctOfApiserver ? 'yes' : 'no',
  });
  ctx.log(
    `ratio: up ÷ apiserver pod creates/s ${r2(ratios.upOverApiserverCreatesPerSec)}, ` +
      `LIST services p50 ${r2(ratios.upOverApiserverListServicesJsonP50)}, watch p99 ${r2(ratios.upOverApiserverWatchP99)}`,
  );
  return {
    table,
    data: {
      sizes: z,
      loadAverage: { start: loadAtStart, end: loadavg() },
      // up's figures, as users run it; the bare server's are under subjects.apiserver.
      medians: up.m,
      goals,
      ratios,
      subjects: {
        apiserver: { medians: apiserver.m, goals: apiserver.goals, ...apiserver.data },
        up: { medians: up.m, goals: up.goals, ...up.data },
      },
    },
  };
}
