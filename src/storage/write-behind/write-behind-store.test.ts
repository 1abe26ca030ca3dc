import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MemoryStore } from '../memory/memory-store.js';
import { SqliteStore } from '../sqlite/sqlite-store.js';
import { StoreError, type Store, type WatchEvent } from '../store.js';
import { runStoreConformance } from '../testing/conformance.js';
import { dec, enc, rejectsWith } from '../testing/helpers.js';
import { WriteBehindStore, type Lease, type WriteBehindOptions } from './write-behind-store.js';

/** A lease kept in memory, as the wrapper keeps it in a file. */
function leaseBox() {
  const saved: Lease[] = [];
  return {
    saved,
    loadLease: () => saved[saved.length - 1],
    saveLease: (l: Lease) => void saved.push(l),
  };
}

const open = (inner: Store, box = leaseBox(), opts: Partial<WriteBehindOptions> = {}) =>
  WriteBehindStore.open({ inner, loadLease: box.loadLease, saveLease: box.saveLease, ...opts });

runStoreConformance('write-behind over memory', { open: () => open(new MemoryStore()) });

const dirs: string[] = [];
runStoreConformance('write-behind over sqlite', {
  open: async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-wb-'));
    dirs.push(dir);
    return open(SqliteStore.open({ dataDir: dir }));
  },
  teardown: async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function take(store: Store, from: number, n: number): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const out: WatchEvent[] = [];
  for await (const batch of store.watch('/', from, ac.signal)) {
    out.push(...batch);
    if (out.length >= n) break;
  }
  ac.abort();
  return out;
}

describe('write-behind store', () => {
  it('shows a write to watchers before the store behind has it, and persists it after the delay', async () => {
    const inner = new MemoryStore();
    const s = await open(inner, leaseBox(), { flushDelayMs: 50 });
    const kv = await s.create('/a/x', enc('1'));
    const seen = await take(s, kv.modRevision - 1, 1);
    assert.equal(seen[0]!.revision, kv.modRevision);
    assert.equal(await inner.get('/a/x'), undefined);
    await sleep(120);
    assert.equal(dec((await inner.get('/a/x'))!.value), '1');
    assert.equal((await inner.currentRevision()) + s.offset, await s.currentRevision());
    await s.close();
  });

  it('never hands out a revision above the kept lease', async () => {
    const box = leaseBox();
    const s = await open(new MemoryStore(), box, { leaseStep: 10 });
    for (let i = 0; i < 25; i++) {
      const kv = await s.create(`/a/${i}`, enc('v'));
      assert.ok(kv.modRevision <= box.saved[box.saved.length - 1]!.lease, `revision ${kv.modRevision}`);
    }
    assert.deepEqual(
      box.saved.map((l) => l.lease),
      [10, 20, 30],
    );
    await s.close();
  });

  it('after a crash that lost writes, a restart serves only revisions above everything served before', async () => {
    const inner = new MemoryStore();
    const box = leaseBox();
    const first = await open(inner, box, { flushDelayMs: 10, leaseStep: 100 });
    const a = await first.create('/a/kept', enc('kept'));
    await sleep(40); // persisted
    // Served, then lost: the process dies before the flush.
    const lost = await first.update('/a/kept', enc('lost'), a.modRevision);
    const lost2 = await first.create('/a/gone', enc('gone'));
    const servedMax = Math.max(lost.modRevision, lost2.modRevision);
    // (no close: the crash) — a second run over what was persisted
    const frozen = new MemoryStore();
    for (const kv of (await inner.list('/')).items) await frozen.create(kv.key, kv.value);
    await first.close();
    const crashed = box.saved.filter((l) => !l.clean); // what the crashed run had kept
    const second = await open(frozen, {
      saved: [],
      loadLease: () => crashed[crashed.length - 1],
      saveLease: () => undefined,
    });
    const listed = await second.list('/');
    assert.deepEqual(
      listed.items.map((kv) => [kv.key, dec(kv.value)]),
      [['/a/kept', 'kept']],
    );
    assert.ok(
      listed.items[0]!.modRevision > servedMax,
      'an object loaded is above every revision served before',
    );
    const next = await second.create('/a/new', enc('n'));
    assert.ok(next.modRevision > servedMax);
    // A client resuming from a revision of the first run must relist.
    assert.throws(() => second.watch('/', lost.modRevision, new AbortController().signal), /compacted/);
    await rejectsWith(second.list('/', { revision: lost.modRevision }), 'Compacted');
    await second.close();
  });

  it('after a clean close, a restart keeps every revision, so watches resume', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-wb-'));
    dirs.push(dir);
    const box = leaseBox();
    const first = await open(SqliteStore.open({ dataDir: dir }), box, { flushDelayMs: 1_000 });
    const a = await first.create('/a/x', enc('1'));
    const b = await first.update('/a/x', enc('2'), a.modRevision);
    await first.close();
    const second = await open(SqliteStore.open({ dataDir: dir }), box);
    assert.equal(await second.currentRevision(), b.modRevision);
    assert.equal((await second.get('/a/x'))!.modRevision, b.modRevision);
    const watch = second.watch('/', b.modRevision, new AbortController().signal);
    const c = await second.update('/a/x', enc('3'), b.modRevision);
    const it = watch[Symbol.asyncIterator]();
    assert.equal((await it.next()).value[0].revision, c.modRevision);
    await it.return?.();
    await second.close();
  });

  it('keeps writes in order under backpressure, with few allowed unpersisted', async () => {
    const inner = new MemoryStore();
    const s = await open(inner, leaseBox(), { maxPending: 3, flushDelayMs: 1 });
    const kvs = await Promise.all(
      [...Array(40).keys()].map((i) => s.create(`/k/${String(i).padStart(2, '0')}`, enc(`${i}`))),
    );
    const revs = kvs.map((kv) => kv.modRevision);
    assert.equal(new Set(revs).size, 40);
    const listed = await s.list('/k/');
    assert.equal(listed.items.length, 40);
    for (const kv of listed.items)
      assert.equal(kv.modRevision, kvs.find((k) => k.key === kv.key)!.modRevision);
    await s.close();
  });

  it('a watch that fell behind the ring catches up from the store behind, then goes back to the ring', async () => {
    const inner = new MemoryStore();
    const s = await open(inner, leaseBox(), { ringSize: 4, flushDelayMs: 60_000 });
    const start = await s.currentRevision();
    let rev = (await s.create('/a/k', enc('0'))).modRevision;
    for (let i = 1; i < 20; i++) rev = (await s.update('/a/k', enc(String(i)), rev)).modRevision;
    const ac = new AbortController();
    const it = s.watch('/', start, ac.signal)[Symbol.asyncIterator]();
    const seen: WatchEvent[] = [];
    while (seen.length < 20) seen.push(...(await it.next()).value);
    assert.deepEqual(
      seen.map((e) => [e.revision, dec(e.value)]),
      [...Array(20).keys()].map((i) => [start + 1 + i, String(i)]),
    );
    // Caught up: the next change comes from the ring, long before it is persisted.
    const next = await s.update('/a/k', enc('20'), rev);
    const more = (await it.next()).value as WatchEvent[];
    assert.deepEqual(
      more.map((e) => [e.revision, dec(e.value)]),
      [[next.modRevision, '20']],
    );
    assert.equal(dec((await inner.get('/a/k'))!.value), '19');
    ac.abort();
    await it.return?.();
    await s.close();
  });

  it('a delete carries the last value, persisted or not', async () => {
    const s = await open(new MemoryStore(), leaseBox(), { flushDelayMs: 5 });
    await s.create('/a/p', enc('persisted'));
    await sleep(30);
    await s.create('/a/q', enc('pending'));
    assert.equal(dec((await s.delete('/a/p')).value), 'persisted');
    assert.equal(dec((await s.delete('/a/q')).value), 'pending');
    const from = (await s.currentRevision()) - 2;
    const events = await take(s, from, 2);
    assert.deepEqual(
      events.map((e) => [e.type, dec(e.value)]),
      [
        ['DELETE', 'persisted'],
        ['DELETE', 'pending'],
      ],
    );
    await s.close();
  });

  it('when the store behind fails, reads fail at once and the writes are retried, in order', async () => {
    const inner = new MemoryStore();
    let failures = 1;
    const flaky = Object.create(inner) as Store;
    flaky.create = async (key, value) => {
      if (failures > 0) {
        failures--;
        throw new StoreError('Unavailable', 'disk full');
      }
      return inner.create(key, value);
    };
    const logged: string[] = [];
    const s = await open(flaky, leaseBox(), { flushDelayMs: 5, log: (m) => logged.push(m) });
    await s.create('/a/1', enc('1'));
    await sleep(30);
    await rejectsWith(s.get('/a/1'), 'Unavailable');
    assert.match(logged.join('\n'), /retrying/);
    await sleep(1_200);
    assert.equal(dec((await s.get('/a/1'))!.value), '1');
    assert.equal((await inner.currentRevision()) + s.offset, await s.currentRevision());
    await s.close();
  });

  it('stops persisting and fails reads when someone else wrote the store behind', async () => {
    const inner = new MemoryStore();
    const logged: string[] = [];
    const s = await open(inner, leaseBox(), { flushDelayMs: 5, log: (m) => logged.push(m) });
    await inner.create('/other/x', enc('intruder'));
    await s.create('/a/x', enc('1'));
    await sleep(30);
    assert.match(logged.join('\n'), /diverged/);
    await rejectsWith(s.list('/'), 'Unavailable');
    // What is served stays served.
    assert.ok((await s.currentRevision()) > 0);
    await s.close();
  });
});
