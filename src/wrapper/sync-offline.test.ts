// WrapperSync with --kubelet-url (its reader faked): while the upstream is away, the served slices and
// Endpoints of this node's pods follow the kubelet, one write per changed object and none for an answer
// that changes nothing; when the upstream is back they are the upstream's again; a wrapper started (or
// restarted) offline rewrites what its store holds, and rewriting a rewritten store writes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { OFFLINE_ANNOTATION } from '../core/offline/mark.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { kubeletPod } from '../../test/support/fake-kubelet.js';
import { upstreamOutage } from '../../test/support/upstream-outage.js';
import { MemoryStore } from '../storage/memory/memory-store.js';
import type { Store } from '../storage/store.js';
import { WrapperSync, type WrapperKubelet } from './sync.js';

const NODES = mustFindResource('', 'nodes');
const SERVICES = mustFindResource('', 'services');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const ENDPOINTS = mustFindResource('', 'endpoints');
const NODE = 'edge-0';

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });

/** A kubelet reader the test sets the pods of (or makes fail). */
function fakeKubelet() {
  const k = { pods: [] as unknown[], fail: false, reads: 0 };
  const kubelet: WrapperKubelet = {
    url: 'https://127.0.1.1:10250',
    intervalMs: 50,
    read: async () => {
      k.reads++;
      if (k.fail) throw new Error('no answer (ECONNREFUSED)');
      return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: k.pods };
    },
  };
  return { k, kubelet };
}

const text = async (store: Store, key: string): Promise<KObject | undefined> => {
  const kv = await store.get(key);
  return kv === undefined ? undefined : (JSON.parse(new TextDecoder().decode(kv.value)) as KObject);
};
const sliceIPs = async (store: Store) =>
  ((await text(store, '/endpointslices/default/web-1'))?.['endpoints'] as { addresses: string[] }[]).map(
    (e) => e.addresses[0],
  );
const endpointsIPs = async (store: Store) =>
  ((await text(store, '/services/endpoints/default/web'))?.['subsets'] as { addresses: { ip: string }[] }[])
    .flatMap((s) => s.addresses.map((a) => a.ip))
    .sort();
const marked = async (store: Store, key: string) =>
  (await text(store, key))?.metadata.annotations?.[OFFLINE_ANNOTATION];

async function until(f: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A sync of its own store over an upstream that can go away, with a fake kubelet; synced. */
async function syncedWithKubelet(api: InProcessApiServer) {
  const store = new MemoryStore();
  const up = upstreamOutage(api.client);
  const { k, kubelet } = fakeKubelet();
  const { lines, log } = recorder();
  const sync = new WrapperSync(up.client, store, NODE, log, undefined, {}, kubelet);
  await sync.start();
  await sync.waitForSync();
  return { store, up, k, lines, sync };
}

function recorder() {
  const lines: string[] = [];
  const log = {
    info: (m: string) => lines.push(m),
    warn: (m: string) => lines.push(m),
    error: (m: string) => lines.push(m),
  };
  return { lines, log };
}

describe('WrapperSync offline: the node’s own pods from the kubelet', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer();
    for (const name of [NODE, 'edge-1']) await api.client.create(NODES, '', { metadata: { name } });
    await api.client.create(SERVICES, 'default', {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    await api.client.create(SLICES, 'default', {
      metadata: {
        name: 'web-1',
        labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'test' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true, terminating: false },
          nodeName: NODE,
          targetRef: ref('a'),
        },
        {
          addresses: ['10.1.0.1'],
          conditions: { ready: true, serving: true, terminating: false },
          nodeName: 'edge-1',
          targetRef: ref('r'),
        },
      ],
    });
    await api.client.create(ENDPOINTS, 'default', {
      metadata: { name: 'web' },
      subsets: [
        {
          addresses: [
            { ip: '10.0.0.1', nodeName: NODE, targetRef: ref('a') },
            { ip: '10.1.0.1', nodeName: 'edge-1', targetRef: ref('r') },
          ],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
      ],
    });
  });
  after(() => api?.stop());

  it('rewrites while the upstream is away, once per change, and serves the upstream’s views when it is back', async () => {
    const { store, up, k, lines, sync } = await syncedWithKubelet(api);
    const upstreamSlice = await text(store, '/endpointslices/default/web-1');
    const upstreamEndpoints = await text(store, '/services/endpoints/default/web');
    await sync.pollKubelet();
    assert.equal(k.reads, 0, 'the kubelet is not read while the upstream is in sync');

    // The node rebooted offline: pod a is back with another IP.
    k.pods = [
      kubeletPod('a', { node: NODE, ip: '10.0.0.9' }),
      kubeletPod('x', { node: 'edge-1', ip: '10.1.0.9' }),
    ];
    const writes = sync.writes;
    up.down();
    await until(async () => (await sliceIPs(store)).includes('10.0.0.9'));
    await until(async () => (await endpointsIPs(store)).includes('10.0.0.9'));
    await sync.settled();
    assert.deepEqual(await sliceIPs(store), ['10.0.0.9', '10.1.0.1'], 'in place of the old address');
    assert.deepEqual(await endpointsIPs(store), ['10.0.0.9', '10.1.0.1']);
    assert.equal(sync.writes - writes, 2, 'the slice and the Endpoints, once each');
    assert.match((await marked(store, '/endpointslices/default/web-1'))!, /"endpoints":1}$/);
    assert.ok((await marked(store, '/services/endpoints/default/web')) !== undefined);
    assert.equal(sync.offlineRewritten(), 2);
    assert.equal(sync.offlineActive(), true);

    // The same answer again writes nothing; the pod turning not ready is one write per object.
    await sync.pollKubelet();
    await sync.settled();
    assert.equal(sync.writes - writes, 2);
    k.pods = [kubeletPod('a', { node: NODE, ip: '10.0.0.9', ready: false })];
    await sync.pollKubelet();
    await until(async () => (await endpointsIPs(store)).length === 1);
    await sync.settled();
    assert.equal(sync.writes - writes, 4);
    const conditions = (
      (await text(store, '/endpointslices/default/web-1'))!['endpoints'] as { conditions: unknown }[]
    )[0]!.conditions;
    assert.deepEqual(conditions, { ready: false, serving: false, terminating: false });

    up.up();
    await until(async () => (await marked(store, '/endpointslices/default/web-1')) === undefined);
    await until(() => sync.offlineRewritten() === 0);
    await sync.settled();
    assert.equal(sync.writes - writes, 6, 'each rewritten object once more, as the upstream has it');
    assert.deepEqual(await text(store, '/endpointslices/default/web-1'), upstreamSlice);
    assert.deepEqual(await text(store, '/services/endpoints/default/web'), upstreamEndpoints);
    assert.equal(lines.filter((l) => l.startsWith('upstream away: rewriting')).length, 1);
    assert.equal(lines.filter((l) => l.startsWith('upstream back: the endpoints rewritten')).length, 1);
    await sync.stop();
  });

  it('started offline, rewrites the store’s views; restarted offline, writes nothing; a new selected pod is added', async () => {
    const store = new MemoryStore();
    const first = new WrapperSync(api.client, store, NODE, recorder().log);
    await first.start();
    await first.waitForSync();
    await first.stop();

    const up = upstreamOutage(api.client);
    up.down();
    const { k, kubelet } = fakeKubelet();
    k.pods = [kubeletPod('a', { node: NODE, ip: '10.0.0.9' })];
    const offline = new WrapperSync(up.client, store, NODE, recorder().log, undefined, {}, kubelet);
    await offline.start();
    await until(async () => (await sliceIPs(store)).includes('10.0.0.9'));
    await until(async () => (await endpointsIPs(store)).includes('10.0.0.9'));
    await offline.settled();
    assert.equal(offline.writes, 2);
    await offline.stop();

    const again = new WrapperSync(up.client, store, NODE, recorder().log, undefined, {}, kubelet);
    await again.start();
    await until(() => k.reads >= 3);
    await again.pollKubelet();
    await again.settled();
    assert.equal(again.writes, 0, 'rewriting a rewritten store changes nothing');
    assert.equal(again.offlineRewritten(), 2);

    // A pod of this node the Service selects, named nowhere: added where its ports fit.
    k.pods = [...k.pods, kubeletPod('n', { node: NODE, ip: '10.0.0.5' })];
    await again.pollKubelet();
    await until(async () => (await sliceIPs(store)).includes('10.0.0.5'));
    await again.settled();
    assert.equal(again.writes, 2);

    // The upstream back: everything is the upstream's again.
    up.up();
    await until(async () => (await marked(store, '/endpointslices/default/web-1')) === undefined);
    await again.waitForSync();
    assert.deepEqual(await sliceIPs(store), ['10.0.0.1', '10.1.0.1']);
    assert.equal(again.offlineRewritten(), 0);
    await again.stop();
  });

  it('a selected pod no slice fits gets a slice of its own, which goes when the upstream is back', async () => {
    await api.client.create(SERVICES, 'default', {
      metadata: { name: 'api' },
      spec: { selector: { app: 'api' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    const { store, up, k, sync } = await syncedWithKubelet(api);
    k.pods = [kubeletPod('p', { node: NODE, ip: '10.0.0.7', labels: { app: 'api' } })];
    up.down();
    const created = async () =>
      (await store.list('/endpointslices/default/')).items
        .map((kv) => JSON.parse(new TextDecoder().decode(kv.value)) as KObject)
        .filter((o) => o.metadata.labels?.['kubernetes.io/service-name'] === 'api');
    await until(async () => (await created()).length === 1);
    await sync.settled();
    const [slice] = await created();
    assert.match(slice!.metadata.name!, /^api-offline-v4-/);
    assert.equal(
      slice!.metadata.labels?.['endpointslice.kubernetes.io/managed-by'],
      'svcplane-wrapper-offline',
    );
    assert.deepEqual(slice!['ports'], [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.deepEqual(
      (slice!['endpoints'] as { addresses: string[] }[]).map((e) => e.addresses),
      [['10.0.0.7']],
    );
    // Polled again: the same slice, nothing written.
    const writes = sync.writes;
    k.pods = [...k.pods];
    await sync.pollKubelet();
    await sync.settled();
    assert.equal(sync.writes, writes);
    up.up();
    await until(async () => (await created()).length === 0);
    await sync.stop();
    await api.client.delete(SERVICES, 'default', 'api');
  });

  it('a kubelet that does not answer: the last views stay, one line for the run of failures', async () => {
    const { store, up, k, lines, sync } = await syncedWithKubelet(api);
    const before = await text(store, '/endpointslices/default/web-1');
    k.fail = true;
    up.down();
    await until(() => k.reads >= 5);
    await sync.settled();
    assert.deepEqual(await text(store, '/endpointslices/default/web-1'), before);
    assert.deepEqual(
      lines.filter((l) => l.startsWith('the kubelet')),
      ['the kubelet does not answer: serving the last views'],
    );
    k.fail = false;
    await until(() => lines.includes('the kubelet answers again'));
    up.up();
    await sync.stop();
  });
});
