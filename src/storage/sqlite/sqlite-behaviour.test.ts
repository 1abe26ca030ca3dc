// SQLite-specific behaviour beyond the shared conformance suite: group commit, persistence across
// reopen, single-owner locking, compaction in batches, and refusing bad files without touching them.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { isStoreError } from '../store.js';
import { runStoreConformance } from '../testing/conformance.js';
import { DB_FILE_NAME } from './sqlite-files.js';
import { SqliteStore } from './sqlite-store.js';

const enc = (s: string): Buffer => Buffer.from(s);
const made: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), 'svcplane-sqlite-b-'));
  made.push(d);
  return d;
};
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');
const listing = (dir: string): string[] => readdirSync(dir).sort();

// The same suite again with a tiny in-memory tail and tiny batches, so watchers read history from the
// table and group commits split into several transactions: both paths must behave identically.
runStoreConformance('sqlite (tail of 8 events, batches of 3 writes)', {
  open: async () => SqliteStore.open({ dataDir: tempDir(), tailSize: 8, maxBatch: 3, compactBatch: 2 }),
});

describe('sqlite store', () => {
  it('cacheKiB sets the page cache limit (default: the build default); a bad value is refused', async () => {
    const small = SqliteStore.open({ dataDir: tempDir(), cacheKiB: 2048 });
    const plain = SqliteStore.open({ dataDir: tempDir() });
    try {
      assert.equal(small.cacheKiB, 2048);
      assert.equal(plain.cacheKiB, 16_000);
    } finally {
      await small.close();
      await plain.close();
    }
    for (const bad of [0, -5, 1.5, Number.NaN, 2 ** 31, Number.MAX_SAFE_INTEGER])
      assert.throws(
        () => SqliteStore.open({ dataDir: tempDir(), cacheKiB: bad }),
        /cacheKiB must be a positive/,
      );
  });

  it('group commit: 64 concurrent writes share a few transactions, and all are durable', async () => {
    const dir = tempDir();
    const s = SqliteStore.open({ dataDir: dir });
    const before = { ...s.stats };
    const kvs = await Promise.all(Array.from({ length: 64 }, (_, i) => s.create(`/g/${i}`, enc(`v${i}`))));
    const commits = s.stats.commits - before.commits;
    assert.equal(s.stats.writes - before.writes, 64);
    assert.ok(commits <= 4, `64 concurrent writes took ${commits} transactions`);
    const revs = kvs.map((k) => k.modRevision).sort((a, b) => a - b);
    revs.forEach(
      (r, i) => i > 0 && assert.equal(r, revs[i - 1]! + 1, 'one batch takes consecutive revisions'),
    );
    await s.close();
    const again = SqliteStore.open({ dataDir: dir });
    assert.equal((await again.list('/g/')).items.length, 64);
    await again.close();
  });

  it('a failed write in a batch fails alone; the others in its transaction commit', async () => {
    const s = SqliteStore.open({ dataDir: tempDir() });
    await s.create('/f/exists', enc('x'));
    const results = await Promise.allSettled([
      s.create('/f/a', enc('a')),
      s.create('/f/exists', enc('dup')),
      s.update('/f/missing', enc('m'), 1),
      s.create('/f/b', enc('b')),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code)),
      ['ok', 'AlreadyExists', 'NotFound', 'ok'],
    );
    assert.equal((await s.list('/f/')).items.length, 3);
    await s.close();
  });

  it('reopening keeps data, revisions and the compacted revision; revisions are never reused', async () => {
    const dir = tempDir();
    const s = SqliteStore.open({ dataDir: dir });
    const a = await s.create('/r/a', enc('1'));
    const b = await s.update('/r/a', enc('2'), a.modRevision);
    await s.compact(b.modRevision);
    const del = await s.delete('/r/a'); // the newest row is a tombstone
    await s.close();
    const t = SqliteStore.open({ dataDir: dir });
    assert.equal(await t.currentRevision(), del.modRevision);
    assert.equal(await t.compactRevision(), b.modRevision);
    assert.equal(await t.get('/r/a'), undefined);
    const c = await t.create('/r/a', enc('3'));
    assert.equal(c.modRevision, del.modRevision + 1);
    await t.close();
  });

  it('an empty SQLite file (a header, no tables) is initialised as a new store', async () => {
    const dir = tempDir();
    const blank = new Database(path.join(dir, DB_FILE_NAME));
    blank.pragma('journal_mode = WAL'); // writes the header, creates nothing
    blank.close();
    const s = SqliteStore.open({ dataDir: dir });
    const kv = await s.create('/e/a', enc('a'));
    assert.equal(kv.modRevision, 1);
    await s.close();
  });

  it('a second process cannot open a data directory in use (Locked), and nothing is changed', async () => {
    const dir = tempDir();
    const s = SqliteStore.open({ dataDir: dir });
    await s.create('/l/a', enc('a'));
    const script = `import { SqliteStore } from ${JSON.stringify(path.resolve('src/storage/sqlite/sqlite-store.ts'))};
      try { SqliteStore.open({ dataDir: ${JSON.stringify(dir)} }); console.log('opened'); }
      catch (e) { console.log(e.code + ': ' + e.message); process.exit(3); }`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 3, r.stdout + r.stderr);
    assert.match(r.stdout.trim(), /^Locked: .*svcplane\.db is in use by another process/);
    assert.equal(r.stdout.trim().split('\n').length, 1);
    assert.equal(dec((await s.get('/l/a'))!.value), 'a');
    await s.close();
  });

  it('compaction deletes superseded rows in small batches while writes go on, keeping every live key', async () => {
    const dir = tempDir();
    const s = SqliteStore.open({ dataDir: dir, compactBatch: 7 });
    for (let i = 0; i < 20; i++) {
      let kv = await s.create(`/c/${i}`, enc('0'));
      for (let v = 1; v <= 5; v++) kv = await s.update(`/c/${i}`, enc(String(v)), kv.modRevision);
    }
    for (let i = 0; i < 5; i++) await s.delete(`/c/${i}`);
    const target = await s.currentRevision();
    const compacting = s.compact(target);
    const during = await Promise.all(Array.from({ length: 10 }, (_, i) => s.create(`/d/${i}`, enc('x'))));
    await compacting;
    assert.ok(during.every((kv) => kv.modRevision > target));
    // 20 keys × 6 versions + 5 tombstones = 125 rows. Kept: the newest row of the 15 live keys, and
    // the tombstone at the target revision itself (the change at the compacted revision stays).
    assert.equal(s.stats.compactedRows, 125 - 15 - 1);
    const live = await s.list('/c/');
    assert.deepEqual(
      live.items.map((kv) => [kv.key, dec(kv.value)]),
      Array.from({ length: 15 }, (_, i) => [`/c/${i + 5}`, '5']).sort((x, y) => (x[0]! < y[0]! ? -1 : 1)),
    );
    await s.close();
    const db = new Database(path.join(dir, DB_FILE_NAME), { readonly: true });
    assert.equal((db.prepare('SELECT count(*) AS n FROM kv').get() as { n: number }).n, 15 + 1 + 10);
    db.close();
  });
});

describe('sqlite store refuses bad input without touching it', () => {
  const refuse = (dir: string, code: string, pattern: RegExp): void => {
    assert.throws(
      () => SqliteStore.open({ dataDir: dir }),
      (err: unknown) => {
        assert.ok(isStoreError(err), String(err));
        assert.equal(err.code, code, err.message);
        assert.match(err.message, pattern);
        assert.ok(!err.message.includes('\n'), 'one line');
        return true;
      },
    );
  };

  it('a file that is not a SQLite database', () => {
    const dir = tempDir();
    const file = path.join(dir, DB_FILE_NAME);
    writeFileSync(file, 'apiVersion: v1\nkind: Config\n'.repeat(200));
    const h = sha(file);
    refuse(dir, 'NotSvcplaneDatabase', /is not a svcplane database \(not a SQLite file\)/);
    assert.equal(sha(file), h);
    assert.deepEqual(listing(dir), [DB_FILE_NAME]);
  });

  it('a SQLite database of another application', () => {
    const dir = tempDir();
    const file = path.join(dir, DB_FILE_NAME);
    const other = new Database(file);
    other.exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello');`);
    other.close();
    const h = sha(file);
    refuse(dir, 'NotSvcplaneDatabase', /another application/);
    assert.equal(sha(file), h);
    assert.deepEqual(listing(dir), [DB_FILE_NAME]);
  });

  it('a corrupt svcplane database', async () => {
    const dir = tempDir();
    const s = SqliteStore.open({ dataDir: dir });
    for (let i = 0; i < 300; i++) await s.create(`/x/${String(i).padStart(4, '0')}`, Buffer.alloc(600, i));
    await s.close();
    const file = path.join(dir, DB_FILE_NAME);
    const bytes = readFileSync(file);
    assert.ok(bytes.length > 16 * 4096);
    // Scribble over a few pages in the middle (not the header page).
    for (let i = 4 * 4096; i < 12 * 4096; i += 7) bytes[i] = 0xa5;
    writeFileSync(file, bytes);
    const h = sha(file);
    const entries = listing(dir);
    refuse(dir, 'Corrupt', /is corrupt .*restore it from a backup/);
    assert.equal(sha(file), h);
    assert.deepEqual(listing(dir), entries);
  });

  it('a data directory that is not writable', () => {
    const parent = tempDir();
    const dir = path.join(parent, 'ro');
    mkdirSync(dir);
    // root may write anywhere, so as root the directory is made immutable (chattr +i), which binds root
    // too; as any other user, plain permissions do.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const r = spawnSync('chattr', ['+i', dir], { encoding: 'utf8' });
      assert.equal(r.status, 0, `as root this test needs chattr +i on ${tmpdir()}: ${r.stderr || r.error}`);
    } else {
      chmodSync(dir, 0o555);
    }
    try {
      refuse(dir, 'NotWritable', new RegExp(`^data directory ${dir} is not writable \\((EACCES|EPERM)\\)$`));
      assert.deepEqual(listing(dir), []);
    } finally {
      if (asRoot) spawnSync('chattr', ['-i', dir]);
      else chmodSync(dir, 0o755);
    }
  });

  it('a data directory path that is a file', () => {
    const parent = tempDir();
    const file = path.join(parent, 'not-a-dir');
    writeFileSync(file, 'x');
    refuse(file, 'NotWritable', /cannot be created|is not a directory/);
    assert.equal(readFileSync(file, 'utf8'), 'x');
    assert.ok(!existsSync(path.join(file, DB_FILE_NAME)));
  });
});

function dec(b: Uint8Array): string {
  return Buffer.from(b).toString('utf8');
}
