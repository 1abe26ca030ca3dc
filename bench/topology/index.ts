// `npm run bench -- topology`: one node's incremental TopologyIndex against a full rebuild of every
// view (what SuperEdge's wrapper does on each node event), interleaved in one run; then the engine alone
// and a check that the index is right. Method and latest figures: docs/benchmarks.md (topology).
import { performance } from 'node:perf_hooks';
import type { Labels } from '../../src/core/topology/types.js';
import { median, type BenchContext, type BenchResult, tableRow as row } from '../run.js';
import { UNIT_LABEL, SEED, FULL, QUICK, type RuleMix, prng, nodeName } from './shape.js';
import { gcFunction, settledHeap } from './heap.js';
import { engineInputOf, measureEngine } from './engine.js';
import { type Move, timedMove, withUnit, type MoveStats, moveStats } from './moves.js';
import { loadIndex } from './load-index.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const { gc, how: gcHow } = gcFunction();
  const CLIENT = 0;
  const clientName = nodeName(CLIENT);

  // ---- shape and load
  const heap0 = settledHeap(gc);
  const { index, nodes, mix, load, heapInputs, heapLoaded } = loadIndex(z, clientName, gc);
  const stats = index.stats();
  // The shape's objects are unreachable now but for what the index retains.
  const heapRetained = settledHeap(gc);
  // The engine's input, prepared outside its timing (the same shape again, from the same seed).
  const engineInput = engineInputOf(z);
  const MiB = 2 ** 20;
  const memory = {
    inputObjectsMiB: (heapInputs - heap0) / MiB,
    /** The index's own structures: views, endpoints, key and node indexes (the caller keeps the JSON). */
    indexMiB: (heapLoaded - heapInputs) / MiB,
    indexBytesPerEndpoint: (heapLoaded - heapInputs) / stats.endpoints,
    /** The index plus the input objects it keeps referencing (each slice as given). */
    indexWithRetainedInputsMiB: (heapRetained - heap0) / MiB,
    indexWithRetainedInputsBytesPerEndpoint: (heapRetained - heap0) / stats.endpoints,
    method: `process.memoryUsage().heapUsed after 3 forced full GCs (gc() via ${gcHow})`,
  };
  ctx.log(
    `loaded ${stats.nodes} nodes, ${stats.services} services, ${stats.endpoints} endpoints in ` +
      `${load.totalMs.toFixed(0)} ms; index ${memory.indexMiB.toFixed(1)} MiB ` +
      `(${memory.indexBytesPerEndpoint.toFixed(0)} B/endpoint), with retained slices ` +
      `${memory.indexWithRetainedInputsMiB.toFixed(1)} MiB`,
  );

  // The views as loaded, for context.
  const keptByMix: Record<RuleMix, { services: number; kept: number; empty: number }> = {
    superedge: { services: 0, kept: 0, empty: 0 },
    ordered: { services: 0, kept: 0, empty: 0 },
    hints: { services: 0, kept: 0, empty: 0 },
    none: { services: 0, kept: 0, empty: 0 },
  };
  const mixOf = (v: { internalRule: { kind: string } }): RuleMix =>
    v.internalRule.kind === 'superedge'
      ? 'superedge'
      : v.internalRule.kind === 'ordered-keys'
        ? 'ordered'
        : v.internalRule.kind === 'hints'
          ? 'hints'
          : 'none';
  for (const v of index.views()) {
    const k = keptByMix[mixOf(v)];
    k.services++;
    k.kept += v.internal.length;
    if (v.internal.length === 0) k.empty++;
  }

  // ---- the moves
  const rand = prng(SEED + 1);
  const labelsOf = (i: number): Labels => nodes[i]!.labels;
  const clientUnit = nodes[CLIENT]!.unit;
  const randInt = (n: number): number => Math.floor(rand() * n);
  const otherUnit = (u: number): number => {
    const v = randInt(z.units - 1);
    return v >= u ? v + 1 : v;
  };
  const randomNonClient = (): number => 1 + randInt(z.nodes - 1);
  const moveA = (): Move => {
    const i = randomNonClient();
    return timedMove(index, nodes[i]!.name, withUnit(labelsOf(i), otherUnit(nodes[i]!.unit)), labelsOf(i));
  };
  const outside = nodes.map((n, i) => i).filter((i) => nodes[i]!.unit !== clientUnit);
  const moveA2 = (): Move => {
    const i = outside[randInt(outside.length)]!;
    return timedMove(index, nodes[i]!.name, withUnit(labelsOf(i), clientUnit), labelsOf(i));
  };
  const moveA3 = (): Move =>
    timedMove(index, clientName, withUnit(labelsOf(CLIENT), otherUnit(clientUnit)), labelsOf(CLIENT));
  const rebuild = (): Move => {
    const before = index.recomputed;
    const t0 = performance.now();
    const changed = index.rebuildAll();
    const ms = performance.now() - t0;
    return { ms, recomputed: index.recomputed - before, changed: changed.length };
  };

  const A: Move[] = [];
  const A2: Move[] = [];
  const A3: Move[] = [];
  const B: Move[] = [];
  const perRep: Array<{ aMedianMs: number; a2Ms: number; a3Ms: number; bMs: number }> = [];
  const steps: Array<[string, () => void]> = [];
  for (let rep = -z.warmup; rep < z.reps; rep++) {
    const timed = rep >= 0;
    const a: Move[] = [];
    let a2: Move | undefined;
    let a3: Move | undefined;
    let b: Move | undefined;
    steps.length = 0;
    steps.push(
      ['A', () => a.push(...Array.from({ length: z.aCalls }, moveA))],
      ['A2', () => (a2 = moveA2())],
      ['B', () => (b = rebuild())],
      ['A3', () => (a3 = moveA3())],
    );
    const shift = ((rep % steps.length) + steps.length) % steps.length;
    for (let k = 0; k < steps.length; k++) steps[(k + shift) % steps.length]![1]();
    if (!timed) continue;
    A.push(...a);
    A2.push(a2!);
    A3.push(a3!);
    B.push(b!);
    perRep.push({ aMedianMs: median(a.map((m) => m.ms)), a2Ms: a2!.ms, a3Ms: a3!.ms, bMs: b!.ms });
    if (rep % 5 === 4 || rep === z.reps - 1)
      ctx.log(
        `rep ${rep + 1}/${z.reps}: A ${(median(a.map((m) => m.ms)) * 1000).toFixed(1)} µs, ` +
          `A2 ${a2!.ms.toFixed(2)} ms (${a2!.recomputed} views), A3 ${a3!.ms.toFixed(1)} ms ` +
          `(${a3!.recomputed} views), B ${b!.ms.toFixed(1)} ms`,
      );
  }

  // ---- the engine alone
  const engine = measureEngine(engineInput, nodes, clientName, z.evalReps);

  // ---- is the incremental index right? After each kind of move, and after its undo, a rebuild must
  // find nothing to change.
  const stale: Array<{ move: string; phase: 'after' | 'undone'; changed: number }> = [];
  const verify = (move: string, i: number, to: Labels): void => {
    const name = nodes[i]!.name;
    index.setNode(name, to);
    const after = index.rebuildAll().length;
    if (after > 0) stale.push({ move, phase: 'after', changed: after });
    index.setNode(name, labelsOf(i));
    const undone = index.rebuildAll().length;
    if (undone > 0) stale.push({ move, phase: 'undone', changed: undone });
  };
  const intoClient = outside[randInt(outside.length)]!;
  const betweenOthers = outside[randInt(outside.length)]!;
  const insideClient = nodes.findIndex((n, i) => i !== CLIENT && n.unit === clientUnit);
  verify('into the client unit', intoClient, withUnit(labelsOf(intoClient), clientUnit));
  let elsewhere = otherUnit(nodes[betweenOthers]!.unit);
  while (elsewhere === clientUnit) elsewhere = otherUnit(nodes[betweenOthers]!.unit);
  verify('between two other units', betweenOthers, withUnit(labelsOf(betweenOthers), elsewhere));
  if (insideClient >= 0)
    verify('out of the client unit', insideClient, withUnit(labelsOf(insideClient), otherUnit(clientUnit)));
  verify('client', CLIENT, withUnit(labelsOf(CLIENT), otherUnit(clientUnit)));
  const bChanged = B.reduce((a, m) => a + m.changed, 0);

  // ---- results
  const a = moveStats(A);
  const a2 = moveStats(A2);
  const a3 = moveStats(A3);
  const b = moveStats(B);
  const ratios = {
    bOverA: b.ms.median / a.ms.median,
    bOverAMean: b.ms.mean / a.ms.mean,
    bOverA2: b.ms.median / a2.ms.median,
    bOverA3: b.ms.median / a3.ms.median,
    /** The same ratios per repetition (paired), then their median. */
    pairedMedianBOverA: median(perRep.map((r) => r.bMs / r.aMedianMs)),
    pairedMedianBOverA2: median(perRep.map((r) => r.bMs / r.a2Ms)),
  };
  const goals = { incrementalAtLeast100xFasterThanRebuild: ratios.bOverA >= 100 };

  const round = (x: number): number =>
    Math.abs(x) >= 100
      ? Math.round(x)
      : Math.abs(x) >= 1
        ? Math.round(x * 100) / 100
        : Number(x.toPrecision(3));
  const us = (ms: number): number => round(ms * 1000);
  const moveRows = (label: string, s: MoveStats): Array<Record<string, string | number>> => [
    row(`${label}: median / p99 (µs)`, `${us(s.ms.median)} / ${us(s.ms.p99)}`),
    row(
      `${label}: views recomputed / changed (median; mean)`,
      `${round(s.recomputed.median)} / ${round(s.changed.median)}; ${round(s.recomputed.mean)} / ${round(s.changed.mean)}`,
    ),
  ];
  const table: Array<Record<string, string | number>> = [
    row(
      'shape',
      `${stats.nodes} nodes, ${z.units} units, ${stats.services} svc × ${z.endpointsPerService} eps; ` +
        `rules ${mix.superedge}/${mix.ordered}/${mix.hints}/${mix.none} (SE/keys/hints/none)`,
    ),
    row('load: nodes + services + slices (ms)', round(load.totalMs)),
    row('index heap (MiB; B/endpoint)', `${round(memory.indexMiB)}; ${round(memory.indexBytesPerEndpoint)}`),
    row(
      'index + retained slices heap (MiB; B/endpoint)',
      `${round(memory.indexWithRetainedInputsMiB)}; ${round(memory.indexWithRetainedInputsBytesPerEndpoint)}`,
    ),
    ...moveRows(`A  random node → random unit (${A.length} calls)`, a),
    ...moveRows(`A2 node → client's unit (${A2.length})`, a2),
    ...moveRows(`A3 client node → other unit (${A3.length})`, a3),
    ...moveRows(`B  rebuildAll (${B.length})`, b),
    row(
      'B / A (medians)',
      round(ratios.bOverA),
      '≥ 100',
      goals.incrementalAtLeast100xFasterThanRebuild ? 'yes' : 'no',
    ),
    row('B / A (means)', round(ratios.bOverAMean)),
    row('B / A2 (medians)', round(ratios.bOverA2)),
    row('B / A3 (medians)', round(ratios.bOverA3)),
    row('engine: decide() views/s', round(engine.viewsPerSec)),
    row('engine: endpoints judged/s', round(engine.endpointsJudgedPerSec)),
    row(
      'incremental = rebuild (stale views found)',
      `${stale.length === 0 && bChanged === 0 ? 'yes' : 'NO'} (${stale.reduce((x, s) => x + s.changed, 0) + bChanged})`,
    ),
  ];
  return {
    table,
    data: {
      sizes: z,
      seed: SEED,
      client: clientName,
      setup: {
        shape:
          `${z.nodes} nodes in ${z.units} units (${UNIT_LABEL}) and ${z.zones} zones; ${z.services} ClusterIP ` +
          `Services over ${z.namespaces} namespaces, each one EndpointSlice of ${z.endpointsPerService} ready ` +
          'endpoints on distinct random nodes',
        rules: mix,
        moves:
          'each move is one index.setNode(name, labels) changing only the unit label, timed alone, then undone ' +
          '(untimed); repetitions run A (aCalls moves), A2, B, A3 in an order rotated each repetition',
        memory: memory.method,
      },
      load,
      stats,
      memory,
      views: keptByMix,
      moves: { A: a, A2: a2, A3: a3, B: b },
      ratios,
      engine,
      correctness: { staleAfterMoves: stale, changedByTimedRebuilds: bChanged },
      goals,
      perRepetition: perRep,
    },
  };
}
