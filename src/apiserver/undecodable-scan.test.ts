import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import { MemoryStore } from '../storage/memory/memory-store.js';
import { scanUndecodable } from './undecodable-scan.js';
import { WatchCache } from './watch-cache/watch-cache.js';

const NODES = mustFindResource('', 'nodes');
const PODS = mustFindResource('', 'pods');
const ALL = { label: { requirements: [] }, field: { requirements: [] } };
const bytes = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

async function loaded(store: MemoryStore): Promise<WatchCache> {
  const cache = new WatchCache(store);
  cache.start();
  await cache.ready;
  return cache;
}

describe('scanUndecodable', () => {
  it('logs each broken object and a summary, and warns on the LISTs that serve one', async () => {
    const store = new MemoryStore();
    await store.create('/minions/good', bytes({ kind: 'Node', metadata: { name: 'good' } }));
    const bad = await store.create('/minions/bad', bytes({ metadata: { name: 'bad' }, status: 'garbage' }));
    await store.create(
      '/pods/ns1/p',
      bytes({ metadata: { name: 'p', namespace: 'ns1' }, spec: { containers: 'x' } }),
    );
    const cache = await loaded(store);
    const logs: string[] = [];
    const warn = (msg: string, fields?: Record<string, unknown>): void => {
      logs.push(fields === undefined ? msg : `${msg} ${JSON.stringify(fields)}`);
    };
    const warnings = scanUndecodable(cache, { warn });
    assert.deepEqual(logs, [
      'stored object cannot be decoded by typed clients: nodes bad: status: string where an object is expected',
      'stored object cannot be decoded by typed clients: pods ns1/p: spec.containers: string where an array is expected',
      `stored objects typed clients cannot decode; see \`svcplane store check\` {"checked":3,"undecodable":2,"revision":3}`,
    ]);
    assert.deepEqual(warnings(NODES, cache.list(NODES, ALL).items), [
      'nodes bad cannot be decoded by typed clients (status: string where an object is expected); fix or delete it',
    ]);
    assert.deepEqual(warnings(NODES, [cache.get(NODES, '/minions/good')!]), []);

    // Fixed after the scan: checked again when next served, and no longer named.
    await store.update('/minions/bad', bytes({ metadata: { name: 'bad' }, status: {} }), bad.modRevision);
    await cache.waitFresh();
    assert.deepEqual(warnings(NODES, cache.list(NODES, ALL).items), []);
    assert.equal(warnings(PODS, cache.list(PODS, ALL).items).length, 1);
    await cache.stop();
  });

  it('a clean store logs nothing and never warns', async () => {
    const store = new MemoryStore();
    await store.create('/minions/good', bytes({ metadata: { name: 'good' } }));
    const cache = await loaded(store);
    const warnings = scanUndecodable(cache, { warn: assert.fail });
    assert.deepEqual(warnings(NODES, cache.list(NODES, ALL).items), []);
    await cache.stop();
  });

  it('names at most ten objects in one response', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 12; i++) await store.create(`/minions/n${i}`, bytes({ metadata: {}, spec: 1 }));
    const cache = await loaded(store);
    const warnings = scanUndecodable(cache, { warn: () => {} });
    const texts = warnings(NODES, cache.list(NODES, ALL).items);
    assert.equal(texts.length, 11);
    assert.equal(texts[10], '2 more objects in this list cannot be decoded by typed clients');
    await cache.stop();
  });
});
