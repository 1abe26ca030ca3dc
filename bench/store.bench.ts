// Store benchmark (issue 2): the sqlite backend (durable, synchronous=FULL) and the etcd backend on a
// real local etcd, against the raw limits measured in the same run:
//   - raw SQLite: better-sqlite3 single-row inserts, one transaction (so one fsync) each;
//   - raw etcd: puts through etcd3 with the same number in flight.
// Every repetition measures all subjects back to back, so each ratio is paired within one repetition;
// the table reports medians over repetitions.
import Database from 'better-sqlite3';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { EtcdStore } from '../src/storage/etcd/etcd-store.js';
import { startEtcd } from '../src/storage/etcd/testing/etcd-server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { median, percentile, type BenchContext, type BenchResult } from './run.js';

const VALUE = Buffer.from(JSON.stringify({ kind: 'Pod', pad: 'x'.repeat(1400) })); // ~1.5 KB, pod-sized

interface Sizes {
  reps: number;
  sequential: number;
  concurrent: number;
  inFlight: number;
  cas: number;
  listKeys: number;
  watchers: number;
  watchWrites: number;
}

const FULL: Sizes = {
  reps: 5,
  sequential: 1000,
  concurrent: 10_000,
  inFlight: 64,
  cas: 5000,
  listKeys: 10_000,
  watchers: 100,
  watchWrites: 500,
};
const QUICK: Sizes = {
  reps: 1,
  sequential: 50,
  concurrent: 500,
  inFlight: 64,
  cas: 200,
  listKeys: 300,
  watchers: 10,
  watchWrites: 30,
};

/** Runs `total` operations with `inFlight` concurrent loops; returns operations per second. */
async function rate(total: number, inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < total; i = next++) await op(i);
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

interface StoreFigures {
  sequentialCreates: number;
  concurrentCreates: number;
  casUpdates: number;
  list10kMs: number;
  watchP50Ms: number;
  watchP99Ms: number;
}

async function measureStore(store: Store, tag: string, z: Sizes): Promise<StoreFigures> {
  const sequentialCreates = await rate(z.sequential, 1, (i) => store.create(`/${tag}/seq/${i}`, VALUE));
  const concurrentCreates = await rate(z.concurrent, z.inFlight, (i) =>
    store.create(`/${tag}/conc/${i}`, VALUE),
  );
  // CAS: each loop owns one key and updates it with its last revision (no conflicts: pure CAS cost).
  const revs = await Promise.all(
    Array.from(
      { length: z.inFlight },
      async (_, k) => (await store.create(`/${tag}/cas/${k}`, VALUE)).modRevision,
    ),
  );
  let nextCas = 0;
  const t0 = performance.now();
  await Promise.all(
    revs.map(async (_, k) => {
      while (nextCas++ < z.cas)
        revs[k] = (await store.update(`/${tag}/cas/${k}`, VALUE, revs[k]!)).modRevision;
    }),
  );
  const casUpdates = z.cas / ((performance.now() - t0) / 1000);
  // List: fill a prefix with listKeys keys, then time a full list of it.
  await rate(z.listKeys, z.inFlight, (i) =>
    store.create(`/${tag}/list/${String(i).padStart(6, '0')}`, VALUE),
  );
  const listTimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const res = await store.list(`/${tag}/list/`);
    listTimes.push(performance.now() - t);
    if (res.items.length !== z.listKeys)
      throw new Error(`list returned ${res.items.length}, want ${z.listKeys}`);
  }
  const { p50, p99 } = await watchLatency(store, tag, z);
  return {
    sequentialCreates,
    concurrentCreates,
    casUpdates,
    list10kMs: median(listTimes),
    watchP50Ms: p50,
    watchP99Ms: p99,
  };
}

/** One writer, `watchers` watchers: time from issuing each write to each watcher receiving it. */
async function watchLatency(store: Store, tag: string, z: Sizes): Promise<{ p50: number; p99: number }> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const from = await store.currentRevision();
  const controllers: AbortController[] = [];
  let received = 0;
  const want = z.watchers * z.watchWrites;
  let allDone!: () => void;
  const done = new Promise<void>((r) => (allDone = r));
  const watchers = Array.from({ length: z.watchers }, async () => {
    const ac = new AbortController(); // one per watch, as an apiserver has one per request
    controllers.push(ac);
    for await (const batch of store.watch(`/${tag}/watch/`, from, ac.signal)) {
      const now = performance.now();
      for (const ev of batch) {
        latencies.push(now - sentAt.get(ev.key)!);
        if (++received === want) allDone();
      }
    }
  });
  await new Promise((r) => setTimeout(r, 200)); // let every watch get established
  for (let i = 0; i < z.watchWrites; i++) {
    const key = `/${tag}/watch/${i}`;
    sentAt.set(key, performance.now());
    await store.create(key, VALUE);
    await new Promise((r) => setTimeout(r, 2)); // a paced writer, not a flood
  }
  const timeout = setTimeout(() => allDone(), 30_000);
  await done;
  clearTimeout(timeout);
  controllers.forEach((c) => c.abort());
  await Promise.allSettled(watchers);
  if (received < want) throw new Error(`watch: received ${received} of ${want} events`);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** better-sqlite3 alone: one row per transaction, WAL, synchronous=FULL: one fsync per insert. */
function rawSqliteInserts(dir: string, n: number): number {
  const db = new Database(path.join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE kv (id INTEGER PRIMARY KEY AUTOINCREMENT, name BLOB NOT NULL, create_revision INTEGER NOT NULL,
    deleted INTEGER NOT NULL, prev_revision INTEGER NOT NULL, value BLOB NOT NULL);
    CREATE UNIQUE INDEX kv_name_prev ON kv (name, prev_revision); CREATE INDEX kv_name_id ON kv (name, id);`);
  const insert = db.prepare(
    'INSERT INTO kv (name, create_revision, deleted, prev_revision, value) VALUES (?, 0, 0, 0, ?)',
  );
  const t0 = performance.now();
  for (let i = 0; i < n; i++) insert.run(Buffer.from(`/raw/${i}`), VALUE);
  const perSec = n / ((performance.now() - t0) / 1000);
  db.close();
  return perSec;
}

/** etcd3 alone at the same concurrency: blind puts, and the create-if-absent txn a create really is. */
async function rawEtcd(
  endpoint: string,
  n: number,
  inFlight: number,
  rep: number,
): Promise<{ puts: number; txns: number }> {
  const client = new Etcd3({ hosts: [endpoint] });
  try {
    const puts = await rate(n, inFlight, (i) =>
      client.kv.put({ key: Buffer.from(`/raw/${rep}/p/${i}`), value: VALUE }),
    );
    const txns = await rate(n, inFlight, (i) => {
      const key = Buffer.from(`/raw/${rep}/t/${i}`);
      return client.kv.txn({
        compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: 0 }],
        success: [{ request_put: { key, value: VALUE } }],
        failure: [],
      });
    });
    return { puts, txns };
  } finally {
    client.close();
  }
}

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
