// The one conformance suite every Store backend runs (memory, sqlite, etcd). Each test opens a fresh,
// isolated store through the harness; nothing here knows which backend it is talking to, except where
// a test says so and why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_VALUE_BYTES, type KeyValue, type Store } from '../store.js';
import { watchConformance } from './conformance-watch.js';
import { collect, dec, enc, rejectsWith } from './helpers.js';

export interface StoreHarness {
  /** Called once before the suite (e.g. start etcd). */
  setup?(): Promise<void>;
  /** A fresh store that shares no keys with any other store this harness opened. */
  open(): Promise<Store>;
  /** Called once after the suite. */
  teardown?(): Promise<void>;
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
      // A lone surrogate has no UTF-8 form; stored, it would collide with every other such key.
      await rejectsWith(s.create('/x/\uD800', enc('a')), 'InvalidArgument');
      await rejectsWith(s.create('/x/\uDC00b', enc('a')), 'InvalidArgument');
      await rejectsWith(s.list('/x/\uD83D'), 'InvalidArgument');
    });

    watchConformance(open);

    it('refuses operations after close() with Closed', async () => {
      const s = await harness.open();
      await s.create('/closed/a', enc('a'));
      await s.close();
      await rejectsWith(s.get('/closed/a'), 'Closed');
      await rejectsWith(s.create('/closed/b', enc('b')), 'Closed');
    });
  });
}
