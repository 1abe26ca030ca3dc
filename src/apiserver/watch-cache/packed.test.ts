import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { parseFieldSelector } from '../../core/selectors/fields.js';
import { parseLabelSelector } from '../../core/selectors/labels.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { encodeObject, objectKey } from '../codec.js';
import type { Cached, CachedObject } from './cached-object.js';
import type { WatchEventType } from './delivery.js';
import { DictionaryPacker } from '../../api/json-packer.js';
import { WatchCache } from './watch-cache.js';

const SERVICES = mustFindResource('', 'services');
const ALL = { label: parseLabelSelector(''), field: parseFieldSelector('') };

describe('DictionaryPacker (property)', () => {
  it('gives back every string it packed, whatever the first one (its dictionary) was', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.json(), fc.string({ unit: 'grapheme', maxLength: 3000 })), { minLength: 1 }),
        (texts) => {
          const p = new DictionaryPacker();
          const packed = texts.map((t) => p.pack(t));
          assert.deepEqual(
            packed.map((x) => p.unpack(x)),
            texts,
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('packs objects of one kind to a fraction of their size', () => {
    const p = new DictionaryPacker();
    const svc = (i: number): string =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${i}`, namespace: 'ns-1', uid: `0000-${i}`, resourceVersion: String(i) },
        spec: {
          type: 'ClusterIP',
          clusterIP: `10.96.${i >> 8}.${i & 255}`,
          ports: [{ port: 80, protocol: 'TCP' }],
        },
        status: { loadBalancer: {} },
      });
    p.pack(svc(0));
    const n = svc(4242);
    assert.ok(p.pack(n).length * 4 < n.length, `${p.pack(n).length} of ${n.length}`);
  });
});

async function put(store: MemoryStore, name: string, labels: Record<string, string>): Promise<void> {
  const obj: KObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', labels },
    spec: { type: 'ClusterIP', ports: [{ port: 80 }] },
  };
  const key = objectKey(SERVICES, 'default', name);
  const cur = await store.get(key);
  if (cur === undefined) await store.create(key, encodeObject(obj));
  else await store.update(key, encodeObject(obj), cur.modRevision);
}

/** Lets the caches' packing (a later turn) run to its end. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await nextTurn();
}

function replay(cache: WatchCache, from: { fromRevision: number } | { initial: true }): string[] {
  const out: string[] = [];
  const sink = {
    deliver: (t: WatchEventType, o: CachedObject) => out.push(`${t} ${o.json}`),
    expire: () => {},
  };
  cache.watch(SERVICES, ALL, sink, from).stop();
  return out;
}

describe('WatchCache with packObjects', () => {
  it('serves what a plain cache serves once its objects are packed: lists, gets, replays, live events', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 30; i++) await put(store, `s${i}`, { i: String(i) });
    const plain = new WatchCache(store, {});
    const packed = new WatchCache(store, { packObjects: true });
    const live: string[][] = [[], []];
    const liveByField: string[][] = [[], []];
    try {
      for (const c of [plain, packed]) {
        c.start();
        await c.ready;
      }
      await settle(); // what follows re-stamps and replaces packed objects
      const rev0 = packed.revision;
      /** The same watch on both caches, from rev0, each recording into its own list. */
      const watchBoth = (filter: typeof ALL, into: string[][]): void =>
        [plain, packed].forEach((c, n) =>
          c.watch(
            SERVICES,
            filter,
            { deliver: (t, o) => into[n]!.push(`${t} ${o.json}`), expire: () => {} },
            { fromRevision: rev0 },
          ),
        );
      watchBoth({ ...ALL, label: parseLabelSelector('i in (1,2,3)') }, live);
      // A field selector reads a packed object's fields (its previous version on each MODIFIED).
      watchBoth(
        { ...ALL, field: parseFieldSelector('spec.type=ClusterIP,metadata.namespace=default') },
        liveByField,
      );
      for (let i = 0; i < 10; i++) await put(store, `s${i}`, { i: String(i + 1) });
      await put(store, 's99', { i: '2' });
      await settle();
      await store.delete(objectKey(SERVICES, 'default', 's5'));
      await store.delete(objectKey(SERVICES, 'default', 's2')); // leaves the watchers' selector: DELETED
      const rev = await store.currentRevision();
      await Promise.all([plain.waitFor(rev), packed.waitFor(rev)]);
      await settle();
      const all = packed.list(SERVICES, ALL).items;
      assert.equal(all.length, 29);
      assert.ok(
        all.every((o) => (o as Cached).isPacked),
        'every cached object is packed',
      );
      assert.deepEqual(
        all.map((o) => o.json),
        plain.list(SERVICES, ALL).items.map((o) => o.json),
      );
      assert.deepEqual(
        all.map((o) => o.size),
        all.map((o) => o.json.length),
      );
      // What selectors read is the same once packed (labels shared, fields rebuilt from their values).
      assert.deepEqual(
        all.map((o) => [o.namespace, o.name, o.labels, o.fields]),
        plain.list(SERVICES, ALL).items.map((o) => [o.namespace, o.name, o.labels, o.fields]),
      );
      for (const filter of [
        { ...ALL, field: parseFieldSelector('metadata.name=s3') },
        { ...ALL, field: parseFieldSelector('spec.type=ClusterIP,metadata.namespace=default') },
        { ...ALL, field: parseFieldSelector('spec.type!=ClusterIP') },
        { label: parseLabelSelector('i in (1,2)'), field: parseFieldSelector('metadata.name!=s1') },
      ]) {
        assert.deepEqual(
          packed.list(SERVICES, filter).items.map((o) => o.json),
          plain.list(SERVICES, filter).items.map((o) => o.json),
        );
      }
      assert.equal(
        packed.list(SERVICES, { ...ALL, field: parseFieldSelector('metadata.name=s3') }).items.length,
        1,
      );
      assert.deepEqual(liveByField[1], liveByField[0]);
      assert.ok(liveByField[0]!.filter((l) => l.startsWith('MODIFIED')).length >= 10);
      const key = objectKey(SERVICES, 'default', 's3');
      assert.equal(packed.get(SERVICES, key)!.json, plain.get(SERVICES, key)!.json);
      assert.deepEqual(replay(packed, { fromRevision: rev0 }), replay(plain, { fromRevision: rev0 }));
      assert.deepEqual(replay(packed, { initial: true }), replay(plain, { initial: true }));
      assert.deepEqual(live[1], live[0]);
      assert.ok(live[0]!.length >= 5, `${live[0]!.length} live events`);
      assert.ok(live[0]!.some((l) => l.startsWith('DELETED')));
      // What the history keeps of the deletions (each one's last state, re-stamped) is packed too.
      const deleted: boolean[] = [];
      packed
        .watch(
          SERVICES,
          ALL,
          { deliver: (t, o) => t === 'DELETED' && deleted.push((o as Cached).isPacked), expire: () => {} },
          { fromRevision: rev0 },
        )
        .stop();
      assert.deepEqual(deleted, [true, true]);
    } finally {
      await plain.stop();
      await packed.stop();
    }
  });

  it('packs a backlog as it comes: no more than 1,024 objects wait unpacked', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 1500; i++) await put(store, `s${i}`, {});
    const cache = new WatchCache(store, { packObjects: true });
    cache.start();
    await cache.ready; // loaded in one turn: no later turn has run yet
    const unpacked = () => cache.list(SERVICES, ALL).items.filter((o) => !(o as Cached).isPacked).length;
    assert.equal(unpacked(), 1024);
    await settle();
    assert.equal(unpacked(), 0);
    await cache.stop();
  });

  it('a plain cache never packs', async () => {
    const store = new MemoryStore();
    await put(store, 'a', {});
    const plain = new WatchCache(store, {});
    plain.start();
    await plain.ready;
    await settle();
    assert.equal((plain.list(SERVICES, ALL).items[0] as Cached).isPacked, false);
    await plain.stop();
  });
});
