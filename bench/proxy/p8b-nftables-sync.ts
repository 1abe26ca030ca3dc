// P8b, nftables mode: full syncs, periodic resyncs and partial syncs of the nftables backend
// (NftablesBackend + nftRunner({ netns }), as `svcplane proxy --proxy-mode nftables` runs them) at 10,000
// Services in a network namespace of its own, on P8b's state (p8b-state.ts).
import { performance } from 'node:perf_hooks';
import {
  NFT_TABLE,
  nftModel,
  renderNftFull,
  renderNftPartial,
  renderNftResync,
} from '../../src/core/proxy/nftables.js';
import type { RenderOptions } from '../../src/core/proxy/iptables.js';
import type { ServicePortState } from '../../src/core/proxy/types.js';
import { conntrackTool } from '../../src/proxy/conntrack-tool.js';
import { NftablesBackend } from '../../src/proxy/nftables-backend.js';
import { nftRunner, type NftRunner } from '../../src/proxy/nft-runner.js';
import { createNetns } from '../lib/netns.js';
import { median, percentile, type BenchContext } from '../run.js';
import { type Sizes, quietLog } from './shape.js';
import { runOut } from './programs.js';
import { buildState, replaceEndpoint } from './p8b-state.js';
import { nftChainEndpoints, nftServiceChain } from './nft-chain.js';

export interface NftApplyTiming {
  totalMs: number;
  /** In `nft -f -` (through `ip netns exec`): parse, and the kernel's commit. */
  nftMs: number;
  /** totalMs − nftMs: the render, and this process's own work around it. */
  renderMs: number;
  /** Bytes of the transaction. */
  bytes: number;
  elements: number;
  chainsWritten: number;
}

export type NftSyncKind = 'full' | 'resync' | 'partial';

export interface NftablesResult {
  programs: string;
  skipped?: string;
  /** The pure renders alone (ms, median): full; resync onto the full model; partial of one Service. */
  render?: { fullMs: number; resyncMs: number; partialMs: number; fullLines: number; partialLines: number };
  full: NftApplyTiming[];
  resync: NftApplyTiming[];
  partial: NftApplyTiming[];
  /** After the partial syncs, from `nft -j list table` (not the sync path), and the last changed Service's chain. */
  check?: {
    serviceChains: number;
    endpointChains: number;
    expectedServiceChains: number;
    expectedEndpointChains: number;
    /** Chains the renderer's model of the final state has and the kernel lacks. */
    missingChains: number;
    listMs: number;
    replacedPresent: boolean;
    removedGone: boolean;
  };
  fullMedianMs?: number;
  resyncMedianMs?: number;
  partialMedianMs?: number;
  partialP99Ms?: number;
  partialNftMedianMs?: number;
  partialRenderMedianMs?: number;
}

/**
 * A runner that adds up the time spent in nft (`nft -f -`, or the runner's `nft -i` for partial syncs) and
 * the bytes sent, so that an apply() can be split.
 */
function timedNft(inner: NftRunner): { runner: NftRunner; take: () => { nftMs: number; bytes: number } } {
  let t = { nftMs: 0, bytes: 0 };
  const timed = async (send: () => Promise<void>): Promise<void> => {
    const t0 = performance.now();
    try {
      await send();
    } finally {
      t.nftMs += performance.now() - t0;
    }
  };
  // A whole-table write is rendered as nft reads it: its bytes are counted on the way, and the time spent
  // rendering a piece is the render's, not nft's.
  function* counted(pieces: Iterable<string>): Generator<string, void, undefined> {
    const it = pieces[Symbol.iterator]();
    for (;;) {
      const t0 = performance.now();
      const next = it.next();
      t.nftMs -= performance.now() - t0;
      if (next.done === true) return;
      t.bytes += Buffer.byteLength(next.value);
      yield next.value;
    }
  }
  const small = (text: string): string => {
    t.bytes += Buffer.byteLength(text);
    return text;
  };
  return {
    runner: {
      ...inner,
      apply: (text, signal) =>
        timed(() => inner.apply(typeof text === 'string' ? small(text) : counted(text), signal)),
      applySmall: (text, signal) => timed(() => inner.applySmall(small(text), signal)),
    },
    take: () => {
      const out = t;
      t = { nftMs: 0, bytes: 0 };
      return out;
    },
  };
}

function timeRenders(
  z: Sizes,
  base: Map<string, ServicePortState>,
  keys: readonly string[],
): NonNullable<NftablesResult['render']> {
  const o: RenderOptions = { family: 4 };
  const time = (n: number, f: (i: number) => unknown): number => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      f(i);
      xs.push(performance.now() - t0);
    }
    return median(xs);
  };
  // A whole-table plan renders as it is read: read through (its counts come with the last piece).
  let full = renderNftFull(base, o);
  const fullMs = time(z.renderReps, () => (full = renderNftFull(base, o)).changes);
  const resyncMs = time(z.renderReps, () => renderNftResync(full.model, base, o).changes);
  let partial = renderNftPartial(full.model, base, o, new Set([keys[0]!]));
  const partialMs = time(Math.max(5, z.renderReps * 4), (i) => {
    const { next, key } = replaceEndpoint(base, keys, (i * 31) % keys.length, i);
    // The render updates the model in place; reverted so that each starts from the full table.
    partial.revert?.();
    partial = renderNftPartial(full.model, next, o, new Set([key]));
  });
  partial.revert?.();
  const lines = (s: string): number => s.split('\n').length - 1;
  return { fullMs, resyncMs, partialMs, fullLines: lines(full.text), partialLines: lines(partial.text) };
}

export async function runP8bNftables(ctx: BenchContext, z: Sizes): Promise<NftablesResult> {
  const base = buildState(z.services, z.endpointsPerService);
  const keys = [...base.keys()];
  const out: NftablesResult = {
    programs: (await runOut('nft', ['--version'])).trim() || 'nft',
    full: [],
    resync: [],
    partial: [],
  };
  out.render = timeRenders(z, base, keys);
  ctx.log(
    `P8b nftables: renderNftFull ${out.render.fullMs.toFixed(0)} ms (${out.render.fullLines} lines), ` +
      `renderNftResync ${out.render.resyncMs.toFixed(0)} ms, renderNftPartial ` +
      `${out.render.partialMs.toFixed(2)} ms (${out.render.partialLines} lines)`,
  );
  const ns = createNetns('p8b-nftables');
  try {
    const inner = nftRunner({ netns: ns.name });
    const ok = await inner.check();
    if (!ok.ok) {
      out.skipped = ok.reason;
      ctx.log(`P8b nftables: skipped: ${ok.reason}`);
      return out;
    }
    const { runner, take } = timedNft(inner);
    const newBackend = (): NftablesBackend =>
      new NftablesBackend({
        runner,
        families: [{ family: 4 }],
        conntrack: conntrackTool({ netns: ns.name }),
        log: quietLog,
      });
    const timed = async (
      kind: NftSyncKind,
      backend: NftablesBackend,
      state: Map<string, ServicePortState>,
      changed: ReadonlySet<string> | 'full',
    ): Promise<NftApplyTiming> => {
      take();
      const t0 = performance.now();
      const res = await backend.apply(state, changed);
      const totalMs = performance.now() - t0;
      const c = take();
      const got: NftSyncKind = res.partial ? 'partial' : res.detail?.['resync'] === 1 ? 'resync' : 'full';
      if (got !== kind) throw new Error(`P8b nftables: a ${kind} sync was done as ${got}`);
      return {
        totalMs,
        nftMs: c.nftMs,
        renderMs: totalMs - c.nftMs,
        bytes: c.bytes,
        elements: res.detail?.['elements'] ?? NaN,
        chainsWritten: res.detail?.['chainsWritten'] ?? NaN,
      };
    };
    const line = (kind: string, i: number, n: number, r: NftApplyTiming): void =>
      ctx.log(
        `P8b nftables ${kind} ${i + 1}/${n}: ${r.totalMs.toFixed(1)} ms (nft ${r.nftMs.toFixed(1)} ms, render ` +
          `${r.renderMs.toFixed(1)} ms; ${(r.bytes / 2 ** 20).toFixed(2)} MiB, ${r.chainsWritten} chains)`,
      );
    // Full syncs onto an empty table: each by a backend of its own (a proxy's first sync) after the table went.
    let backend = newBackend();
    for (let i = 0; i < z.nftablesFullReps; i++) {
      await inner.deleteTable('ip', NFT_TABLE);
      backend = newBackend();
      const r = await timed('full', backend, base, 'full');
      out.full.push(r);
      line('full sync onto an empty table', i, z.nftablesFullReps, r);
    }
    // The periodic resync onto the full table.
    for (let i = 0; i < z.nftablesFullReps; i++) {
      const r = await timed('resync', backend, base, 'full');
      out.resync.push(r);
      line('resync onto the full table', i, z.nftablesFullReps, r);
    }
    // Partial syncs: one Service's endpoint replaced, as the sync loop passes it (the changed key).
    let state = base;
    let last: ReturnType<typeof replaceEndpoint> | undefined;
    for (let i = 0; i < z.partialReps; i++) {
      last = replaceEndpoint(state, keys, (i * 7919 + 13) % keys.length, i);
      out.partial.push(await timed('partial', backend, last.next, new Set([last.key])));
      state = last.next;
    }
    // What the kernel holds now must be what the state owns (listed once, outside the measured syncs).
    const t0 = performance.now();
    const items = (await inner.listTable('ip', NFT_TABLE)) ?? [];
    const listMs = performance.now() - t0;
    // A Service port's chains carry its namespace/name (the fixed ones, e.g. service-endpoints-check, do not).
    const chains = items
      .map((x) => (x as { chain?: { name?: unknown } }).chain?.name)
      .filter((n): n is string => typeof n === 'string' && n.includes('/'));
    const eps =
      last === undefined
        ? undefined
        : await nftChainEndpoints(ns.name, nftServiceChain(last.next.get(last.key)!));
    const hostPort = (e: { ip: string; port: number }): string => `${e.ip}:${e.port}`;
    out.check = {
      serviceChains: chains.filter((c) => c.startsWith('service-')).length,
      endpointChains: chains.filter((c) => c.startsWith('endpoint-')).length,
      missingChains: missingFrom(chains, state),
      // The renderer's own model of the final state: a chain per Service port, and per endpoint only
      // under ClientIP affinity (none in this shape).
      ...expectedChains(state),
      listMs,
      replacedPresent: last === undefined || (eps?.has(hostPort(last.added)) ?? false),
      removedGone: last === undefined || !(eps?.has(hostPort(last.removed)) ?? true),
    };
    const c = out.check;
    if (
      c.serviceChains !== c.expectedServiceChains ||
      c.endpointChains !== c.expectedEndpointChains ||
      c.missingChains > 0 ||
      !c.replacedPresent ||
      !c.removedGone
    )
      throw new Error(`P8b nftables: the kernel differs from the state: ${JSON.stringify(c)}`);
    const med = (xs: NftApplyTiming[], k: keyof NftApplyTiming): number => median(xs.map((x) => x[k]));
    out.fullMedianMs = med(out.full, 'totalMs');
    out.resyncMedianMs = med(out.resync, 'totalMs');
    out.partialMedianMs = med(out.partial, 'totalMs');
    out.partialP99Ms = percentile(
      out.partial.map((p) => p.totalMs),
      99,
    );
    out.partialNftMedianMs = med(out.partial, 'nftMs');
    out.partialRenderMedianMs = med(out.partial, 'renderMs');
    ctx.log(
      `P8b nftables: partial sync median ${out.partialMedianMs.toFixed(1)} ms (nft ${out.partialNftMedianMs.toFixed(1)} ` +
        `ms, render ${out.partialRenderMedianMs.toFixed(1)} ms) over ${z.partialReps}; nft -j list table: ` +
        `${c.serviceChains} service and ${c.endpointChains} endpoint chains as expected (${(listMs / 1000).toFixed(1)} s)`,
    );
    return out;
  } finally {
    ns.remove();
  }
}

const perService = (state: ReadonlyMap<string, ServicePortState>): string[] =>
  [...nftModel(state, { family: 4 }).chains.keys()].filter((n) => n.includes('/'));

function expectedChains(state: ReadonlyMap<string, ServicePortState>) {
  const names = perService(state);
  return {
    expectedServiceChains: names.filter((c) => c.startsWith('service-')).length,
    expectedEndpointChains: names.filter((c) => c.startsWith('endpoint-')).length,
  };
}

function missingFrom(kernel: readonly string[], state: ReadonlyMap<string, ServicePortState>): number {
  const have = new Set(kernel);
  return perService(state).filter((c) => !have.has(c)).length;
}
