// `npm run bench -- proxy`: the node proxy's userspace data plane against HAProxy (P8a), the cost of an
// iptables and of an nftables sync at 10,000 Services (P8b), and a pod readiness flip to the rules of a node
// (P4, nftables mode by default). SVCPLANE_BENCH_PROXY_STEPS=p8a,p8b,p8b-nftables,p4 runs a subset; the step
// `memory` (not run by default) is the proxy's memory at P4's size without P4's controllers and flips.
// Method and latest figures: docs/benchmarks.md (proxy).
import { cpus, loadavg } from 'node:os';
import { coresWindow } from '../lib/machine.js';
import { median, round, type BenchContext, type BenchResult, tableRow as row } from '../run.js';
import { SEED, FULL, QUICK } from './shape.js';
import { type LoadKind } from './load-generator.js';
import { type Mode, runP8a } from './p8a-userspace.js';
import { type FlavorResult, runP8b } from './p8b-iptables-sync.js';
import { type NftApplyTiming, runP8bNftables } from './p8b-nftables-sync.js';
import { runP4 } from './p4-readiness-flip.js';
import { runProxyMemory } from './proxy-memory.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const steps = new Set((process.env.SVCPLANE_BENCH_PROXY_STEPS ?? 'p8a,p8b,p8b-nftables,p4').split(','));
  const load0 = loadavg();
  const pids: Record<string, number> = {};
  const whole = coresWindow(pids);
  const p8a = steps.has('p8a') ? await runP8a(ctx, z) : undefined;
  const p8aCores = whole();
  const w8b = coresWindow({});
  const p8b = steps.has('p8b') ? await runP8b(ctx, z) : undefined;
  const p8bCores = w8b();
  const w8bn = coresWindow({});
  const p8bn = steps.has('p8b-nftables') ? await runP8bNftables(ctx, z) : undefined;
  const p8bnCores = w8bn();
  const w4 = coresWindow({});
  const p4 = steps.has('p4') ? await runP4(ctx, z) : undefined;
  const p4Cores = w4();
  const mem = steps.has('memory') ? await runProxyMemory(ctx, z) : undefined;

  const nft = p8b?.flavors.find((f) => f.flavor === 'nft');
  // The goal is judged on the full syncs onto the full table (the periodic resync); a failed one misses it.
  // Judged on the full syncs onto the full table (the periodic resync; else the first one): one that failed
  // or did not finish counts as infinitely long.
  const fullTimes = (f: FlavorResult, onto: 'empty' | 'existing'): number[] => [
    ...f.full.filter((x) => x.onto === onto).map((x) => x.totalMs),
    ...f.failed.filter((x) => x.onto === onto).map(() => Infinity),
  ];
  const fullGoalMs =
    nft === undefined
      ? NaN
      : fullTimes(nft, 'existing').length > 0
        ? median(fullTimes(nft, 'existing'))
        : median(fullTimes(nft, 'empty'));
  const goals = {
    p8aUserspaceAtLeastHalfOfHaproxy:
      p8a === undefined ? null : p8a.ratios.userspaceOverHaproxyKeepAliveRps >= 0.5,
    p8bFullAtMost1s: nft === undefined ? null : fullGoalMs <= 1000,
    p8bPartialAtMost20ms: nft === undefined ? null : (nft.partialMedianMs ?? Infinity) <= 20,
    p8bNftablesFullAtMost3s: p8bn?.full.length ? (p8bn.fullMedianMs ?? Infinity) <= 3000 : null,
    p8bNftablesResyncAtMost3s: p8bn?.resync.length ? (p8bn.resyncMedianMs ?? Infinity) <= 3000 : null,
    p8bNftablesPartialAtMost20ms: p8bn?.partial.length ? (p8bn.partialMedianMs ?? Infinity) <= 20 : null,
    p4P99AtMost100ms: p4 === undefined ? null : p4.flips.p99Ms <= 100,
    p4NoFlipLost: p4 === undefined ? null : p4.flips.lost === 0 && p4.flips.unverified === 0,
    // Judged in the nftables mode only.
    p4NftablesProxyPeakAtMost150MiB:
      p4 === undefined || p4.mode !== 'nftables' ? null : p4.rss.proxy.peakMiB <= 150,
  };
  const yn = (b: boolean | null): string => (b === null ? '' : b ? 'yes' : 'no');
  const table: Array<Record<string, string | number>> = [];
  if (p8a !== undefined) {
    const m = p8a.medians;
    const fig = (mode: Mode, kind: LoadKind): string =>
      `${Math.round(m[mode][kind].rps)}/s; p50 ${round(m[mode][kind].p50Ms)}, p99 ${round(m[mode][kind].p99Ms)} ms`;
    table.push(
      row('P8a keep-alive: direct (req/s; latency)', fig('direct', 'keepalive')),
      row('P8a keep-alive: userspace proxy', fig('userspace', 'keepalive')),
      row('P8a keep-alive: HAProxy (tcp, nbthread 1)', fig('haproxy', 'keepalive')),
      row(
        'P8a keep-alive req/s: userspace ÷ HAProxy',
        round(p8a.ratios.userspaceOverHaproxyKeepAliveRps),
        '≥ 0.5',
        yn(goals.p8aUserspaceAtLeastHalfOfHaproxy),
      ),
      row(
        'P8a keep-alive: proxy cores userspace / HAProxy; p99 ratio',
        `${round(m.userspace.keepalive.proxyCores)} / ${round(m.haproxy.keepalive.proxyCores)}; ${round(p8a.ratios.userspaceOverHaproxyKeepAliveP99)}`,
      ),
      row('P8a new conn/request: direct', fig('direct', 'newconn')),
      row('P8a new conn/request: userspace proxy', fig('userspace', 'newconn')),
      row('P8a new conn/request: HAProxy', fig('haproxy', 'newconn')),
      row(
        'P8a new conn/request req/s: userspace ÷ HAProxy',
        round(p8a.ratios.userspaceOverHaproxyNewConnRps),
      ),
    );
  }
  if (p8b !== undefined) {
    table.push(
      row(
        `P8b ${z.services} svc × ${z.endpointsPerService} eps: renderFull; renderPartial (ms, pure)`,
        `${round(p8b.render.fullMedianMs)}; ${round(p8b.render.partialMedianMs)} (${p8b.render.fullLines} / ${p8b.render.partialLines} lines)`,
      ),
    );
    for (const f of p8b.flavors) {
      if (f.skipped !== undefined) {
        table.push(row(`P8b ${f.flavor}`, `skipped: ${f.skipped}`));
        continue;
      }
      const isNft = f.flavor === 'nft';
      const timeout = `did not finish in ${z.restoreTimeoutS} s`;
      const fullCell = (onto: 'empty' | 'existing'): string => {
        const ok = f.full.filter((x) => x.onto === onto);
        const bad = f.failed.filter((x) => x.onto === onto);
        const parts: string[] = [];
        if (ok.length > 0)
          parts.push(
            `${round(median(ok.map((x) => x.totalMs)))}; restore ${round(median(ok.map((x) => x.restoreMs)))}`,
          );
        for (const b of bad)
          parts.push(/TimeoutError|aborted/i.test(b.error) ? timeout : `failed after ${round(b.afterMs)}`);
        return parts.join('; ') || '-';
      };
      const nExisting =
        f.full.filter((x) => x.onto === 'existing').length +
        f.failed.filter((x) => x.onto === 'existing').length;
      table.push(
        row(`P8b ${f.flavor} full sync onto empty table (ms)`, fullCell('empty')),
        row(
          `P8b ${f.flavor} full sync onto full table, median of ${nExisting} (ms)`,
          fullCell('existing'),
          isNft ? '≤ 1000' : '',
          isNft ? yn(goals.p8bFullAtMost1s) : '',
        ),
      );
      if (f.seeds.length > 0)
        table.push(
          row(
            `P8b ${f.flavor}: table filled in flush mode instead (s; not the proxy's path)`,
            f.seeds.map((x) => round(x.ms / 1000)).join(', '),
          ),
        );
      table.push(
        row(
          `P8b ${f.flavor} partial sync, median of ${f.partial.length} (ms; restore; render)`,
          `${round(f.partialMedianMs!)}; ${round(f.partialRestoreMedianMs!)}; ${round(f.partialRenderMedianMs!)}`,
          isNft ? '≤ 20' : '',
          isNft ? yn(goals.p8bPartialAtMost20ms) : '',
        ),
      );
    }
    table.push(row('P8b `ip netns exec` alone (ms, median)', round(p8b.netnsExecMs)));
  }
  if (p8bn !== undefined) {
    if (p8bn.skipped !== undefined) table.push(row('P8b nftables mode', `skipped: ${p8bn.skipped}`));
    else {
      const r = p8bn.render!;
      const cell = (xs: NftApplyTiming[]): string =>
        `${round(median(xs.map((x) => x.totalMs)))}; nft ${round(median(xs.map((x) => x.nftMs)))}; render ` +
        `${round(median(xs.map((x) => x.renderMs)))}`;
      table.push(
        row(
          `P8b nftables mode (${p8bn.programs}), ${z.services} svc × ${z.endpointsPerService} eps: ` +
            'renderNftFull; renderNftResync; renderNftPartial (ms, pure)',
          `${round(r.fullMs)}; ${round(r.resyncMs)}; ${round(r.partialMs)} (${r.fullLines} / ${r.partialLines} lines)`,
        ),
        row(
          `P8b nftables full sync onto an empty table, median of ${p8bn.full.length} (ms; nft; render)`,
          cell(p8bn.full),
          '≤ 3000',
          yn(goals.p8bNftablesFullAtMost3s),
        ),
        row(
          `P8b nftables resync onto the full table, median of ${p8bn.resync.length} (ms; nft; render)`,
          cell(p8bn.resync),
          '≤ 3000',
          yn(goals.p8bNftablesResyncAtMost3s),
        ),
        row(
          `P8b nftables partial sync of one Service, median of ${p8bn.partial.length} (ms; nft; render)`,
          cell(p8bn.partial),
          '≤ 20',
          yn(goals.p8bNftablesPartialAtMost20ms),
        ),
        row(
          'P8b nftables: nft -j list table after the syncs (ms; not the sync path)',
          round(p8bn.check?.listMs ?? NaN),
        ),
      );
    }
  }
  if (p4 !== undefined) {
    table.push(
      row(
        "P4 shape; preload (s); the proxy's mode (programs)",
        `${p4.shape.nodes} nodes, ${p4.shape.services} svc, ${p4.shape.services * p4.shape.podsPerService} pods; ` +
          `${round(p4.preload.seconds)}; ${p4.mode} (${p4.programs})`,
      ),
      row(
        'P4 up ready; slices converged (s from up spawn)',
        `${round(p4.upReadyS)}; ${round(p4.slicesConvergedS)}`,
      ),
      row(
        'P4 wrapper synced; proxy first sync done (s from spawn)',
        `${round(p4.wrapperSyncS)}; ${round(p4.proxy.inSyncS)}`,
      ),
      row('P4 proxy first full sync (ms, its log)', round(p4.proxy.firstFullSyncMs)),
      row(`P4 ${p4.flips.count} flips: PATCH → partial sync p50 (ms)`, round(p4.flips.p50Ms)),
      row('P4 PATCH → partial sync p99 (ms)', round(p4.flips.p99Ms), '≤ 100', yn(goals.p4P99AtMost100ms)),
      row(
        "P4 PATCH → upstream slice event p50; proxy's sync (median, ms)",
        `${round(p4.flips.upstreamSliceP50Ms)}; ${round(p4.flips.proxySyncMedianMs)}`,
      ),
      row(
        `P4 flips lost / not as expected in the ${p4.mode} rules`,
        `${p4.flips.lost} / ${p4.flips.unverified}`,
        '0',
        yn(goals.p4NoFlipLost),
      ),
      row(
        `P4 proxy (${p4.mode}) peak RSS (MiB)`,
        round(p4.rss.proxy.peakMiB),
        p4.mode === 'nftables' ? '≤ 150' : '',
        yn(goals.p4NftablesProxyPeakAtMost150MiB),
      ),
      row(
        'P4 RSS proxy / wrapper / up (MiB; peak)',
        `${round(p4.rss.proxy.rssMiB)} / ${round(p4.rss.wrapper.rssMiB)} / ${round(p4.rss.up.rssMiB)}; ` +
          `${round(p4.rss.proxy.peakMiB)} / ${round(p4.rss.wrapper.peakMiB)} / ${round(p4.rss.up.peakMiB)}`,
      ),
    );
  }
  for (const r of mem?.runs ?? [])
    table.push(
      row(
        `proxy memory (${r.mode}), ${mem!.shape.services} svc × ${mem!.shape.podsPerService} eps, ` +
          `${mem!.shape.nodes} nodes: peak; settled RSS (MiB)`,
        `${round(r.peakMiB)}; ${round(r.settledMiB)}`,
        r.mode === 'nftables' ? '≤ 150' : '',
        r.mode === 'nftables' ? yn(r.peakMiB <= 150 && r.settledMiB <= 150) : '',
      ),
      row(
        `proxy memory (${r.mode}) after 3 GCs: RSS; V8 heap used / committed; external (MiB)`,
        `${round(r.afterGc.rssMiB)}; ${round(r.afterGc.heapUsedMiB)} / ${round(r.afterGc.heapTotalMiB)}; ` +
          `${round(r.afterGc.externalMiB)}`,
      ),
    );
  table.push(
    row(
      `machine (${cpus().length} CPUs): cores used by others in P8a; P8b; P8b nftables; P4; load avg`,
      `${round(p8aCores.others)}; ${round(p8bCores.others)}; ${round(p8bnCores.others)}; ${round(p4Cores.others)}; ${load0.map(round).join(' ')} → ${loadavg().map(round).join(' ')}`,
    ),
  );
  return {
    table,
    data: {
      sizes: z,
      seed: SEED,
      setup: {
        p8a:
          'loopback, root namespace; 2 node:http echo backends (one process), a raw-socket HTTP/1.1 load ' +
          'generator (its own process), UserspaceProxy (its own process, hand-built state), HAProxy mode tcp ' +
          'roundrobin nbthread 1 -db; nothing pinned: each proxy moves bytes on one thread; repetitions ' +
          'interleave direct/userspace/haproxy',
        p8b:
          'IptablesBackend + iptablesRunner({ family: 4, netns }) in a namespace of its own; full syncs (first ' +
          'onto an empty table), then partial syncs of one replaced endpoint; machine iptables and ' +
          'iptables-legacy',
        p8bNftables:
          'NftablesBackend + nftRunner({ netns }) in a namespace of its own; full syncs onto an empty table ' +
          '(a new backend each, the table deleted before), resyncs onto the full table (apply(state, ' +
          "'full') after a first sync), then partial syncs of one replaced endpoint (apply(next, {key}))",
        p4:
          'preloaded store; up, wrapper, proxy and the client in one network namespace; flips are pod status ' +
          'PATCHes; latency from the PATCH response to the proxy\'s "partial sync" log line; each flip read ' +
          'back from the rules (nft -j list chain of the Service, or iptables-save)',
        memory:
          'store preloaded with the EndpointSlices (no pods); apiserver, wrapper and proxy in one network ' +
          'namespace; peak (VmHWM) 3 s after the last sync, settled VmRSS 10 s later, then the heap after 3 GCs',
      },
      p8a,
      p8b,
      p8bNftables: p8bn,
      p4,
      memory: mem,
      machineCores: {
        p8a: p8aCores,
        p8b: p8bCores,
        p8bNftables: p8bnCores,
        p4: p4Cores,
        loadavgStart: load0,
        loadavgEnd: loadavg(),
      },
      goals,
    },
  };
}
