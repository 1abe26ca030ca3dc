// The watch, compaction and concurrency half of the Store conformance suite (see conformance.ts).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isStoreError, type KeyValue, type Store, type WatchEvent } from '../store.js';
import {
  casIncrement,
  collect,
  dec,
  enc,
  firstBatch,
  prng,
  rejectsWith,
  simplify,
  type Recorded,
} from './helpers.js';

export function watchConformance(open: () => Promise<Store>): void {
  it('watch() from a revision delivers exactly the history after it, in order', async () => {
    const s = await open();
    const rand = prng(42);
    const history: Recorded[] = [];
    const live = new Map<string, KeyValue>();
    const prefixes = ['/w/a/', '/w/b/', '/wa/'];
    for (let i = 0; i < 300; i++) {
      const key = `${prefixes[Math.floor(rand() * 3)]!}${Math.floor(rand() * 12)}`;
      const cur = live.get(key);
      const op = rand();
      if (cur === undefined) {
        const kv = await s.create(key, enc(`c${i}`));
        live.set(key, kv);
        history.push({ type: 'PUT', key, value: `c${i}`, revision: kv.modRevision });
      } else if (op < 0.7) {
        const kv = await s.update(key, enc(`u${i}`), cur.modRevision);
        live.set(key, kv);
        history.push({ type: 'PUT', key, value: `u${i}`, revision: kv.modRevision });
      } else {
        const kv = await s.delete(key, cur.modRevision);
        live.delete(key);
        history.push({ type: 'DELETE', key, value: dec(kv.value), revision: kv.modRevision });
      }
    }
    for (let r = 1; r < history.length; r++) assert.ok(history[r]!.revision > history[r - 1]!.revision);
    const last = history[history.length - 1]!.revision;
    for (const [prefix, from] of [
      ['/w/a/', history[100]!.revision],
      ['/w/', history[0]!.revision - 1],
      ['/w', history[250]!.revision],
    ] as const) {
      const want = history.filter((h) => h.key.startsWith(prefix) && h.revision > from);
      const lastWanted = want[want.length - 1]?.revision ?? from;
      const got = await collect(s, prefix, from, lastWanted);
      assert.deepEqual(got.map(simplify), want, `watch ${prefix} from ${from}`);
      // And a watch that is already running when the writes happen sees the same.
      assert.ok(lastWanted <= last);
    }
  });

  it('a running watch sees concurrent writes live, and two watchers see identical sequences', async () => {
    const s = await open();
    const start = await s.currentRevision();
    const writes = (async () => {
      const revs: number[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = 0; i < 40; i++) {
            const key = `/live/${w}/${i % 5}`;
            const cur = await s.get(key);
            const kv = cur
              ? i % 7 === 6
                ? await s.delete(key, cur.modRevision)
                : await s.update(key, enc(`${w}-${i}`), cur.modRevision)
              : await s.create(key, enc(`${w}-${i}`));
            revs.push(kv.modRevision);
          }
        }),
      );
      return Math.max(...revs);
    })();
    const ac = new AbortController();
    const watchUntil = async (out: WatchEvent[]): Promise<void> => {
      for await (const batch of s.watch('/live/', start, ac.signal)) {
        out.push(...batch);
        if (out.length >= 320) return;
      }
    };
    const a: WatchEvent[] = [];
    const b: WatchEvent[] = [];
    const timer = setTimeout(() => ac.abort(), 20_000);
    const lastRev = await writes;
    await Promise.all([watchUntil(a), watchUntil(b)]);
    clearTimeout(timer);
    ac.abort();
    assert.equal(a.length, 320);
    assert.deepEqual(a.map(simplify), b.map(simplify));
    assert.equal(a[a.length - 1]!.revision, lastRev);
    for (let i = 1; i < a.length; i++) assert.ok(a[i]!.revision > a[i - 1]!.revision, 'strictly increasing');
  });

  it('watch() ends cleanly when its signal aborts', async () => {
    const s = await open();
    const ac = new AbortController();
    const rev = await s.currentRevision();
    const got: WatchEvent[] = [];
    const done = (async () => {
      for await (const batch of s.watch('/abort/', rev, ac.signal)) got.push(...batch);
    })();
    await s.create('/abort/a', enc('a'));
    const t0 = Date.now();
    while (got.length === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await done; // resolves, does not throw
    assert.equal(got.length, 1);
  });

  it('compaction discards old history: old reads and watches fail with Compacted, current state stays', async () => {
    const s = await open();
    const v1 = await s.create('/z/k', enc('1'));
    const v2 = await s.update('/z/k', enc('2'), v1.modRevision);
    const gone = await s.create('/z/gone', enc('g'));
    const del = await s.delete('/z/gone');
    const v3 = await s.update('/z/k', enc('3'), v2.modRevision);
    const keep = await s.create('/z/keep', enc('keep'));
    await s.compact(v3.modRevision);
    assert.equal(await s.compactRevision(), v3.modRevision);
    await rejectsWith(s.get('/z/k', { revision: v1.modRevision }), 'Compacted');
    await rejectsWith(s.get('/z/k', { revision: v2.modRevision }), 'Compacted');
    await rejectsWith(s.list('/z/', { revision: v2.modRevision }), 'Compacted');
    await assert.rejects(firstBatch(s, '/z/', v1.modRevision), (e: unknown) => isStoreError(e, 'Compacted'));
    await assert.rejects(firstBatch(s, '/z/', gone.modRevision), (e: unknown) =>
      isStoreError(e, 'Compacted'),
    );
    assert.ok(del.modRevision < v3.modRevision);
    // The state at the compacted revision and everything after it are intact.
    assert.equal(dec((await s.get('/z/k', { revision: v3.modRevision }))!.value), '3');
    assert.equal(dec((await s.get('/z/k'))!.value), '3');
    assert.equal(await s.get('/z/gone'), undefined);
    assert.deepEqual(
      (await s.list('/z/')).items.map((i) => [i.key, dec(i.value)]),
      [
        ['/z/k', '3'],
        ['/z/keep', 'keep'],
      ],
    );
    // A watch from just before the compacted revision still gets the change at it (etcd's rule).
    const evs = await collect(s, '/z/', v3.modRevision - 1, keep.modRevision);
    assert.deepEqual(
      evs.map((e) => [e.key, dec(e.value)]),
      [
        ['/z/k', '3'],
        ['/z/keep', 'keep'],
      ],
    );
    // CAS keeps working on compacted keys, and a stale revision is still a Conflict.
    await rejectsWith(s.update('/z/k', enc('x'), v2.modRevision), 'Conflict');
    const v4 = await s.update('/z/k', enc('4'), v3.modRevision);
    await s.create('/z/gone', enc('again'));
    await s.compact(v4.modRevision);
    assert.equal(dec((await s.get('/z/gone'))!.value), 'again');
    await rejectsWith(s.compact((await s.currentRevision()) + 10), 'FutureRevision');
  });

  it('8 concurrent writers doing 100 CAS increments each end at exactly 800', async () => {
    // Each success makes every other writer's next attempt conflict, so the attempts grow with the square
    // of the writers: 8 race hard enough (each write is an fsync on etcd) without taking a minute there.
    const s = await open();
    const start = await s.create('/cas/counter', enc('0'));
    let conflicts = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 100; i++) conflicts += await casIncrement(s, '/cas/counter');
      }),
    );
    const end = await s.get('/cas/counter');
    assert.equal(dec(end!.value), '800');
    assert.ok(conflicts > 0, 'the writers really did race (some CAS attempts conflicted)');
    // Every successful CAS is one PUT, each exactly one more than the last: nothing was lost or doubled.
    const events = await collect(s, '/cas/', start.modRevision, end!.modRevision, 30_000);
    assert.equal(events.length, 800);
    events.forEach((e, i) => assert.equal(dec(e.value), String(i + 1)));
  });
}
