// `npm run bench -- store`: the sqlite and etcd backends against raw better-sqlite3 and raw etcd3
// in the same run, each repetition measuring every subject back to back. Method and latest figures:
// docs/benchmarks.md (store).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EtcdStore } from '../../src/storage/etcd/etcd-store.js';
import { startEtcd } from '../../src/storage/etcd/testing/etcd-server.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { median, type BenchContext, type BenchResult } from '../run.js';
import { VALUE, FULL, QUICK } from './shape.js';
import { type StoreFigures, measureStore } from './store-figures.js';
import { rawSqliteInserts, rawEtcd } from './raw-limits.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const etcd = await startEtcd({ extraArgs: ['--quota-backend-bytes=8589934592'] });
  const reps: Array<{
    sqlite: StoreFigures;
    etcd: StoreFigures;
    rawSqlite: number;
    rawEtcd: number;
    rawEtcdTxn: number;
  }> = [];
  try {
    for (let rep = 0; rep < z.reps; rep++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-'));
      try {
        // Alternate which goes first, so neither the raw limit nor the store always runs on a warmer
        // (or fuller) disk and etcd.
        const rawFirst = rep % 2 === 0;
        let rawSqlite = rawFirst ? rawSqliteInserts(dir, z.sequential * 2) : 0;
        const sq = SqliteStore.open({ dataDir: dir, synchronous: 'FULL' });
        const sqlite = await measureStore(sq, 'b', z);
        await sq.close();
        if (!rawFirst) rawSqlite = rawSqliteInserts(dir, z.sequential * 2);
        let raw = rawFirst ? await rawEtcd(etcd.endpoint, z.concurrent, z.inFlight, rep) : undefined;
        const es = await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: `/bench${rep}` });
        const etcdFigures = await measureStore(es, 'b', z);
        await es.close();
        raw ??= await rawEtcd(etcd.endpoint, z.concurrent, z.inFlight, rep);
        const rawEtcdPuts = raw.puts;
        reps.push({ sqlite, etcd: etcdFigures, rawSqlite, rawEtcd: rawEtcdPuts, rawEtcdTxn: raw.txns });
        ctx.log(
          `rep ${rep + 1}/${z.reps}: sqlite ${Math.round(sqlite.concurrentCreates)}/s (raw ${Math.round(rawSqlite)}/s), ` +
            `etcd ${Math.round(etcdFigures.concurrentCreates)}/s (raw puts ${Math.round(rawEtcdPuts)}/s, raw txns ${Math.round(raw.txns)}/s)`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await etcd.stop();
  }
  const med = (f: (r: (typeof reps)[number]) => number): number => median(reps.map(f));
  const keys: Array<[keyof StoreFigures, string]> = [
    ['sequentialCreates', 'sequential creates/s'],
    ['concurrentCreates', `creates/s, ${z.inFlight} in flight`],
    ['casUpdates', `CAS updates/s, ${z.inFlight} in flight`],
    ['list10kMs', `list of ${z.listKeys} keys (ms)`],
    ['watchP50Ms', `watch latency p50 (ms), 1 writer → ${z.watchers} watchers`],
    ['watchP99Ms', `watch latency p99 (ms), 1 writer → ${z.watchers} watchers`],
  ];
  const round = (x: number): number => (x >= 100 ? Math.round(x) : Math.round(x * 100) / 100);
  const table: Array<Record<string, string | number>> = keys.map(([k, label]) => ({
    metric: label,
    sqlite: round(med((r) => r.sqlite[k])),
    etcd: round(med((r) => r.etcd[k])),
  }));
  const ratios = {
    sqliteConcurrentVsRawSingleRowTxn: med((r) => r.sqlite.concurrentCreates / r.rawSqlite),
    sqliteSequentialVsRawSingleRowTxn: med((r) => r.sqlite.sequentialCreates / r.rawSqlite),
    etcdConcurrentVsRawPuts: med((r) => r.etcd.concurrentCreates / r.rawEtcd),
    etcdConcurrentVsRawCreateTxns: med((r) => r.etcd.concurrentCreates / r.rawEtcdTxn),
  };
  table.push(
    { metric: 'raw: better-sqlite3 1 row/txn inserts/s', sqlite: round(med((r) => r.rawSqlite)), etcd: '' },
    { metric: `raw: etcd3 puts/s, ${z.inFlight} in flight`, sqlite: '', etcd: round(med((r) => r.rawEtcd)) },
    {
      metric: `raw: etcd3 create txns/s, ${z.inFlight} in flight`,
      sqlite: '',
      etcd: round(med((r) => r.rawEtcdTxn)),
    },
    {
      metric: 'ratio: concurrent creates / raw create txns',
      sqlite: '',
      etcd: round(ratios.etcdConcurrentVsRawCreateTxns),
    },
    {
      metric: 'ratio: concurrent creates / raw',
      sqlite: round(ratios.sqliteConcurrentVsRawSingleRowTxn),
      etcd: round(ratios.etcdConcurrentVsRawPuts),
    },
  );
  const goals = {
    sqliteConcurrentDurableCreatesAtLeast3000: med((r) => r.sqlite.concurrentCreates) >= 3000,
    etcdAtLeast80PercentOfRaw: ratios.etcdConcurrentVsRawPuts >= 0.8,
    watchP99AtMost10ms: med((r) => r.sqlite.watchP99Ms) <= 10 && med((r) => r.etcd.watchP99Ms) <= 10,
  };
  return {
    table,
    data: {
      sizes: z,
      valueBytes: VALUE.length,
      medians: Object.fromEntries(
        (['sqlite', 'etcd'] as const).map((b) => [
          b,
          Object.fromEntries(keys.map(([k]) => [k, med((r) => r[b][k])])),
        ]),
      ),
      raw: {
        sqliteSingleRowTxnInsertsPerSec: med((r) => r.rawSqlite),
        etcdPutsPerSec: med((r) => r.rawEtcd),
        etcdCreateTxnsPerSec: med((r) => r.rawEtcdTxn),
      },
      ratios,
      goals,
      repetitions: reps,
    },
  };
}
