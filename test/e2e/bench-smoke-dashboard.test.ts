// The dashboard benchmark must keep working: it runs in --quick mode (20 nodes × 200 Services, numbers
// meaningless) and must write its JSON with every figure (test/support/bench-smoke.ts). Performance is
// never asserted here; that every load painted and every relabel reached the page's cell is, since the
// benchmark fails otherwise.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runQuickBench } from '../support/bench-smoke.js';

it('npm run bench -- dashboard --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('dashboard');
  const out = r.results as {
    firstPaintMs: { standalone: number[]; up: number[] };
    relabelMs: { all: number[] };
    upRelabelMs: { all: number[] };
    cpuMsPerChange: number;
    dashboardRssMiB: number;
  };
  for (const [k, xs] of Object.entries({
    paint: out.firstPaintMs.standalone,
    upPaint: out.firstPaintMs.up,
    relabel: out.relabelMs.all,
    upRelabel: out.upRelabelMs.all,
  })) {
    assert.ok(xs.length > 0, k);
    for (const x of xs) assert.ok(Number.isFinite(x) && x > 0, `${k}: ${x}`);
  }
  assert.ok(Number.isFinite(out.cpuMsPerChange) && out.cpuMsPerChange >= 0);
  assert.ok(out.dashboardRssMiB > 0);
});
