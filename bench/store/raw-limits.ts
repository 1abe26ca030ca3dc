// The raw limits a backend is compared with: better-sqlite3 one row per transaction, etcd3 puts and
// create-if-absent transactions at the same concurrency.
import Database from 'better-sqlite3';
import { Etcd3 } from 'etcd3';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { VALUE, rate } from './shape.js';

/** better-sqlite3 alone: one row per transaction, WAL, synchronous=FULL: one fsync per insert. */
export function rawSqliteInserts(dir: string, n: number): number {
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
export async function rawEtcd(
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
