// The proxy's memory at P4's size, cheaply: the store is preloaded with every Service's EndpointSlice
// (no pods, so no controllers: `svcplane apiserver` alone upstream), then the wrapper and
// `svcplane proxy` run against it as in P4, all inside a network namespace made for the run. After the
// proxy's first full sync and 3 quiet seconds, its peak (VmHWM) and settled RSS (VmRSS, 10 s later) are
// read; then a preloaded hook forces full GCs and reports the V8 heap, to tell live data from headroom.
// SVCPLANE_BENCH_PROXY_MEMORY_MODES=nftables,iptables chooses the modes (the iptables mode runs
// iptables-legacy, as P4 does); SVCPLANE_BENCH_PROXY_NODE_ARGS adds node flags to the proxy
// (e.g. --max-semi-space-size=4); SVCPLANE_BENCH_PROXY_HEAP_SNAPSHOT=DIR writes a heap snapshot of the
// proxy after the GCs to DIR/proxy-<mode>.heapsnapshot.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  scratchDir,
  startApiServer,
  stopChild,
  svcplaneRuntime,
  writeKubeconfig,
  type Proc,
} from '../lib/cluster.js';
import { ensureDep } from '../lib/deps.js';
import { connFromKubeconfig } from '../lib/http.js';
import { createNetns, type BenchNetns } from '../lib/netns.js';
import { preloadCluster } from '../lib/preload.js';
import { GC_HOOK, gcAndReport, type GcReport } from '../lib/gc-hook.js';
import { memory, sleep, Worker } from '../lib/process.js';
import type { BenchContext } from '../run.js';
import { legacyShim } from './programs.js';
import type { ClientRequest } from './p4-client.js';
import type { Sizes } from './shape.js';
import { ROLE_ENV, WORKER_MODULE } from './workers.js';
import { startNodeProxy, startNodeWrapper } from './node-agents.js';

type Mode = 'nftables' | 'iptables';

const MiB = 2 ** 20;
const round1 = (x: number): number => Math.round(x * 10) / 10;

export interface ProxyMemory {
  mode: Mode;
  /** From the proxy's spawn to its first full sync's end (s). */
  inSyncS: number;
  firstFullSyncMs: number;
  peakMiB: number;
  /** VmRSS 10 s after the proxy went quiet. */
  settledMiB: number;
  settledAnonMiB: number;
  /** After three full GCs: the RSS, and V8's heap (used / committed), external and array buffers (MiB). */
  /** The proxy's figures every 200 ms (see GcReport) and its log lines, by seconds from its spawn. */
  timeline: GcReport['timeline'];
  events: Array<{ s: number; msg: string }>;
  afterGc: {
    rssMiB: number;
    heapUsedMiB: number;
    heapTotalMiB: number;
    externalMiB: number;
    spaces: Record<string, number>;
  };
}

function modesFlag(): Mode[] {
  const v = process.env.SVCPLANE_BENCH_PROXY_MEMORY_MODES ?? 'nftables,iptables';
  return v.split(',').map((m) => {
    if (m !== 'nftables' && m !== 'iptables')
      throw new Error(`SVCPLANE_BENCH_PROXY_MEMORY_MODES: ${m}: nftables or iptables`);
    return m;
  });
}

export async function runProxyMemory(
  ctx: BenchContext,
  z: Sizes,
): Promise<{ shape: Sizes['shape']; runs: ProxyMemory[] }> {
  const shape = z.shape;
  const modes = modesFlag();
  const runtime = svcplaneRuntime();
  ctx.log(`proxy memory: svcplane from ${runtime.kind} (${runtime.why})`);
  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-proxy-memory-')));
  const apiDir = path.join(root, 'apiserver');
  mkdirSync(apiDir, { recursive: true });
  const node = 'node-0000';
  let ns: BenchNetns | undefined;
  const procs: Proc[] = [];
  let client: Worker<ClientRequest> | undefined;
  try {
    const pre = await preloadCluster(apiDir, shape, ctx.log, { endpoints: 'slices' });
    ctx.log(
      `proxy memory: preloaded ${shape.nodes} nodes, ${shape.services} Services and their EndpointSlices ` +
        `(${shape.podsPerService} endpoints each) in ${pre.seconds.toFixed(1)} s`,
    );
    ns = createNetns('pmem');
    const netns = ns.name;
    const api = await startApiServer(runtime, apiDir, ['--service-cluster-ip-range', shape.serviceCidr], {
      netns,
      timeoutMs: 600_000,
    });
    procs.push(api);
    const kubeconfig = path.join(root, 'kubeconfig');
    writeKubeconfig(kubeconfig, api);
    const wrapper = await startNodeWrapper(runtime, kubeconfig, node, path.join(root, 'wrapper'), netns);
    procs.push(wrapper);
    const wrapperKubeconfig = wrapper.ready[2]!;
    client = new Worker<ClientRequest>(WORKER_MODULE, { [ROLE_ENV]: 'client' }, 'client', { netns });
    const wsync = await client.call<{ seconds: number; servedWrites: number }>({
      op: 'wrapperSynced',
      conn: connFromKubeconfig(wrapperKubeconfig).conn,
      atLeast: shape.nodes + 2 * shape.services,
      timeoutS: z.convergeTimeoutS,
    });
    ctx.log(`proxy memory: wrapper synced in ${wsync.seconds.toFixed(1)} s (${wsync.servedWrites} writes)`);
    const runs: ProxyMemory[] = [];
    for (const mode of modes)
      runs.push(await measureMode(ctx, z, mode, root, netns, node, wrapperKubeconfig));
    return { shape, runs };
  } finally {
    client?.stop();
    for (const p of procs.reverse()) await stopChild(p.child);
    ns?.remove();
    rmSync(root, { recursive: true, force: true });
  }
}

async function measureMode(
  ctx: BenchContext,
  z: Sizes,
  mode: Mode,
  root: string,
  netns: string,
  node: string,
  kubeconfig: string,
): Promise<ProxyMemory> {
  ensureDep(mode === 'nftables' ? 'nft' : 'iptables', mode === 'nftables' ? 'NFT_BIN' : 'IPTABLES_BIN');
  let env: Record<string, string> = {};
  if (mode === 'iptables') {
    // As P4: a full restore of this ruleset through iptables-nft takes far too long here.
    const shim = legacyShim(path.join(root, mode));
    if (shim === undefined) throw new Error('proxy memory: iptables-legacy is not installed');
    env = { PATH: `${shim}${path.delimiter}${process.env.PATH ?? ''}` };
  }
  const gcOut = path.join(root, `${mode}-gc.json`);
  const snapshotDir = process.env.SVCPLANE_BENCH_PROXY_HEAP_SNAPSHOT || undefined;
  let firstFullMs = NaN;
  let lastSync = performance.now();
  const t0 = performance.now();
  const events: Array<{ s: number; msg: string }> = [];
  const proxy = await startNodeProxy(
    svcplaneRuntime(),
    { kubeconfig, node, mode },
    {
      netns,
      timeoutMs: z.proxySyncTimeoutS * 1000,
      nodeArgs: [
        ...(process.env.SVCPLANE_BENCH_PROXY_NODE_ARGS ?? '').split(' ').filter((x) => x !== ''),
        '--expose-gc',
        '--import',
        GC_HOOK,
      ],
      env: {
        ...env,
        SVCPLANE_BENCH_GC_OUT: gcOut,
        ...(snapshotDir === undefined ? {} : { SVCPLANE_BENCH_HEAP_SNAPSHOT: '1' }),
      },
      onStderrLine: (line) => {
        const msg = /"msg":"([^"]*)"/.exec(line)?.[1];
        if (msg !== undefined) events.push({ s: round1((performance.now() - t0) / 1000), msg });
        if (!line.includes('sync"')) return;
        lastSync = performance.now();
        const m = /"msg":"full sync".*"ms":([\d.]+)/.exec(line);
        if (m !== null && Number.isNaN(firstFullMs)) firstFullMs = Number(m[1]);
      },
    },
  );
  try {
    const inSyncS = (performance.now() - t0) / 1000;
    while (performance.now() - lastSync < 3000) await sleep(500);
    const peakMiB = memory(proxy.pid).hwmMiB;
    await sleep(10_000);
    const settled = memory(proxy.pid);
    const report = await gcAndReport(proxy.pid, gcOut, 'the proxy');
    if (snapshotDir !== undefined)
      copyFileSync(`${gcOut}.heapsnapshot`, path.join(snapshotDir, `proxy-${mode}.heapsnapshot`));
    const out: ProxyMemory = {
      mode,
      inSyncS,
      firstFullSyncMs: firstFullMs,
      peakMiB,
      settledMiB: settled.rssMiB,
      settledAnonMiB: settled.anonMiB,
      timeline: report.timeline,
      events,
      afterGc: {
        rssMiB: report.rss / MiB,
        heapUsedMiB: report.heapUsed / MiB,
        heapTotalMiB: report.heapTotal / MiB,
        externalMiB: report.external / MiB,
        spaces: Object.fromEntries(
          report.spaces.map(([n, , used]) => [n, Math.round((used / MiB) * 10) / 10]),
        ),
      },
    };
    ctx.log(`proxy memory (${mode}): ${JSON.stringify(out)}`);
    const tl = report.timeline;
    const steps = tl.filter((p, i) => i === 0 || Math.abs(p[1] - tl[i - 1]![1]) >= 8);
    ctx.log(
      `proxy memory (${mode}): s rss/heap used/committed/external ` +
        steps.map(([t, rss, used, total, ext]) => `${t}s ${rss}/${used}/${total}/${ext}`).join(', '),
    );
    ctx.log(`proxy memory (${mode}): log ${events.map((e) => `${e.s}s ${e.msg}`).join('; ')}`);
    return out;
  } finally {
    await stopChild(proxy.child);
  }
}
