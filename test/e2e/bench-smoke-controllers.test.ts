// The endpoints, grids, nodes and topology benchmarks must keep working: each runs in --quick mode (tiny
// sizes, numbers meaningless) and must write its JSON with every figure (test/support/bench-smoke.ts).
// Performance itself is never asserted in tests; the correctness each benchmark checks on its own is. The
// benchmarks are split over three files so that none runs past the 90 s a test file may take.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runQuickBench } from '../support/bench-smoke.js';

it('npm run bench -- endpoints --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('endpoints');
  const out = r.results as {
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
});

it('npm run bench -- grids --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('grids');
  type Cpu = Record<'controllersS' | 'apiserverS' | 'totalS', number>;
  type Mem = Record<'controllersRssMiB' | 'controllersPeakMiB', number | null> &
    Record<'serverRssMiB' | 'serverPeakMiB', number>;
  const out = r.results as {
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
});

it('npm run bench -- nodes --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('nodes');
  type Cpu = Record<'nodeS' | 'controllersS' | 'apiserverS', number>;
  const out = r.results as {
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
    assert.ok(Number.isFinite(out.rollout.bindsPerSec[k]) && out.rollout.bindsPerSec[k] > 0, `binds/s ${k}`);
  for (const k of ['podsCreatedPerSec', 'allReadyS', 'deploymentsReadyS'] as const)
    assert.ok(Number.isFinite(out.rollout[k]) && out.rollout[k] > 0, k);
  assert.ok(out.rollout.cpu.nodeS >= 0 && out.rollout.cpu.controllersS > 0 && out.rollout.cpu.apiserverS > 0);
  assert.ok(Number.isFinite(out.idle.leasePutsPerSec) && Number.isFinite(out.steady.leasePutsPerSec));
  assert.ok(out.memory.nodePeakMiB > 0 && out.memory.upPeakMiB > 0);
  assert.equal(typeof out.goals.schedulerAtLeast500PodsPerSec, 'boolean');
  assert.equal(typeof out.goals.allReadyWithin60s, 'boolean');
  assert.match(r.stdout, /checks passed/);
});

it('npm run bench -- topology --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('topology');
  const out = r.results as {
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
});
