// P4: a pod readiness flip through `svcplane up`, the wrapper and `svcplane proxy` to the rules of the node's
// network namespace: the nftables mode's table (default) or the iptables mode's rules
// (SVCPLANE_BENCH_PROXY_P4_MODE=iptables).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sepChain } from '../../src/core/proxy/chain-names.js';
import { parseSaveChains } from '../../src/core/proxy/iptables.js';
import { iptablesRunner } from '../../src/proxy/iptables-runner.js';
import { prng } from '../../src/storage/testing/helpers.js';
import { scratchDir, startSvcplane, stopChild, svcplaneRuntime, upArgs, type Proc } from '../lib/cluster.js';
import { ensureDep } from '../lib/deps.js';
import { connFromKubeconfig } from '../lib/http.js';
import { createNetns, type BenchNetns } from '../lib/netns.js';
import {
  namespaceOf,
  podKey,
  podPlacement,
  preloadCluster,
  serviceName,
  type PreloadFigures,
} from '../lib/preload.js';
import { memory, sleep, Worker } from '../lib/process.js';
import { median, percentile, type BenchContext } from '../run.js';
import { SEED, type Sizes } from './shape.js';
import { LEGACY_BIN, findProgram, legacyShim, runOut } from './programs.js';
import { WORKER_MODULE, ROLE_ENV } from './workers.js';
import { startNodeProxy, startNodeWrapper } from './node-agents.js';
import { type ClientRequest, type FlipSent } from './p4-client.js';
import { nftChainEndpoints, nftServiceChain } from './nft-chain.js';

interface SyncLine {
  t: number;
  msg: string;
  servicePorts?: number;
  changed?: number;
  ms?: number;
  rules?: number;
}

interface FlipRecord {
  pod: string;
  ready: boolean;
  /** The pod's `ip:port`. */
  endpoint: string;
  patchMs: number;
  /** PATCH response → the proxy's partial sync line (NaN if none came). */
  latencyMs: number;
  /** PATCH response → the upstream slice watch event. */
  upstreamSliceMs: number;
  /** The proxy's own figure for that sync (render + restore, its log's ms). */
  syncMs: number;
  /** Sync lines that arrived for this flip (1 expected). */
  syncs: number;
  changed: number;
  sepPresent: boolean;
  verified: boolean;
  /** Reading the rules back: iptables-save, or `nft -j list chain` of the Service's chain. */
  saveMs: number;
}

export async function runP4(ctx: BenchContext, z: Sizes) {
  const shape = z.shape;
  const mode = z.p4Mode;
  ensureDep(mode === 'nftables' ? 'nft' : 'iptables', mode === 'nftables' ? 'NFT_BIN' : 'IPTABLES_BIN');
  const runtime = svcplaneRuntime();
  ctx.log(`P4: svcplane from ${runtime.kind} (${runtime.why})`);
  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-proxy-p4-')));
  const upDir = path.join(root, 'up');
  mkdirSync(upDir, { recursive: true });
  const pods = shape.services * shape.podsPerService;
  const node = 'node-0000';
  let up: Proc | undefined;
  let wrapper: Proc | undefined;
  let proxy: Proc | undefined;
  let client: Worker<ClientRequest> | undefined;
  let ns: BenchNetns | undefined;
  try {
    ctx.log(
      `P4 preload: ${shape.nodes} nodes, ${shape.services} Services, ${pods} Ready pods bound to nodes ` +
        `(straight into up's store)`,
    );
    const preload: PreloadFigures = await preloadCluster(upDir, shape, ctx.log);
    ctx.log(`P4 preload: ${preload.objects} keys in ${preload.seconds.toFixed(1)} s`);
    ns = createNetns('p4');
    const netns = ns.name;
    let proxyEnv: Record<string, string> = {};
    let programs: string;
    let ipt: ReturnType<typeof iptablesRunner> | undefined;
    if (mode === 'nftables') {
      programs = (await runOut('nft', ['--version'])).trim() || 'nft';
    } else {
      programs = (await runOut('iptables', ['--version'])).trim() || "the machine's iptables";
      if (z.p4Iptables === 'legacy') {
        const shim = legacyShim(root);
        if (shim === undefined)
          throw new Error('P4: iptables-legacy is not installed (Debian package iptables)');
        proxyEnv = { PATH: `${shim}${path.delimiter}${process.env.PATH ?? ''}` };
        programs =
          (await runOut(findProgram(LEGACY_BIN.iptables)!, ['--version'])).trim() || 'iptables-legacy';
      }
      ipt = iptablesRunner({
        family: 4,
        netns,
        ...(z.p4Iptables === 'legacy' ? { bin: LEGACY_BIN } : {}),
      });
      const iptOk = await ipt.check();
      if (!iptOk.ok) throw new Error(`P4: ${programs} in ${netns}: ${iptOk.reason}`);
    }
    ctx.log(`P4: the proxy runs in ${mode} mode (${programs})`);
    const tUp = performance.now();
    up = await startSvcplane(
      'up',
      runtime,
      upArgs(upDir, shape.serviceCidr),
      /ready at (https:\/\/\S+); kubeconfig: (\S+)/,
      { netns, timeoutMs: 600_000 },
    );
    const upReadyS = (performance.now() - tUp) / 1000;
    const upConn = connFromKubeconfig(up.ready[2]!).conn;
    ctx.log(`P4: up ready in ${netns} after ${upReadyS.toFixed(1)} s (${up.ready[1]})`);

    client = new Worker<ClientRequest>(WORKER_MODULE, { [ROLE_ENV]: 'client' }, 'client', { netns });
    const clientPid = await client.call<number>({ op: 'init', conn: upConn, shape });
    const conv = await client.call<{ seconds: number; slices: number }>({
      op: 'converged',
      timeoutS: z.convergeTimeoutS,
    });
    const slicesConvergedS = (performance.now() - tUp) / 1000;
    ctx.log(
      `P4: ${conv.slices} EndpointSlices list every pod ready ${slicesConvergedS.toFixed(1)} s after up's spawn`,
    );

    const tWrap = performance.now();
    wrapper = await startNodeWrapper(runtime, up.ready[2]!, node, path.join(root, 'wrapper'), netns);
    const wrapperKubeconfig = wrapper.ready[2]!;
    const wsync = await client.call<{ seconds: number; servedWrites: number }>({
      op: 'wrapperSynced',
      conn: connFromKubeconfig(wrapperKubeconfig).conn,
      atLeast: shape.nodes + 2 * shape.services,
      timeoutS: z.convergeTimeoutS,
    });
    const wrapperSyncS = (performance.now() - tWrap) / 1000;
    ctx.log(
      `P4: wrapper for ${node} synced ${wrapperSyncS.toFixed(1)} s after its spawn (${wsync.servedWrites} writes)`,
    );

    const syncLines: SyncLine[] = [];
    const onLine = (line: string, t: number): void => {
      if (!line.startsWith('{')) return;
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        const msg = o['msg'];
        if (
          msg === 'partial sync' ||
          msg === 'full sync' ||
          msg === 'sync failed; the next one is a full sync'
        )
          syncLines.push({
            t,
            msg,
            ...(typeof o['servicePorts'] === 'number' ? { servicePorts: o['servicePorts'] } : {}),
            ...(typeof o['changed'] === 'number' ? { changed: o['changed'] } : {}),
            ...(typeof o['ms'] === 'number' ? { ms: o['ms'] } : {}),
            ...(typeof o['rules'] === 'number' ? { rules: o['rules'] } : {}),
          });
      } catch {
        /* not a log line */
      }
    };
    const tProxy = performance.now();
    proxy = await startNodeProxy(
      runtime,
      { kubeconfig: wrapperKubeconfig, node, mode },
      { netns, timeoutMs: z.proxySyncTimeoutS * 1000, onStderrLine: onLine, env: proxyEnv },
    );
    const proxyInSyncS = (performance.now() - tProxy) / 1000;
    // Every Service programmed (and default/kubernetes), then nothing more to do for 3 s.
    const expectPorts = shape.services;
    for (let quiet = 0; ;) {
      const last = syncLines[syncLines.length - 1];
      const n0 = syncLines.length;
      await sleep(1000);
      if (syncLines.length === n0 && last !== undefined && (last.servicePorts ?? 0) >= expectPorts) quiet++;
      else quiet = 0;
      if (quiet >= 3) break;
      if (performance.now() - tProxy > z.proxySyncTimeoutS * 1000)
        throw new Error(`the proxy did not program ${expectPorts} service ports: ${JSON.stringify(last)}`);
    }
    const firstFull = syncLines.find((l) => l.msg === 'full sync');
    const syncsBeforeFlips = syncLines.length;
    const programmedS = (performance.now() - tProxy) / 1000;
    ctx.log(
      `P4: proxy in sync ${proxyInSyncS.toFixed(1)} s after its spawn; first full sync ` +
        `${((firstFull?.ms ?? NaN) / 1000).toFixed(2)} s (${firstFull?.servicePorts} service ports` +
        // Only the iptables mode's sync line counts rules; nftables writes map elements and chains.
        `${firstFull?.rules === undefined ? '' : `, ${firstFull.rules} rules`}); ${syncsBeforeFlips} syncs before the flips`,
    );

    // ---- flips
    /** Whether the pod's endpoint is in the rules now, read outside the proxy's sync path. */
    const programmed = async (s: number, r: number): Promise<boolean> => {
      const key = `${namespaceOf(shape, s)}/${serviceName(s)}:http`;
      const ip = podPlacement(shape, s, r).ip;
      if (ipt !== undefined) return (await ipt.save('nat')).includes(`:${sepChain(key, 'TCP', ip, 8080)} `);
      const eps = await nftChainEndpoints(
        netns,
        nftServiceChain({ namespace: namespaceOf(shape, s), name: serviceName(s), portName: 'http' }),
      );
      return eps?.has(`${ip}:8080`) ?? false;
    };
    const random = prng(SEED);
    const picked = new Set<number>();
    const targets: Array<{ s: number; r: number }> = [];
    while (targets.length < Math.ceil(z.flips / 2)) {
      const s = Math.floor(random() * shape.services);
      if (picked.has(s)) continue;
      picked.add(s);
      targets.push({ s, r: Math.floor(random() * shape.podsPerService) });
    }
    const sepTotal0 =
      ipt === undefined
        ? NaN
        : parseSaveChains(await ipt.save('nat')).nat.filter((c) => c.startsWith('KUBE-SEP-')).length;
    const flips: FlipRecord[] = [];
    const tFlips = performance.now();
    for (let i = 0; i < z.flips; i++) {
      const { s, r } = targets[Math.floor(i / 2)]!;
      const ready = i % 2 === 1;
      const pod = podKey(shape, s, r);
      const endpoint = `${podPlacement(shape, s, r).ip}:8080`;
      const before = syncLines.length;
      const sent = await client.call<FlipSent>({ op: 'flip', s, r, ready });
      if (sent.status !== 200) throw new Error(`flip ${pod}: ${sent.status} ${sent.error}`);
      const deadline = performance.now() + z.syncTimeoutS * 1000;
      let line: SyncLine | undefined;
      while (line === undefined && performance.now() < deadline) {
        line = syncLines.slice(before).find((l) => l.msg === 'partial sync' && (l.changed ?? 0) > 0);
        if (line === undefined) await sleep(1);
      }
      const seen = await client.call<number>({
        op: 'sliceSeen',
        pod,
        ready,
        after: sent.sentAt,
        timeoutMs: 2000,
      });
      // Anything else this flip set off, before the check.
      await sleep(250);
      const tSave = performance.now();
      const present = await programmed(s, r);
      const saveMs = performance.now() - tSave;
      const rec: FlipRecord = {
        pod,
        ready,
        endpoint,
        patchMs: sent.acceptedAt - sent.sentAt,
        latencyMs: line === undefined ? NaN : line.t - sent.acceptedAt,
        upstreamSliceMs: seen - sent.acceptedAt,
        syncMs: line?.ms ?? NaN,
        syncs: syncLines.length - before,
        changed: line?.changed ?? 0,
        sepPresent: present,
        verified: present === ready,
        saveMs,
      };
      flips.push(rec);
      if (!rec.verified)
        ctx.log(
          `P4 flip ${i + 1}: ${endpoint} of ${pod} is ${present ? 'present' : 'absent'} after Ready=${ready}`,
        );
      if (i % 10 === 9 || i === z.flips - 1)
        ctx.log(
          `P4 flip ${i + 1}/${z.flips}: ${pod} Ready=${ready}: ${rec.latencyMs.toFixed(1)} ms to the partial ` +
            `sync (upstream slice event ${rec.upstreamSliceMs.toFixed(1)} ms, the proxy's sync ${rec.syncMs} ms); ` +
            `read back in ${saveMs.toFixed(0)} ms`,
        );
    }
    const flipsS = (performance.now() - tFlips) / 1000;
    const lat = flips.map((f) => f.latencyMs).filter(Number.isFinite);
    const rssOf = (p: Proc) => {
      const m = memory(p.pid);
      return { rssMiB: m.rssMiB, peakMiB: m.hwmMiB };
    };
    const rss = { proxy: rssOf(proxy), wrapper: rssOf(wrapper), up: rssOf(up) };
    const clientStats = await client.call<{ errors: string[]; relists: number }>({ op: 'stop' });
    const fin = (xs: number[]): number[] => xs.filter(Number.isFinite);
    const result = {
      shape,
      node,
      mode,
      programs,
      setup:
        'preloaded store (lib/preload.ts), up + wrapper + proxy + client in one network namespace; ' +
        'proxy --min-sync-period 0s --sync-period 1h, pointed at the wrapper',
      preload,
      upReadyS,
      slicesConvergedS,
      wrapperSyncS,
      proxy: {
        inSyncS: proxyInSyncS,
        programmedS,
        firstFullSyncMs: firstFull?.ms ?? NaN,
        firstFullSyncServicePorts: firstFull?.servicePorts ?? NaN,
        firstFullSyncRules: firstFull?.rules ?? NaN,
        syncsBeforeFlips,
        sepChains: sepTotal0,
        expectedSepChains: pods,
      },
      flips: {
        count: flips.length,
        lost: flips.filter((f) => !Number.isFinite(f.latencyMs)).length,
        unverified: flips.filter((f) => !f.verified).length,
        extraSyncs: flips.reduce((a, f) => a + Math.max(0, f.syncs - 1), 0),
        p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
        p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
        maxMs: lat.length === 0 ? NaN : Math.max(...lat),
        upstreamSliceP50Ms: median(fin(flips.map((f) => f.upstreamSliceMs))),
        upstreamSliceP99Ms: percentile(fin(flips.map((f) => f.upstreamSliceMs)), 99),
        proxySyncMedianMs: median(fin(flips.map((f) => f.syncMs))),
        patchMedianMs: median(flips.map((f) => f.patchMs)),
        saveMedianMs: median(flips.map((f) => f.saveMs)),
        seconds: flipsS,
        records: flips,
      },
      rss,
      client: { pid: clientPid, ...clientStats },
    };
    ctx.log(
      `P4: ${flips.length} flips: p50 ${result.flips.p50Ms.toFixed(1)} ms, p99 ${result.flips.p99Ms.toFixed(1)} ms ` +
        `(upstream slice event p50 ${result.flips.upstreamSliceP50Ms.toFixed(1)} ms); ${result.flips.lost} lost, ` +
        `${result.flips.unverified} not as expected in the ${mode} rules; proxy RSS ${rss.proxy.rssMiB.toFixed(0)} MiB, ` +
        `wrapper ${rss.wrapper.rssMiB.toFixed(0)} MiB`,
    );
    if (result.flips.unverified > 0 || result.flips.lost > 0)
      throw new Error(
        `P4: ${result.flips.lost} flips lost, ${result.flips.unverified} not in the ${mode} rules as expected`,
      );
    return result;
  } finally {
    client?.stop();
    for (const p of [proxy, wrapper, up]) if (p !== undefined) await stopChild(p.child, 20_000);
    await sleep(300);
    ns?.remove();
    rmSync(root, { recursive: true, force: true });
  }
}
