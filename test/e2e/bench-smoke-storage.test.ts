// The store, apiserver, allocation, authorizer and typecheck benchmarks must keep working: each runs in --quick mode (tiny sizes,
// numbers meaningless) and must write its JSON with every figure (test/support/bench-smoke.ts). Performance
// itself is never asserted in tests; the correctness each benchmark checks on its own is. The benchmarks
// are split over three files so that none runs past the 90 s a test file may take.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { runQuickBench } from '../support/bench-smoke.js';

it('npm run bench -- store --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('store');
  const out = r.results as {
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
      assert.ok(Number.isFinite(out.medians[backend][k]) && out.medians[backend][k]! > 0, `${backend}.${k}`);
    }
  }
  assert.ok(out.raw.sqliteSingleRowTxnInsertsPerSec! > 0 && out.raw.etcdPutsPerSec! > 0);
  assert.ok(out.raw.etcdCreateTxnsPerSec! > 0 && out.ratios.etcdConcurrentVsRawCreateTxns! > 0);
  assert.ok(out.ratios.etcdConcurrentVsRawPuts! > 0);
  assert.match(r.stdout, /ratio: concurrent creates \/ raw/);
});

it('npm run bench -- apiserver --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('apiserver');
  const out = r.results as {
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
});

it('npm run bench -- allocation --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('allocation');
  const out = r.results as {
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
    for (const k of ['ip16OverIp24Throughput', 'ip12OverIp24Throughput', 'ip12PrefilledOverIp24Throughput']) {
      assert.ok(out.ratios[backend][k]! > 0, `${backend} ratio ${k}`);
    }
    for (const k of ['ip12OverIp24AtLeast0_9', 'ip12PrefilledOverIp24AtLeast0_9', 'p99AtMost50Ms']) {
      assert.equal(typeof out.goals[backend][k], 'boolean', `${backend} goal ${k}`);
    }
  }
  assert.equal(typeof out.goals.sqlite.createsAtLeast2000PerSec, 'boolean');
  assert.match(r.stdout, /ratio: \/12 ÷ \/24 creates\/s/);
  assert.match(r.stdout, /bytes written per create/);
});

// Needs the rbac.authorization.k8s.io kinds served (the benchmark creates its RoleBindings through the API).
it('npm run bench -- authorizer --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const r = runQuickBench('authorizer');
  const out = r.results as {
    medians: Record<string, number>;
    ratios: Record<'cpu' | 'latencyP50', number>;
    goals: Record<string, boolean>;
  };
  for (const k of [
    'rbacCpuUsPerRequest',
    'alwaysAllowCpuUsPerRequest',
    'rbacLatencyP50Ms',
    'alwaysAllowLatencyP50Ms',
  ])
    assert.ok(Number.isFinite(out.medians[k]) && out.medians[k]! > 0, k);
  for (const k of ['cpu', 'latencyP50'] as const) assert.ok(out.ratios[k] > 0, `ratio ${k}`);
  assert.equal(typeof out.goals.cpuRatioAtMost1_1, 'boolean');
});

it('npm run bench -- typecheck --quick writes bench results with every metric', { timeout: 90_000 }, () => {
  const out = runQuickBench('typecheck').results as Record<string, number>;
  for (const k of [
    'cpuUsPerCreateOn',
    'cpuUsPerCreateOff',
    'checkAloneUsPerPod',
    'cpuRatio',
    'pairedCpuRatio',
  ])
    assert.ok(Number.isFinite(out[k]) && out[k]! > 0, k);
});
