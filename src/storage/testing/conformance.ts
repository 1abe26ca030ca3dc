// The one conformance suite every Store backend runs (memory, sqlite, etcd). Each test opens a fresh,
// isolated store through the harness; nothing here knows which backend it is talking to, except where
// a test says so and why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isStoreError, MAX_VALUE_BYTES, type KeyValue, type Store, type WatchEvent } from '../store.js';

export interface StoreHarness {
  /** Called once before the suite (e.g. start etcd). */
  setup?(): Promise<void>;
  /** A fresh store that shares no keys with any other store this harness opened. */
  open(): Promise<Store>;
  /** Called once after the suite. */
  teardown?(): Promise<void>;
}

const enc = (s: string): Uint8Array => Buffer.from(s);
const dec = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Recorded {
  type: 'PUT' | 'DELETE';
  key: string;
  value: string;
  revision: number;
}

const simplify = (e: WatchEvent): Recorded => ({
  type: e.type,
  key: e.key,
  value: dec(e.value),
  revision: e.revision,
});

/** Collects events under `prefix` after `from` until one with revision >= `until` arrives. */
export async function collect(
  store: Store,
  prefix: string,
  from: number,
  until: number,
  timeoutMs = 15_000,
): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const out: WatchEvent[] = [];
  try {
    for await (const batch of store.watch(prefix, from, ac.signal)) {
      out.push(...batch);
      if (out.length > 0 && out[out.length - 1]!.revision >= until) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (until > from && (out.length === 0 || out[out.length - 1]!.revision < until)) {
    throw new Error(`watch on ${prefix} from ${from} did not reach revision ${until} in ${timeoutMs} ms`);
  }
  return out;
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isStoreError(err), `expected a StoreError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    return true;
  });
}

async function firstBatch(store: Store, prefix: string, from: number): Promise<WatchEvent[] | undefined> {
  const ac = new AbortController();
  try {
    const it = store.watch(prefix, from, ac.signal)[Symbol.asyncIterator]();
    const timer = setTimeout(() => ac.abort(), 2000);
    const r = await it.next();
    clearTimeout(timer);
    await it.return?.();
    return r.done ? undefined : r.value;
  } finally {
    ac.abort();
  }
}

/** Increments a decimal counter at `key` with get + CAS update, retrying every Conflict. */
async function casIncrement(store: Store, key: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const cur = await store.get(key);
    assert.ok(cur, `${key} vanished`);
    try {
      await store.update(key, enc(String(Number(dec(cur.value)) + 1)), cur.modRevision);
      return attempt;
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
    }
  }
}

export function runStoreConformance(name: string, harness: StoreHarness): void {
  describe(`Store conformance: ${name}`, () => {
    const opened: Store[] = [];
    const open = async (): Promise<Store> => {
      const s = await harness.open();
      opened.push(s);
      return s;
    };
    before(async () => harness.setup?.());
    after(async () => {
      for (const s of opened) await s.close().catch(() => undefined);
      await harness.teardown?.();
    });

    it('create() returns the new revision as both createRevision and modRevision', async () => {
      const s = await open();
      const r0 = await s.currentRevision();
      const kv = await s.create('/a/one', enc('1'));
      assert.equal(kv.key, '/a/one');
      assert.equal(dec(kv.value), '1');
      assert.ok(kv.modRevision > r0);
      assert.equal(kv.createRevision, kv.modRevision);
      assert.equal(await s.currentRevision(), kv.modRevision);
      const got = await s.get('/a/one');
      assert.deepEqual({ ...got, value: dec(got!.value) }, { ...kv, value: '1' });
    });

    it('create() of an existing key fails with AlreadyExists and takes no revision', async () => {
      const s = await open();
      await s.create('/a/dup', enc('first'));
      const rev = await s.currentRevision();
      await rejectsWith(s.create('/a/dup', enc('second')), 'AlreadyExists');
      assert.equal(await s.currentRevision(), rev);
      assert.equal(dec((await s.get('/a/dup'))!.value), 'first');
    });

    it('create() after delete() starts a new life with a new createRevision', async () => {
      const s = await open();
      const a = await s.create('/a/k', enc('1'));
      await s.delete('/a/k');
      const b = await s.create('/a/k', enc('2'));
      assert.ok(b.createRevision > a.createRevision);
      assert.equal(b.createRevision, b.modRevision);
    });

    it('get() at an old revision returns the value as it was then', async () => {
      const s = await open();
      const v1 = await s.create('/h/k', enc('v1'));
      const v2 = await s.update('/h/k', enc('v2'), v1.modRevision);
      await s.create('/h/other', enc('x'));
      const del = await s.delete('/h/k');
      assert.equal(dec((await s.get('/h/k', { revision: v1.modRevision }))!.value), 'v1');
      const at2 = await s.get('/h/k', { revision: v2.modRevision });
      assert.equal(dec(at2!.value), 'v2');
      assert.equal(at2!.modRevision, v2.modRevision);
      assert.equal(at2!.createRevision, v1.modRevision);
      assert.equal(await s.get('/h/k', { revision: del.modRevision }), undefined);
      assert.equal(await s.get('/h/k', { revision: v1.modRevision - 1 }), undefined);
      assert.equal(await s.get('/h/k'), undefined);
      await rejectsWith(s.get('/h/k', { revision: del.modRevision + 1000 }), 'FutureRevision');
    });

    it('update() compare-and-swaps on the expected revision', async () => {
      const s = await open();
      const v1 = await s.create('/c/k', enc('1'));
      const v2 = await s.update('/c/k', enc('2'), v1.modRevision);
      assert.ok(v2.modRevision > v1.modRevision);
      assert.equal(v2.createRevision, v1.createRevision);
      await rejectsWith(s.update('/c/k', enc('stale'), v1.modRevision), 'Conflict');
      await rejectsWith(s.update('/c/k', enc('bogus'), v2.modRevision + 999), 'Conflict');
      await rejectsWith(s.update('/c/missing', enc('x'), v2.modRevision), 'NotFound');
      assert.equal(dec((await s.get('/c/k'))!.value), '2');
    });

    it('delete() compare-and-swaps when given a revision, and returns the last value', async () => {
      const s = await open();
      const v1 = await s.create('/d/k', enc('1'));
      const v2 = await s.update('/d/k', enc('2'), v1.modRevision);
      await rejectsWith(s.delete('/d/k', v1.modRevision), 'Conflict');
      assert.ok(await s.get('/d/k'));
      const gone = await s.delete('/d/k', v2.modRevision);
      assert.equal(dec(gone.value), '2');
      assert.ok(gone.modRevision > v2.modRevision);
      assert.equal(gone.createRevision, v1.createRevision);
      assert.equal(await s.currentRevision(), gone.modRevision);
      await rejectsWith(s.delete('/d/k'), 'NotFound');
      await rejectsWith(s.delete('/d/k', gone.modRevision), 'NotFound');
      await rejectsWith(s.update('/d/k', enc('x'), v2.modRevision), 'NotFound');
      await s.create('/d/u', enc('u'));
      const u = await s.delete('/d/u'); // unconditional
      assert.equal(dec(u.value), 'u');
    });

    it('list() returns the keys under a prefix in byte order, at one revision', async () => {
      const s = await open();
      for (const k of ['b', 'a', 'c', 'a/x', 'B']) await s.create(`/l/${k}`, enc(k));
      await s.create('/m/z', enc('z'));
      const res = await s.list('/l/');
      assert.deepEqual(
        res.items.map((i) => i.key),
        ['/l/B', '/l/a', '/l/a/x', '/l/b', '/l/c'],
      );
      assert.equal(res.revision, await s.currentRevision());
      assert.equal(res.continue, undefined);
      assert.deepEqual((await s.list('/nothing/')).items, []);
    });

    it('list() at an old revision sees the keys and values of then', async () => {
      const s = await open();
      const a = await s.create('/o/a', enc('a1'));
      await s.create('/o/b', enc('b1'));
      const at = await s.currentRevision();
      await s.update('/o/a', enc('a2'), a.modRevision);
      await s.delete('/o/b');
      await s.create('/o/c', enc('c1'));
      const then = await s.list('/o/', { revision: at });
      assert.equal(then.revision, at);
      assert.deepEqual(
        then.items.map((i) => [i.key, dec(i.value)]),
        [
          ['/o/a', 'a1'],
          ['/o/b', 'b1'],
        ],
      );
      const now = await s.list('/o/');
      assert.deepEqual(
        now.items.map((i) => [i.key, dec(i.value)]),
        [
          ['/o/a', 'a2'],
          ['/o/c', 'c1'],
        ],
      );
    });

    it('list() with limit/continue stays consistent at the first page’s revision while writes happen', async () => {
      const s = await open();
      const keys: string[] = [];
      for (let i = 0; i < 60; i++) {
        const k = `/p/${String(i).padStart(3, '0')}`;
        keys.push(k);
        await s.create(k, enc(`v${i}`));
      }
      const snapshot = await s.list('/p/');
      const pages: KeyValue[][] = [];
      let page = await s.list('/p/', { limit: 7 });
      const rev = page.revision;
      assert.equal(rev, snapshot.revision);
      let round = 0;
      for (;;) {
        pages.push(page.items);
        assert.ok(page.items.length <= 7);
        // Write behind, ahead and inside the remaining range between pages.
        round++;
        const ahead = keys[Math.min(59, round * 7 + 3)]!;
        const cur = await s.get(ahead);
        if (cur) await s.update(ahead, enc('changed'), cur.modRevision);
        const victim = keys[Math.min(59, round * 7 + 5)]!;
        if (await s.get(victim)) await s.delete(victim);
        await s.create(`/p/${String(round * 7 + 1).padStart(3, '0')}x`, enc('new'));
        if (page.continue === undefined) break;
        page = await s.list('/p/', { limit: 7, continue: page.continue });
        assert.equal(page.revision, rev, 'every page is read at the first page’s revision');
      }
      const flat = pages.flat();
      assert.deepEqual(
        flat.map((i) => [i.key, dec(i.value), i.modRevision]),
        snapshot.items.map((i) => [i.key, dec(i.value), i.modRevision]),
      );
      assert.equal(pages.length, Math.ceil(60 / 7));
    });

    it('list() with a limit of exactly the item count has no continue token', async () => {
      const s = await open();
      for (const k of ['a', 'b', 'c']) await s.create(`/e/${k}`, enc(k));
      const res = await s.list('/e/', { limit: 3 });
      assert.equal(res.items.length, 3);
      assert.equal(res.continue, undefined);
      const two = await s.list('/e/', { limit: 2 });
      assert.ok(two.continue);
      const rest = await s.list('/e/', { limit: 2, continue: two.continue });
      assert.deepEqual(
        rest.items.map((i) => i.key),
        ['/e/c'],
      );
      assert.equal(rest.continue, undefined);
    });

    it('list() rejects a malformed continue token, or one from another prefix', async () => {
      const s = await open();
      for (const k of ['a', 'b', 'c']) await s.create(`/t/${k}`, enc(k));
      await rejectsWith(s.list('/t/', { continue: 'not-a-token' }), 'InvalidArgument');
      const page = await s.list('/t/', { limit: 1 });
      await rejectsWith(s.list('/u/', { continue: page.continue! }), 'InvalidArgument');
    });

    it('prefixes are byte prefixes: /registry/services/ does not match /registry/servicesx/', async () => {
      const s = await open();
      await s.create('/registry/services/default/a', enc('a'));
      await s.create('/registry/servicesx/default/b', enc('b'));
      await s.create('/registry/services', enc('bare'));
      await s.create('/registry/services0', enc('zero'));
      const res = await s.list('/registry/services/');
      assert.deepEqual(
        res.items.map((i) => i.key),
        ['/registry/services/default/a'],
      );
      const rev = res.revision;
      await s.update(
        '/registry/servicesx/default/b',
        enc('b2'),
        (await s.get('/registry/servicesx/default/b'))!.modRevision,
      );
      const c = await s.create('/registry/services/default/c', enc('c'));
      const events = await collect(s, '/registry/services/', rev, c.modRevision);
      assert.deepEqual(
        events.map((e) => e.key),
        ['/registry/services/default/c'],
      );
      // Characters that are wildcards elsewhere (LIKE, glob) are plain bytes here.
      await s.create('/w%/a', enc('1'));
      await s.create('/w_/b', enc('2'));
      await s.create('/wx/c', enc('3'));
      assert.deepEqual(
        (await s.list('/w_/')).items.map((i) => i.key),
        ['/w_/b'],
      );
      assert.deepEqual(
        (await s.list('/w%/')).items.map((i) => i.key),
        ['/w%/a'],
      );
    });

    it(`stores values up to ${MAX_VALUE_BYTES} bytes (1.5 MiB) and refuses larger ones with TooLarge`, async () => {
      const s = await open();
      const big = Buffer.alloc(MAX_VALUE_BYTES);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
      const kv = await s.create('/big/one', big);
      const got = await s.get('/big/one');
      assert.ok(got);
      assert.equal(got.value.byteLength, MAX_VALUE_BYTES);
      assert.ok(Buffer.from(got.value).equals(big));
      const listed = await s.list('/big/');
      assert.ok(Buffer.from(listed.items[0]!.value).equals(big));
      const rev = await s.currentRevision();
      await rejectsWith(s.create('/big/two', Buffer.alloc(MAX_VALUE_BYTES + 1)), 'TooLarge');
      await rejectsWith(s.update('/big/one', Buffer.alloc(MAX_VALUE_BYTES + 1), kv.modRevision), 'TooLarge');
      assert.equal(await s.currentRevision(), rev);
      const del = await s.delete('/big/one');
      const events = await collect(s, '/big/', kv.modRevision - 1, del.modRevision);
      assert.equal(events.length, 2);
      assert.ok(Buffer.from(events[1]!.value).equals(big), 'the DELETE event carries the last value');
    });

    it('handles non-ASCII keys, ordered by UTF-8 bytes', async () => {
      const s = await open();
      // U+FF5E (3 UTF-8 bytes, one UTF-16 unit) sorts before U+1F680 (4 bytes, a surrogate pair) by
      // bytes, but after it by UTF-16 code units: a backend that sorts JS strings gets this wrong.
      const names = ['日本', 'ünïcödé', '🚀', '～', 'z', 'é/ß'];
      for (const n of names) await s.create(`/ü/${n}`, enc(n));
      await s.create('/üx/other', enc('x'));
      const res = await s.list('/ü/');
      const expected = names
        .map((n) => `/ü/${n}`)
        .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(
        res.items.map((i) => i.key),
        expected,
      );
      assert.deepEqual(
        res.items.map((i) => dec(i.value)),
        expected.map((k) => k.slice(3)),
      );
      assert.equal(dec((await s.get('/ü/🚀'))!.value), '🚀');
      const page = await s.list('/ü/', { limit: 2 });
      const rest = await s.list('/ü/', { continue: page.continue! });
      assert.deepEqual(
        [...page.items, ...rest.items].map((i) => i.key),
        expected,
      );
    });

    it('rejects keys and prefixes that do not start with "/"', async () => {
      const s = await open();
      await rejectsWith(s.create('relative', enc('x')), 'InvalidArgument');
      await rejectsWith(s.list('rel'), 'InvalidArgument');
      await rejectsWith(s.get('', {}), 'InvalidArgument');
    });

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
      for (let i = 1; i < a.length; i++)
        assert.ok(a[i]!.revision > a[i - 1]!.revision, 'strictly increasing');
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
      await assert.rejects(firstBatch(s, '/z/', v1.modRevision), (e: unknown) =>
        isStoreError(e, 'Compacted'),
      );
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

    it('16 concurrent writers doing 200 CAS increments each end at exactly 3,200', async () => {
      const s = await open();
      const start = await s.create('/cas/counter', enc('0'));
      let conflicts = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < 200; i++) conflicts += await casIncrement(s, '/cas/counter');
        }),
      );
      const end = await s.get('/cas/counter');
      assert.equal(dec(end!.value), '3200');
      assert.ok(conflicts > 0, 'the writers really did race (some CAS attempts conflicted)');
      // Every successful CAS is one PUT, each exactly one more than the last: nothing was lost or doubled.
      const events = await collect(s, '/cas/', start.modRevision, end!.modRevision, 30_000);
      assert.equal(events.length, 3200);
      events.forEach((e, i) => assert.equal(dec(e.value), String(i + 1)));
    });

    it('refuses operations after close() with Closed', async () => {
      const s = await harness.open();
      await s.create('/closed/a', enc('a'));
      await s.close();
      await rejectsWith(s.get('/closed/a'), 'Closed');
      await rejectsWith(s.create('/closed/b', enc('b')), 'Closed');
    });
  });
}
