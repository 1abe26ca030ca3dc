// WrapperSync against an in-process API server (the upstream) and a memory store (the wrapper's own):
// what it writes, what it does not, and what it does when the store fails.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { ApiError } from '../runtime/client.js';
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

/** A Service on port 80 with these (topology) annotations. */
const service = (name: string, annotations: Record<string, string>) => ({
  metadata: { name, annotations },
  spec: { ports: [{ port: 80 }] },
});

/** An EndpointSlice of Service `svc` with one ready endpoint per [address, node]. */
const slice = (name: string, svc: string, endpoints: readonly (readonly [string, string])[]) => ({
  metadata: {
    name,
    labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'test' },
  },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: endpoints.map(([ip, nodeName]) => ({ addresses: [ip], nodeName, conditions: { ready: true } })),
});

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

/** An in-process upstream with nodes n1 and n2 in unit a and n3 in unit b (label `host`: their name). */
async function upstreamWithNodes(): Promise<InProcessApiServer> {
  const api = await startInProcessApiServer();
  for (const [name, unit] of [
    ['n1', 'a'],
    ['n2', 'a'],
    ['n3', 'b'],
  ] as const)
    await api.client.create(NODES, '', { metadata: { name, labels: { unit, host: name } } });
  return api;
}

describe('WrapperSync', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await upstreamWithNodes();
    await api.client.create(SERVICES, 'default', service('web', { topologyKeys: '["unit"]' }));
    await api.client.create(
      SLICES,
      'default',
      slice('web-1', 'web', [
        ['10.0.0.2', 'n2'],
        ['10.0.0.3', 'n3'],
      ]),
    );
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

  it('a node reported unhealthy leaves every view it is in, and comes back with no opinion', async () => {
    const store = new MemoryStore();
    const sync = new WrapperSync(api.client, store, 'n1', quiet);
    await sync.start();
    await sync.waitForSync();
    assert.ok((await served(store, 'web-1')).includes('10.0.0.2'));
    const writes = sync.writes;
    sync.setNodeHealth('n2', false);
    await until(async () => !(await served(store, 'web-1')).includes('10.0.0.2'));
    await sync.settled();
    assert.equal(sync.writes - writes, 1, 'only the slice with an endpoint on n2');
    sync.setNodeHealth('n2', undefined);
    await until(async () => (await served(store, 'web-1')).includes('10.0.0.2'));
    await sync.stop();
  });

  it('started with the upstream away: one line says so, however many attempts fail', async () => {
    const gone = await startInProcessApiServer();
    await gone.stop();
    const lines: string[] = [];
    const sync = new WrapperSync(gone.client, new MemoryStore(), 'n1', {
      ...quiet,
      warn: (m: string) => lines.push(m),
    });
    await sync.start();
    try {
      await until(async () => lines.length > 0);
      await new Promise((r) => setTimeout(r, 1_500)); // the reflectors retry meanwhile
      assert.deepEqual(lines, [
        'upstream unreachable for the initial sync: serving what the store holds until it answers',
      ]);
    } finally {
      await sync.stop();
    }
  });

  it('a node missing upstream is warned about, and served its unit once it registers', async () => {
    const lines: string[] = [];
    const log = {
      ...quiet,
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
    };
    const store = new MemoryStore();
    const sync = new WrapperSync(api.client, store, 'n4', log);
    await sync.start();
    await sync.waitForSync();
    assert.deepEqual(await served(store, 'web-1'), []);
    assert.equal(lines.filter((l) => l.startsWith('warn this node is not in the upstream')).length, 1);
    // n2 is in unit a (n3 too, once an earlier test has moved it).
    await api.client.create(NODES, '', { metadata: { name: 'n4', labels: { unit: 'a', host: 'n4' } } });
    try {
      await until(async () => (await served(store, 'web-1')).includes('10.0.0.2'));
      assert.ok(
        lines.some((l) => l.startsWith('info this node is in the upstream now')),
        lines.join('\n'),
      );
    } finally {
      await sync.stop();
      await api.client.delete(NODES, '', 'n4');
    }
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
    await api.client.create(SERVICES, 'default', service('gone', { topologyKeys: '["unit"]' }));
    await api.client.create(
      SLICES,
      'default',
      slice('moving', 'gone', [
        ['10.0.1.1', 'n1'],
        ['10.0.1.3', 'n3'],
      ]),
    );
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

/** A client whose slices list can fail and whose slices watch can be cut with a 410, as on a bad link. */
function flakySlices(api: InProcessApiServer) {
  const state = { failList: false, cut: undefined as (() => void) | undefined };
  const client = {
    list: (r: typeof SLICES, o: never, s: AbortSignal) =>
      r === SLICES && state.failList
        ? Promise.reject(new Error('connection reset'))
        : api.client.list(r, o, s),
    watch: (r: typeof SLICES, o: never, signal: AbortSignal) =>
      (async function* () {
        const ac = new AbortController();
        signal.addEventListener('abort', () => ac.abort());
        if (r === SLICES) state.cut = () => ac.abort();
        try {
          for await (const ev of api.client.watch(r, o, ac.signal)) yield ev;
        } catch (e) {
          if (signal.aborted || !ac.signal.aborted) throw e;
        }
        if (!signal.aborted) throw new ApiError(410, 'Expired', 'too old resource version');
      })(),
  };
  return { client: client as unknown as InProcessApiServer['client'], state };
}

describe('WrapperSync across relists', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await upstreamWithNodes();
    await api.client.create(
      SERVICES,
      'default',
      service('web', { 'service.svcplane.io/topology-keys': '["host","unit","*"]' }),
    );
    await api.client.create(SERVICES, 'default', service('api', { topologyKeys: '["unit"]' }));
  });
  after(() => api?.stop());

  it('writes nothing of a relist until all of it is applied, its removals included', async () => {
    for (const [n, ip, node] of [
      ['l1', '10.0.0.1', 'n1'],
      ['l2', '10.0.0.2', 'n2'],
      ['r', '10.0.0.3', 'n3'],
    ] as const)
      await api.client.create(SLICES, 'default', slice(n, 'web', [[ip, node]]));
    const { client, state } = flakySlices(api);
    const inner = new MemoryStore();
    const ops: string[] = [];
    // Every call goes to the inner store itself (bound); updates and deletes are recorded first.
    const store = new Proxy(inner, {
      get(target, p: keyof MemoryStore) {
        if (p === 'update' || p === 'delete')
          return (k: string, ...rest: never[]) => {
            ops.push(`${p} ${k}`);
            return (target[p] as (...a: unknown[]) => unknown).call(target, k, ...rest);
          };
        const v = target[p];
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const sync = new WrapperSync(client, store, 'n1', quiet);
    await sync.start();
    await sync.waitForSync();
    // n1's own endpoint wins the first key ("host"): only l1's endpoint is served.
    assert.deepEqual(await served(inner, 'l2'), []);
    ops.length = 0;

    // While the slices watch is down, l1 and l2 go away: the relist after the 410 finds only r.
    state.failList = true;
    state.cut!();
    await new Promise((r) => setTimeout(r, 100));
    await api.client.delete(SLICES, 'default', 'l1');
    await api.client.delete(SLICES, 'default', 'l2');
    state.failList = false;
    await until(async () => (await inner.get('/endpointslices/default/l2')) === undefined, 15_000);
    await sync.settled();
    // Never l2 re-served with n2's endpoint (what half of the relist, l1 removed and l2 not yet, shows).
    assert.deepEqual(ops.sort(), [
      'delete /endpointslices/default/l1',
      'delete /endpointslices/default/l2',
      'update /endpointslices/default/r',
    ]);
    assert.deepEqual(await served(inner, 'r'), ['10.0.0.3']);
    await sync.stop();
    await api.client.delete(SLICES, 'default', 'r');
  });

  it('keeps serving changes of other resources while the slices relist keeps failing', async () => {
    const { client, state } = flakySlices(api);
    const store = new MemoryStore();
    const sync = new WrapperSync(client, store, 'n1', quiet);
    await sync.start();
    await sync.waitForSync();
    state.failList = true;
    state.cut!();
    await new Promise((r) => setTimeout(r, 100));
    await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'c' } } });
    const label = async () =>
      (JSON.parse(new TextDecoder().decode((await store.get('/minions/n3'))!.value)) as KObject).metadata
        .labels?.['unit'];
    await until(async () => (await label()) === 'c', 3000);
    state.failList = false;
    await sync.stop();
  });

  it('moves a slice relabelled to another Service to that Service’s view at once', async () => {
    await api.client.create(
      SLICES,
      'default',
      slice('mover', 'web', [
        ['10.0.2.2', 'n2'],
        ['10.0.2.3', 'n3'],
      ]),
    );
    const store = new MemoryStore();
    const sync = new WrapperSync(api.client, store, 'n1', quiet);
    await sync.start();
    await sync.waitForSync();
    // web: n1 has no endpoint here, so "unit" decides: n2's
    assert.deepEqual(await served(store, 'mover'), ['10.0.2.2']);
    await api.client.patch(NODES, '', 'n3', 'merge', { metadata: { labels: { unit: 'b' } } });
    await api.client.patch(SLICES, 'default', 'mover', 'merge', {
      metadata: { labels: { 'kubernetes.io/service-name': 'api' } },
    });
    await until(async () => sync.index.view('default/web')?.internal.length === 0);
    await sync.settled();
    // api (SuperEdge, unit): n2 is in n1's unit
    assert.deepEqual(await served(store, 'mover'), ['10.0.2.2']);
    assert.equal(sync.index.view('default/api')?.internal.length, 1);
    await sync.stop();
    await api.client.delete(SLICES, 'default', 'mover');
  });
});

describe('WrapperSync: changes the node is not served', () => {
  const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';
  let api: InProcessApiServer;
  before(async () => {
    api = await upstreamWithNodes();
    await api.client.create(SERVICES, 'default', service('grid', { topologyKeys: '["unit"]' }));
  });
  after(() => api?.stop());

  /** The grid slice: n1's endpoint (with this hostname), n3's (ready or not), a trigger time. */
  const write = (n1Hostname: string, n3Ready: boolean, at: string, resourceVersion?: string) => {
    const base = slice('grid-1', 'grid', []);
    return {
      ...base,
      metadata: {
        ...base.metadata,
        namespace: 'default',
        annotations: { [TRIGGER]: at },
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
      },
      endpoints: [
        { addresses: ['10.1.0.1'], nodeName: 'n1', hostname: n1Hostname, conditions: { ready: true } },
        { addresses: ['10.1.0.3'], nodeName: 'n3', conditions: { ready: n3Ready } },
      ],
    };
  };
  type Stored = {
    metadata: { generation?: number; annotations?: Record<string, string> };
    endpoints: { hostname?: string }[];
  };
  const stored = async (store: Store, name: string): Promise<{ revision: number; obj: Stored }> => {
    const kv = (await store.get(`/endpointslices/default/${name}`))!;
    return { revision: kv.modRevision, obj: JSON.parse(new TextDecoder().decode(kv.value)) as Stored };
  };

  it('writes nothing (no event) for another unit’s change; a change of its own carries the newest metadata', async () => {
    const first = await api.client.create(SLICES, 'default', write('a', true, '2030-01-01T00:00:01Z'));
    const store = new MemoryStore();
    const sync = new WrapperSync(api.client, store, 'n1', quiet);
    try {
      await sync.start();
      await sync.waitForSync();
      assert.deepEqual(await served(store, 'grid-1'), ['10.1.0.1']);
      const before = (await stored(store, 'grid-1')).revision;
      const update = async (n1Hostname: string, n3Ready: boolean, at: string): Promise<KObject> => {
        const cur = await api.client.get(SLICES, 'default', 'grid-1');
        return api.client.update(SLICES, write(n1Hostname, n3Ready, at, cur.metadata.resourceVersion ?? ''));
      };

      // n3's endpoint (unit b: not served to n1) goes unready: a new generation and trigger time upstream.
      const far = await update('a', false, '2030-01-01T00:00:02Z');
      assert.ok((far.metadata.generation ?? 0) > (first.metadata.generation ?? 0), 'the upstream moved on');
      // A slice written after it, on the same watch: once that is served, the change has been seen.
      await api.client.create(SLICES, 'default', slice('marker', 'other', [['10.9.9.9', 'n1']]));
      await until(async () => (await store.get('/endpointslices/default/marker')) !== undefined);
      await sync.settled();
      assert.equal((await stored(store, 'grid-1')).revision, before, 'grid-1 is not rewritten');

      // n1's own endpoint changes: written, with the upstream's generation and trigger time of now.
      const near = await update('b', false, '2030-01-01T00:00:03Z');
      await until(async () => (await stored(store, 'grid-1')).revision !== before);
      const { obj } = await stored(store, 'grid-1');
      assert.deepEqual(
        obj.endpoints.map((e) => e.hostname),
        ['b'],
      );
      assert.equal(obj.metadata.generation, near.metadata.generation);
      assert.equal(obj.metadata.annotations?.[TRIGGER], '2030-01-01T00:00:03Z');
    } finally {
      await sync.stop();
    }
  });
});
