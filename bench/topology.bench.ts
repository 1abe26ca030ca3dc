// Topology index benchmark: the incremental TopologyIndex (src/core/topology/topology-index.ts) that a node-local
// consumer holds for its own node, against a full rebuild of every view, which is what SuperEdge's
// wrapper does on every node event (B4 in edge-topology.md §1.6). Pure, in-process: no API server.
//
// The shape (full size; --quick is smaller, with the same steps):
//   - 1,000 nodes node-0000 …, labelled superedge.io/unit=unit-NN (100 units of 10 consecutive nodes),
//     topology.kubernetes.io/zone=zone-N (10 zones of 10 units) and kubernetes.io/hostname;
//   - 10,000 ClusterIP Services over 10 namespaces, each with one discovery.k8s.io/v1 EndpointSlice of
//     10 ready endpoints on 10 distinct random nodes (zone set from the node). Rules, drawn at random:
//     ~50% SuperEdge's annotation topologyKeys: '["superedge.io/unit"]', ~25% spec.topologyKeys
//     ["kubernetes.io/hostname","superedge.io/unit","*"], ~15% spec.trafficDistribution PreferSameZone
//     (every endpoint hinted for its own zone), ~10% no rule. Seeded PRNG: every run builds the same set.
//   - one TopologyIndex for the client node node-0000, loaded with every node, Service and slice
//     (timed), its heap measured after forced GCs: the index alone (the caller keeps the input objects),
//     and the index with the input objects it retains (the slices; the caller's references dropped).
//
// Measured in the same run, interleaved (each repetition runs the four in a rotated order, so noise and
// GC hit each of them), every move undone (untimed) right after it, so each repetition starts from the
// same state:
//   A.  a random node (not the client) moves to another random unit: index.setNode(name, labels);
//       `aCalls` such calls per repetition, each timed alone;
//   A2. a random node outside the client's unit moves INTO it: the worst case for a non-client node (every
//       Service with an endpoint there whose rule reads the unit key is recomputed);
//   A3. the client node itself moves to another unit: every Service whose rule reads the unit key is
//       recomputed (not expected to be 100× faster than B);
//   B.  index.rebuildAll(): every view recomputed.
// Ratios B/A and B/A2 are of the medians. Also: the engine alone, decide() over every Service (views/s
// and endpoints judged/s), and a check that the incremental index is right: after each kind of move (and
// after its undo) a full rebuild must find no view that changed.
//
// Goal: A at least 100× faster than B.
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { decide } from '../src/core/topology/decide.js';
import { endpointsFromSlices } from '../src/core/topology/endpoints.js';
import { TopologyIndex } from '../src/core/topology/topology-index.js';
import { HOSTNAME_LABEL, ZONE_LABEL, topologyService } from '../src/core/topology/rules.js';
import type { Labels, TopologyEndpoint, TopologyService } from '../src/core/topology/types.js';
import { median, percentile, type BenchContext, type BenchResult } from './run.js';
import { seededRandom } from '../src/core/scheduling/schedule.js';

const UNIT_LABEL = 'superedge.io/unit';
const SEED = 0x70b0_1064;

interface Sizes {
  readonly nodes: number;
  readonly units: number;
  readonly zones: number;
  readonly namespaces: number;
  readonly services: number;
  readonly endpointsPerService: number;
  /** Timed repetitions (each: aCalls × A, A2, A3, B) after `warmup` untimed ones. */
  readonly reps: number;
  readonly warmup: number;
  readonly aCalls: number;
  /** Timed passes of decide() over every Service. */
  readonly evalReps: number;
}

const FULL: Sizes = {
  nodes: 1000,
  units: 100,
  zones: 10,
  namespaces: 10,
  services: 10_000,
  endpointsPerService: 10,
  reps: 30,
  warmup: 3,
  aCalls: 20,
  evalReps: 5,
};
const QUICK: Sizes = { ...FULL, reps: 5, warmup: 1, aCalls: 10, evalReps: 2 };

type RuleMix = 'superedge' | 'ordered' | 'hints' | 'none';

// ------------------------------------------------------------------------------------------ the shape

const prng = seededRandom;

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const nodeName = (i: number): string => `node-${pad(i, 4)}`;
const unitName = (u: number): string => `unit-${pad(u, 2)}`;

interface Shape {
  /** Node name → labels. */
  readonly nodes: Array<{ name: string; unit: number; labels: Labels }>;
  readonly services: Array<{ key: string; mix: RuleMix; svc: unknown; sliceName: string; slice: unknown }>;
  readonly mix: Record<RuleMix, number>;
}

function nodeLabels(name: string, unit: number, z: Sizes): Labels {
  const unitsPerZone = Math.max(1, Math.floor(z.units / z.zones));
  return {
    [HOSTNAME_LABEL]: name,
    [UNIT_LABEL]: unitName(unit),
    [ZONE_LABEL]: `zone-${Math.min(z.zones - 1, Math.floor(unit / unitsPerZone))}`,
  };
}

function buildShape(z: Sizes, rand: () => number): Shape {
  const perUnit = Math.max(1, Math.floor(z.nodes / z.units));
  const nodes = Array.from({ length: z.nodes }, (_, i) => {
    const unit = Math.min(z.units - 1, Math.floor(i / perUnit));
    const name = nodeName(i);
    return { name, unit, labels: nodeLabels(name, unit, z) };
  });
  const mix: Record<RuleMix, number> = { superedge: 0, ordered: 0, hints: 0, none: 0 };
  const services: Shape['services'] = [];
  for (let s = 0; s < z.services; s++) {
    const namespace = `bench-topo-${pad(s % z.namespaces, 2)}`;
    const name = `svc-${pad(s, 5)}`;
    const r = rand();
    const kind: RuleMix = r < 0.5 ? 'superedge' : r < 0.75 ? 'ordered' : r < 0.9 ? 'hints' : 'none';
    mix[kind]++;
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name,
        namespace,
        ...(kind === 'superedge' ? { annotations: { topologyKeys: `["${UNIT_LABEL}"]` } } : {}),
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: `10.${96 + (s >> 16)}.${(s >> 8) & 255}.${s & 255}`,
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        ...(kind === 'ordered' ? { topologyKeys: [HOSTNAME_LABEL, UNIT_LABEL, '*'] } : {}),
        ...(kind === 'hints' ? { trafficDistribution: 'PreferSameZone' } : {}),
      },
    };
    // distinct random nodes
    const picked = new Set<number>();
    while (picked.size < Math.min(z.endpointsPerService, z.nodes)) picked.add(Math.floor(rand() * z.nodes));
    const endpoints = [...picked].map((n, r) => {
      const k = s * z.endpointsPerService + r;
      const node = nodes[n]!;
      const zone = node.labels[ZONE_LABEL]!;
      return {
        addresses: [`10.${128 + ((k >> 16) & 127)}.${(k >> 8) & 255}.${k & 255}`],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: node.name,
        zone,
        ...(kind === 'hints' ? { hints: { forZones: [{ name: zone }] } } : {}),
      };
    });
    const sliceName = `${name}-${Math.floor(rand() * 36 ** 5)
      .toString(36)
      .padStart(5, '0')}`;
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: sliceName, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints,
    };
    services.push({ key: `${namespace}/${name}`, mix: kind, svc, sliceName, slice });
  }
  return { nodes, services, mix };
}

// ------------------------------------------------------------------------------------------ helpers

/** A full, forced GC: --expose-gc's gc() if the process has it, else turned on at run time. */
function gcFunction(): { gc: () => void; how: string } {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return { gc: g, how: '--expose-gc' };
  v8.setFlagsFromString('--expose-gc');
  return { gc: vm.runInNewContext('gc') as () => void, how: "v8.setFlagsFromString('--expose-gc')" };
}

function settledHeap(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

interface Move {
  ms: number;
  recomputed: number;
  changed: number;
}

/** One timed setNode, then its undo (untimed). */
function timedMove(index: TopologyIndex, name: string, to: Labels, back: Labels): Move {
  const before = index.recomputed;
  const t0 = performance.now();
  const changed = index.setNode(name, to);
  const ms = performance.now() - t0;
  const recomputed = index.recomputed - before;
  index.setNode(name, back);
  return { ms, recomputed, changed: changed.length };
}

function withUnit(labels: Labels, unit: number): Labels {
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

interface MoveStats {
  ms: Dist;
  recomputed: Dist;
  changed: Dist;
  samples: number;
}
const moveStats = (ms: Move[]): MoveStats => ({
  ms: dist(ms.map((m) => m.ms)),
  recomputed: dist(ms.map((m) => m.recomputed)),
  changed: dist(ms.map((m) => m.changed)),
  samples: ms.length,
});

/** Builds the shape and loads it into a new index; the shape is dropped on return. */
function loadIndex(z: Sizes, client: string, gc: () => void) {
  const shape = buildShape(z, prng(SEED));
  const heapInputs = settledHeap(gc);
  const index = new TopologyIndex(client);
  const tLoad = performance.now();
  for (const n of shape.nodes) index.setNode(n.name, n.labels);
  const tNodes = performance.now();
  for (const s of shape.services) index.setService(s.key, s.svc);
  const tServices = performance.now();
  for (const s of shape.services) index.setSlice(s.key, s.sliceName, s.slice);
  const tSlices = performance.now();
  const load = {
    totalMs: tSlices - tLoad,
    nodesMs: tNodes - tLoad,
    servicesMs: tServices - tNodes,
    slicesMs: tSlices - tServices,
    recomputed: index.recomputed,
  };
  const heapLoaded = settledHeap(gc);
  return { index, nodes: shape.nodes, mix: shape.mix, load, heapInputs, heapLoaded };
}

// ------------------------------------------------------------------------------------------ run

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
  const engineInput: Array<{ service: TopologyService; endpoints: TopologyEndpoint[] }> = buildShape(
    z,
    prng(SEED),
  ).services.map((s) => ({
    service: topologyService(s.svc as { metadata?: unknown }),
    endpoints: endpointsFromSlices([s.slice]),
  }));
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
  const evalMs: number[] = [];
  const nodeMap = new Map(nodes.map((n) => [n.name, n.labels] as const));
  const lookup = (n: string): Labels | undefined => nodeMap.get(n);
  let judged = 0;
  for (const e of engineInput) judged += e.endpoints.length;
  let sink = 0;
  for (let r = 0; r < z.evalReps + 1; r++) {
    const t0 = performance.now();
    for (const e of engineInput)
      sink += decide({ service: e.service, endpoints: e.endpoints, nodeLabels: lookup, node: clientName })
        .internal.verdicts.length;
    if (r > 0) evalMs.push(performance.now() - t0); // the first pass is a warm-up
  }
  if (sink !== judged * (z.evalReps + 1)) throw new Error(`decide judged ${sink} endpoints`);
  const evalMedianMs = median(evalMs);
  const engine = {
    passMs: evalMs,
    medianPassMs: evalMedianMs,
    viewsPerSec: engineInput.length / (evalMedianMs / 1000),
    endpointsJudgedPerSec: judged / (evalMedianMs / 1000),
  };

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
  const row = (
    metric: string,
    value: string | number,
    goal = '',
    met = '',
  ): Record<string, string | number> => ({ metric, value, goal, met });
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
