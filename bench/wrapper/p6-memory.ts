// P6: the wrapper's memory with everything loaded (RSS, after forced GCs, the JS heap, what its memory
// cgroup charges); a LIST of every slice through the wrapper must equal what the engine serves its node;
// then every slice changes once upstream with a kube-proxy watch open, and the memory is read again.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gcAndReport } from '../lib/gc-hook.js';
import { memory, sleep } from '../lib/process.js';
import { Watch } from '../lib/watch.js';
import { median } from '../run.js';
import { getJson, listAll, sendAll, waitQuiet, wrapperMetrics, type List } from './api.js';
import type { Model } from './model.js';
import { CHURN_ANNOTATION, MiB, SLICES_PATH, type ShapeNode } from './shape.js';
import { dirBytes } from './usage.js';
import type { Charges, Session } from './session.js';

export interface MemoryInputs extends Session, Charges {
  readonly client: ShapeNode;
  readonly model: Model;
  /** Where the wrapper's GC preload writes its report on SIGUSR2. */
  readonly gcOut: string;
  readonly wrapDir: string;
}

export async function measureMemory(inputs: MemoryInputs) {
  const { ctx, z, shape, client, model, wAgent, wc, upAgent, up, wpid, gcOut, wrapDir, charges, charge } =
    inputs;
  await waitQuiet(wpid, 1000, 30_000);
  const rssSamples: number[] = [];
  const anonSamples: number[] = [];
  const fileSamples: number[] = [];
  for (let i = 0; i < z.rssSamples; i++) {
    if (i > 0) await sleep(z.rssSampleMs);
    const m = memory(wpid);
    rssSamples.push(m.rssMiB);
    anonSamples.push(m.anonMiB);
    fileSamples.push(m.fileMiB);
  }
  const peakAfterSyncMiB = memory(wpid).hwmMiB;
  charges.loaded = charge();
  /** Three full GCs in the wrapper (the preload), its process.memoryUsage(), then RSS samples. */
  const afterGc = async () => {
    const report = await gcAndReport(wpid, gcOut, 'the wrapper');
    ctx.log(
      `  V8 heap spaces after GC, committed/used MiB: ${report.spaces
        .filter(([, c]) => c >= MiB / 2)
        .map(([n, c, u]) => `${n.replace(/_space$/, '')} ${(c / MiB).toFixed(1)}/${(u / MiB).toFixed(1)}`)
        .join(', ')}`,
    );
    await sleep(500);
    const rss: number[] = [];
    for (let i = 0; i < z.rssSamples; i++) {
      if (i > 0) await sleep(z.rssSampleMs);
      rss.push(memory(wpid).rssMiB);
    }
    return { report, rss };
  };
  const { report: gcReport, rss: rssAfterGc } = await afterGc();
  const p6 = {
    rssMiB: median(rssSamples),
    rssSamplesMiB: rssSamples,
    // A memory cgroup can reclaim the file-backed part (clean pages of the node binary) under pressure;
    // the anonymous part it cannot.
    rssAnonMiB: median(anonSamples),
    rssFileMiB: median(fileSamples),
    rssAfterGcMiB: median(rssAfterGc),
    heapUsedMiB: gcReport.heapUsed / MiB,
    heapTotalMiB: gcReport.heapTotal / MiB,
    externalMiB: gcReport.external / MiB,
    arrayBuffersMiB: gcReport.arrayBuffers / MiB,
    peakMiB: peakAfterSyncMiB,
    viewsStoreBytes: dirBytes(path.join(wrapDir, 'views')),
    method:
      'VmRSS of /proc/<pid>/status, median of samples once the wrapper used < 0.05 cores for 1 s; then ' +
      'SIGUSR2 → 3 × gc() in the wrapper (a --import preload with --expose-gc) → process.memoryUsage(), ' +
      'and VmRSS again; peak = VmHWM (the initial sync)',
  };
  ctx.log(
    `P6: wrapper RSS ${p6.rssMiB.toFixed(1)} MiB (after forced GC ${p6.rssAfterGcMiB.toFixed(1)} MiB, JS heap ` +
      `${p6.heapUsedMiB.toFixed(1)} MiB used; peak ${p6.peakMiB.toFixed(1)} MiB)`,
  );

  // ---- correctness: every served slice is what the engine serves this node
  const served = await listAll(wAgent, wc, SLICES_PATH);
  const mismatched: string[] = [];
  for (const sl of served.items) {
    const key = `${sl.metadata.namespace}/${sl.metadata.name}`;
    if (!model.slices.has(key)) mismatched.push(`${key}: not upstream`);
    else if (JSON.stringify((sl as { endpoints?: unknown }).endpoints ?? []) !== model.served.get(key))
      mismatched.push(`${key}: endpoints differ`);
  }
  const servedCheck = {
    served: served.items.length,
    upstream: model.slices.size,
    mismatched: mismatched.length,
    examples: mismatched.slice(0, 5),
    filtered: served.items.filter(
      (sl) => ((sl as { endpoints?: unknown[] }).endpoints ?? []).length < z.endpointsPerService,
    ).length,
  };
  if (servedCheck.served !== servedCheck.upstream || servedCheck.mismatched > 0)
    throw new Error(`served slices differ from the model: ${JSON.stringify(servedCheck)}`);
  ctx.log(
    `check: ${servedCheck.served} served slices equal the engine's (${servedCheck.filtered} filtered for ${client.name})`,
  );

  // ---- P6 under churn: every slice changed once upstream (as a rolling restart of every workload
  // would), so the watch cache's history holds a superseded version of each object it still reaches.
  // With a watch open as kube-proxy keeps one (its label selector), since what a watcher is handed is
  // part of what the wrapper may keep.
  let churnEvents = 0;
  const churnRv = (await getJson<List>(wAgent, wc, `${SLICES_PATH}?limit=1`)).metadata.resourceVersion;
  const proxyWatch = new Watch(
    wc,
    SLICES_PATH,
    () => churnEvents++,
    { labelSelector: '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name' },
    () => {},
    churnRv,
  );
  await proxyWatch.connected();
  const m0 = await wrapperMetrics(wAgent, wc);
  const churnS = await sendAll(
    upAgent,
    up,
    shape.services.map((s) => ({
      method: 'PATCH',
      path: `/apis/discovery.k8s.io/v1/namespaces/${s.namespace}/endpointslices/${s.sliceName}`,
      body: JSON.stringify({ metadata: { annotations: { [CHURN_ANNOTATION]: '1' } } }),
      contentType: 'application/merge-patch+json',
    })),
    z.concurrency,
  );
  for (let t0 = performance.now(); ;) {
    const m = await wrapperMetrics(wAgent, wc);
    if (m.puts - m0.puts >= shape.services.length && churnEvents >= shape.services.length) break;
    if (performance.now() - t0 > z.syncTimeoutS * 1000)
      throw new Error(
        `the wrapper served ${m.puts - m0.puts} of ${shape.services.length} churned slices; its watch ` +
          `saw ${churnEvents}`,
      );
    await sleep(250);
  }
  await waitQuiet(wpid, 1000, 30_000);
  const churnRss: number[] = [];
  for (let i = 0; i < z.rssSamples; i++) {
    if (i > 0) await sleep(z.rssSampleMs);
    churnRss.push(memory(wpid).rssMiB);
  }
  charges.afterChurn = charge();
  const churnGc = await afterGc();
  proxyWatch.stop();
  const churn = {
    updates: shape.services.length,
    sendS: churnS,
    rssMiB: median(churnRss),
    rssAfterGcMiB: median(churnGc.rss),
    heapUsedMiB: churnGc.report.heapUsed / MiB,
    heapTotalMiB: churnGc.report.heapTotal / MiB,
  };
  ctx.log(
    `P6 after churn (${churn.updates} slice updates): RSS ${churn.rssMiB.toFixed(1)} MiB (after forced GC ` +
      `${churn.rssAfterGcMiB.toFixed(1)} MiB, JS heap ${churn.heapUsedMiB.toFixed(1)} MiB used)`,
  );
  return { p6, servedCheck, churn };
}
