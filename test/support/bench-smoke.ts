// Runs one benchmark in --quick mode for the bench-smoke tests (test/e2e/bench-smoke-*.test.ts): it must
// exit 0 and write its results JSON, which is returned with what it printed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function runQuickBench(name: string): { readonly results: unknown; readonly stdout: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-smoke-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', name, '--quick'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, r.stderr);
    return {
      results: JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')) as unknown,
      stdout: r.stdout,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
