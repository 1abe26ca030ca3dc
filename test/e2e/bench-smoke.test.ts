// The store, apiserver, allocation, endpoints, grids, nodes, topology, wrapper and proxy benchmarks must keep
// working: run each in --quick mode (tiny sizes, numbers meaningless) and check it writes its JSON with every
// figure. Performance itself is never asserted in tests; correctness the benchmark checks on its own (every
// watcher got every write exactly once, every readiness flip reached the watcher, every grid's objects and no
// others, every proxy flip reached the iptables rules) is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';

it('npm run bench -- store --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'store', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'store.json'), 'utf8')) as {
      medians: Record<'sqlite' | 'etcd', Record<string, number>>;
      raw: Record<string, number>;
      ratios: Record<string, number>;
    };
    for (const backend of ['sqlite', 'etcd'] as const) {
      for (const k of [
        'sequentialCreates',
        'concurrentCreates',
        'casUpdates',
        'list10kMs',
        'watchP50Ms',
        'watchP99Ms',
      ]) {
        assert.ok(
          Number.isFinite(out.medians[backend][k]) && out.medians[backend][k]! > 0,
          `${backend}.${k}`,
        );
      }
    }
    assert.ok(out.raw.sqliteSingleRowTxnInsertsPerSec! > 0 && out.raw.etcdPutsPerSec! > 0);
    assert.ok(out.raw.etcdCreateTxnsPerSec! > 0 && out.ratios.etcdConcurrentVsRawCreateTxns! > 0);
    assert.ok(out.ratios.etcdConcurrentVsRawPuts! > 0);
    assert.match(r.stdout, /ratio: concurrent creates \/ raw/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- apiserver --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'apiserver', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'apiserver.json'), 'utf8')) as {
      medians: Record<string, number>;
      goals: Record<string, boolean>;
      ratios: Record<string, number>;
      subjects: Record<'apiserver' | 'up', { medians: Record<string, number>; setup: { server: string } }>;
    };
    for (const k of [
      'createsPerSec',
      'createP50Ms',
      'createP99Ms',
      'createServerCpuUsPerPod',
      'listServicesJsonP50Ms',
      'listServicesJsonBytes',
      'listServicesTableP50Ms',
      'bulkLoadCreatesPerSec',
      'listPodsP50Ms',
      'listPodsBytes',
      'watchP50Ms',
      'watchP99Ms',
      'rssEmptyMiB',
      'rssBigMiB',
      'rssPeakMiB',
    ]) {
      assert.ok(Number.isFinite(out.medians[k]) && out.medians[k]! > 0, k);
    }
    assert.equal(out.medians.watchLostEvents, 0);
    assert.equal(out.medians.watchDuplicateEvents, 0);
    assert.equal(out.goals.watchNoEventLost, true);
    assert.match(r.stdout, /watch delivery p99/);
    // Both servers were measured in the same run, and compared.
    for (const subject of ['apiserver', 'up'] as const) {
      const sm = out.subjects[subject].medians;
      assert.ok(sm.createsPerSec! > 0 && sm.listServicesJsonP50Ms! > 0 && sm.watchP99Ms! > 0, subject);
      assert.equal(sm.watchLostEvents, 0, `${subject}: watch events lost`);
      assert.match(out.subjects[subject].setup.server, new RegExp(`^svcplane ${subject} `));
    }
    assert.deepEqual(out.subjects.up.medians, out.medians);
    assert.ok(out.ratios.upOverApiserverCreatesPerSec! > 0);
    assert.equal(typeof out.goals.upCreatesAtLeast90PctOfApiserver, 'boolean');
    assert.match(r.stdout, /ratio: up ÷ apiserver pod creates\/s/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- allocation --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'allocation', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'allocation.json'), 'utf8')) as {
      medians: Record<'sqlite' | 'etcd', Record<string, Record<string, number>>>;
      ratios: Record<'sqlite' | 'etcd', Record<string, number>>;
      goals: Record<'sqlite' | 'etcd', Record<string, boolean>>;
    };
    for (const backend of ['sqlite', 'etcd'] as const) {
      for (const range of ['ip24', 'ip16', 'ip12', 'ip12Prefilled']) {
        const m = out.medians[backend][range]!;
        for (const k of [
          'createsPerSec',
          'createP50Ms',
          'createP99Ms',
          'serverCpuUsPerCreate',
          'bytesPerCreate',
          'serviceBytesPerCreate',
          'clusterIPRecordBytesPerCreate',
          'nodePortRecordBytesPerCreate',
          'upstreamBytesPerCreate',
          ...(backend === 'etcd' ? ['etcdCpuUsPerCreate'] : []),
        ]) {
          assert.ok(Number.isFinite(m[k]) && m[k]! > 0, `${backend}.${range}.${k}`);
        }
        assert.ok(Number.isFinite(m.otherBytesPerCreate) && m.otherBytesPerCreate! >= 0);
        // A Service, its ClusterIP record and its NodePort record, at least.
        assert.ok(m.putsPerCreate! >= 3, `${backend}.${range}.putsPerCreate ${m.putsPerCreate}`);
      }
      // One small key per value, whatever the range; upstream's bitmap grows with it.
      const m = out.medians[backend];
      assert.ok(m.ip12!.bytesPerCreate! < m.ip12!.upstreamBytesPerCreate! / 10);
      for (const k of [
        'ip16OverIp24Throughput',
        'ip12OverIp24Throughput',
        'ip12PrefilledOverIp24Throughput',
      ]) {
        assert.ok(out.ratios[backend][k]! > 0, `${backend} ratio ${k}`);
      }
      for (const k of ['ip12OverIp24AtLeast0_9', 'ip12PrefilledOverIp24AtLeast0_9', 'p99AtMost50Ms']) {
        assert.equal(typeof out.goals[backend][k], 'boolean', `${backend} goal ${k}`);
      }
    }
    assert.equal(typeof out.goals.sqlite.createsAtLeast2000PerSec, 'boolean');
    assert.match(r.stdout, /ratio: \/12 ÷ \/24 creates\/s/);
    assert.match(r.stdout, /bytes written per create/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- endpoints --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'endpoints', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'endpoints.json'), 'utf8')) as {
      setup: { controllers: string[] };
      convergence: Record<string, number> & { perTargetS: Record<string, number> };
      flips: {
        flips: number;
        controllerCpuS: number;
        latency: Record<'slices' | 'endpoints', Record<string, number>>;
        podWatch: Record<string, number>;
      };
      memory: Record<string, number>;
      goals: Record<string, boolean>;
      timeline: unknown[];
    };
    // The benchmark must measure EndpointSlices, not only Endpoints.
    assert.deepEqual(out.setup.controllers, ['endpoints', 'endpointslice']);
    for (const k of ['controllerReadyS', 'seconds', 'controllerCpuS']) {
      assert.ok(Number.isFinite(out.convergence[k]) && out.convergence[k]! > 0, `convergence.${k}`);
    }
    for (const t of ['slices', 'endpoints'] as const) {
      assert.ok(out.convergence.perTargetS[t]! > 0, `convergence.perTargetS.${t}`);
      const l = out.flips.latency[t];
      for (const k of ['p50Ms', 'p99Ms', 'maxMs']) assert.ok(Number.isFinite(l[k]), `${t}.${k}`);
      // Every readiness flip reaches the watcher (performance itself is not asserted).
      assert.equal(l.lost, 0, `${t}: flips lost`);
      assert.equal(l.flips, out.flips.flips);
    }
    assert.ok(out.flips.flips > 0 && out.flips.controllerCpuS >= 0);
    assert.equal(out.flips.podWatch.lost, 0, 'pod watch: flips lost');
    for (const k of ['controllerPeakRssMiB', 'apiserverPeakRssMiB']) assert.ok(out.memory[k]! > 0, k);
    assert.equal(typeof out.goals.sliceFlipP99AtMost100Ms, 'boolean');
    assert.equal(typeof out.goals.controllerRssAtMost1GiB, 'boolean');
    assert.ok(out.timeline.length > 0);
    assert.match(r.stdout, /flip → EndpointSlices watch p99/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- grids --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'grids', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    type Cpu = Record<'controllersS' | 'apiserverS' | 'totalS', number>;
    type Mem = Record<'controllersRssMiB' | 'controllersPeakMiB', number | null> &
      Record<'serverRssMiB' | 'serverPeakMiB', number>;
    const out = JSON.parse(readFileSync(path.join(dir, 'grids.json'), 'utf8')) as {
      sizes: { shape: Record<'serviceGrids' | 'deploymentGrids' | 'units', number> };
      setup: { controllers: string[] };
      subjects: Record<
        'up' | 'split',
        {
          create: Record<string, number>;
          convergence: Record<'seconds' | 'servicesS' | 'deploymentsS', number> & {
            statusesS: Record<'servicegrids' | 'deploymentgrids', number>;
            cpu: Cpu;
            listCheck: Record<'services' | 'deployments', number>;
          };
          relabel: Record<
            'seconds' | 'newUnitCreatedS' | 'oldUnitDeletedS' | 'deploymentGridStatusesS',
            number
          > & {
            cpuToSettle: Cpu;
            watchEvents: { deployments: Record<'ADDED' | 'DELETED', number> };
            listCheck: Record<'services' | 'deployments', number>;
          };
          settleAfterRelabel: { memory: Mem };
          peak: Mem;
        }
      >;
    };
    assert.deepEqual(out.setup.controllers, ['servicegrid', 'deploymentgrid']);
    const { serviceGrids, deploymentGrids, units } = out.sizes.shape;
    // The same steps in `svcplane up` and in apiserver + controller-manager.
    for (const subject of ['up', 'split'] as const) {
      const s = out.subjects[subject];
      assert.ok(s !== undefined, subject);
      assert.ok(s.create.seconds! > 0, `${subject}: create.seconds`);
      for (const k of ['seconds', 'servicesS', 'deploymentsS'] as const)
        assert.ok(Number.isFinite(s.convergence[k]) && s.convergence[k] > 0, `${subject}: convergence.${k}`);
      for (const k of ['servicegrids', 'deploymentgrids'] as const)
        assert.ok(Number.isFinite(s.convergence.statusesS[k]), `${subject}: statusesS.${k}`);
      // Every expected object, and nothing else, in the LIST after convergence and after the relabel.
      assert.equal(s.convergence.listCheck.services, serviceGrids, `${subject}: Services`);
      assert.equal(s.convergence.listCheck.deployments, deploymentGrids * units, `${subject}: Deployments`);
      assert.equal(s.relabel.listCheck.deployments, deploymentGrids * units, `${subject}: after the relabel`);
      for (const k of ['seconds', 'newUnitCreatedS', 'oldUnitDeletedS', 'deploymentGridStatusesS'] as const)
        assert.ok(Number.isFinite(s.relabel[k]) && s.relabel[k] > 0, `${subject}: relabel.${k}`);
      // One unit's Deployments went away and another's appeared.
      assert.ok(s.relabel.watchEvents.deployments.ADDED >= deploymentGrids, `${subject}: Deployments added`);
      assert.ok(
        s.relabel.watchEvents.deployments.DELETED >= deploymentGrids,
        `${subject}: Deployments deleted`,
      );
      assert.ok(s.convergence.cpu.controllersS > 0 && s.convergence.cpu.apiserverS > 0, `${subject}: CPU`);
      assert.ok(s.relabel.cpuToSettle.controllersS >= 0, `${subject}: relabel CPU`);
      assert.ok(s.peak.serverPeakMiB > 0 && s.settleAfterRelabel.memory.serverRssMiB > 0, `${subject}: RSS`);
    }
    // The controllers' own RSS is measurable only in their own process.
    assert.ok(out.subjects.split.peak.controllersPeakMiB! > 0);
    assert.ok(out.subjects.split.settleAfterRelabel.memory.controllersRssMiB! > 0);
    assert.equal(out.subjects.up.peak.controllersPeakMiB, null);
    assert.match(r.stdout, /relabel u009→u010 settled/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- nodes --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'nodes', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    type Cpu = Record<'nodeS' | 'controllersS' | 'apiserverS', number>;
    const out = JSON.parse(readFileSync(path.join(dir, 'nodes.json'), 'utf8')) as {
      sizes: Record<'nodes' | 'deployments' | 'replicas', number>;
      registration: { seconds: number };
      idle: { leasePutsPerSec: number; cpuCoresUsed: Cpu; memory: Record<string, number> };
      rollout: Record<'podsCreatedPerSec' | 'allReadyS' | 'deploymentsReadyS', number> & {
        bindsPerSec: Record<'medianBusy' | 'busyWindow' | 'overall', number>;
        cpu: Cpu;
      };
      steady: { leasePutsPerSec: number; cpuCoresUsed: Cpu };
      checks: {
        nodes: number;
        nodesReady: number;
        pods: number;
        spread: { nodesUsed: number };
        watcher: Record<'pods' | 'bound' | 'rebinds' | 'deleted', number>;
      };
      memory: Record<'nodePeakMiB' | 'upPeakMiB', number>;
      goals: Record<string, boolean>;
    };
    const { nodes, deployments, replicas } = out.sizes;
    // Counts exact (the benchmark itself checks each pod Running, Ready, with an IP in its node's podCIDR).
    assert.equal(out.checks.nodes, nodes);
    assert.equal(out.checks.nodesReady, nodes);
    assert.equal(out.checks.pods, deployments * replicas);
    assert.equal(out.checks.watcher.pods, deployments * replicas);
    assert.equal(out.checks.watcher.bound, deployments * replicas);
    assert.equal(out.checks.watcher.rebinds, 0);
    assert.equal(out.checks.watcher.deleted, 0);
    assert.ok(out.checks.spread.nodesUsed > 1, 'pods spread over nodes');
    assert.ok(out.registration.seconds > 0);
    for (const k of ['medianBusy', 'busyWindow', 'overall'] as const)
      assert.ok(
        Number.isFinite(out.rollout.bindsPerSec[k]) && out.rollout.bindsPerSec[k] > 0,
        `binds/s ${k}`,
      );
    for (const k of ['podsCreatedPerSec', 'allReadyS', 'deploymentsReadyS'] as const)
      assert.ok(Number.isFinite(out.rollout[k]) && out.rollout[k] > 0, k);
    assert.ok(
      out.rollout.cpu.nodeS >= 0 && out.rollout.cpu.controllersS > 0 && out.rollout.cpu.apiserverS > 0,
    );
    assert.ok(Number.isFinite(out.idle.leasePutsPerSec) && Number.isFinite(out.steady.leasePutsPerSec));
    assert.ok(out.memory.nodePeakMiB > 0 && out.memory.upPeakMiB > 0);
    assert.equal(typeof out.goals.schedulerAtLeast500PodsPerSec, 'boolean');
    assert.equal(typeof out.goals.allReadyWithin60s, 'boolean');
    assert.match(r.stdout, /checks passed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- topology --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'topology', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'topology.json'), 'utf8')) as {
      ratios: Record<string, number>;
      engine: Record<string, number>;
      memory: Record<string, number | string>;
      correctness: { staleAfterMoves: unknown[]; changedByTimedRebuilds: number };
    };
    for (const k of ['bOverA', 'bOverA2', 'bOverA3'])
      assert.ok(Number.isFinite(out.ratios[k]) && out.ratios[k]! > 0, k);
    assert.ok(out.engine['viewsPerSec']! > 0 && out.engine['endpointsJudgedPerSec']! > 0);
    assert.ok((out.memory['indexMiB'] as number) > 0);
    // The benchmark checks, after every move, that no view is stale against a full rebuild.
    assert.deepEqual(out.correctness.staleAfterMoves, []);
    assert.equal(out.correctness.changedByTimedRebuilds, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- wrapper --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'wrapper', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(readFileSync(path.join(dir, 'wrapper.json'), 'utf8')) as {
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
      goals: Record<string, boolean>;
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
    for (const k of ['rssMiB', 'rssAfterGcMiB', 'heapUsedMiB'])
      assert.ok((out.p6[k] as number) > 0, `p6.${k}`);
    // Every watcher got every write exactly once.
    assert.equal(out.p7.deliveries, out.p7.watchers * out.p7.writes);
    assert.equal(out.p7.drops, 0);
    assert.equal(out.p7.duplicates, 0);
    assert.ok(Number.isFinite(out.p7.p99Ms) && out.p7.p99Ms >= out.p7.p50Ms);
    for (const k of ['p5RebuildAtLeast100xRelabel', 'p6RssAtMost100MiB', 'p7P99AtMost50Ms', 'p7NoDrops'])
      assert.equal(typeof out.goals[k], 'boolean', k);
    assert.match(r.stdout, /P7 drops \/ duplicates/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('npm run bench -- proxy --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', 'proxy', '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
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
    const out = JSON.parse(readFileSync(path.join(dir, 'proxy.json'), 'utf8')) as {
      p8a: {
        medians: Record<'direct' | 'userspace' | 'haproxy', Record<'keepalive' | 'newconn', Figures>>;
        ratios: Record<string, number>;
      };
      p8b: { render: Record<string, number>; netnsExecMs: number; flavors: Flavor[] };
      p4: {
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
    // P4: every flip reached the rules (its partial sync came, and iptables-save agrees).
    assert.ok(out.p4.flips.count > 0);
    assert.equal(out.p4.flips.lost, 0);
    assert.equal(out.p4.flips.unverified, 0);
    assert.ok(out.p4.proxy.sepChains >= out.p4.proxy.expectedSepChains);
    for (const k of ['p50Ms', 'p99Ms', 'upstreamSliceP50Ms'] as const)
      assert.ok(Number.isFinite(out.p4.flips[k]) && out.p4.flips[k] > 0, `p4 ${k}`);
    assert.ok(out.p4.proxy.firstFullSyncMs > 0);
    for (const p of ['proxy', 'wrapper', 'up'] as const) assert.ok(out.p4.rss[p].rssMiB > 0, `p4 rss ${p}`);
    for (const k of [
      'p8aUserspaceAtLeastHalfOfHaproxy',
      'p8bFullAtMost1s',
      'p8bPartialAtMost20ms',
      'p4P99AtMost100ms',
    ])
      assert.equal(typeof out.goals[k], 'boolean', k);
    assert.match(r.stdout, /P4 flips lost \/ not as expected in iptables-save/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
