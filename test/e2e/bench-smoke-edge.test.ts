// The wrapper and proxy benchmarks must keep working: each runs in --quick mode (tiny sizes, numbers
// meaningless) and must write its JSON with every figure (test/support/bench-smoke.ts). Performance itself
// is never asserted in tests; the correctness each benchmark checks on its own is. The benchmarks are split
// over three files so that none runs past the 90 s a test file may take.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runQuickBench } from '../support/bench-smoke.js';

it('npm run bench -- wrapper --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('wrapper');
  const out = r.results as {
    check: Record<'served' | 'upstream' | 'mismatched', number>;
    p5: {
      slicesPerMove: number;
      missing: number;
      unexpected: number;
      medians: Record<string, number>;
      ratios: Record<string, number>;
    };
    p6: Record<string, number | string>;
    p7: Record<'watchers' | 'writes' | 'deliveries' | 'drops' | 'duplicates' | 'p50Ms' | 'p99Ms', number>;
    offline: { samplesMs: number[]; missing: number; medianMs: number; p99Ms: number; warmup: number };
    sizes: { offlineChanges: number };
    goals: Record<string, boolean | null>;
  };
  // Every slice the wrapper serves is what the topology engine keeps for its node.
  assert.equal(out.check.served, out.check.upstream);
  assert.equal(out.check.mismatched, 0);
  // Every relabel reached the watcher through the wrapper as exactly the slices whose view changed.
  assert.ok(out.p5.slicesPerMove > 0);
  assert.equal(out.p5.missing, 0);
  assert.equal(out.p5.unexpected, 0);
  for (const k of ['lastEventMs', 'firstEventMs', 'wrapperRecomputeMs', 'rebuildModelMs'])
    assert.ok(Number.isFinite(out.p5.medians[k]) && out.p5.medians[k]! > 0, `p5.${k}`);
  for (const k of ['rebuildModelOverRelabelEndToEnd', 'rebuildModelOverWrapperIndexUpdate'])
    assert.ok(Number.isFinite(out.p5.ratios[k]) && out.p5.ratios[k]! > 0, `p5.${k}`);
  for (const k of ['rssMiB', 'rssAfterGcMiB', 'heapUsedMiB']) assert.ok((out.p6[k] as number) > 0, `p6.${k}`);
  // Every watcher got every write exactly once.
  assert.equal(out.p7.deliveries, out.p7.watchers * out.p7.writes);
  assert.equal(out.p7.drops, 0);
  assert.equal(out.p7.duplicates, 0);
  assert.ok(Number.isFinite(out.p7.p99Ms) && out.p7.p99Ms >= out.p7.p50Ms);
  // Offline: every pod IP change the kubelet reported came through the wrapper's watch, rewritten.
  assert.equal(out.offline.missing, 0);
  assert.equal(out.offline.samplesMs.length, out.sizes.offlineChanges);
  assert.ok(out.offline.samplesMs.every((ms) => ms >= 0 && Number.isFinite(ms)));
  assert.ok(out.offline.p99Ms >= out.offline.medianMs);
  for (const k of [
    'p5LastEventAtMost10Ms',
    'p7P99AtMost50MsAndWithin15PercentOfFloor',
    'p7NoDrops',
    'offlineMedianAtMost50Ms',
  ])
    assert.equal(typeof out.goals[k], 'boolean', k);
  // The memory goal is judged on the cgroup's charge: null where the machine gives the wrapper no cgroup.
  assert.ok(out.goals.p6ChargeAtMost100MiB === null || typeof out.goals.p6ChargeAtMost100MiB === 'boolean');
  assert.match(r.stdout, /P7 drops \/ duplicates/);
  assert.match(r.stdout, /offline: kubelet \/pods answer/);
});

it('npm run bench -- proxy --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('proxy');
  type Figures = Record<'rps' | 'p50Ms' | 'p99Ms' | 'proxyCores' | 'errors', number>;
  type Flavor = {
    flavor: string;
    skipped?: string;
    full: unknown[];
    partial: unknown[];
    failed: unknown[];
    check: Record<'svcChains' | 'sepChains' | 'expectedSep', number> &
      Record<'replacedPresent' | 'removedGone', boolean>;
  } & Record<'fullFirstMs' | 'fullExistingMedianMs' | 'partialMedianMs' | 'partialRestoreMedianMs', number>;
  const out = r.results as {
    p8a: {
      medians: Record<'direct' | 'userspace' | 'haproxy', Record<'keepalive' | 'newconn', Figures>>;
      ratios: Record<string, number>;
    };
    p8b: { render: Record<string, number>; netnsExecMs: number; flavors: Flavor[] };
    p8bNftables: {
      skipped?: string;
      full: unknown[];
      resync: unknown[];
      partial: unknown[];
      check: Record<
        'serviceChains' | 'endpointChains' | 'expectedServiceChains' | 'expectedEndpointChains',
        number
      > &
        Record<'replacedPresent' | 'removedGone', boolean>;
    } & Record<'fullMedianMs' | 'resyncMedianMs' | 'partialMedianMs' | 'partialNftMedianMs', number>;
    p4: {
      mode: string;
      proxy: Record<'firstFullSyncMs' | 'sepChains' | 'expectedSepChains', number>;
      flips: Record<'count' | 'lost' | 'unverified' | 'p50Ms' | 'p99Ms' | 'upstreamSliceP50Ms', number>;
      rss: Record<'proxy' | 'wrapper' | 'up', Record<'rssMiB' | 'peakMiB', number>>;
    };
    goals: Record<string, boolean | null>;
  };
  // P8a: every path answered, through both backends (the benchmark checks that), without errors.
  for (const mode of ['direct', 'userspace', 'haproxy'] as const)
    for (const kind of ['keepalive', 'newconn'] as const) {
      const f = out.p8a.medians[mode][kind];
      assert.ok(f.rps > 0 && Number.isFinite(f.p99Ms) && f.p99Ms >= f.p50Ms, `p8a ${mode} ${kind}`);
      assert.equal(f.errors, 0, `p8a ${mode} ${kind} errors`);
      if (mode !== 'direct') assert.ok(f.proxyCores > 0, `p8a ${mode} ${kind} proxy cores`);
    }
  for (const k of ['userspaceOverHaproxyKeepAliveRps', 'userspaceOverHaproxyNewConnRps'])
    assert.ok(Number.isFinite(out.p8a.ratios[k]) && out.p8a.ratios[k]! > 0, k);
  // P8b: the machine's iptables always; after the partial syncs the kernel holds exactly the state's chains.
  assert.ok(out.p8b.render['fullMedianMs']! > 0 && out.p8b.render['partialMedianMs']! > 0);
  assert.ok(out.p8b.netnsExecMs > 0);
  const nft = out.p8b.flavors.find((f) => f.flavor === 'nft');
  assert.ok(nft !== undefined && nft.skipped === undefined, 'P8b with the machine iptables');
  for (const f of out.p8b.flavors.filter((x) => x.skipped === undefined)) {
    for (const k of [
      'fullFirstMs',
      'fullExistingMedianMs',
      'partialMedianMs',
      'partialRestoreMedianMs',
    ] as const)
      assert.ok(Number.isFinite(f[k]) && f[k] > 0, `p8b ${f.flavor} ${k}`);
    assert.deepEqual(f.failed, [], `p8b ${f.flavor}: every full sync finished`);
    assert.equal(f.check.sepChains, f.check.expectedSep, `p8b ${f.flavor}: KUBE-SEP chains`);
    assert.ok(f.check.replacedPresent && f.check.removedGone, `p8b ${f.flavor}: the replaced endpoint`);
  }
  // P8b, nftables mode: every kind of sync ran, and the kernel holds exactly the state's chains after them.
  const n = out.p8bNftables;
  assert.equal(n.skipped, undefined, 'P8b nftables mode');
  assert.ok(n.full.length > 0 && n.resync.length > 0 && n.partial.length > 0);
  for (const k of ['fullMedianMs', 'resyncMedianMs', 'partialMedianMs', 'partialNftMedianMs'] as const)
    assert.ok(Number.isFinite(n[k]) && n[k] > 0, `p8b nftables ${k}`);
  assert.equal(n.check.serviceChains, n.check.expectedServiceChains);
  assert.equal(n.check.endpointChains, n.check.expectedEndpointChains);
  assert.ok(n.check.replacedPresent && n.check.removedGone, 'p8b nftables: the replaced endpoint');
  // P4 (nftables mode by default): every flip reached the rules (its partial sync came, and the Service's
  // chain agrees).
  assert.equal(out.p4.mode, 'nftables');
  assert.ok(out.p4.flips.count > 0);
  assert.equal(out.p4.flips.lost, 0);
  assert.equal(out.p4.flips.unverified, 0);
  for (const k of ['p50Ms', 'p99Ms', 'upstreamSliceP50Ms'] as const)
    assert.ok(Number.isFinite(out.p4.flips[k]) && out.p4.flips[k] > 0, `p4 ${k}`);
  assert.ok(out.p4.proxy.firstFullSyncMs > 0);
  for (const p of ['proxy', 'wrapper', 'up'] as const) assert.ok(out.p4.rss[p].rssMiB > 0, `p4 rss ${p}`);
  for (const k of [
    'p8aUserspaceAtLeastHalfOfHaproxy',
    'p8bFullAtMost1s',
    'p8bPartialAtMost20ms',
    'p8bNftablesFullAtMost3s',
    'p8bNftablesResyncAtMost3s',
    'p8bNftablesPartialAtMost20ms',
    'p4P99AtMost100ms',
    'p4NoFlipLost',
    'p4NftablesProxyPeakAtMost150MiB',
  ])
    assert.equal(typeof out.goals[k], 'boolean', k);
  assert.match(r.stdout, /P4 flips lost \/ not as expected in the nftables rules/);
});
