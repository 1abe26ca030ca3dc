// WrapperSync against an in-process API server (the upstream) and a memory store (the wrapper's own):
// what it writes, what it does not, and what it does when the store fails.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { MemoryStore } from '../storage/memory/memory-store.js';
import type { Store } from '../storage/store.js';
import { StoreError } from '../storage/store.js';
import { WrapperSync } from './sync.js';

const NODES = mustFindResource('', 'nodes');
const SERVICES = mustFindResource('', 'services');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

const decode = (v: Uint8Array) =>
  JSON.parse(new TextDecoder().decode(v)) as { endpoints?: { addresses: string[] }[] };

async function served(store: Store, name: string): Promise<string[]> {
  const kv = await store.get(`/endpointslices/default/${name}`);
  return (decode(kv!.value).endpoints ?? []).map((e) => e.addresses[0]!).sort();
}

async function until(f: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('WrapperSync', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer();
    for (const [name, unit] of [
      ['n1', 'a'],
      ['n2', 'a'],
      ['n3', 'b'],
    ] as const)
      await api.client.create(NODES, '', { metadata: { name, labels: { unit } } });
    await api.client.create(SERVICES, 'default', {
      metadata: { name: 'web', annotations: { topologyKeys: '["unit"]' } },
      spec: { ports: [{ port: 80 }] },
    });
    await api.client.create(SLICES, 'default', {
      metadata: {
        name: 'web-1',
        labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'test' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.0.0.2'], nodeName: 'n2', conditions: { ready: true } },
        { addresses: ['10.0.0.3'], nodeName: 'n3', conditions: { ready: true } },
      ],
    });
  });
  after(() => api?.stop());

  it('serves the filtered slice, re-serves only what a relabel changes, and writes nothing on a restart', async () => {
    const store = new MemoryStore();
    const sync = new WrapperSync(api.client, store, 'n1', quiet);
    await sync.start();
    await sync.waitForSync();
    assert.deepEqual(await served(store, 'web-1'), ['10.0.0.2']);
    const afterSync = sync.writes;

    await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'a' } } });
    await until(async () => (await served(store, 'web-1')).length === 2);
    await sync.settled();
    // the node (passed through) and the one slice whose view changed
    assert.equal(sync.writes - afterSync, 2);
    await sync.stop();

    const again = new WrapperSync(api.client, store, 'n1', quiet);
    await again.start();
    await again.waitForSync();
    assert.equal(again.writes, 0, 'what the store holds is what it would serve');
    await again.stop();
  });

  it('on a restart, serves exactly what changed while it was away: a new Service, a moved slice, a deletion', async () => {
    await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'a' } } });
    const store = new MemoryStore();
    const first = new WrapperSync(api.client, store, 'n1', quiet);
    await first.start();
    await first.waitForSync();
    await first.stop();
    const keys = async () =>
      (await store.list('/services/specs/')).items
        .map((kv) => kv.key)
        .filter((k) => !k.endsWith('/kubernetes'))
        .sort();
    assert.ok((await keys()).includes('/services/specs/default/web'));

    // While it is down: a new Service with a slice that belongs to it; then that slice moves to `web`,
    // and the new Service goes away.
    await api.client.create(SERVICES, 'default', {
      metadata: { name: 'gone', annotations: { topologyKeys: '["unit"]' } },
      spec: { ports: [{ port: 80 }] },
    });
    await api.client.create(SLICES, 'default', {
      metadata: {
        name: 'moving',
        labels: { 'kubernetes.io/service-name': 'gone', 'endpointslice.kubernetes.io/managed-by': 'test' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.0.1.1'], nodeName: 'n1', conditions: { ready: true } },
        { addresses: ['10.0.1.3'], nodeName: 'n3', conditions: { ready: true } },
      ],
    });
    const second = new WrapperSync(api.client, store, 'n1', quiet);
    await second.start();
    await second.waitForSync();
    assert.deepEqual(await keys(), ['/services/specs/default/gone', '/services/specs/default/web']);
    await second.stop();

    await api.client.patch(SLICES, 'default', 'moving', 'merge', {
      metadata: { labels: { 'kubernetes.io/service-name': 'web' } },
    });
    await api.client.delete(SERVICES, 'default', 'gone');
    const third = new WrapperSync(api.client, store, 'n1', quiet);
    await third.start();
    await third.waitForSync();
    assert.deepEqual(await keys(), ['/services/specs/default/web']);
    // n1 and n3 are both in unit a: `web`'s rule keeps both endpoints of the moved slice
    assert.deepEqual(await served(store, 'moving'), ['10.0.1.1', '10.0.1.3']);
    // two writes: the Service deleted and the moved slice re-served; nothing else changed
    assert.equal(third.writes, 2);
    await api.client.delete(SLICES, 'default', 'moving');
    await third.stop();
  });

  it('backs off when the store keeps failing, instead of spinning', async () => {
    const inner = new MemoryStore();
    let attempts = 0;
    const failing: Store = Object.assign(Object.create(inner) as Store, {
      create: async () => {
        attempts++;
        await new Promise((r) => setImmediate(r));
        throw new StoreError('Unavailable', 'disk full');
      },
    });
    const sync = new WrapperSync(api.client, failing, 'n1', quiet);
    await sync.start();
    await new Promise((r) => setTimeout(r, 1000));
    await sync.stop();
    // a handful of objects, retried with 50 ms doubling: tens of attempts, not tens of thousands
    assert.ok(attempts > 0 && attempts < 200, `attempts: ${attempts}`);
  });
});
