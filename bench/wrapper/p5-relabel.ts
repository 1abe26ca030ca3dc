// P5: one node relabel, upstream PATCH response → the wrapper's watch event for the last served slice
// that changes, interleaved with the full-rebuild model (what SuperEdge's wrapper does on every node event)
// over the same objects in this process.
import { performance } from 'node:perf_hooks';
import type { Labels } from '../../src/core/topology/types.js';
import { epochMs, request } from '../lib/http.js';
import { sleep } from '../lib/process.js';
import { Watch, type WatchEventLine } from '../lib/watch.js';
import { median } from '../run.js';
import { getJson, type List, wrapperMetrics } from './api.js';
import type { Model } from './model.js';
import { SLICES_PATH, UNIT_LABEL, unitName, type ShapeNode } from './shape.js';
import { cpuWindow, gcFunction } from './usage.js';
import type { Session } from './session.js';

export interface RelabelInputs extends Session {
  /** The wrapper's node: its index in the shape, and the node. */
  readonly CLIENT: number;
  readonly client: ShapeNode;
  readonly model: Model;
  readonly upPid: number;
}

export async function measureRelabel(inputs: RelabelInputs) {
  const { ctx, z, shape, CLIENT, client, model, wAgent, wc, upAgent, up, wpid, upPid } = inputs;
  const clientUnit = client.unit;
  const otherUnit = (clientUnit + Math.floor(z.units / 2)) % z.units;
  const labelsOf = (i: number): Labels => shape.nodes[i]!.labels;
  const moved = (i: number, unit: number): Labels => ({ ...labelsOf(i), [UNIT_LABEL]: unitName(unit) });
  // The node of the client's unit whose move out changes the most served slices.
  let mover = -1;
  let moverSlices = -1;
  for (let i = 0; i < shape.nodes.length; i++) {
    if (i === CLIENT || shape.nodes[i]!.unit !== clientUnit) continue;
    const n = model.setNode(shape.nodes[i]!.name, moved(i, otherUnit)).length;
    model.setNode(shape.nodes[i]!.name, labelsOf(i));
    if (n > moverSlices) [mover, moverSlices] = [i, n];
  }
  if (mover < 0 || moverSlices <= 0) throw new Error('no node of the client unit changes a served slice');
  const moverName = shape.nodes[mover]!.name;
  ctx.log(
    `P5: moving ${moverName} between ${unitName(clientUnit)} and ${unitName(otherUnit)} (${moverSlices} slices)`,
  );

  const rv0 = (await getJson<List>(wAgent, wc, `${SLICES_PATH}?limit=1`)).metadata.resourceVersion;
  let expect: Map<string, number> | undefined;
  let unexpected = 0;
  const watchErrors: string[] = [];
  const watch = new Watch(
    wc,
    SLICES_PATH,
    (ev: WatchEventLine, t: number) => {
      const key = `${ev.object.metadata?.namespace}/${ev.object.metadata?.name}`;
      if (expect === undefined) {
        unexpected++;
        return;
      }
      const at = expect.get(key);
      if (at === undefined) unexpected++;
      else if (Number.isNaN(at)) expect.set(key, t);
      else unexpected++;
    },
    {},
    (err) => watchErrors.push(err.message),
    rv0,
  );
  await watch.connected();
  // The same relabel as any upstream client sees it (the wrapper's reflector watches the same way).
  let upstreamNodeAt = NaN;
  const nodesRv = (await getJson<List>(upAgent, up, '/api/v1/nodes?limit=1')).metadata.resourceVersion;
  const nodeWatch = new Watch(
    up,
    '/api/v1/nodes',
    (ev, t) => {
      if (ev.object.metadata?.name === moverName && Number.isNaN(upstreamNodeAt)) upstreamNodeAt = t;
    },
    {},
    (err) => watchErrors.push(`upstream nodes: ${err.message}`),
    nodesRv,
  );
  await nodeWatch.connected();
  interface Rep {
    direction: 'out' | 'in';
    slices: number;
    patchMs: number;
    upstreamEventMs: number;
    firstMs: number;
    lastMs: number;
    missing: number;
    wrapperRecomputeMs: number;
    wrapperRecomputes: number;
    wrapperWrites: number;
    rebuildMs: number;
    serveMs: number;
    serializeMs: number;
  }
  const reps: Rep[] = [];
  const gc = gcFunction();
  let cpu5: ReturnType<typeof cpuWindow> | undefined;
  for (let rep = -z.warmup; rep < z.reps; rep++) {
    if (rep === 0) cpu5 = cpuWindow({ wrapper: wpid, up: upPid });
    const out = (rep + z.warmup) % 2 === 0;
    const labels = out ? moved(mover, otherUnit) : labelsOf(mover);
    let rebuilt: ReturnType<Model['rebuild']> | undefined;
    if (rep % 2 === 0) rebuilt = model.rebuild();
    const keys = model.setNode(moverName, labels);
    gc();
    await sleep(100);
    const m0 = await wrapperMetrics(wAgent, wc);
    expect = new Map(keys.map((k) => [k, NaN]));
    upstreamNodeAt = NaN;
    unexpected = 0;
    const tSend = epochMs();
    const res = await request(upAgent, up, 'PATCH', `/api/v1/nodes/${moverName}`, {
      body: JSON.stringify({ metadata: { labels: { [UNIT_LABEL]: labels[UNIT_LABEL] } } }),
      contentType: 'application/merge-patch+json',
      keepText: true,
    });
    const t0 = epochMs();
    if (res.status !== 200)
      throw new Error(`PATCH node ${moverName}: ${res.status} ${res.text?.slice(0, 300)}`);
    const deadline = performance.now() + z.eventTimeoutMs;
    const done = (): boolean => [...expect!.values()].every((t) => !Number.isNaN(t));
    while (!done() && performance.now() < deadline) await sleep(5);
    await sleep(200); // events that should not come
    const times = [...expect.values()];
    const seen = times.filter((t) => !Number.isNaN(t));
    const m1 = await wrapperMetrics(wAgent, wc);
    expect = undefined;
    if (rebuilt === undefined) {
      gc();
      rebuilt = model.rebuild();
    }
    const r: Rep = {
      direction: out ? 'out' : 'in',
      slices: keys.length,
      patchMs: t0 - tSend,
      upstreamEventMs: upstreamNodeAt - t0,
      firstMs: Math.min(...seen) - t0,
      lastMs: seen.length === times.length ? Math.max(...seen) - t0 : NaN,
      missing: times.length - seen.length,
      wrapperRecomputeMs: (m1.recomputeSum - m0.recomputeSum) * 1000,
      wrapperRecomputes: m1.recomputeCount - m0.recomputeCount,
      wrapperWrites: m1.puts + m1.deletes - m0.puts - m0.deletes,
      ...rebuilt,
    };
    if (unexpected > 0) ctx.log(`P5: ${unexpected} unexpected slice events`);
    if (rep < 0) continue;
    reps.push(r);
    if (rep % 5 === 4 || rep === z.reps - 1)
      ctx.log(
        `P5 rep ${rep + 1}/${z.reps} (${r.direction}): ${r.slices} slices, last event ${r.lastMs.toFixed(1)} ms ` +
          `after the PATCH response (wrapper index ${r.wrapperRecomputeMs.toFixed(2)} ms); rebuild model ` +
          `${(r.rebuildMs + r.serveMs).toFixed(1)} ms`,
      );
  }
  watch.stop();
  nodeWatch.stop();
  const p5Cpu = cpu5!();
  const med = (f: (r: Rep) => number): number => median(reps.map(f));
  const p5 = {
    node: moverName,
    between: [unitName(clientUnit), unitName(otherUnit)],
    slicesPerMove: med((r) => r.slices),
    missing: reps.reduce((a, r) => a + r.missing, 0),
    unexpected,
    watchErrors: watchErrors.slice(0, 5),
    medians: {
      patchMs: med((r) => r.patchMs),
      upstreamEventMs: med((r) => r.upstreamEventMs),
      firstEventMs: med((r) => r.firstMs),
      lastEventMs: med((r) => r.lastMs),
      wrapperRecomputeMs: med((r) => r.wrapperRecomputeMs),
      wrapperWrites: med((r) => r.wrapperWrites),
      rebuildAllMs: med((r) => r.rebuildMs),
      reserveMs: med((r) => r.serveMs),
      rebuildModelMs: med((r) => r.rebuildMs + r.serveMs),
      serializeMs: med((r) => r.serializeMs),
    },
    ratios: {} as Record<string, number>,
    cpuCores: p5Cpu,
    reps,
  };
  p5.ratios = {
    rebuildModelOverRelabelEndToEnd: p5.medians.rebuildModelMs / p5.medians.lastEventMs,
    rebuildModelOverWrapperIndexUpdate: p5.medians.rebuildModelMs / p5.medians.wrapperRecomputeMs,
    pairedMedianRebuildOverEndToEnd: median(reps.map((r) => (r.rebuildMs + r.serveMs) / r.lastMs)),
  };
  ctx.log(
    `P5: last event ${p5.medians.lastEventMs.toFixed(1)} ms (median), rebuild model ` +
      `${p5.medians.rebuildModelMs.toFixed(1)} ms: ${p5.ratios.rebuildModelOverRelabelEndToEnd!.toFixed(1)}×`,
  );
  return { p5, clientUnit, mover, moverName };
}
