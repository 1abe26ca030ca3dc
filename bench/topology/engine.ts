// The engine alone: decide() over every Service of the shape, in passes (the first a warm-up).
import { performance } from 'node:perf_hooks';
import { decide } from '../../src/core/topology/decide.js';
import { endpointsFromSlices } from '../../src/core/topology/endpoints.js';
import { topologyService } from '../../src/core/topology/rules.js';
import type { Labels, TopologyEndpoint, TopologyService } from '../../src/core/topology/types.js';
import { median } from '../run.js';
import { SEED, buildShape, prng, type Sizes } from './shape.js';

export interface EngineInput {
  service: TopologyService;
  endpoints: TopologyEndpoint[];
}

/** The engine's input, prepared outside its timing (the same shape again, from the same seed). */
export function engineInputOf(z: Sizes): EngineInput[] {
  return buildShape(z, prng(SEED)).services.map((s) => ({
    service: topologyService(s.svc as { metadata?: unknown }),
    endpoints: endpointsFromSlices([s.slice]),
  }));
}

export function measureEngine(
  engineInput: readonly EngineInput[],
  nodes: ReadonlyArray<{ name: string; labels: Labels }>,
  clientName: string,
  evalReps: number,
): { passMs: number[]; medianPassMs: number; viewsPerSec: number; endpointsJudgedPerSec: number } {
  const evalMs: number[] = [];
  const nodeMap = new Map(nodes.map((n) => [n.name, n.labels] as const));
  const lookup = (n: string): Labels | undefined => nodeMap.get(n);
  let judged = 0;
  for (const e of engineInput) judged += e.endpoints.length;
  let sink = 0;
  for (let r = 0; r < evalReps + 1; r++) {
    const t0 = performance.now();
    for (const e of engineInput)
      sink += decide({ service: e.service, endpoints: e.endpoints, nodeLabels: lookup, node: clientName })
        .internal.verdicts.length;
    if (r > 0) evalMs.push(performance.now() - t0); // the first pass is a warm-up
  }
  if (sink !== judged * (evalReps + 1)) throw new Error(`decide judged ${sink} endpoints`);
  const evalMedianMs = median(evalMs);
  return {
    passMs: evalMs,
    medianPassMs: evalMedianMs,
    viewsPerSec: engineInput.length / (evalMedianMs / 1000),
    endpointsJudgedPerSec: judged / (evalMedianMs / 1000),
  };
}
