import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { parseFieldSelector } from '../../core/selectors/fields.js';
import { parseLabelSelector } from '../../core/selectors/labels.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { encodeObject, objectKey } from '../codec.js';
import type { CachedObject } from './cached-object.js';
import type { WatchEventType, WatchFilter } from './delivery.js';
import { CacheError, WatchCache } from './watch-cache.js';

const SERVICES = mustFindResource('', 'services');
const PODS = mustFindResource('', 'pods');

const service = (
  name: string,
  opts: { ns?: string; labels?: Record<string, string>; type?: string } = {},
): KObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: opts.ns ?? 'default', ...(opts.labels ? { labels: opts.labels } : {}) },
  spec: { type: opts.type ?? 'ClusterIP' },
});

const everything = (namespace?: string): WatchFilter => ({
  ...(namespace === undefined ? {} : { namespace }),
  label: parseLabelSelector(''),
  field: parseFieldSelector(''),
});

async function put(store: MemoryStore, obj: KObject): Promise<number> {
  const key = objectKey(SERVICES, obj.metadata.namespace!, obj.metadata.name!);
  const cur = await store.get(key);
  const kv =
    cur === undefined
      ? await store.create(key, encodeObject(obj))
      : await store.update(key, encodeObject(obj), cur.modRevision);
  return kv.modRevision;
}

async function del(store: MemoryStore, ns: string, name: string): Promise<number> {
  return (await store.delete(objectKey(SERVICES, ns, name))).modRevision;
}

function recorder(): {
  events: [WatchEventType, string, number][];
  sink: { deliver: (t: WatchEventType, o: CachedObject) => void; expire: (m: string) => void };
  expired: string[];
} {
  const events: [WatchEventType, string, number][] = [];
  const expired: string[] = [];
  return {
    events,
    expired,
    sink: { deliver: (t, o) => events.push([t, o.name, o.rv]), expire: (m) => expired.push(m) },
  };
}

async function started(store: MemoryStore, historySize?: number, historyBytes?: number): Promise<WatchCache> {
  const cache = new WatchCache(store, {
    waitTimeoutMs: 200,
    ...(historySize === undefined ? {} : { historySize }),
    ...(historyBytes === undefined ? {} : { historyBytes }),
  });
  cache.start();
  await cache.ready;
  return cache;
}

describe('WatchCache', () => {
  it('loads existing objects and lists them in key order, filtered by namespace and labels', async () => {
    const store = new MemoryStore();
    await put(store, service('b', { labels: { app: 'x' } }));
    await put(store, service('a'));
    await put(store, service('c', { ns: 'other', labels: { app: 'x' } }));
    const cache = await started(store);
    try {
      assert.deepEqual(
        cache.list(SERVICES, everything()).items.map((o) => `${o.namespace}/${o.name}`),
        ['default/a', 'default/b', 'other/c'],
      );
      assert.deepEqual(
        cache.list(SERVICES, everything('default')).items.map((o) => o.name),
        ['a', 'b'],
      );
      const f = { label: parseLabelSelector('app=x'), field: parseFieldSelector('') };
      assert.deepEqual(
        cache.list(SERVICES, f).items.map((o) => o.name),
        ['b', 'c'],
      );
      assert.equal(cache.list(PODS, everything()).items.length, 0);
    } finally {
      await cache.stop();
    }
  });

  it('pages with limit and afterKey', async () => {
    const store = new MemoryStore();
    for (const n of ['a', 'b', 'c', 'd', 'e']) await put(store, service(n));
    const cache = await started(store);
    try {
      const p1 = cache.list(SERVICES, everything(), { limit: 2 });
      assert.deepEqual(
        p1.items.map((o) => o.name),
        ['a', 'b'],
      );
      assert.equal(p1.more, true);
      const p2 = cache.list(SERVICES, everything(), { limit: 2, afterKey: p1.lastKey! });
      assert.deepEqual(
        p2.items.map((o) => o.name),
        ['c', 'd'],
      );
      const p3 = cache.list(SERVICES, everything(), { limit: 2, afterKey: p2.lastKey! });
      assert.deepEqual(
        p3.items.map((o) => o.name),
        ['e'],
      );
      assert.equal(p3.more, false);
    } finally {
      await cache.stop();
    }
  });

  it('a watch resumed from a revision receives exactly the events after it', async () => {
    const store = new MemoryStore();
    const r1 = await put(store, service('a'));
    const cache = await started(store);
    try {
      const r2 = await put(store, service('b'));
      const r3 = await put(store, service('a', { labels: { v: '2' } }));
      const r4 = await del(store, 'default', 'b');
      await cache.waitFor(r4);
      const rec = recorder();
      cache.watch(SERVICES, everything(), rec.sink, { fromRevision: r1 });
      assert.deepEqual(rec.events, [
        ['ADDED', 'b', r2],
        ['MODIFIED', 'a', r3],
        ['DELETED', 'b', r4],
      ]);
      const live = recorder();
      cache.watch(SERVICES, everything(), live.sink, { fromRevision: r4 });
      const r5 = await put(store, service('c'));
      await cache.waitFor(r5);
      assert.deepEqual(live.events, [['ADDED', 'c', r5]]);
    } finally {
      await cache.stop();
    }
  });

  it('an object that stops matching the selector is DELETED (at the new revision); one that starts matching is ADDED', async () => {
    const store = new MemoryStore();
    await put(store, service('a', { labels: { app: 'x' } }));
    const cache = await started(store);
    try {
      const rec = recorder();
      const f = { label: parseLabelSelector('app=x'), field: parseFieldSelector('spec.type!=NodePort') };
      cache.watch(SERVICES, f, rec.sink, { fromRevision: cache.revision });
      const r1 = await put(store, service('a', { labels: { app: 'y' } }));
      const r2 = await put(store, service('a', { labels: { app: 'x' } }));
      const r3 = await put(store, service('a', { labels: { app: 'x' }, type: 'NodePort' }));
      const r4 = await put(store, service('b', { labels: { app: 'y' } }));
      await cache.waitFor(r4);
      assert.deepEqual(rec.events, [
        ['DELETED', 'a', r1],
        ['ADDED', 'a', r2],
        ['DELETED', 'a', r3],
      ]);
    } finally {
      await cache.stop();
    }
  });

  it('a watch from a revision older than the history is Expired', async () => {
    const store = new MemoryStore();
    const r0 = await put(store, service('a'));
    const cache = await started(store, 3);
    try {
      let last = 0;
      for (let i = 0; i < 5; i++) last = await put(store, service(`s${i}`));
      await cache.waitFor(last);
      assert.throws(
        () => cache.watch(SERVICES, everything(), recorder().sink, { fromRevision: r0 }),
        (e: unknown) =>
          e instanceof CacheError && e.code === 'Expired' && /too old resource version/.test(e.message),
      );
      const rec = recorder();
      cache.watch(SERVICES, everything(), rec.sink, { fromRevision: last - 2 });
      assert.equal(rec.events.length, 2);
    } finally {
      await cache.stop();
    }
  });

  it("shares an object's encodings between the watchers of one event, and drops them after", async () => {
    const store = new MemoryStore();
    const r0 = await put(store, service('a'));
    const cache = await started(store);
    try {
      const shared: boolean[] = [];
      const encoder = {
        deliver: (_t: WatchEventType, o: CachedObject) => {
          shared.push(o.memo?.has('line') ?? false);
          (o.memo ??= new Map()).set('line', Buffer.from(o.json));
        },
        expire: () => {},
      };
      cache.watch(SERVICES, everything(), encoder, { fromRevision: r0 });
      cache.watch(SERVICES, everything(), encoder, { fromRevision: r0 });
      const r1 = await put(store, service('a', { labels: { v: '1' } }));
      await cache.waitFor(r1);
      assert.deepEqual(shared, [false, true]);
      const key = objectKey(SERVICES, 'default', 'a');
      assert.equal(cache.get(SERVICES, key)!.memo, undefined);
      // Replays (from history, or the initial state) leave nothing behind either.
      cache.watch(SERVICES, everything(), encoder, { fromRevision: r0 });
      cache.watch(SERVICES, everything(), encoder, { initial: true });
      assert.deepEqual(shared, [false, true, false, false]);
      assert.equal(cache.get(SERVICES, key)!.memo, undefined);
    } finally {
      await cache.stop();
    }
  });

  it('keeps the history within its byte budget: each event counts its object and the version it replaced', async () => {
    const store = new MemoryStore();
    const cache = await started(store, 1_000, 4_000);
    try {
      const jsonOf = (name: string) => cache.get(SERVICES, objectKey(SERVICES, 'default', name))!.json.length;
      const revs: number[] = [];
      const held: number[] = []; // each write's bytes, in order
      for (let i = 0; i < 40; i++) {
        const name = `s${i % 5}`;
        const before = cache.get(SERVICES, objectKey(SERVICES, 'default', name))?.json.length ?? 0;
        const rev = await put(store, service(name, { labels: { i: String(i).repeat(1 + (i % 7) * 20) } }));
        await cache.waitFor(rev);
        revs.push(rev);
        held.push(jsonOf(name) + before);
      }
      // The newest events whose bytes fit, and no more.
      let keep = 0;
      let sum = 0;
      while (keep < held.length && sum + held[held.length - 1 - keep]! <= 4_000) {
        sum += held[held.length - 1 - keep]!;
        keep++;
      }
      const stats = cache.historyStats();
      assert.ok(keep > 2 && keep < 40, `keep ${keep}`);
      assert.equal(stats.events, keep);
      assert.equal(
        stats.bytes,
        held.slice(-keep).reduce((a, b) => a + b, 0),
      );
      assert.ok(stats.bytes <= 4_000);
      const oldest = revs[revs.length - keep]!;
      assert.equal(stats.floor, oldest - 1);
      assert.throws(
        () => cache.watch(SERVICES, everything(), recorder().sink, { fromRevision: oldest - 2 }),
        (e: unknown) => e instanceof CacheError && e.code === 'Expired',
      );
      const rec = recorder();
      cache.watch(SERVICES, everything(), rec.sink, { fromRevision: oldest - 1 });
      assert.deepEqual(
        rec.events.map(([, , rv]) => rv),
        revs.slice(-keep),
      );
    } finally {
      await cache.stop();
    }
  });

  it('a watch resumed from any revision the wrapped history holds replays exactly the later events', async () => {
    const store = new MemoryStore();
    const cache = await started(store, 7);
    try {
      const revs: [string, number][] = [];
      for (let i = 0; i < 30; i++) {
        const name = `s${i % 4}`;
        revs.push([
          name,
          i % 5 === 4
            ? await del(store, 'default', name).catch(() => 0)
            : await put(store, service(name, { labels: { i: String(i) } })),
        ]);
      }
      const written = revs.filter(([, rev]) => rev > 0);
      const last = written[written.length - 1]![1];
      await cache.waitFor(last);
      let resumed = 0;
      for (let from = last - 10; from <= last; from++) {
        const rec = recorder();
        try {
          cache.watch(SERVICES, everything(), rec.sink, { fromRevision: from });
        } catch (e) {
          assert.ok(e instanceof CacheError && e.code === 'Expired', String(e));
          continue;
        }
        resumed++;
        assert.deepEqual(
          rec.events.map(([, name, rv]) => [name, rv]),
          written.filter(([, rev]) => rev > from),
          `from ${from}`,
        );
      }
      assert.equal(resumed, 8); // the floor and the 7 revisions after it
    } finally {
      await cache.stop();
    }
  });

  it('tells a sink when more events of the same store batch follow (so it can write them together)', async () => {
    const inner = new MemoryStore();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A store whose watch hands the cache everything after `from` as one batch, once released.
    const store = Object.assign(Object.create(inner) as MemoryStore, {
      watch: async function* (prefix: string, from: number, signal: AbortSignal) {
        await gate;
        yield inner.readAfter(prefix, from, 100).events;
        await new Promise((r) => signal.addEventListener('abort', r));
      },
    });
    const cache = await started(store);
    try {
      const seen: Array<[string, boolean | undefined]> = [];
      cache.watch(
        SERVICES,
        everything(),
        { deliver: (_t, o, more) => seen.push([o.name, more]), expire: () => {} },
        { fromRevision: cache.revision },
      );
      await put(inner, service('a'));
      await put(inner, service('b', { ns: 'other' }));
      const last = await put(inner, service('c'));
      release();
      await cache.waitFor(last);
      assert.deepEqual(seen, [
        ['a', true],
        ['b', true],
        ['c', false],
      ]);
    } finally {
      await cache.stop();
    }
  });

  it('an initial watch replays the current state as ADDED, then goes live', async () => {
    const store = new MemoryStore();
    await put(store, service('a'));
    await put(store, service('b', { ns: 'x' }));
    const cache = await started(store);
    try {
      const rec = recorder();
      cache.watch(SERVICES, everything('default'), rec.sink, { initial: true });
      assert.deepEqual(
        rec.events.map((e) => e.slice(0, 2)),
        [['ADDED', 'a']],
      );
      const r = await put(store, service('c'));
      await cache.waitFor(r);
      assert.deepEqual(
        rec.events.map((e) => e.slice(0, 2)),
        [
          ['ADDED', 'a'],
          ['ADDED', 'c'],
        ],
      );
    } finally {
      await cache.stop();
    }
  });

  it('waitFor a revision the store never reaches times out with TooLargeResourceVersion', async () => {
    const store = new MemoryStore();
    const cache = await started(store);
    try {
      await assert.rejects(
        cache.waitFor(cache.revision + 100),
        (e: unknown) => e instanceof CacheError && e.code === 'TooLargeResourceVersion',
      );
    } finally {
      await cache.stop();
    }
  });

  it('a waitFor whose request went away is rejected at once and leaves no waiter behind', async () => {
    const store = new MemoryStore();
    const cache = await started(store);
    try {
      const ac = new AbortController();
      const waiting = cache.waitFor(cache.revision + 100, ac.signal);
      await new Promise((r) => setImmediate(r));
      assert.equal(cache.pendingWaits, 1);
      ac.abort(new Error('client gone'));
      await assert.rejects(waiting, /client gone/);
      assert.equal(cache.pendingWaits, 0);
    } finally {
      await cache.stop();
    }
  });

  it('unchangedSince tells whether a resource changed after a revision', async () => {
    const store = new MemoryStore();
    const r1 = await put(store, service('a'));
    const cache = await started(store);
    try {
      assert.equal(cache.unchangedSince(SERVICES, r1), true);
      const r2 = await put(store, service('b'));
      await cache.waitFor(r2);
      assert.equal(cache.unchangedSince(SERVICES, r1), false);
      assert.equal(cache.unchangedSince(PODS, r1), true);
    } finally {
      await cache.stop();
    }
  });
});
