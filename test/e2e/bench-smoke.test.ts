// The store and apiserver benchmarks must keep working: run each in --quick mode (tiny sizes, numbers
// meaningless) and check it writes its JSON with every figure. Performance itself is never asserted in
// tests; correctness the benchmark checks on its own (every watcher got every write exactly once) is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';

it('npm run bench -- store --quick writes bench results with every metric', { timeout: 120_000 }, () => {
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

it('npm run bench -- apiserver --quick writes bench results with every metric', { timeout: 180_000 }, () => {
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
