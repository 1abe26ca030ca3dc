// P8b: full and partial iptables syncs in a network namespace of their own, with the machine's iptables
// and with iptables-legacy.
import { performance } from 'node:perf_hooks';
import { sepChain, isServiceChain } from '../../src/core/proxy/chain-names.js';
import {
  jumpRules,
  parseSaveChains,
  renderFull,
  renderPartial,
  type RenderOptions,
} from '../../src/core/proxy/iptables.js';
import type { ProxyEndpoint, ServicePortState } from '../../src/core/proxy/types.js';
import { IptablesBackend } from '../../src/proxy/iptables-backend.js';
import { iptablesRunner } from '../../src/proxy/iptables-runner.js';
import { ensureDep } from '../lib/deps.js';
import { ipPath } from '../../src/demo/netns.js';
import { createNetns, type BenchNetns } from '../lib/netns.js';
import { median, percentile, type BenchContext } from '../run.js';
import { type Sizes, quietLog } from './shape.js';
import { LEGACY_BIN, runOut } from './programs.js';
import { buildState, replaceEndpoint } from './p8b-state.js';
import { timedRunner, flushRestore, type ApplyTiming, timeExec } from './p8b-timed-runner.js';

export interface FlavorResult {
  flavor: 'nft' | 'legacy';
  programs: string;
  skipped?: string;
  /** Full syncs that failed or did not finish within the restore timeout (the program was killed). */
  failed: Array<{ onto: 'empty' | 'existing'; afterMs: number; error: string }>;
  /** After a failed full sync: the table seeded in flush mode (flushRestore), and how long that took. */
  seeds: Array<{ ms: number }>;
  full: Array<ApplyTiming & { onto: 'empty' | 'existing' }>;
  partial: ApplyTiming[];
  check?: {
    /** From iptables-save; absent when it failed (then only the changed Service's chains are checked). */
    svcChains?: number;
    sepChains?: number;
    expectedSep: number;
    replacedPresent: boolean;
    removedGone: boolean;
    saveError?: string;
  };
  fullFirstMs?: number;
  fullExistingMedianMs?: number;
  fullExistingRestoreMedianMs?: number;
  partialMedianMs?: number;
  partialP99Ms?: number;
  partialRestoreMedianMs?: number;
  partialRenderMedianMs?: number;
  saveMs?: number;
}

async function runFlavor(
  ctx: BenchContext,
  z: Sizes,
  flavor: 'nft' | 'legacy',
  base: Map<string, ServicePortState>,
  keys: readonly string[],
  ns: BenchNetns,
): Promise<FlavorResult> {
  const bin = flavor === 'legacy' ? LEGACY_BIN : undefined;
  const inner = iptablesRunner({ family: 4, netns: ns.name, ...(bin === undefined ? {} : { bin }) });
  const programs =
    flavor === 'legacy'
      ? 'iptables-legacy, iptables-legacy-restore, iptables-legacy-save'
      : (await runOut('iptables', ['--version'])).trim() || 'iptables';
  const out: FlavorResult = { flavor, programs, full: [], partial: [], failed: [], seeds: [] };
  const ok = await inner.check();
  if (!ok.ok) {
    out.skipped = ok.reason;
    ctx.log(`P8b ${flavor}: skipped: ${ok.reason}`);
    return out;
  }
  const restoreProgram = flavor === 'legacy' ? LEGACY_BIN.restore : 'iptables-restore';
  const { runner, take, seeding } = timedRunner(inner, z.restoreTimeoutS * 1000, (text) =>
    flushRestore(ns, restoreProgram, text),
  );
  const backend = new IptablesBackend({ runner, render: { family: 4 }, log: quietLog });
  /** Fills the table through a flush-mode restore, then puts the jumps back (flush mode removed them). */
  const seed = async (): Promise<void> => {
    const t0 = performance.now();
    seeding.on = true;
    try {
      await backend.apply(base, 'full');
    } finally {
      seeding.on = false;
    }
    for (const j of jumpRules()) {
      const target = j.args[j.args.indexOf('-j') + 1];
      await inner.ensureRule(j.table, j.chain, j.args, target);
    }
    const ms = performance.now() - t0;
    out.seeds.push({ ms });
    ctx.log(
      `P8b ${flavor}: table seeded in flush mode in ${(ms / 1000).toFixed(1)} s (not the proxy's path)`,
    );
  };
  const reps = flavor === 'nft' ? z.nftFullReps : z.legacyFullReps;
  let tableFull = false;
  for (let i = 0; i < reps; i++) {
    take();
    const onto = tableFull ? ('existing' as const) : ('empty' as const);
    const t0 = performance.now();
    let res: Awaited<ReturnType<IptablesBackend['apply']>>;
    try {
      res = await backend.apply(base, 'full');
    } catch (err) {
      // A full sync that fails or does not finish in time is a result too (how long it ran, how it ended).
      const totalMs = performance.now() - t0;
      const c = take();
      out.failed.push({ onto, afterMs: totalMs, error: String(err) });
      ctx.log(
        `P8b ${flavor} full sync ${i + 1}/${reps} onto ${onto} table FAILED after ${(totalMs / 1000).toFixed(1)} s ` +
          `(restore ${(c.restoreMs / 1000).toFixed(1)} s): ${String(err)}`,
      );
      // The table is as before that restore (it is atomic): fill it another way to go on measuring.
      if (!tableFull) await seed();
      tableFull = true;
      continue;
    }
    tableFull = true;
    const totalMs = performance.now() - t0;
    const c = take();
    const r = {
      onto,
      totalMs,
      ...c,
      renderMs: totalMs - c.restoreMs - c.saveMs - c.jumpsMs,
      rules: res.detail?.['rules'] ?? NaN,
    };
    out.full.push(r);
    ctx.log(
      `P8b ${flavor} full sync ${i + 1}/${reps} onto ${r.onto} table: ${(totalMs / 1000).toFixed(2)} s ` +
        `(restore ${(c.restoreMs / 1000).toFixed(2)} s, save ${(c.saveMs / 1000).toFixed(2)} s, jumps ` +
        `${(c.jumpsMs / 1000).toFixed(2)} s, render ${(r.renderMs / 1000).toFixed(2)} s; ${r.rules} rules)`,
    );
  }
  // A failed full sync leaves the backend without a record of the table: its next apply would be full.
  if (out.failed.length > 0 && out.failed[out.failed.length - 1]!.onto === 'existing') await seed();
  let state = base;
  let last: ReturnType<typeof replaceEndpoint> | undefined;
  for (let i = 0; i < z.partialReps; i++) {
    const s = (i * 7919 + 13) % keys.length;
    last = replaceEndpoint(state, keys, s, i);
    take();
    const t0 = performance.now();
    const res = await backend.apply(last.next, new Set([last.key]));
    const totalMs = performance.now() - t0;
    const c = take();
    if (!res.partial) throw new Error(`P8b ${flavor}: apply(next, {key}) was not a partial sync`);
    out.partial.push({
      totalMs,
      ...c,
      renderMs: totalMs - c.restoreMs - c.saveMs - c.jumpsMs,
      rules: res.detail?.['rules'] ?? NaN,
    });
    state = last.next;
  }
  // What the kernel holds now must be exactly what the state owns.
  const t0 = performance.now();
  const saved = await inner.save('nat').catch((err: unknown) => err as Error);
  if (!(saved instanceof Error)) out.saveMs = performance.now() - t0;
  const expectedSep = [...state.values()].reduce((a, st) => a + st.internal.length, 0);
  const sepOf = (e: ProxyEndpoint): string => sepChain(last!.key, 'TCP', e.ip, e.port);
  let seen: string;
  if (saved instanceof Error) {
    // iptables-nft-save 1.8.9 crashes (SIGSEGV) on this table: check the replaced endpoint's chains one by
    // one instead (`iptables -S CHAIN` reads one chain).
    const listed = async (chain: string): Promise<boolean> =>
      /^-N /m.test(
        await runOut(ipPath(), [
          'netns',
          'exec',
          ns.name,
          bin?.iptables ?? 'iptables',
          '-w',
          '-t',
          'nat',
          '-S',
          chain,
        ]),
      );
    out.check = {
      expectedSep,
      replacedPresent: last === undefined || (await listed(sepOf(last.added))),
      removedGone: last === undefined || !(await listed(sepOf(last.removed))),
      saveError: saved.message.split('\n')[0] ?? '',
    };
    seen = `iptables-save failed (${out.check.saveError}) after ${((performance.now() - t0) / 1000).toFixed(1)} s; reduced check: the replaced endpoint's chains are as expected`;
  } else {
    const chains = parseSaveChains(saved).nat;
    const has = new Set(chains.filter(isServiceChain));
    out.check = {
      svcChains: chains.filter((c) => c.startsWith('KUBE-SVC-')).length,
      sepChains: chains.filter((c) => c.startsWith('KUBE-SEP-')).length,
      expectedSep,
      replacedPresent: last === undefined || has.has(sepOf(last.added)),
      removedGone: last === undefined || !has.has(sepOf(last.removed)),
    };
    seen = `iptables-save lists ${out.check.sepChains} KUBE-SEP chains as expected`;
  }
  const c = out.check;
  const counted = c.saveError !== undefined || (c.svcChains === state.size && c.sepChains === expectedSep);
  if (!counted || !c.replacedPresent || !c.removedGone)
    throw new Error(`P8b ${flavor}: the kernel differs from the state: ${JSON.stringify(c)}`);
  const existing = out.full.filter((f) => f.onto === 'existing');
  const first = out.full.find((f) => f.onto === 'empty');
  out.fullFirstMs = first === undefined ? NaN : first.totalMs;
  out.fullExistingMedianMs = existing.length === 0 ? NaN : median(existing.map((f) => f.totalMs));
  out.fullExistingRestoreMedianMs = existing.length === 0 ? NaN : median(existing.map((f) => f.restoreMs));
  out.partialMedianMs = median(out.partial.map((p) => p.totalMs));
  out.partialP99Ms = percentile(
    out.partial.map((p) => p.totalMs),
    99,
  );
  out.partialRestoreMedianMs = median(out.partial.map((p) => p.restoreMs));
  out.partialRenderMedianMs = median(out.partial.map((p) => p.renderMs));
  ctx.log(
    `P8b ${flavor}: partial sync median ${out.partialMedianMs.toFixed(1)} ms (restore ` +
      `${out.partialRestoreMedianMs.toFixed(1)} ms, render ${out.partialRenderMedianMs.toFixed(1)} ms) over ` +
      `${z.partialReps}; ${seen}`,
  );
  return out;
}

export async function runP8b(ctx: BenchContext, z: Sizes) {
  ensureDep('iptables', 'IPTABLES_BIN');
  const tBuild = performance.now();
  const base = buildState(z.services, z.endpointsPerService);
  const keys = [...base.keys()];
  const buildMs = performance.now() - tBuild;
  // The pure renders, alone.
  const o: RenderOptions = { family: 4 };
  const fullRender: number[] = [];
  let plan = renderFull(base, { nat: [], filter: [] }, o);
  for (let i = 0; i < z.renderReps; i++) {
    const t0 = performance.now();
    plan = renderFull(base, { nat: [], filter: [] }, o);
    fullRender.push(performance.now() - t0);
  }
  const partialRender: number[] = [];
  let partialPlan = renderPartial(base, new Set([keys[0]!]), plan.applied, o);
  for (let i = 0; i < Math.max(5, z.renderReps * 4); i++) {
    const { next, key } = replaceEndpoint(base, keys, (i * 31) % keys.length, i);
    const t0 = performance.now();
    partialPlan = renderPartial(next, new Set([key]), plan.applied, o);
    partialRender.push(performance.now() - t0);
  }
  const render = {
    fullMedianMs: median(fullRender),
    partialMedianMs: median(partialRender),
    fullLines: plan.text.split('\n').length - 1,
    fullBytes: Buffer.byteLength(plan.text),
    fullRules: plan.rules,
    partialLines: partialPlan.text.split('\n').length - 1,
    partialBytes: Buffer.byteLength(partialPlan.text),
    partialRules: partialPlan.rules,
  };
  ctx.log(
    `P8b: ${z.services} Services × ${z.endpointsPerService} endpoints (state built in ${buildMs.toFixed(0)} ms); ` +
      `renderFull ${render.fullMedianMs.toFixed(0)} ms (${render.fullLines} lines, ` +
      `${(render.fullBytes / 2 ** 20).toFixed(1)} MiB), renderPartial ${render.partialMedianMs.toFixed(1)} ms ` +
      `(${render.partialLines} lines)`,
  );
  const flavors: FlavorResult[] = [];
  let netnsExecMs = NaN;
  for (const flavor of ['nft', 'legacy'] as const) {
    const ns = createNetns(`p8b-${flavor}`);
    try {
      if (flavor === 'nft') netnsExecMs = await timeExec(ns, 10);
      flavors.push(await runFlavor(ctx, z, flavor, base, keys, ns));
    } finally {
      ns.remove();
    }
  }
  return { buildMs, render, netnsExecMs, flavors };
}
