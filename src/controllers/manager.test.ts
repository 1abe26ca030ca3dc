// The controllers against a real API server in this process (test/support/in-process-apiserver.ts):
// fast enough to stress what the kubectl e2e tests cannot, such as a burst of pod changes racing the
// EndpointSlice controller's own writes (a stale cache must never produce duplicate slices).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { until } from '../../test/e2e/testing/until.js';
import { PassThrough } from 'node:stream';
import { Client } from '../runtime/client.js';
import type { Transport } from '../runtime/transport.js';
import { ControllerManager } from './manager.js';

const PODS = mustFindResource('', 'pods');
const SERVICES = mustFindResource('', 'services');
const NODES = mustFindResource('', 'nodes');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');

type Slice = KObject & {
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean }; zone?: string }[];
};

let api: InProcessApiServer;
let manager: ControllerManager;
const quiet = { info: () => {}, warn: () => {} };

/**
 * The controllers' view of the server: EndpointSlice watch events arrive 150 ms late, so the controller's
 * cache is behind its own writes as a busy informer's would be, and only its tracker stands between it
 * and duplicate slices.
 */
function laggingSliceWatches(inner: Transport): Transport {
  return {
    server: inner.server,
    close: () => inner.close(),
    async send(req) {
      const res = await inner.send(req);
      if (!(req.path.includes('/endpointslices') && req.path.includes('watch=true'))) return res;
      const delayed = new PassThrough();
      res.body.on('data', (chunk: Buffer) => setTimeout(() => delayed.write(chunk), 150));
      res.body.on('end', () => setTimeout(() => delayed.end(), 150));
      res.body.on('error', (err) => delayed.destroy(err));
      delayed.on('close', () => res.body.destroy());
      return { status: res.status, body: delayed };
    },
  };
}

/** Writes to refuse once with 409 Conflict, as a server refuses a write from a stale cache: `PUT /path-prefix`. */
const refuseOnce = new Set<string>();
/** The writes refused so far. */
const refused: string[] = [];

function conflicts(inner: Transport): Transport {
  return {
    server: inner.server,
    close: () => inner.close(),
    async send(req) {
      const armed = [...refuseOnce].find((w) => `${req.method} ${req.path}`.startsWith(w));
      if (armed === undefined) return inner.send(req);
      refuseOnce.delete(armed);
      refused.push(`${req.method} ${req.path}`);
      const status = {
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        code: 409,
        message:
          'Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again',
      };
      return { status: 409, body: PassThrough.from([JSON.stringify(status)]) };
    },
  };
}

before(async () => {
  api = await startInProcessApiServer();
  manager = new ControllerManager(new Client(conflicts(laggingSliceWatches(api.client.transport))), {
    controllers: ['endpoints', 'endpointslice', 'garbagecollector'],
    log: quiet,
  });
  await manager.start();
});

after(async () => {
  await manager.stop();
  await api.stop();
});

const slicesOf = async (service: string): Promise<Slice[]> =>
  (
    await api.client.list(SLICES, {
      namespace: 'default',
      labelSelector: `kubernetes.io/service-name=${service}`,
    })
  ).items as Slice[];

async function pod(name: string, app: string, ip: string, ready: boolean, node?: string): Promise<void> {
  await api.client.create(PODS, 'default', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app } },
    spec: { ...(node === undefined ? {} : { nodeName: node }), containers: [{ name: 'c', image: 'x' }] },
  });
  await setReady(name, ip, ready);
}

async function setReady(name: string, ip: string, ready: boolean): Promise<void> {
  await api.client.patch(
    PODS,
    'default',
    name,
    'merge',
    {
      status: {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    },
    { sub: 'status' },
  );
}

async function service(name: string, app: string): Promise<KObject> {
  return api.client.create(SERVICES, 'default', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { selector: { app }, ports: [{ port: 80 }] },
  });
}

describe('controllers in-process', () => {
  it('a burst of 300 pods and flips racing the controller ends in exactly 3 slices, no duplicates', async () => {
    await service('burst', 'burst');
    const ip = (i: number): string => `10.7.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    // Pods arrive 20 at a time while the controller is writing slices for the earlier ones.
    for (let i = 0; i < 300; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, k) => pod(`b-${i + k}`, 'burst', ip(i + k), true)));
    }
    await Promise.all(Array.from({ length: 50 }, (_, k) => setReady(`b-${k * 3}`, ip(k * 3), false)));
    const want = new Set(Array.from({ length: 300 }, (_, i) => ip(i)));
    const notReady = new Set(Array.from({ length: 50 }, (_, k) => ip(k * 3)));
    const slices = await until('3 slices with every pod once', 30_000, async () => {
      const got = await slicesOf('burst');
      const addresses = got.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses));
      const unready = got.flatMap((s) =>
        (s.endpoints ?? []).filter((e) => e.conditions?.ready === false).flatMap((e) => e.addresses),
      );
      return addresses.length === 300 && new Set(addresses).size === 300 && unready.length === 50
        ? got
        : undefined;
    });
    assert.equal(slices.length, 3, `slices: ${slices.map((s) => (s.endpoints ?? []).length).join(',')}`);
    for (const s of slices) assert.ok((s.endpoints ?? []).length <= 100);
    const all = slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses));
    assert.deepEqual(new Set(all), want);
    const unready = slices.flatMap((s) =>
      (s.endpoints ?? []).filter((e) => e.conditions?.ready === false).flatMap((e) => e.addresses),
    );
    assert.deepEqual(new Set(unready), notReady);
  });

  it('zones follow the nodes; deleting the Service removes its slices', async () => {
    for (const [name, zone] of [
      ['zn-1', 'zone-a'],
      ['zn-2', 'zone-b'],
    ] as const) {
      await api.client.create(NODES, '', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } },
      });
    }
    await service('zoned', 'zoned');
    await pod('z-1', 'zoned', '10.8.0.1', true, 'zn-1');
    await pod('z-2', 'zoned', '10.8.0.2', true, 'zn-2');
    const zones = async (): Promise<string> =>
      (await slicesOf('zoned'))
        .flatMap((s) => (s.endpoints ?? []).map((e) => `${e.addresses[0]}@${e.zone ?? ''}`))
        .sort()
        .join(' ');
    await until('zones', 10_000, async () =>
      (await zones()) === '10.8.0.1@zone-a 10.8.0.2@zone-b' ? true : undefined,
    );
    await api.client.patch(NODES, '', 'zn-2', 'merge', {
      metadata: { labels: { 'topology.kubernetes.io/zone': 'zone-c' } },
    });
    await until('a node moved zones', 10_000, async () =>
      (await zones()) === '10.8.0.1@zone-a 10.8.0.2@zone-c' ? true : undefined,
    );
    await api.client.delete(SERVICES, 'default', 'zoned');
    await until('slices gone with the Service', 10_000, async () =>
      (await slicesOf('zoned')).length === 0 ? true : undefined,
    );
  });

  it('a write refused with 409 is retried with the same last-change-trigger-time, not without one', async () => {
    const ENDPOINTS = mustFindResource('', 'endpoints');
    const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';
    const flip = (ready: boolean, at: string): Promise<KObject> =>
      api.client.patch(
        PODS,
        'default',
        't-1',
        'merge',
        {
          status: {
            phase: 'Running',
            podIP: '10.9.0.1',
            podIPs: [{ ip: '10.9.0.1' }],
            conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at }],
          },
        },
        { sub: 'status' },
      );
    await service('trig', 'trig');
    await pod('t-1', 'trig', '10.9.0.1', false);
    await flip(true, '2030-01-01T00:00:01Z');
    const annotations = async (): Promise<[string | undefined, string | undefined]> => {
      const ep = await api.client.get(ENDPOINTS, 'default', 'trig').catch(() => undefined);
      const [slice] = await slicesOf('trig');
      const ready = (slice as Slice | undefined)?.endpoints?.[0]?.conditions?.ready;
      const epReady = (ep as { subsets?: { addresses?: unknown[] }[] } | undefined)?.subsets?.[0]?.addresses;
      return [
        epReady === undefined ? undefined : ep?.metadata.annotations?.[TRIGGER],
        ready === true ? slice?.metadata.annotations?.[TRIGGER] : undefined,
      ];
    };
    await until('both written for the Ready pod', 10_000, async () => {
      const [ep, slice] = await annotations();
      return ep === '2030-01-01T00:00:01Z' && slice === '2030-01-01T00:00:01Z' ? true : undefined;
    });
    refuseOnce.add('PUT /api/v1/namespaces/default/endpoints/trig');
    refuseOnce.add('PUT /apis/discovery.k8s.io/v1/namespaces/default/endpointslices/trig-');
    await flip(false, '2030-01-01T00:00:02Z');
    await until('both rewritten for the not-ready pod, after one refusal each', 10_000, async () => {
      const ep = (await api.client.get(ENDPOINTS, 'default', 'trig')) as KObject & {
        subsets?: { notReadyAddresses?: unknown[] }[];
      };
      const [slice] = await slicesOf('trig');
      return refuseOnce.size === 0 &&
        ep.subsets?.[0]?.notReadyAddresses?.length === 1 &&
        slice?.endpoints?.[0]?.conditions?.ready === false
        ? true
        : undefined;
    });
    assert.equal(refused.length, 2, refused.join(', '));
    const ep = await api.client.get(ENDPOINTS, 'default', 'trig');
    const [slice] = await slicesOf('trig');
    assert.equal(ep.metadata.annotations?.[TRIGGER], '2030-01-01T00:00:02Z');
    assert.equal(slice?.metadata.annotations?.[TRIGGER], '2030-01-01T00:00:02Z');
  });

  it("a pod on a node not in the cache yet does not freeze the slices' trigger time", async () => {
    const TRIGGER = 'endpoints.kubernetes.io/last-change-trigger-time';
    await api.client.create(NODES, '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'tt-1' } });
    // Selected, on a node nobody registered: the controller reports it and retries, every sync from the
    // Service's first on (kube's tracker moves on all the same).
    await pod('g-0', 'ghosted', '10.10.0.9', true, 'no-such-node');
    await pod('g-1', 'ghosted', '10.10.0.1', false, 'tt-1');
    await service('ghosted', 'ghosted');
    const flip = async (ready: boolean, at: string): Promise<void> => {
      await api.client.patch(
        PODS,
        'default',
        'g-1',
        'merge',
        {
          status: {
            conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at }],
          },
        },
        { sub: 'status' },
      );
    };
    const slice = async (): Promise<Slice | undefined> => (await slicesOf('ghosted'))[0];
    await flip(true, '2030-02-01T00:00:01Z');
    await until('g-1 ready, at its time', 10_000, async () => {
      const s = await slice();
      return s?.endpoints?.[0]?.conditions?.ready === true &&
        s.metadata.annotations?.[TRIGGER] === '2030-02-01T00:00:01Z'
        ? true
        : undefined;
    });
    await flip(false, '2030-02-01T00:00:02Z');
    const s = await until('g-1 not ready', 10_000, async () => {
      const got = await slice();
      return got?.endpoints?.[0]?.conditions?.ready === false ? got : undefined;
    });
    assert.equal(s.metadata.annotations?.[TRIGGER], '2030-02-01T00:00:02Z');
  });
});
