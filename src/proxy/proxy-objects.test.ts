// What the proxy's informers keep of each object must read, for everything the proxy reads, exactly as
// the object it was sent: the Service port states and the topology engine's Service (state.ts, rules.ts),
// a slice's endpoints as the index packs them and the Service it names (endpoints.ts, slice-service.ts),
// its trigger time (sync.ts), and a Node's labels and addresses (nodeHostIPs). Checked over generated
// objects carrying every field those readers look at, and noise they do not.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { LAST_CHANGE_TRIGGER_TIME_ANNOTATION } from '../core/endpointslices/types.js';
import { service, topoEp, view } from '../core/proxy/testing/builders.js';
import { HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL, servicePortStates } from '../core/proxy/state.js';
import { packedSliceOf, packSlice, unpackSlice } from '../core/topology/endpoints.js';
import { topologyService } from '../core/topology/rules.js';
import { sliceService } from '../core/topology/slice-service.js';
import {
  OPENYURT_KEYS,
  SUPEREDGE_KEYS,
  SVCPLANE_KEYS,
  TOPOLOGY_MODE,
  slice,
  sliceEndpoint,
} from '../core/topology/testing/builders.js';
import { proxyTransforms } from './proxy-objects.js';
import { nodeHostIPs } from './sync.js';

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const noise = {
  uid: '6c0c5a59-1f0a-4c84-9d2b-1b1b9f0f6b9e',
  creationTimestamp: '2026-01-01T00:00:00Z',
  generation: 3,
  finalizers: ['example.com/keep'],
  ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u' }],
  managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }],
};

const annotationsArb = fc.dictionary(
  fc.constantFrom(
    SVCPLANE_KEYS,
    SUPEREDGE_KEYS,
    OPENYURT_KEYS,
    TOPOLOGY_MODE,
    'service.kubernetes.io/topology-aware-hints',
    LAST_APPLIED,
    'example.com/other',
  ),
  fc.constantFrom('Auto', 'auto', '["kubernetes.io/hostname","*"]', 'kubernetes.io/zone', '{}'),
  { noNullPrototype: true },
);

const serviceArb = fc
  .record(
    {
      type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'),
      clusterIP: fc.constantFrom('10.96.0.10', 'None', ''),
      clusterIPs: fc.constantFrom(['10.96.0.10'], ['10.96.0.10', 'fd00::10']),
      ports: fc.constantFrom(
        [{ name: 'http', port: 80, protocol: 'TCP' }],
        [
          { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
          { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 },
        ],
      ),
      externalIPs: fc.constantFrom(['192.0.2.7']),
      lbIngress: fc.constantFrom(
        [{ ip: '198.51.100.1' }],
        [{ ip: '198.51.100.2', ipMode: 'Proxy' }],
        [{ hostname: 'lb' }],
      ),
      sessionAffinity: fc.constantFrom('ClientIP', 'None'),
      affinityTimeout: fc.constantFrom(60, 0),
      externalTrafficPolicy: fc.constantFrom('Local', 'Cluster'),
      internalTrafficPolicy: fc.constantFrom('Local', 'Cluster'),
      loadBalancerSourceRanges: fc.constantFrom(['10.0.0.0/8', ' 192.0.2.0/24 '], ['2001:db8::/32']),
      healthCheckNodePort: fc.constantFrom(32000),
      labels: fc.dictionary(
        fc.constantFrom(SERVICE_PROXY_NAME_LABEL, HEADLESS_LABEL, 'app'),
        fc.constant('x'),
        { noNullPrototype: true },
      ),
      annotations: annotationsArb,
      trafficDistribution: fc.constantFrom('PreferClose', 'PreferSameNode'),
      topologyKeys: fc.constantFrom(['kubernetes.io/hostname', '*']),
    },
    { requiredKeys: ['type', 'clusterIP', 'ports', 'labels', 'annotations'] },
  )
  .map(({ annotations, trafficDistribution, topologyKeys, ...o }) => {
    const svc = service(o) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    Object.assign(svc.metadata, noise, { annotations, resourceVersion: '12' });
    svc.spec['selector'] = { app: 'web' };
    if (trafficDistribution !== undefined) svc.spec['trafficDistribution'] = trafficDistribution;
    if (topologyKeys !== undefined) svc.spec['topologyKeys'] = topologyKeys;
    return svc as unknown as KObject;
  });

const endpointArb = fc
  .record(
    {
      address: fc.constantFrom('10.0.0.1', '10.0.0.2', 'fd00::1'),
      more: fc.boolean(),
      v1beta1: fc.boolean(),
      node: fc.constantFrom('n1', 'n2', ''),
      zone: fc.constantFrom('z1', 'z2'),
      ready: fc.boolean(),
      serving: fc.boolean(),
      terminating: fc.boolean(),
      forZones: fc.constantFrom(['z1'], ['z1', 'z2']),
      forNodes: fc.constantFrom(['n1']),
      topology: fc.constantFrom({ 'kubernetes.io/hostname': 'n1' }),
    },
    { requiredKeys: ['address', 'more', 'v1beta1'] },
  )
  .map(({ address, more, v1beta1, ...o }) => {
    const e = sliceEndpoint(address, o);
    if (v1beta1 && e['deprecatedTopology'] !== undefined) {
      e['topology'] = e['deprecatedTopology'];
      delete e['deprecatedTopology'];
    }
    if (more) e['addresses'] = [address, '10.0.9.9'];
    e['targetRef'] = { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u' };
    e['hostname'] = 'p';
    return e;
  });

const sliceArb = fc
  .record({
    endpoints: fc.array(endpointArb, { maxLength: 5 }),
    addressType: fc.constantFrom('IPv4' as const, 'IPv6' as const),
    ports: fc.constantFrom(
      [{ name: 'http', port: 8080, protocol: 'TCP' }],
      [{ port: 53, protocol: 'UDP' }],
      [],
    ),
    service: fc.constantFrom('web', 'db'),
    deleting: fc.boolean(),
    trigger: opt(fc.constant('2026-01-01T00:00:01Z')),
  })
  .map(({ endpoints, addressType, ports, service: svc, deleting, trigger }) => {
    const s = slice('web-abc12', endpoints, { addressType, ports, service: svc }) as {
      metadata: Record<string, unknown>;
    };
    Object.assign(s.metadata, noise, { resourceVersion: '7', generateName: 'web-' });
    (s.metadata['labels'] as Record<string, string>)['endpointslice.kubernetes.io/managed-by'] = 'c';
    s.metadata['annotations'] = {
      ...(trigger !== undefined ? { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: trigger } : {}),
      'example.com/other': 'x',
    };
    if (deleting) s.metadata['deletionTimestamp'] = '2026-01-01T00:00:02Z';
    return s as unknown as KObject;
  });

const nodeArb = fc
  .record({
    labels: fc.dictionary(
      fc.constantFrom('topology.kubernetes.io/zone', 'unit', 'kubernetes.io/hostname'),
      fc.constantFrom('a', 'b'),
      { noNullPrototype: true },
    ),
    addresses: fc.array(
      fc.record(
        {
          type: fc.constantFrom('InternalIP', 'ExternalIP', 'Hostname'),
          address: fc.constantFrom('192.0.2.1', '198.51.100.1', 'fd00::1', 'n1'),
        },
        { noNullPrototype: true },
      ),
      { maxLength: 4 },
    ),
  })
  .map(
    ({ labels, addresses }) =>
      ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n1', resourceVersion: '3', labels, ...noise },
        spec: { podCIDR: '10.244.0.0/24' },
        status: {
          addresses,
          conditions: [{ type: 'Ready', status: 'True' }],
          nodeInfo: { kubeletVersion: 'v1' },
        },
      }) as unknown as KObject,
  );

const VIEW = view(
  [topoEp('10.0.0.1', { node: 'n1' }), topoEp('10.0.0.2')],
  [topoEp('10.0.0.1', { node: 'n1' })],
);

describe('proxyTransforms', () => {
  it('a Service reads as it was sent: its port states, and the Service the topology rules see', () => {
    const t = proxyTransforms();
    fc.assert(
      fc.property(serviceArb, fc.constantFrom([], ['192.0.2.9'], ['10.1.2.3', 'fd00::9']), (svc, nodeIPs) => {
        const copy = structuredClone(svc);
        const kept = t.services(svc);
        assert.deepEqual(svc, copy, 'the object it was given is unchanged');
        assert.deepEqual(
          servicePortStates(kept, VIEW, 'n1', nodeIPs),
          servicePortStates(svc, VIEW, 'n1', nodeIPs),
        );
        assert.deepEqual(topologyService(kept), topologyService(svc));
        assert.equal(kept.metadata.resourceVersion, svc.metadata.resourceVersion);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps of a Service spec only what is read, and one list for Services with the same ports', () => {
    const t = proxyTransforms();
    const svc = (name: string, clusterIP: string, clusterIPs: string[]): KObject =>
      ({
        metadata: { name, namespace: 'default' },
        spec: {
          type: 'ClusterIP',
          clusterIP,
          clusterIPs,
          ipFamilies: ['IPv4'],
          ipFamilyPolicy: 'SingleStack',
          selector: { app: name },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', appProtocol: 'http' }],
        },
        status: { loadBalancer: {} },
      }) as unknown as KObject;
    type Kept = { spec: Record<string, unknown>; status?: unknown };
    const a = t.services(svc('a', '10.96.0.1', ['10.96.0.1'])) as unknown as Kept;
    const b = t.services(svc('b', '10.96.0.2', ['10.96.0.2', 'fd00::2'])) as unknown as Kept;
    assert.deepEqual(a.spec, {
      type: 'ClusterIP',
      clusterIP: '10.96.0.1',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    });
    assert.deepEqual(b.spec['clusterIPs'], ['10.96.0.2', 'fd00::2'], 'clusterIPs kept when they say more');
    assert.equal(a.spec['ports'], b.spec['ports'], 'one list of ports for both');
    assert.equal(a.status, undefined, 'an empty loadBalancer status is not kept');
  });

  it('keeps one list of endpoint conditions for the slices that have the same', () => {
    const t = proxyTransforms();
    const packed = (name: string, ...ready: boolean[]) =>
      packedSliceOf(
        t.slices(
          slice(
            name,
            ready.map((r, i) => sliceEndpoint(`10.0.${name.length}.${i + 1}`, { ready: r })),
          ) as unknown as KObject,
        ),
      );
    const a = packed('a', true, true);
    const b = packed('bb', true, true);
    const c = packed('ccc', true, false);
    assert.equal(a.conditions, b.conditions);
    assert.notEqual(a.conditions, c.conditions);
    assert.deepEqual(
      unpackSlice(c).endpoints.map((e) => e.ready),
      [true, false],
    );
  });

  it('a slice reads as it was sent: its endpoints as the index packs them, its Service and trigger time', () => {
    const t = proxyTransforms();
    fc.assert(
      fc.property(sliceArb, (s) => {
        const copy = structuredClone(s);
        const kept = t.slices(s);
        assert.deepEqual(s, copy, 'the object it was given is unchanged');
        // The proxy's index leaves targetRefs out (topology-feed.ts).
        assert.deepEqual(packedSliceOf(kept, { targetRefs: false }), packSlice(s, { targetRefs: false }));
        assert.equal(sliceService(kept), sliceService(s));
        assert.equal(
          kept.metadata.annotations?.[LAST_CHANGE_TRIGGER_TIME_ANNOTATION],
          s.metadata.annotations?.[LAST_CHANGE_TRIGGER_TIME_ANNOTATION],
        );
        assert.equal(kept.metadata.resourceVersion, s.metadata.resourceVersion);
        assert.equal(
          `${kept.metadata.namespace}/${kept.metadata.name}`,
          `${s.metadata.namespace}/${s.metadata.name}`,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('a Node reads as it was sent: its name, labels and addresses', () => {
    const t = proxyTransforms();
    fc.assert(
      fc.property(nodeArb, (n) => {
        const copy = structuredClone(n);
        const kept = t.nodes(n);
        assert.deepEqual(n, copy, 'the object it was given is unchanged');
        assert.deepEqual(nodeHostIPs(kept), nodeHostIPs(n));
        assert.deepEqual(kept.metadata.labels, n.metadata.labels);
        assert.equal(kept.metadata.name, n.metadata.name);
        assert.equal(kept.metadata.resourceVersion, n.metadata.resourceVersion);
      }),
      { numRuns: 100 },
    );
  });

  it('keeps nothing else: no managedFields, uid, owners, selector, other annotations, targetRefs or node status', () => {
    const t = proxyTransforms();
    const svc = fc.sample(serviceArb, { numRuns: 1, seed: 1 })[0]!;
    const s = t.services(svc) as unknown as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    assert.deepEqual(
      Object.keys(s.metadata).filter((k) => k in noise),
      [],
    );
    assert.equal(s.spec['selector'], undefined);
    assert.equal(
      (s.metadata['annotations'] as Record<string, string> | undefined)?.[LAST_APPLIED],
      undefined,
    );
    const sl = t.slices(fc.sample(sliceArb, { numRuns: 1, seed: 1 })[0]!) as unknown as Record<
      string,
      unknown
    > & {
      metadata: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(sl), ['metadata'], 'the endpoints are kept packed only');
    assert.deepEqual(
      Object.keys(sl.metadata).filter((k) => k in noise || k === 'generateName'),
      [],
    );
    assert.deepEqual(Object.keys(sl.metadata['labels'] as object), ['kubernetes.io/service-name']);
    const n = t.nodes(fc.sample(nodeArb, { numRuns: 1, seed: 1 })[0]!) as unknown as {
      status: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(n.status), ['addresses']);
  });
});
