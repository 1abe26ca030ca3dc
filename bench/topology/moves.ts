// One timed node move (then undone, untimed) and the distribution of many.
import { performance } from 'node:perf_hooks';
import type { TopologyIndex } from '../../src/core/topology/topology-index.js';
import type { Labels } from '../../src/core/topology/types.js';
import { median, percentile } from '../run.js';
import { UNIT_LABEL, unitName } from './shape.js';

export interface Move {
  ms: number;
  recomputed: number;
  changed: number;
}

/** One timed setNode, then its undo (untimed). */
export function timedMove(index: TopologyIndex, name: string, to: Labels, back: Labels): Move {
  const before = index.recomputed;
  const t0 = performance.now();
  const changed = index.setNode(name, to);
  const ms = performance.now() - t0;
  const recomputed = index.recomputed - before;
  index.setNode(name, back);
  return { ms, recomputed, changed: changed.length };
}

export function withUnit(labels: Labels, unit: number): Labels {
  return { ...labels, [UNIT_LABEL]: unitName(unit) };
}

interface Dist {
  median: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}
const dist = (xs: number[]): Dist => ({
  median: median(xs),
  p90: percentile(xs, 90),
  p99: percentile(xs, 99),
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
  min: Math.min(...xs),
  max: Math.max(...xs),
});

export interface MoveStats {
  ms: Dist;
  recomputed: Dist;
  changed: Dist;
  samples: number;
}
export const moveStats = (ms: Move[]): MoveStats => ({
  ms: dist(ms.map((m) => m.ms)),
  recomputed: dist(ms.map((m) => m.recomputed)),
  changed: dist(ms.map((m) => m.changed)),
  samples: ms.length,
});
