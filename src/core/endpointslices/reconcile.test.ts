import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import {
  endpointSlicePrefix,
  planEndpointSlices,
  topologyHintsEnabled,
  type EndpointSlicePlan,
  type PlanEndpointSlicesInput,
} from './reconcile.js';
import {
  FakeSliceAPI,
  HTTP_PORT,
  node,
  nthIP,
  pod,
  service,
  slice,
  type PodOptions,
} from './testing/builders.js';
import {
  LABEL_HEADLESS,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  type Endpoint,
  type EndpointSlice,
} from './types.js';

const NODES = [
  node('node-a', { zone: 'zone-a' }),
  node('node-b', { zone: 'zone-b' }),
  node('node-c', { zone: 'zone-c' }),
];
const MANAGED = {
  [LABEL_SERVICE_NAME]: 'foo',
  [LABEL_MANAGED_BY]: 'endpointslice-controller.k8s.io',
};

/** Pod `pod<i>` with IP nthIP(i) on node-a, ready. */
const p = (i: number, o: PodOptions = {}) => pod({ name: `pod${i}`, ip: nthIP(i), nodeName: 'node-a', ...o });
const pods = (n: number, from = 0, o: PodOptions = {}) => Array.from({ length: n }, (_, i) => p(from + i, o));

const plan = (o: Partial<PlanEndpointSlicesInput> = {}): EndpointSlicePlan =>
  planEndpointSlices({ service: service(), pods: [], nodes: NODES, existing: [], ...o });

/** [creates, updates, deletes] */
const counts = (pl: EndpointSlicePlan): [number, number, number] => [
  pl.create.length,
  pl.update.length,
  pl.delete.length,
];

/** The state after planning from `existing` and applying the plan. */
function settle(o: Partial<PlanEndpointSlicesInput> = {}, api = new FakeSliceAPI()): EndpointSlice[] {
  return api.apply(o.existing ?? [], plan(o));
}

const ipsOf = (s: EndpointSlice): string[] => s.endpoints.map((e) => e.addresses[0] ?? '');
const nameOf = (s: KObject): string => String(s.metadata.name);
const sizes = (slices: readonly EndpointSlice[]): number[] => slices.map((s) => s.endpoints.length);
/** Endpoint of a pod built by p(i) on node-a. */
const podEp = (i: number, o: Partial<Endpoint> = {}): Endpoint => ({
  addresses: [nthIP(i)],
  conditions: { ready: true, serving: true, terminating: false },
  targetRef: { kind: 'Pod', namespace: 'default', name: `pod${i}`, uid: `uid-pod${i}` },
  nodeName: 'node-a',
  zone: 'zone-a',
  ...o,
});

describe('planEndpointSlices: Services it leaves alone', () => {
  it('plans nothing for an ExternalName Service, even with a managed slice and selected pods', () => {
    const pl = plan({
      service: service({ type: 'ExternalName' }),
      pods: pods(2),
      existing: [slice({ endpoints: [podEp(0)] })],
    });
    assert.deepEqual(counts(pl), [0, 0, 0]);
    assert.equal(pl.skipped, 'ExternalName');
  });

  it('plans nothing for a Service without a selector (slices are managed out of band)', () => {
    const pl = plan({ service: service({ selector: null }), pods: pods(2), existing: [slice()] });
    assert.deepEqual(counts(pl), [0, 0, 0]);
    assert.equal(pl.skipped, 'NoSelector');
  });

  it('treats an empty selector as selecting every pod of the namespace', () => {
    const pl = plan({
      service: service({ selector: {} }),
      pods: [p(0, { labels: { other: 'x' } }), p(1, { namespace: 'elsewhere' })],
    });
    assert.deepEqual(pl.create.map(ipsOf), [[nthIP(0)]]);
  });

  it('ignores pods the selector does not select', () => {
    const pl = plan({ pods: [p(0), p(1, { labels: { app: 'other' } })] });
    assert.deepEqual(pl.create.map(ipsOf), [[nthIP(0)]]);
  });

  it('rejects maxEndpointsPerSlice outside 1..1000 with upstream messages', () => {
    assert.throws(() => plan({ maxEndpointsPerSlice: 0 }), /must not be less than 1, but got 0/);
    assert.throws(() => plan({ maxEndpointsPerSlice: 1001 }), /must not be more than 1000, but got 1001/);
    assert.throws(() => plan({ maxEndpointsPerSlice: 1.5 }), RangeError);
    assert.doesNotThrow(() => plan({ maxEndpointsPerSlice: 1000 }));
    assert.doesNotThrow(() => plan({ maxEndpointsPerSlice: 1 }));
  });
});

describe('planEndpointSlices: the slice it creates', () => {
  it('creates one slice for one ready pod, with labels, owner, ports and the endpoint', () => {
    const pl = plan({ pods: [p(0)] });
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.deepEqual(pl.create[0], {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        generateName: 'foo-',
        namespace: 'default',
        labels: MANAGED,
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: 'foo',
            uid: 'svc-uid-foo',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: 'IPv4',
      endpoints: [podEp(0)],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
    assert.deepEqual(pl.errors, []);
  });

  it("copies the Service's labels except the reserved keys", () => {
    const pl = plan({
      service: service({
        labels: {
          app: 'web',
          [LABEL_SERVICE_NAME]: 'spoof',
          [LABEL_MANAGED_BY]: 'me',
          [LABEL_HEADLESS]: 'x',
        },
      }),
      pods: [p(0)],
    });
    assert.deepEqual(pl.create[0]?.metadata.labels, { app: 'web', ...MANAGED });
  });

  for (const clusterIP of ['None', '']) {
    it(`adds the headless label when clusterIP is ${JSON.stringify(clusterIP)}`, () => {
      const pl = plan({ service: service({ clusterIP, ipFamilies: ['IPv4'] }), pods: [p(0)] });
      assert.deepEqual(pl.create[0]?.metadata.labels, { ...MANAGED, [LABEL_HEADLESS]: '' });
    });
  }

  it('uses the given controllerName and touches only slices carrying it', () => {
    const other = slice({ name: 'foo-default', endpoints: [podEp(9)] });
    const pl = plan({ controllerName: 'my-controller', pods: [p(0)], existing: [other] });
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.equal(pl.create[0]?.metadata.labels?.[LABEL_MANAGED_BY], 'my-controller');
  });

  it('sets the trigger-time annotation on written slices when given, and removes it when not', () => {
    const created = plan({ pods: [p(0)], triggerTime: '2018-01-01T00:00:00Z' }).create[0];
    assert.deepEqual(created?.metadata.annotations, {
      [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: '2018-01-01T00:00:00Z',
    });
    const existing = slice({ endpoints: [podEp(0)] });
    existing.metadata.annotations = { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: 'old', keep: 'me' };
    const updated = plan({ pods: [p(0), p(1)], existing: [existing] }).update[0];
    assert.deepEqual(updated?.metadata.annotations, { keep: 'me' });
  });

  it('names new slices `<service>-` unless that is not a valid name prefix', () => {
    assert.equal(endpointSlicePrefix('foo'), 'foo-');
    assert.equal(endpointSlicePrefix('a'), 'a-');
    assert.equal(endpointSlicePrefix('a'.repeat(253)), `${'a'.repeat(253)}-`);
    assert.equal(endpointSlicePrefix('a'.repeat(254)), 'a'.repeat(254));
    assert.equal(endpointSlicePrefix('Foo'), 'Foo');
  });
});

describe('planEndpointSlices: endpoint conditions (upstream podToEndpoint)', () => {
  // [Ready condition, terminating, publishNotReadyAddresses] → conditions {ready, serving, terminating}
  const rows: Array<[boolean, boolean, boolean, [boolean, boolean, boolean]]> = [
    [true, false, false, [true, true, false]],
    [false, false, false, [false, false, false]],
    [true, true, false, [false, true, true]],
    [false, true, false, [false, false, true]],
    [true, false, true, [true, true, false]],
    [false, false, true, [true, false, false]],
    [true, true, true, [true, true, true]],
    [false, true, true, [true, false, true]],
  ];
  for (const [ready, terminating, publish, [r, s, t]] of rows) {
    it(`Ready=${ready} terminating=${terminating} publishNotReady=${publish} → ready=${r} serving=${s} terminating=${t}`, () => {
      const pl = plan({
        service: service({ publishNotReadyAddresses: publish }),
        pods: [p(0, { ready, terminating })],
      });
      assert.deepEqual(pl.create[0]?.endpoints[0]?.conditions, { ready: r, serving: s, terminating: t });
    });
  }

  for (const phase of ['Failed', 'Succeeded']) {
    it(`leaves out a ${phase} pod even when publishing not-ready addresses`, () => {
      const pl = plan({ service: service({ publishNotReadyAddresses: true }), pods: [p(0, { phase })] });
      assert.deepEqual(pl.create[0]?.endpoints, []); // the placeholder
    });
  }

  it('leaves out a pod without an IP', () => {
    assert.deepEqual(plan({ pods: [p(0, { ip: '' })] }).create[0]?.endpoints, []);
  });

  it('treats a pod without a Ready condition as not serving', () => {
    const e = plan({ pods: [p(0, { noReadyCondition: true })] }).create[0]?.endpoints[0];
    assert.deepEqual(e?.conditions, { ready: false, serving: false, terminating: false });
  });
});

describe('planEndpointSlices: node, zone and hostname', () => {
  it("takes the zone from the node's topology.kubernetes.io/zone label", () => {
    const pl = plan({ pods: [p(0, { nodeName: 'node-b' })] });
    assert.equal(pl.create[0]?.endpoints[0]?.zone, 'zone-b');
    assert.equal(pl.create[0]?.endpoints[0]?.nodeName, 'node-b');
  });

  it('sets no zone when the node has no zone label or an empty one', () => {
    const nodes = [node('bare'), node('empty', { zone: '' })];
    const pl = plan({ nodes, pods: [p(0, { nodeName: 'bare' }), p(1, { nodeName: 'empty' })] });
    assert.deepEqual(
      pl.create[0]?.endpoints.map((e) => [e.nodeName, e.zone]),
      [
        ['bare', undefined],
        ['empty', undefined],
      ],
    );
  });

  it('skips a pod on an unknown node and reports it, so the caller retries', () => {
    const pl = plan({ pods: [p(0, { nodeName: 'ghost' }), p(1)] });
    assert.deepEqual(pl.create.map(ipsOf), [[nthIP(1)]]);
    assert.deepEqual(pl.errors, ['skipping Pod pod0 for Service default/foo: Node ghost Not Found']);
  });

  it('reports an unknown node once for a dual-stack Service', () => {
    const pl = plan({
      service: service({ ipFamilies: ['IPv4', 'IPv6'] }),
      pods: [p(0, { nodeName: 'ghost', ip: ['10.0.0.1', 'fd00::1'] })],
    });
    assert.equal(pl.errors.length, 1);
  });

  it('keeps a pod on an unknown node when the Service publishes not-ready addresses (no zone)', () => {
    const pl = plan({
      service: service({ publishNotReadyAddresses: true }),
      pods: [p(0, { nodeName: 'ghost' })],
    });
    assert.deepEqual(pl.errors, []);
    assert.equal(pl.create[0]?.endpoints[0]?.nodeName, 'ghost');
    assert.equal(pl.create[0]?.endpoints[0]?.zone, undefined);
  });

  it('keeps an unscheduled pod without nodeName or zone and reports nothing (svcplane has no kubelets)', () => {
    const unscheduled = pod({ name: 'pod0', ip: nthIP(0) });
    for (const svc of [service(), service({ publishNotReadyAddresses: true })]) {
      const pl = plan({ service: svc, pods: [unscheduled] });
      assert.deepEqual(pl.errors, []);
      assert.deepEqual(pl.create.map(ipsOf), [[nthIP(0)]]);
      assert.equal(pl.create[0]?.endpoints[0]?.nodeName, undefined);
      assert.equal(pl.create[0]?.endpoints[0]?.zone, undefined);
    }
  });

  it("sets hostname only when the pod's subdomain is the Service", () => {
    const pl = plan({
      pods: [p(0, { hostname: 'h0', subdomain: 'foo' }), p(1, { hostname: 'h1', subdomain: 'bar' })],
    });
    assert.deepEqual(
      pl.create[0]?.endpoints.map((e) => e.hostname),
      ['h0', undefined],
    );
  });

  it('publishes IPs in canonical form', () => {
    const pl = plan({ service: service({ ipFamilies: ['IPv6'] }), pods: [p(0, { ip: '2001:DB8:0:0::1' })] });
    assert.deepEqual(pl.create[0]?.endpoints[0]?.addresses, ['2001:db8::1']);
  });
});

describe('planEndpointSlices: placeholder slices', () => {
  it('creates one placeholder slice, without endpoints or ports, for a Service without pods', () => {
    const pl = plan();
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.deepEqual(pl.create[0]?.endpoints, []);
    assert.deepEqual(pl.create[0]?.ports, []);
    assert.equal(pl.create[0]?.addressType, 'IPv4');
  });

  it('keeps an existing identical placeholder', () => {
    assert.deepEqual(counts(plan({ existing: settle() })), [0, 0, 0]);
  });

  it('replaces a placeholder whose labels are stale by updating it in place', () => {
    const existing = settle();
    const pl = plan({ service: service({ labels: { team: 'x' } }), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(nameOf(pl.update[0]!), nameOf(existing[0]!));
    assert.deepEqual(pl.update[0]?.metadata.labels, { team: 'x', ...MANAGED });
  });

  it('turns the placeholder into the first real slice when pods appear (no create, no delete)', () => {
    const existing = settle();
    const pl = plan({ pods: pods(3), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(nameOf(pl.update[0]!), nameOf(existing[0]!));
    assert.deepEqual(ipsOf(pl.update[0]!), [nthIP(0), nthIP(1), nthIP(2)]);
    assert.deepEqual(pl.update[0]?.ports, [HTTP_PORT]);
    assert.equal(pl.update[0]?.metadata.resourceVersion, existing[0]?.metadata.resourceVersion);
  });

  it('turns the last slice back into a placeholder when every pod is gone', () => {
    const existing = settle({ pods: pods(3) });
    const pl = plan({ existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(pl.update[0]?.endpoints, []);
    assert.deepEqual(pl.update[0]?.ports, []);
  });

  it('deletes surplus slices when the pods are gone, keeping one as the placeholder', () => {
    const existing = settle({ pods: pods(5), maxEndpointsPerSlice: 2 });
    assert.equal(existing.length, 3);
    const pl = plan({ existing, maxEndpointsPerSlice: 2 });
    assert.deepEqual(counts(pl), [0, 1, 2]);
  });

  it('creates a fresh placeholder rather than adopt one owned by an older Service of the same name', () => {
    const old = slice({ name: 'foo-old', serviceUid: 'old-uid', ports: [], endpoints: [] });
    const pl = plan({ existing: [old] });
    assert.deepEqual(counts(pl), [1, 0, 1]);
    assert.equal(nameOf(pl.delete[0]!), 'foo-old');
  });

  it('keeps one placeholder per address type of a dual-stack Service', () => {
    const pl = plan({ service: service({ ipFamilies: ['IPv4', 'IPv6'] }) });
    assert.deepEqual(
      pl.create.map((s) => s.addressType),
      ['IPv4', 'IPv6'],
    );
  });

  it('creates a placeholder when no pod has an IP of the Service family', () => {
    const pl = plan({ service: service({ ipFamilies: ['IPv6'] }), pods: pods(2) });
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.deepEqual(pl.create[0]?.endpoints, []);
    assert.deepEqual(pl.create[0]?.ports, []);
  });
});

describe('planEndpointSlices: sizing and churn', () => {
  it('splits 250 pods into 3 slices of at most 100', () => {
    const pl = plan({ pods: pods(250) });
    assert.deepEqual(sizes(pl.create), [100, 100, 50]);
    const all = pl.create.flatMap(ipsOf);
    assert.equal(new Set(all).size, 250);
  });

  it('honours maxEndpointsPerSlice', () => {
    assert.deepEqual(sizes(plan({ pods: pods(5), maxEndpointsPerSlice: 2 }).create), [2, 2, 1]);
  });

  it('orders endpoints inside a slice by address bytes, whatever the pod order', () => {
    const ps = [p(10), p(2), p(1)];
    const created = plan({ pods: ps }).create[0]!;
    assert.deepEqual(ipsOf(created), ['10.0.0.1', '10.0.0.10', '10.0.0.2']);
    assert.deepEqual(plan({ pods: [...ps].reverse() }), plan({ pods: ps }));
  });

  it('plans nothing when nothing changed', () => {
    const existing = settle({ pods: pods(250) });
    assert.deepEqual(counts(plan({ pods: pods(250), existing })), [0, 0, 0]);
  });

  it('updates exactly the one slice holding a pod whose readiness flipped', () => {
    const existing = settle({ pods: pods(250) });
    const flipped = pods(250).map((x, i) => (i === 137 ? p(137, { ready: false }) : x));
    const pl = plan({ pods: flipped, existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    const holder = existing.find((s) => ipsOf(s).includes(nthIP(137)))!;
    assert.equal(nameOf(pl.update[0]!), nameOf(holder));
    const e = pl.update[0]!.endpoints.find((x) => x.addresses[0] === nthIP(137));
    assert.deepEqual(e?.conditions, { ready: false, serving: false, terminating: false });
    assert.equal(pl.update[0]!.endpoints.length, holder.endpoints.length);
  });

  it('adds new pods to an untouched slice that can take them all, before creating one', () => {
    const existing = settle({ pods: pods(50) });
    const pl = plan({ pods: pods(60), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(pl.update[0]?.endpoints.length, 60);
  });

  it('creates a slice for new pods when no untouched slice can take them all', () => {
    const existing = settle({ pods: pods(50) });
    const pl = plan({ pods: pods(110), existing });
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.equal(pl.create[0]?.endpoints.length, 60);
  });

  it('picks the untouched slice the new pods leave closest to full', () => {
    const existing = [
      slice({ name: 'foo-a', endpoints: pods(50, 0).map((_, i) => podEp(i)) }),
      slice({ name: 'foo-b', endpoints: pods(80, 100).map((_, i) => podEp(100 + i)) }),
      slice({ name: 'foo-c', endpoints: pods(95, 200).map((_, i) => podEp(200 + i)) }),
    ];
    const all = [...pods(50, 0), ...pods(80, 100), ...pods(95, 200), ...pods(15, 400)];
    const pl = plan({ pods: all, existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(nameOf(pl.update[0]!), 'foo-b');
    assert.equal(pl.update[0]?.endpoints.length, 95);
  });

  it('picks the first untouched slice by name among equally good ones', () => {
    const existing = [
      slice({ name: 'foo-b', endpoints: pods(50, 100).map((_, i) => podEp(100 + i)) }),
      slice({ name: 'foo-a', endpoints: pods(50, 0).map((_, i) => podEp(i)) }),
    ];
    const pl = plan({ pods: [...pods(50, 0), ...pods(50, 100), ...pods(10, 400)], existing });
    assert.deepEqual(pl.update.map(nameOf), ['foo-a']);
  });

  it('fills slices being updated anyway, fullest first, before touching others', () => {
    const existing = [
      slice({ name: 'foo-a', endpoints: pods(91, 0).map((_, i) => podEp(i)) }),
      slice({ name: 'foo-b', endpoints: pods(51, 100).map((_, i) => podEp(100 + i)) }),
      slice({ name: 'foo-c', endpoints: pods(10, 200).map((_, i) => podEp(200 + i)) }),
    ];
    // pod0 and pod100 go away (a: 90, b: 50); 15 new pods arrive; foo-c stays untouched.
    const all = [...pods(90, 1), ...pods(50, 101), ...pods(10, 200), ...pods(15, 400)];
    const pl = plan({ pods: all, existing });
    assert.deepEqual(counts(pl), [0, 2, 0]);
    assert.deepEqual(
      pl.update.map((s) => [nameOf(s), s.endpoints.length]),
      [
        ['foo-a', 100],
        ['foo-b', 55],
      ],
    );
  });

  it('removes a deleted pod from its slice, and deletes a slice left empty while others remain', () => {
    const existing = [
      slice({ name: 'foo-a', endpoints: [podEp(0), podEp(1)] }),
      slice({ name: 'foo-b', endpoints: [podEp(2)] }),
    ];
    const pl = plan({ pods: [p(1)], existing });
    assert.deepEqual(counts(pl), [0, 1, 1]);
    assert.deepEqual(ipsOf(pl.update[0]!), [nthIP(1)]);
    assert.equal(nameOf(pl.delete[0]!), 'foo-b');
  });

  it('replaces the endpoint of a pod whose IP changed, in the same slice', () => {
    const existing = [slice({ name: 'foo-a', endpoints: [podEp(0), podEp(1)] })];
    const moved = pod({ name: 'pod1', ip: '10.9.9.9', nodeName: 'node-a' });
    const pl = plan({ pods: [p(0), moved], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(ipsOf(pl.update[0]!), [nthIP(0), '10.9.9.9']);
  });

  it('updates an endpoint whose node changed', () => {
    const existing = [slice({ endpoints: [podEp(0)] })];
    const pl = plan({ pods: [p(0, { nodeName: 'node-b' })], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(pl.update[0]?.endpoints, [podEp(0, { nodeName: 'node-b', zone: 'zone-b' })]);
  });

  it("updates an endpoint whose node's zone label changed", () => {
    const existing = [slice({ endpoints: [podEp(0)] })];
    const nodes = [node('node-a', { zone: 'zone-z' })];
    const pl = plan({ pods: [p(0)], nodes, existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(pl.update[0]?.endpoints, [podEp(0, { zone: 'zone-z' })]);
  });

  it('updates an endpoint whose serving or terminating condition alone changed', () => {
    const publishing = service({ publishNotReadyAddresses: true });
    const existing = [slice({ endpoints: [podEp(0)] })];
    const unready = plan({ service: publishing, pods: [p(0, { ready: false })], existing });
    assert.deepEqual(unready.update[0]?.endpoints[0]?.conditions, {
      ready: true,
      serving: false,
      terminating: false,
    });
    const leaving = plan({ service: publishing, pods: [p(0, { terminating: true })], existing });
    assert.deepEqual(leaving.update[0]?.endpoints[0]?.conditions, {
      ready: true,
      serving: true,
      terminating: true,
    });
  });

  it('replaces the endpoint of a pod that gained a hostname (hostname is part of its identity)', () => {
    const existing = [slice({ endpoints: [podEp(0), podEp(1)] })];
    const pl = plan({ pods: [p(0, { hostname: 'web-0', subdomain: 'foo' }), p(1)], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(
      pl.update[0]?.endpoints.map((e) => e.hostname),
      ['web-0', undefined],
    );
  });

  it('ignores a difference in targetRef.resourceVersion and in endpoint order', () => {
    const e0 = podEp(0, {
      targetRef: { kind: 'Pod', namespace: 'default', name: 'pod0', uid: 'uid-pod0', resourceVersion: '7' },
    });
    const existing = [slice({ endpoints: [podEp(1), e0] })];
    assert.deepEqual(counts(plan({ pods: [p(0), p(1)], existing })), [0, 0, 0]);
  });

  it('drops an endpoint listed twice, keeping it in the first slice by name', () => {
    const existing = [
      slice({ name: 'foo-a', endpoints: [podEp(0)] }),
      slice({ name: 'foo-b', endpoints: [podEp(0), podEp(1)] }),
    ];
    const pl = plan({ pods: [p(0), p(1)], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(nameOf(pl.update[0]!), 'foo-b');
    assert.deepEqual(ipsOf(pl.update[0]!), [nthIP(1)]);
  });

  it('updates every slice when only the Service labels changed', () => {
    const existing = settle({ pods: pods(5), maxEndpointsPerSlice: 2 });
    const pl = plan({
      service: service({ labels: { v: '2' } }),
      pods: pods(5),
      existing,
      maxEndpointsPerSlice: 2,
    });
    assert.deepEqual(counts(pl), [0, 3, 0]);
    for (const s of pl.update) assert.equal(s.metadata.labels?.['v'], '2');
  });

  it('does not write for a stale headless label alone (reserved labels are not compared)', () => {
    const existing = [slice({ endpoints: [podEp(0)], labels: { ...MANAGED, [LABEL_HEADLESS]: '' } })];
    assert.deepEqual(counts(plan({ pods: [p(0)], existing })), [0, 0, 0]);
  });

  it('gives the same plan whatever the order of existing slices and pods', () => {
    const existing = [
      slice({ name: 'foo-a', endpoints: [podEp(0), podEp(1)] }),
      slice({ name: 'foo-b', endpoints: [podEp(2)] }),
      slice({ name: 'foo-c', endpoints: [podEp(3)] }),
    ];
    const ps = [p(1), p(2, { ready: false }), ...pods(130, 10)];
    const a = plan({ pods: ps, existing });
    const b = plan({ pods: [...ps].reverse(), existing: [...existing].reverse() });
    assert.deepEqual(a, b);
  });
});

describe('planEndpointSlices: ports', () => {
  const named = (port?: number) =>
    port === undefined
      ? [{ name: 'c', ports: [] }]
      : [{ name: 'c', ports: [{ name: 'http', containerPort: port }] }];
  const svc = () => service({ ports: [{ name: 'web', port: 80, targetPort: 'http', protocol: 'TCP' }] });

  it('puts pods whose named target port resolves differently in different slices', () => {
    const pl = plan({
      service: svc(),
      pods: [
        p(0, { containers: named(8080) }),
        p(1, { containers: named(9090) }),
        p(2, { containers: named(8080) }),
        p(3, { containers: named() }),
      ],
    });
    const byPorts = pl.create.map((s) => [s.ports, ipsOf(s)]);
    assert.deepEqual(byPorts, [
      [[{ name: 'web', port: 8080, protocol: 'TCP' }], [nthIP(0), nthIP(2)]],
      [[{ name: 'web', port: 9090, protocol: 'TCP' }], [nthIP(1)]],
      [[], [nthIP(3)]],
    ]);
  });

  it('moves a pod to another slice when its port changes', () => {
    const existing = settle({
      service: svc(),
      pods: [p(0, { containers: named(8080) }), p(1, { containers: named(8080) })],
    });
    const pl = plan({
      service: svc(),
      pods: [p(0, { containers: named(8080) }), p(1, { containers: named(9090) })],
      existing,
    });
    assert.deepEqual(counts(pl), [1, 1, 0]);
    assert.deepEqual(ipsOf(pl.update[0]!), [nthIP(0)]);
    assert.deepEqual(ipsOf(pl.create[0]!), [nthIP(1)]);
  });

  it('rewrites slices in place, keeping their names, when the Service port changes', () => {
    const existing = settle({ pods: pods(5), maxEndpointsPerSlice: 2 });
    const changed = service({ ports: [{ name: 'http', port: 80, targetPort: 8443, protocol: 'TCP' }] });
    const pl = plan({ service: changed, pods: pods(5), existing, maxEndpointsPerSlice: 2 });
    assert.deepEqual(counts(pl), [0, 3, 0]);
    assert.deepEqual(pl.update.map(nameOf), existing.map(nameOf));
    for (const s of pl.update) assert.deepEqual(s.ports, [{ name: 'http', port: 8443, protocol: 'TCP' }]);
  });

  it('treats a slice listing the same ports in another order as the same port set', () => {
    const two = service({
      ports: [
        { name: 'a', port: 1, targetPort: 1001 },
        { name: 'b', port: 2, targetPort: 1002 },
      ],
    });
    const ports = [
      { name: 'a', port: 1001, protocol: 'TCP' },
      { name: 'b', port: 1002, protocol: 'TCP' },
    ];
    const existing = [
      slice({ name: 'foo-a', ports, endpoints: [podEp(0)] }),
      slice({ name: 'foo-b', ports: [...ports].reverse(), endpoints: [podEp(1)] }),
    ];
    assert.deepEqual(counts(plan({ service: two, pods: [p(0), p(1)], existing })), [0, 0, 0]);
  });

  it('writes name "" for an unnamed port, the Service protocol (TCP when absent) and appProtocol', () => {
    const pl = plan({
      service: service({
        ports: [
          { port: 53, targetPort: 5353, protocol: 'UDP', appProtocol: 'dns' },
          { name: 'b', port: 1 },
        ],
      }),
      pods: [p(0)],
    });
    assert.deepEqual(pl.create[0]?.ports, [
      { name: '', port: 5353, protocol: 'UDP', appProtocol: 'dns' },
      { name: 'b', port: 1, protocol: 'TCP' },
    ]);
  });

  it('publishes endpoints without ports for a Service without ports', () => {
    const pl = plan({
      service: service({ clusterIP: 'None', ports: [], ipFamilies: ['IPv4'] }),
      pods: [p(0)],
    });
    assert.deepEqual(pl.create[0]?.ports, []);
    assert.deepEqual(ipsOf(pl.create[0]!), [nthIP(0)]);
  });

  it('fills the placeholder in place for a Service without ports (same port set)', () => {
    const svcNoPorts = service({ clusterIP: 'None', ports: [], ipFamilies: ['IPv4'] });
    const existing = settle({ service: svcNoPorts });
    const pl = plan({ service: svcNoPorts, pods: [p(0)], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(nameOf(pl.update[0]!), nameOf(existing[0]!));
  });
});

describe('planEndpointSlices: address types', () => {
  const dual = ['10.0.0.1', 'fd00::1'];

  it('builds IPv4 and IPv6 slices for a dual-stack Service, one address type per slice', () => {
    const pl = plan({
      service: service({ ipFamilies: ['IPv4', 'IPv6'] }),
      pods: [p(0, { ip: dual }), p(1, { ip: ['10.0.0.2', 'fd00::2'] })],
    });
    assert.deepEqual(
      pl.create.map((s) => [s.addressType, ipsOf(s)]),
      [
        ['IPv4', ['10.0.0.1', '10.0.0.2']],
        ['IPv6', ['fd00::1', 'fd00::2']],
      ],
    );
    for (const s of pl.create) for (const e of s.endpoints) assert.equal(e.addresses.length, 1);
  });

  it('lists IPv4 first whatever the order of ipFamilies', () => {
    const pl = plan({ service: service({ ipFamilies: ['IPv6', 'IPv4'] }), pods: [p(0, { ip: dual })] });
    assert.deepEqual(
      pl.create.map((s) => s.addressType),
      ['IPv4', 'IPv6'],
    );
  });

  it('uses the family of the cluster IP for a Service without ipFamilies', () => {
    const pl = plan({ service: service({ clusterIP: 'fd00::10' }), pods: [p(0, { ip: dual })] });
    assert.deepEqual(
      pl.create.map((s) => [s.addressType, ipsOf(s)]),
      [['IPv6', ['fd00::1']]],
    );
  });

  it('plans both address types for a headless Service without ipFamilies', () => {
    const pl = plan({ service: service({ clusterIP: 'None' }), pods: [p(0)] });
    assert.deepEqual(
      pl.create.map((s) => [s.addressType, s.endpoints.length]),
      [
        ['IPv4', 1],
        ['IPv6', 0],
      ],
    );
  });

  it('deletes slices of an address type the Service no longer has', () => {
    const v6 = slice({
      name: 'foo-v6',
      addressType: 'IPv6',
      endpoints: [podEp(0, { addresses: ['fd00::1'] })],
    });
    const v4 = slice({ name: 'foo-v4', endpoints: [podEp(0, { addresses: ['10.0.0.1'] })] });
    const pl = plan({
      service: service({ ipFamilies: ['IPv4'] }),
      pods: [p(0, { ip: dual })],
      existing: [v4, v6],
    });
    assert.deepEqual(counts(pl), [0, 0, 1]);
    assert.equal(nameOf(pl.delete[0]!), 'foo-v6');
  });
});

describe('planEndpointSlices: which slices it touches', () => {
  it('leaves unmanaged slices alone: other controller, other Service, other namespace, being deleted', () => {
    const foreign = [
      slice({ name: 'mirror', managedBy: 'endpointslicemirroring-controller.k8s.io', endpoints: [podEp(7)] }),
      slice({ name: 'bar-1', service: 'bar', endpoints: [podEp(8)] }),
      {
        ...slice({ name: 'elsewhere', endpoints: [podEp(9)] }),
        metadata: { ...slice({ name: 'elsewhere' }).metadata, namespace: 'other' },
      },
      {
        ...slice({ name: 'going', endpoints: [podEp(9)] }),
        metadata: { ...slice({ name: 'going' }).metadata, deletionTimestamp: 'x' },
      },
    ];
    const pl = plan({ pods: [p(0)], existing: foreign });
    assert.deepEqual(counts(pl), [1, 0, 0]);
    assert.deepEqual(plan({ existing: foreign }).delete, []);
  });

  it('deletes a managed slice owned by an older Service of the same name, and creates its own', () => {
    const stale = slice({ name: 'foo-old', serviceUid: 'old-uid', endpoints: [podEp(0)] });
    const pl = plan({ pods: [p(0)], existing: [stale] });
    assert.deepEqual(counts(pl), [1, 0, 1]);
    assert.equal(pl.delete[0], stale);
  });

  it('does not create slices while the Service is being deleted', () => {
    const existing = [slice({ name: 'foo-a', endpoints: [podEp(0), podEp(1)] })];
    const pl = plan({ service: service({ deleting: true }), pods: [p(0), ...pods(150, 10)], existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(counts(plan({ service: service({ deleting: true }) })), [0, 0, 0]);
  });

  it('returns the existing objects, untouched, in delete', () => {
    const a = slice({ name: 'foo-a', endpoints: [podEp(0)] });
    const b = slice({ name: 'foo-b', endpoints: [podEp(1)] });
    const before = structuredClone([a, b]);
    const pl = plan({ pods: [p(0)], existing: [a, b] });
    assert.equal(pl.delete[0], b);
    assert.deepEqual([a, b], before);
  });
});

describe('planEndpointSlices: hints', () => {
  const zonePods = (zones: string[]) => zones.map((z, i) => p(i, { nodeName: `node-${z}` }));
  const hintsOf = (pl: EndpointSlicePlan | EndpointSlice[]): Array<[string, string[], string[]]> =>
    (Array.isArray(pl) ? pl : [...pl.create, ...pl.update]).flatMap((s) =>
      s.endpoints.map((e): [string, string[], string[]] => [
        e.addresses[0] ?? '',
        (e.hints?.forZones ?? []).map((z) => z.name),
        (e.hints?.forNodes ?? []).map((n) => n.name),
      ]),
    );
  const auto = { 'service.kubernetes.io/topology-mode': 'Auto' };

  it('topology-mode Auto: 3 zones with equal CPU and 2 endpoints each → every endpoint hinted to its zone', () => {
    const pl = plan({
      service: service({ annotations: auto }),
      pods: zonePods(['a', 'a', 'b', 'b', 'c', 'c']),
    });
    assert.deepEqual(
      hintsOf(pl).map(([, z]) => z),
      [['zone-a'], ['zone-a'], ['zone-b'], ['zone-b'], ['zone-c'], ['zone-c']],
    );
    assert.deepEqual(pl.events, [
      {
        type: 'Normal',
        reason: 'TopologyAwareHintsEnabled',
        message: 'Topology Aware Hints has been enabled, addressType: IPv4',
      },
    ]);
  });

  it('topology-mode Auto: redistributes from an over-allocated zone using node CPU', () => {
    const nodes = [
      node('node-a', { zone: 'zone-a', cpu: '3' }),
      node('node-b', { zone: 'zone-b', cpu: '1000m' }),
    ];
    const pl = plan({ service: service({ annotations: auto }), nodes, pods: zonePods(['a', 'b', 'b', 'b']) });
    assert.deepEqual(
      hintsOf(pl).map(([, z]) => z),
      [['zone-a'], ['zone-a'], ['zone-a'], ['zone-b']],
    );
  });

  it('topology-mode Auto: walks endpoints in sorted order, whatever order another writer left them in', () => {
    const nodes = [node('node-a', { zone: 'zone-a' }), node('node-b', { zone: 'zone-b' })];
    // Written by someone else, newest first; pod9 is new, so the slice is updated (filled).
    const existing = [slice({ endpoints: [4, 3, 2, 1, 0].map((i) => podEp(i)) })];
    const pl = plan({
      service: service({ annotations: auto }),
      nodes,
      pods: [...pods(5), p(9, { nodeName: 'node-b' })],
      existing,
    });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(
      hintsOf(pl).map(([ip, z]) => [ip, z]),
      [
        [nthIP(0), ['zone-b']],
        [nthIP(1), ['zone-b']],
        [nthIP(2), ['zone-a']],
        [nthIP(3), ['zone-a']],
        [nthIP(4), ['zone-a']],
        [nthIP(9), ['zone-b']],
      ],
    );
  });

  it('topology-mode Auto: no hints and a warning when a node has no zone', () => {
    const nodes = [...NODES, node('node-x')];
    const pl = plan({ service: service({ annotations: auto }), nodes, pods: zonePods(['a', 'b', 'c']) });
    assert.ok(hintsOf(pl).every(([, z]) => z.length === 0));
    assert.deepEqual(
      pl.events.map((e) => e.message),
      [
        'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4',
      ],
    );
  });

  it('accepts "auto" and the deprecated annotation, which wins when both are set', () => {
    assert.equal(topologyHintsEnabled({ 'service.kubernetes.io/topology-mode': 'auto' }), true);
    assert.equal(topologyHintsEnabled({ 'service.kubernetes.io/topology-aware-hints': 'Auto' }), true);
    assert.equal(topologyHintsEnabled({ 'service.kubernetes.io/topology-mode': 'AUTO' }), false);
    assert.equal(topologyHintsEnabled({ 'service.kubernetes.io/topology-mode': 'Disabled' }), false);
    assert.equal(
      topologyHintsEnabled({
        'service.kubernetes.io/topology-aware-hints': 'Disabled',
        'service.kubernetes.io/topology-mode': 'Auto',
      }),
      false,
    );
    assert.equal(
      topologyHintsEnabled({
        'service.kubernetes.io/topology-aware-hints': 'auto',
        'service.kubernetes.io/topology-mode': 'Disabled',
      }),
      true,
    );
    assert.equal(topologyHintsEnabled({}), false);
  });

  it('trafficDistribution PreferClose / PreferSameZone: ready endpoints hinted to their own zone', () => {
    for (const trafficDistribution of ['PreferClose', 'PreferSameZone']) {
      const pl = plan({
        service: service({ trafficDistribution }),
        pods: [p(0, { nodeName: 'node-b' }), p(1, { ready: false }), p(2)],
      });
      assert.deepEqual(hintsOf(pl), [
        [nthIP(0), ['zone-b'], []],
        [nthIP(1), [], []],
        [nthIP(2), ['zone-a'], []],
      ]);
      assert.deepEqual(pl.events, []);
    }
  });

  it('trafficDistribution PreferSameNode: ready endpoints hinted to their node and zone', () => {
    const pl = plan({
      service: service({ trafficDistribution: 'PreferSameNode' }),
      pods: [p(0, { nodeName: 'node-b' })],
    });
    assert.deepEqual(hintsOf(pl), [[nthIP(0), ['zone-b'], ['node-b']]]);
  });

  it('topology-mode Auto wins over trafficDistribution, also when it ends up giving no hints', () => {
    const both = service({ annotations: auto, trafficDistribution: 'PreferSameNode' });
    const pl = plan({ service: both, pods: zonePods(['a', 'b', 'c']) });
    assert.deepEqual(
      hintsOf(pl).map(([, z, n]) => [z, n]),
      [
        [['zone-a'], []],
        [['zone-b'], []],
        [['zone-c'], []],
      ],
    );
    const tooFew = plan({ service: both, pods: zonePods(['a', 'b']) });
    assert.ok(hintsOf(tooFew).every(([, z, n]) => z.length === 0 && n.length === 0));
  });

  it('removes hints when neither asks for them, and warns that topology hints were disabled', () => {
    const existing = settle({ service: service({ annotations: auto }), pods: zonePods(['a', 'b', 'c']) });
    const pl = plan({ pods: zonePods(['a', 'b', 'c']), existing, hintsPopulated: true });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(pl.hintsPopulated, false);
    assert.ok(hintsOf(pl).every(([, z]) => z.length === 0));
    assert.deepEqual(pl.events, [
      {
        type: 'Warning',
        reason: 'TopologyAwareHintsDisabled',
        message: 'Topology Aware Hints has been disabled, addressType: IPv4',
      },
    ]);
  });

  it('removes hints for an unknown trafficDistribution value', () => {
    const existing = settle({ service: service({ trafficDistribution: 'PreferClose' }), pods: pods(2) });
    const pl = plan({ service: service({ trafficDistribution: 'PreferNowhere' }), pods: pods(2), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.ok(hintsOf(pl).every(([, z]) => z.length === 0));
  });

  it('updates unchanged slices whose hints no longer match the trafficDistribution', () => {
    const existing = settle({ service: service({ trafficDistribution: 'PreferSameNode' }), pods: pods(2) });
    const pl = plan({ service: service({ trafficDistribution: 'PreferSameZone' }), pods: pods(2), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.deepEqual(
      hintsOf(pl).map(([, z, n]) => [z, n]),
      [
        [['zone-a'], []],
        [['zone-a'], []],
      ],
    );
  });

  it('does not rewrite a slice whose recomputed hints come out the same', () => {
    // node-x is not ready: its zone has no share, so the hint on its endpoint never validates and the
    // slice is re-hinted on every sync, to the same result.
    const nodes = [
      node('node-a', { zone: 'zone-a' }),
      node('node-b', { zone: 'zone-b' }),
      node('node-x', { zone: 'zone-x', ready: false }),
    ];
    const svc = service({ annotations: auto });
    const ps = [...zonePods(['a', 'a', 'a', 'b', 'b', 'b']), p(9, { nodeName: 'node-x' })];
    const existing = settle({ service: svc, nodes, pods: ps });
    assert.ok(hintsOf(existing).some(([, z]) => z[0] === 'zone-x'));
    assert.deepEqual(counts(plan({ service: svc, nodes, pods: ps, existing })), [0, 0, 0]);
  });

  it('does not re-announce hints that are already there', () => {
    const svc = service({ annotations: auto });
    const existing = settle({ service: svc, pods: zonePods(['a', 'a', 'b', 'b', 'c', 'c']) });
    const pl = plan({
      service: svc,
      pods: zonePods(['a', 'a', 'b', 'b', 'c', 'c', 'c']),
      existing,
      hintsPopulated: true,
    });
    assert.deepEqual(pl.events, []);
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.equal(pl.hintsPopulated, true);
  });

  it('says whether hints were allocated, for the next plan (the caller remembers it per Service)', () => {
    const svc = service({ annotations: auto });
    const first = plan({ service: svc, pods: zonePods(['a', 'b', 'c']) });
    assert.equal(first.hintsPopulated, true);
    assert.deepEqual(
      first.events.map((e) => e.reason),
      ['TopologyAwareHintsEnabled'],
    );
    // A zone without CPU information: the allocation fails, hints go, and the next plan knows.
    const failed = plan({ service: svc, pods: zonePods(['a', 'b', 'c']), nodes: [], hintsPopulated: true });
    assert.equal(failed.hintsPopulated, false);
    assert.equal(plan({ pods: zonePods(['a']) }).hintsPopulated, false);
  });

  it('removing trafficDistribution removes its hints without a TopologyAwareHintsDisabled event', () => {
    const existing = settle({
      service: service({ trafficDistribution: 'PreferClose' }),
      pods: zonePods(['a', 'b']),
    });
    assert.ok(existing.some((s) => (s as EndpointSlice).endpoints.some((e) => e.hints !== undefined)));
    const pl = plan({ pods: zonePods(['a', 'b']), existing });
    assert.deepEqual(counts(pl), [0, 1, 0]);
    assert.ok(hintsOf(pl).every(([, z]) => z.length === 0));
    assert.deepEqual(pl.events, []);
  });

  it('turning topology-mode off with trafficDistribution set warns once and switches to its hints', () => {
    const svc = service({ ipFamilies: ['IPv4', 'IPv6'], trafficDistribution: 'PreferClose' });
    const dual = ['a', 'b', 'c'].map((z, i) =>
      p(i, { nodeName: `node-${z}`, ip: [nthIP(i), `fd00::${i + 1}`] }),
    );
    const existing = settle({
      service: { ...svc, metadata: { ...svc.metadata, annotations: auto } },
      pods: dual,
    });
    const pl = plan({ service: svc, pods: dual, existing, hintsPopulated: true });
    assert.deepEqual(
      pl.events.map((e) => [e.reason, e.message]),
      [['TopologyAwareHintsDisabled', 'Topology Aware Hints has been disabled, addressType: IPv4']],
    );
    assert.equal(pl.hintsPopulated, false);
  });

  for (const [label, svc] of [
    ['topology-mode Auto', service({ annotations: auto })],
    ['PreferSameNode', service({ trafficDistribution: 'PreferSameNode' })],
  ] as const) {
    it(`${label}: planning again after applying the plan writes nothing`, () => {
      const ps = [...zonePods(['a', 'b', 'c', 'a', 'a', 'b']), p(20, { ready: false })];
      const existing = settle({ service: svc, pods: ps, maxEndpointsPerSlice: 3 });
      assert.deepEqual(
        counts(plan({ service: svc, pods: ps, existing, maxEndpointsPerSlice: 3 })),
        [0, 0, 0],
      );
    });
  }
});
