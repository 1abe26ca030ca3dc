// P7: 1,000 watchers of endpointslices through the wrapper, then paced upstream writes: each write's
// delivery to every watcher, drops and duplicates; then P7's floor, the same event from a bare HTTPS
// fan-out to the same watchers and client processes.
import { performance } from 'node:perf_hooks';
import type { KObject } from '../../src/api/object.js';
import { epochMs, request } from '../lib/http.js';
import { cpuSeconds, memory, sleep, Worker } from '../lib/process.js';
import { Watch } from '../lib/watch.js';
import { median, percentile } from '../run.js';
import { getJson, type List } from './api.js';
import { fanoutStats, floorFanout } from './fanout.js';
import { SEQ_ANNOTATION, SLICES_PATH, type ShapeService } from './shape.js';
import { cpuWindow } from './usage.js';
import { ROLE_ENV, WATCHER_MODULE, type WatcherCollect, type WatcherRequest } from './watcher.js';
import type { Charges, Session } from './session.js';

export interface FanoutInputs extends Session, Charges {
  readonly clientUnit: number;
  /** P5's moving node, whose endpoints are not written to. */
  readonly mover: number;
  /** The watcher processes; the run stops them at the end, whatever happens. */
  readonly workers: Array<Worker<WatcherRequest>>;
  readonly upPid: number;
}

export async function measureFanout(inputs: FanoutInputs) {
  const { ctx, z, shape, clientUnit, mover, workers, wAgent, wc, upAgent, up, wpid, upPid, charges, charge } =
    inputs;
  const nWorkers = Math.max(1, Math.min(z.watchWorkers, z.watchers));
  for (let i = 0; i < nWorkers; i++)
    workers.push(new Worker<WatcherRequest>(WATCHER_MODULE, { [ROLE_ENV]: 'watcher' }, `watcher-${i}`));
  const rv7 = (await getJson<List>(wAgent, wc, `${SLICES_PATH}?limit=1`)).metadata.resourceVersion;
  // Each write as an upstream client sees it: the upstream's share of the latency.
  const upstreamSeqAt = new Map<number, number>();
  const slicesRv = (await getJson<List>(upAgent, up, `${SLICES_PATH}?limit=1`)).metadata.resourceVersion;
  const sliceWatch = new Watch(
    up,
    SLICES_PATH,
    (ev, t) => {
      const seq = (ev.object.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
        SEQ_ANNOTATION
      ];
      if (seq !== undefined && !upstreamSeqAt.has(Number(seq))) upstreamSeqAt.set(Number(seq), t);
    },
    {},
    () => {},
    slicesRv,
  );
  await sliceWatch.connected();
  const per = workers.map((_, i) => Math.floor(z.watchers / nWorkers) + (i < z.watchers % nWorkers ? 1 : 0));
  const tConnect = performance.now();
  const workerPids = await Promise.all(
    workers.map((w, i) => w.call<number>({ op: 'start', conn: wc, rv: rv7, count: per[i]! })),
  );
  const connectS = (performance.now() - tConnect) / 1000;
  ctx.log(
    `P7: ${z.watchers} watches open through the wrapper in ${connectS.toFixed(1)} s (${nWorkers} processes)`,
  );
  await sleep(500);
  const rssWithWatchersMiB = memory(wpid).rssMiB;
  charges.withWatchers = charge();
  // Targets: SuperEdge Services with an endpoint on a node of the client's unit (kept for the client).
  const targets: Array<{ svc: ShapeService; e: number }> = [];
  for (const s of shape.services) {
    if (s.mix !== 'superedge') continue;
    const e = s.endpointNodes.findIndex((n) => shape.nodes[n]!.unit === clientUnit && n !== mover);
    if (e >= 0) targets.push({ svc: s, e });
    if (targets.length === 2) break;
  }
  if (targets.length === 0) throw new Error('no SuperEdge Service with an endpoint in the client unit');
  const readyNow = new Map<string, boolean>();
  await Promise.all(workers.map((w) => w.call({ op: 'begin', writes: z.writes })));
  const cpu7 = cpuWindow({ wrapper: wpid, up: upPid }, () =>
    workerPids.reduce((a, p) => a + cpuSeconds(p), 0),
  );
  const writeT0: number[] = [];
  const writeRtt: number[] = [];
  for (let k = 0; k < z.writes; k++) {
    const { svc, e } = targets[k % targets.length]!;
    const key = `${svc.namespace}/${svc.sliceName}`;
    const now = !(readyNow.get(key) ?? true);
    readyNow.set(key, now);
    const tSend = epochMs();
    const res = await request(
      upAgent,
      up,
      'PATCH',
      `/apis/discovery.k8s.io/v1/namespaces/${svc.namespace}/endpointslices/${svc.sliceName}`,
      {
        body: JSON.stringify([
          { op: 'replace', path: `/endpoints/${e}/conditions/ready`, value: now },
          { op: 'add', path: '/metadata/annotations', value: { [SEQ_ANNOTATION]: String(k) } },
        ]),
        contentType: 'application/json-patch+json',
        keepText: true,
      },
    );
    const t = epochMs();
    if (res.status !== 200) throw new Error(`PATCH slice ${key}: ${res.status} ${res.text?.slice(0, 300)}`);
    writeT0.push(t);
    writeRtt.push(t - tSend);
    await sleep(z.writeSpacingMs);
  }
  const deadline7 = performance.now() + z.eventTimeoutMs;
  for (;;) {
    const prog = await Promise.all(workers.map((w) => w.call<{ received: number }>({ op: 'progress' })));
    if (prog.reduce((a, p) => a + p.received, 0) >= z.watchers * z.writes) break;
    if (performance.now() > deadline7) break;
    await sleep(100);
  }
  const p7Cpu = cpu7();
  sliceWatch.stop();
  const collected = await Promise.all(workers.map((w) => w.call<WatcherCollect>({ op: 'collect' })));
  const { lat, perWrite, drops } = fanoutStats(collected, writeT0, z.writes);
  const p7 = {
    watchers: z.watchers,
    clientProcesses: nWorkers,
    writes: z.writes,
    writeSpacingMs: z.writeSpacingMs,
    connectS,
    deliveries: lat.length,
    p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
    p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
    maxMs: lat.length === 0 ? NaN : Math.max(...lat),
    minMs: lat.length === 0 ? NaN : Math.min(...lat),
    drops,
    duplicates: collected.reduce((a, c) => a + c.duplicates, 0),
    closedWatches: collected.reduce((a, c) => a + c.closed, 0),
    watchErrors: collected.flatMap((c) => c.errors).slice(0, 5),
    patchRttMedianMs: median(writeRtt),
    upstreamEventMedianMs: median(writeT0.map((t, k) => (upstreamSeqAt.get(k) ?? NaN) - t)),
    perWriteMedianP99Ms: median(perWrite.map((w) => w.p99Ms).filter(Number.isFinite)),
    perWriteMedianSpreadMs: median(perWrite.map((w) => w.spreadMs).filter(Number.isFinite)),
    cpu: {
      cores: p7Cpu,
      clientCores: collected.map((c) => c.cpuS / c.wallS),
      clientEventLoopUtilization: collected.map((c) => c.elu),
      workerPids,
    },
    rssWithWatchersMiB,
    perWrite,
  };
  ctx.log(
    `P7: ${p7.deliveries} deliveries, p50 ${p7.p50Ms.toFixed(1)} ms, p99 ${p7.p99Ms.toFixed(1)} ms, ` +
      `max ${p7.maxMs.toFixed(1)} ms, ${drops} drops; wrapper ${p7.cpu.cores.wrapper.toFixed(2)} cores, ` +
      `clients ${p7.cpu.clientCores.map((c) => c.toFixed(2)).join('/')} cores`,
  );
  for (const w of workers) await w.call({ op: 'stop' }).catch(() => undefined);

  // ---- P7's floor: the same event, watchers and client processes, from a bare HTTPS fan-out loop
  const sample = await getJson<KObject>(
    wAgent,
    wc,
    `/apis/discovery.k8s.io/v1/namespaces/${targets[0]!.svc.namespace}/endpointslices/${targets[0]!.svc.sliceName}`,
  );
  const floor = await floorFanout(z, per, sample, (w) => workers.push(w));
  ctx.log(
    `P7 floor (bare HTTPS fan-out, same watchers): p50 ${floor.p50Ms.toFixed(1)} ms, p99 ${floor.p99Ms.toFixed(1)} ms, ` +
      `${floor.drops} drops`,
  );
  return { p7, floor };
}
