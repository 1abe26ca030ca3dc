import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, keptEndpoints } from './decide.js';
import {
  endpointsFromEndpoints,
  endpointsFromSlices,
  PACKED_ENDPOINTS,
  packedSliceOf,
  packSlice,
} from './endpoints.js';
import { TopologyIndex } from './topology-index.js';
import type { TopologyView } from './view.js';
import { unhealthyOf, usablePoolsOf } from './view.js';
import {
  HOSTNAME_LABEL,
  OPENYURT_KEYS_ANNOTATION,
  OPENYURT_NODEPOOL_LABEL,
  ORDERED_KEYS_ANNOTATION,
  SUPEREDGE_KEYS_ANNOTATION,
  TOPOLOGY_MODE_ANNOTATION,
  ZONE_LABEL,
  topologyService,
} from './rules.js';
import type { Labels, Rule, TopologyEndpoint } from './types.js';

const CLIENT = 'n1';

// ---- JSON builders (Services, EndpointSlices, Endpoints as the API serves them) ----

interface SvcOpts {
  readonly annotations?: Record<string, string>;
  readonly topologyKeys?: readonly string[];
  readonly itp?: string;
  readonly etp?: string;
  readonly distribution?: string;
  readonly nodePort?: boolean;
}

function service(key: string, o: SvcOpts = {}): unknown {
  const [namespace, name] = key.split('/');
  return {
    metadata: { namespace, name, annotations: o.annotations ?? {} },
    spec: {
      ports: [{ port: 80, ...(o.nodePort === true ? { nodePort: 30080 } : {}) }],
      ...(o.topologyKeys !== undefined ? { topologyKeys: o.topologyKeys } : {}),
      ...(o.itp !== undefined ? { internalTrafficPolicy: o.itp } : {}),
      ...(o.etp !== undefined ? { externalTrafficPolicy: o.etp } : {}),
      ...(o.distribution !== undefined ? { trafficDistribution: o.distribution } : {}),
    },
  };
}

interface Ep {
  readonly ip: string;
  readonly node?: string;
  readonly zone?: string;
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
  readonly forZones?: readonly string[];
  readonly forNodes?: readonly string[];
}

function slice(name: string, eps: readonly Ep[], opts: { port?: number; deleting?: boolean } = {}): unknown {
  return {
    metadata: { name, ...(opts.deleting === true ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    addressType: 'IPv4',
    ports: [{ name: '', protocol: 'TCP', port: opts.port ?? 80 }],
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      conditions: {
        ...(e.ready !== undefined ? { ready: e.ready } : {}),
        ...(e.serving !== undefined ? { serving: e.serving } : {}),
        ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
      },
      ...(e.node !== undefined ? { nodeName: e.node } : {}),
      ...(e.zone !== undefined ? { zone: e.zone } : {}),
      ...(e.forZones !== undefined || e.forNodes !== undefined
        ? {
            hints: {
              ...(e.forZones !== undefined ? { forZones: e.forZones.map((z) => ({ name: z })) } : {}),
              ...(e.forNodes !== undefined ? { forNodes: e.forNodes.map((n) => ({ name: n })) } : {}),
            },
          }
        : {}),
    })),
  };
}

function legacyEndpoints(ready: readonly Ep[], notReady: readonly Ep[] = []): unknown {
  const addr = (e: Ep) => ({ ip: e.ip, ...(e.node !== undefined ? { nodeName: e.node } : {}) });
  return {
    subsets: [{ addresses: ready.map(addr), notReadyAddresses: notReady.map(addr), ports: [{ port: 80 }] }],
  };
}

const superedge = (keys: readonly string[]): SvcOpts => ({
  annotations: { [SUPEREDGE_KEYS_ANNOTATION]: JSON.stringify(keys) },
});

/** The addresses a view keeps for internal traffic. */
const internal = (idx: TopologyIndex, key: string): string[] | undefined =>
  idx.view(key)?.internal.map((e) => e.addresses[0]!);

/** Runs `f` and returns what it returned and how many views it recomputed. */
function counting(idx: TopologyIndex, f: () => string[]): { changed: string[]; recomputed: number } {
  const before = idx.recomputed;
  const changed = f();
  return { changed: [...changed].sort(), recomputed: idx.recomputed - before };
}

describe('TopologyIndex', () => {
  it("recomputes on another node's label change only the Services with endpoints there, and only when equality with this node's value flips", () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', { unit: 'u1', [ZONE_LABEL]: 'z1' });
    idx.setNode('n2', { unit: 'u1', [ZONE_LABEL]: 'z1' });
    idx.setNode('n3', { unit: 'u2', [ZONE_LABEL]: 'z2' });
    idx.setService('ns/a', service('ns/a', superedge(['unit', 'rack'])));
    idx.setSlice(
      'ns/a',
      'a1',
      slice('a1', [
        { ip: '10.0.0.2', node: 'n2' },
        { ip: '10.0.0.3', node: 'n3' },
      ]),
    );
    idx.setService('ns/b', service('ns/b', superedge(['unit'])));
    idx.setSlice('ns/b', 'b1', slice('b1', [{ ip: '10.0.1.3', node: 'n3' }]));
    idx.setService('ns/c', service('ns/c'));
    idx.setSlice('ns/c', 'c1', slice('c1', [{ ip: '10.0.2.1', node: 'n1' }]));
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.2']);
    assert.deepEqual(internal(idx, 'ns/b'), []);

    // u2 -> u3: both differ from this node's u1
    assert.deepEqual(
      counting(idx, () => idx.setNode('n3', { unit: 'u3', [ZONE_LABEL]: 'z2' })),
      { changed: [], recomputed: 0 },
    );
    // a key no rule reads, and a key this node lacks (rack)
    assert.deepEqual(
      counting(idx, () => idx.setNode('n3', { unit: 'u3', [ZONE_LABEL]: 'z2', other: 'x', rack: 'r1' })),
      { changed: [], recomputed: 0 },
    );
    // n2 leaves u1: only ns/a has endpoints on n2
    assert.deepEqual(
      counting(idx, () => idx.setNode('n2', { unit: 'u2', [ZONE_LABEL]: 'z1' })),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), []);
    // n3 joins u1: ns/a and ns/b have endpoints on n3, ns/c does not
    assert.deepEqual(
      counting(idx, () => idx.setNode('n3', { unit: 'u1', [ZONE_LABEL]: 'z2' })),
      { changed: ['ns/a', 'ns/b'], recomputed: 2 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.3']);
    assert.deepEqual(internal(idx, 'ns/b'), ['10.0.1.3']);
    // a node with no endpoints on it
    assert.deepEqual(
      counting(idx, () => idx.setNode('n4', { unit: 'u1' })),
      { changed: [], recomputed: 0 },
    );
  });

  it("recomputes on this node's label change the Services whose rules read the changed key", () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', { unit: 'u1', [HOSTNAME_LABEL]: 'n1', [ZONE_LABEL]: 'z1' });
    idx.setNode('n2', { unit: 'u1', [HOSTNAME_LABEL]: 'n2', [ZONE_LABEL]: 'z1' });
    const eps = [
      { ip: '10.0.0.1', node: 'n1' },
      { ip: '10.0.0.2', node: 'n2' },
    ];
    idx.setService('ns/a', service('ns/a', superedge(['unit'])));
    idx.setSlice('ns/a', 's', slice('s', eps));
    idx.setService('ns/b', service('ns/b', { topologyKeys: [HOSTNAME_LABEL, '*'] }));
    idx.setSlice('ns/b', 's', slice('s', eps));
    idx.setService('ns/c', service('ns/c', { itp: 'Local' }));
    idx.setSlice('ns/c', 's', slice('s', eps));
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1', '10.0.0.2']);
    assert.deepEqual(internal(idx, 'ns/b'), ['10.0.0.1']);
    assert.deepEqual(internal(idx, 'ns/c'), ['10.0.0.1']);

    assert.deepEqual(
      counting(idx, () => idx.setNode('n1', { unit: 'u2', [HOSTNAME_LABEL]: 'n1', [ZONE_LABEL]: 'z1' })),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1']);
    assert.deepEqual(
      counting(idx, () => idx.setNode('n1', { unit: 'u2', [HOSTNAME_LABEL]: 'n2', [ZONE_LABEL]: 'z1' })),
      { changed: ['ns/b'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/b'), ['10.0.0.1', '10.0.0.2']); // n1 (this node) now says n2 too
    assert.deepEqual(
      counting(idx, () =>
        idx.setNode('n1', { unit: 'u2', [HOSTNAME_LABEL]: 'n2', [ZONE_LABEL]: 'z1', other: 'x' }),
      ),
      { changed: [], recomputed: 0 },
    );
  });

  it('recomputes on a node appearing or disappearing the Services with endpoints on it, and every Service for this node', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', { unit: 'u1' });
    idx.setService('ns/a', service('ns/a', superedge(['unit'])));
    idx.setSlice('ns/a', 's', slice('s', [{ ip: '10.0.0.4', node: 'n4' }]));
    idx.setService('ns/b', service('ns/b', superedge(['unit'])));
    idx.setSlice('ns/b', 's', slice('s', [{ ip: '10.0.1.1', node: 'n1' }]));
    idx.setService('ns/c', service('ns/c'));
    assert.deepEqual(internal(idx, 'ns/a'), []);

    assert.deepEqual(
      counting(idx, () => idx.setNode('n4', { unit: 'u1' })),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.4']);
    assert.deepEqual(
      counting(idx, () => idx.setNode('n4', undefined)),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), []);

    // this node: every Service; superedge keeps nothing for an unknown client
    assert.deepEqual(
      counting(idx, () => idx.setNode('n1', undefined)),
      { changed: ['ns/b'], recomputed: 3 },
    );
    assert.deepEqual(internal(idx, 'ns/b'), []);
    assert.deepEqual(
      counting(idx, () => idx.setNode('n1', { unit: 'u1' })),
      { changed: ['ns/b'], recomputed: 3 },
    );
    assert.deepEqual(internal(idx, 'ns/b'), ['10.0.1.1']);
  });

  it('changes nothing when a node that is not known is removed', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setService('ns/a', service('ns/a', superedge(['unit'])));
    idx.setSlice('ns/a', 's', slice('s', [{ ip: '10.0.0.4', node: 'n4' }]));
    assert.deepEqual(idx.setNode('n4', undefined), []);
    assert.deepEqual(idx.setNode(CLIENT, undefined), []);
  });

  it('recomputes a Service on setService, setSlice and setEndpoints, using legacy Endpoints only while it has no slices', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', {});
    assert.deepEqual(idx.setSlice('ns/a', 's1', slice('s1', [{ ip: '10.0.0.1' }])), []); // no Service yet
    assert.equal(idx.view('ns/a'), undefined);
    assert.deepEqual(idx.setService('ns/a', service('ns/a')), ['ns/a']);
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1']);
    assert.deepEqual(idx.setService('ns/a', service('ns/a')), []); // same Service
    assert.deepEqual(idx.view('ns/a')?.internalRule.kind, 'none');

    // legacy Endpoints are ignored while slices exist
    assert.deepEqual(idx.setEndpoints('ns/a', legacyEndpoints([{ ip: '10.9.0.1' }])), []);
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1']);
    // a second slice, and a duplicate address across slices
    assert.deepEqual(
      idx.setSlice('ns/a', 's2', slice('s2', [{ ip: '10.0.0.1' }, { ip: '10.0.0.2', ready: false }])),
      [],
    );
    assert.deepEqual(idx.setSlice('ns/a', 's2', slice('s2', [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }])), [
      'ns/a',
    ]);
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1', '10.0.0.2']);
    // 10.0.0.1 now comes from s2 only: the same addresses, but its slice changed, so the view did too
    assert.deepEqual(idx.setSlice('ns/a', 's1', undefined), ['ns/a']);
    assert.deepEqual(idx.setSlice('ns/a', 's2', undefined), ['ns/a']);
    assert.deepEqual(internal(idx, 'ns/a'), ['10.9.0.1']); // back to the legacy Endpoints
    assert.deepEqual(
      idx.setEndpoints('ns/a', legacyEndpoints([{ ip: '10.9.0.1' }], [{ ip: '10.9.0.2' }])),
      [],
    );
    assert.deepEqual(idx.setEndpoints('ns/a', undefined), ['ns/a']);
    assert.deepEqual(internal(idx, 'ns/a'), []);

    // a rule change that changes the view, and one that changes only the rule
    idx.setSlice(
      'ns/a',
      's1',
      slice('s1', [
        { ip: '10.0.0.1', node: 'n1' },
        { ip: '10.0.0.2', node: 'n2' },
      ]),
    );
    assert.deepEqual(idx.setService('ns/a', service('ns/a', { itp: 'Local' })), ['ns/a']);
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.1']);
    assert.deepEqual(idx.view('ns/a')?.internalRule.kind, 'local');
    assert.deepEqual(idx.setService('ns/a', service('ns/a', { distribution: 'PreferClose' })), ['ns/a']);
    assert.deepEqual(idx.view('ns/a')?.internalRule.kind, 'hints');
    // external traffic appears with a node port
    assert.deepEqual(
      idx.setService('ns/a', service('ns/a', { distribution: 'PreferClose', nodePort: true })),
      ['ns/a'],
    );
    assert.deepEqual(
      idx.view('ns/a')?.external?.map((e) => e.addresses[0]),
      ['10.0.0.1', '10.0.0.2'],
    );
  });

  it('usablePools: the pools with a usable endpoint anywhere; a change there is a changed view', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', {});
    idx.setNode('n2', {});
    idx.setService('ns/a', service('ns/a', { itp: 'Local' }));
    const remote = (e: Partial<Ep>) => slice('s', [{ ip: '10.0.0.2', node: 'n2', ...e }]);
    idx.setSlice('ns/a', 's', remote({}));
    const pools = () => idx.view('ns/a')?.usablePools;
    // Local policy, the only endpoint on another node: none kept, but the port has one in the cluster
    assert.deepEqual(internal(idx, 'ns/a'), []);
    assert.equal(pools()?.length, 1);
    const [pool] = pools()!;
    // not ready and not serving: nothing usable anywhere; the kept endpoints did not change, the view did
    assert.deepEqual(idx.setSlice('ns/a', 's', remote({ ready: false, serving: false })), ['ns/a']);
    assert.deepEqual(pools(), []);
    // serving and terminating counts (kube-proxy's fallback), serving alone does not
    assert.deepEqual(idx.setSlice('ns/a', 's', remote({ ready: false, serving: true })), []);
    assert.deepEqual(idx.setSlice('ns/a', 's', remote({ ready: false, serving: true, terminating: true })), [
      'ns/a',
    ]);
    assert.deepEqual(pools(), [pool]);
    // a node marked unhealthy takes its endpoints out; health back brings them in
    idx.setSlice('ns/a', 's', remote({}));
    assert.deepEqual(idx.setHealth('n2', false), ['ns/a']);
    assert.deepEqual(pools(), []);
    assert.deepEqual(idx.setHealth('n2', undefined), ['ns/a']);
    assert.deepEqual(pools(), [pool]);
    // one pool per address family and port set, each once
    idx.setSlice('ns/a', 't', slice('t', [{ ip: '10.0.0.3', node: 'n2' }], { port: 8080 }));
    idx.setSlice('ns/a', 'u', slice('u', [{ ip: '10.0.0.4', node: 'n1' }], { port: 8080 }));
    assert.equal(pools()?.length, 2);
    assert.ok(pools()!.includes(pool!));
    // a strict topology rule's choice is all there is for this node: keeping nothing leaves no pool
    idx.setNode('n1', { unit: 'a' });
    idx.setNode('n2', { unit: 'b' });
    idx.setSlice('ns/a', 't', undefined);
    idx.setSlice('ns/a', 'u', undefined);
    assert.deepEqual(idx.setService('ns/a', service('ns/a', superedge(['unit']))), ['ns/a']);
    assert.deepEqual([internal(idx, 'ns/a'), pools()], [[], []]);
    assert.deepEqual(idx.setNode('n2', { unit: 'a' }), ['ns/a']);
    assert.deepEqual([internal(idx, 'ns/a'), pools()], [['10.0.0.2'], [pool]]);
  });

  it('drops the endpoints of a node whose health is false; true and undefined are alike', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', {});
    idx.setService('ns/a', service('ns/a'));
    idx.setSlice(
      'ns/a',
      's',
      slice('s', [
        { ip: '10.0.0.2', node: 'n2' },
        { ip: '10.0.0.3', node: 'n3' },
      ]),
    );
    idx.setService('ns/b', service('ns/b'));
    idx.setSlice('ns/b', 's', slice('s', [{ ip: '10.0.1.3', node: 'n3' }]));

    assert.deepEqual(
      counting(idx, () => idx.setHealth('n2', false)),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.3']);
    assert.deepEqual(
      counting(idx, () => idx.setHealth('n2', true)),
      { changed: ['ns/a'], recomputed: 1 },
    );
    assert.deepEqual(internal(idx, 'ns/a'), ['10.0.0.2', '10.0.0.3']);
    assert.deepEqual(
      counting(idx, () => idx.setHealth('n2', undefined)),
      { changed: [], recomputed: 0 },
    );
    assert.deepEqual(
      counting(idx, () => idx.setHealth('n9', false)),
      { changed: [], recomputed: 0 },
    );
    // every endpoint unhealthy: the view is empty, not the whole list
    assert.deepEqual(
      counting(idx, () => idx.setHealth('n3', false)),
      {
        changed: ['ns/a', 'ns/b'],
        recomputed: 2,
      },
    );
    assert.deepEqual(internal(idx, 'ns/b'), []);
  });

  it('names the slices it holds for a Service, with or without the Service', () => {
    const idx = new TopologyIndex(CLIENT);
    assert.deepEqual([...idx.sliceNames('ns/a')], []);
    idx.setSlice('ns/a', 's1', slice('s1', [{ ip: '10.0.0.2', node: 'n2' }]));
    idx.setSlice('ns/a', 's2', slice('s2', [{ ip: '10.0.0.3', node: 'n2' }]));
    idx.setSlice('ns/b', 's1', slice('s1', [{ ip: '10.0.0.4', node: 'n2' }]));
    assert.deepEqual([...idx.sliceNames('ns/a')].sort(), ['s1', 's2']);
    idx.setService('ns/a', service('ns/a'));
    idx.setSlice('ns/a', 's1', undefined);
    assert.deepEqual([...idx.sliceNames('ns/a')], ['s2']);
    assert.deepEqual([...idx.sliceNames('ns/b')], ['s1']);
    idx.setSlice('ns/b', 's1', undefined);
    assert.deepEqual([...idx.sliceNames('ns/b')], []);
  });

  it('takes a slice that carries its endpoints packed as it takes the slice itself, keeping those arrays', () => {
    const eps: Ep[] = [
      { ip: '10.0.0.2', node: 'n2', zone: 'z1', forZones: ['z1'] },
      { ip: '10.0.0.3', node: CLIENT, ready: false, serving: true, terminating: true },
    ];
    const raw = new TopologyIndex(CLIENT, { targetRefs: false });
    const pre = new TopologyIndex(CLIENT, { targetRefs: false });
    for (const idx of [raw, pre]) idx.setService('ns/a', service('ns/a', superedge([HOSTNAME_LABEL, '*'])));
    const packed = packSlice(slice('s1', eps), { targetRefs: false });
    for (const idx of [raw, pre]) idx.setNode(CLIENT, { [HOSTNAME_LABEL]: CLIENT });
    raw.setSlice('ns/a', 's1', slice('s1', eps));
    pre.setSlice('ns/a', 's1', { metadata: { name: 's1' }, [PACKED_ENDPOINTS]: packed });
    assert.deepEqual(pre.view('ns/a')?.internal, raw.view('ns/a')?.internal);
    assert.deepEqual(internal(pre, 'ns/a'), ['10.0.0.3']);
    assert.equal(packedSliceOf({ [PACKED_ENDPOINTS]: packed }), packed, 'held as it is, not copied');
  });

  it('forgets a Service once its Service, slices and Endpoints are all removed', () => {
    const idx = new TopologyIndex(CLIENT);
    idx.setNode('n1', {});
    idx.setService('ns/a', service('ns/a'));
    idx.setSlice('ns/a', 's', slice('s', [{ ip: '10.0.0.2', node: 'n2' }]));
    idx.setEndpoints('ns/a', legacyEndpoints([{ ip: '10.0.0.2', node: 'n2' }]));
    assert.equal(idx.stats().services, 1);
    assert.deepEqual(idx.setService('ns/a', undefined), ['ns/a']);
    assert.equal(idx.view('ns/a'), undefined);
    assert.equal(idx.decision('ns/a'), undefined);
    assert.deepEqual([...idx.views()], []);
    assert.equal(idx.stats().services, 1);
    assert.deepEqual(idx.setSlice('ns/a', 's', undefined), []);
    assert.equal(idx.stats().services, 1);
    assert.deepEqual(idx.setEndpoints('ns/a', undefined), []);
    assert.deepEqual(idx.stats(), { services: 0, nodes: 1, endpoints: 0, keys: 0, nodeRefs: 0 });
    // nothing is left indexed by node either
    assert.deepEqual(
      counting(idx, () => idx.setHealth('n2', false)),
      { changed: [], recomputed: 0 },
    );
    // removing what was never there creates nothing
    assert.deepEqual(idx.setService('ns/z', undefined), []);
    assert.equal(idx.stats().services, 0);
  });
});

// ---- The key property: incremental views equal from-scratch ones, and each call reports exactly the
// Services whose view changed. ----

const SERVICES = ['ns/a', 'ns/b', 'ns/c'];
const SLICES = ['s1', 's2', 's3'];
const NODES = ['n1', 'n2', 'n3', 'n4'];
const EP_NODES = [...NODES, 'ghost'];
const KEYS = ['unit', ZONE_LABEL, HOSTNAME_LABEL, OPENYURT_NODEPOOL_LABEL, 'other'];
const VALUES = ['a', 'b'];
const IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const labelsArb: fc.Arbitrary<Labels> = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), {
  maxKeys: 5,
});

/** Local policies override the other rules, so they are rare. */
const rarely = fc.constantFrom(false, false, false, true);
const svcOptsArb: fc.Arbitrary<SvcOpts> = fc
  .tuple(
    fc.oneof(
      fc.constant<SvcOpts>({}),
      fc
        .tuple(fc.shuffledSubarray(KEYS.slice(0, 4), { minLength: 1 }), fc.boolean())
        .map(([k, star]): SvcOpts => ({ topologyKeys: star ? [...k, '*'] : k })),
      fc.tuple(fc.shuffledSubarray(KEYS.slice(0, 4)), fc.boolean()).map(([k, star]): SvcOpts => ({
        annotations: { [ORDERED_KEYS_ANNOTATION]: JSON.stringify(star ? [...k, '*'] : k) },
      })),
      fc.shuffledSubarray(KEYS, { minLength: 1 }).map(superedge),
      fc
        .constantFrom(HOSTNAME_LABEL, 'openyurt.io/nodepool', 'kubernetes.io/zone')
        .map((v): SvcOpts => ({ annotations: { [OPENYURT_KEYS_ANNOTATION]: v } })),
      fc.constant<SvcOpts>({ distribution: 'PreferClose' }),
      fc.constant<SvcOpts>({ annotations: { [TOPOLOGY_MODE_ANNOTATION]: 'Auto' } }),
    ),
    rarely,
    rarely,
    fc.boolean(),
  )
  .map(([o, itp, etp, nodePort]) => ({
    ...o,
    ...(itp ? { itp: 'Local' } : {}),
    ...(etp ? { etp: 'Local' } : {}),
    nodePort,
  }));

const epArb: fc.Arbitrary<Ep> = fc
  .record({
    ip: fc.constantFrom(...IPS),
    node: opt(fc.constantFrom(...EP_NODES)),
    zone: opt(fc.constantFrom(...VALUES)),
    ready: opt(fc.boolean()),
    serving: opt(fc.boolean()),
    terminating: opt(fc.boolean()),
    forZones: opt(fc.subarray(VALUES)),
    forNodes: opt(fc.subarray(NODES)),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as Ep);

type Op =
  | { readonly op: 'node'; readonly name: string; readonly labels: Labels | undefined }
  | { readonly op: 'service'; readonly key: string; readonly svc: SvcOpts | undefined }
  | { readonly op: 'slice'; readonly key: string; readonly name: string; readonly value: unknown }
  | { readonly op: 'endpoints'; readonly key: string; readonly value: unknown }
  | { readonly op: 'health'; readonly name: string; readonly healthy: boolean | undefined };

const svcKey = fc.constantFrom(...SERVICES);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('node' as const),
      name: fc.constantFrom(...NODES),
      labels: opt(labelsArb),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({ op: fc.constant('service' as const), key: svcKey, svc: opt(svcOptsArb) }),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({
        key: svcKey,
        name: fc.constantFrom(...SLICES),
        eps: opt(fc.array(epArb, { maxLength: 4 })),
        port: fc.constantFrom(80, 81),
        deleting: fc.boolean(),
      })
      .map(({ key, name, eps, port, deleting }): Op => ({
        op: 'slice',
        key,
        name,
        value: eps === undefined ? undefined : slice(name, eps, { port, deleting: deleting && port === 81 }),
      })),
    weight: 3,
  },
  {
    arbitrary: fc
      .record({
        key: svcKey,
        eps: opt(fc.tuple(fc.array(epArb, { maxLength: 3 }), fc.array(epArb, { maxLength: 2 }))),
      })
      .map(({ key, eps }): Op => ({
        op: 'endpoints',
        key,
        value: eps === undefined ? undefined : legacyEndpoints(...eps),
      })),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('health' as const),
      name: fc.constantFrom(...EP_NODES),
      healthy: opt(fc.boolean()),
    }),
    weight: 1,
  },
);

/** A start that has something to change: every node, and every Service with a rule and endpoints. */
const setupArb: fc.Arbitrary<Op[]> = fc
  .tuple(
    fc.tuple(...NODES.map(() => labelsArb)),
    fc.tuple(...SERVICES.map(() => fc.tuple(svcOptsArb, fc.array(epArb, { minLength: 1, maxLength: 4 })))),
  )
  .map(([nodes, svcs]) => [
    ...nodes.map((labels, i): Op => ({ op: 'node', name: NODES[i]!, labels })),
    ...svcs.flatMap(([svc, eps], i): Op[] => {
      const key = SERVICES[i]!;
      return [
        { op: 'service', key, svc },
        { op: 'slice', key, name: 's1', value: slice('s1', eps) },
      ];
    }),
  ]);

/** The state the index was fed, kept plainly. */
class Model {
  readonly nodes = new Map<string, Labels>();
  readonly services = new Map<string, unknown>();
  readonly slices = new Map<string, Map<string, unknown>>();
  readonly legacy = new Map<string, unknown>();
  readonly health = new Map<string, boolean>();

  apply(o: Op): void {
    const set = <K, V>(m: Map<K, V>, k: K, v: V | undefined) => (v === undefined ? m.delete(k) : m.set(k, v));
    switch (o.op) {
      case 'node':
        set(this.nodes, o.name, o.labels);
        break;
      case 'service':
        set(this.services, o.key, o.svc === undefined ? undefined : service(o.key, o.svc));
        break;
      case 'slice': {
        const m = this.slices.get(o.key) ?? new Map<string, unknown>();
        set(m, o.name, o.value);
        this.slices.set(o.key, m);
        break;
      }
      case 'endpoints':
        set(this.legacy, o.key, o.value);
        break;
      case 'health':
        set(this.health, o.name, o.healthy);
        break;
    }
  }

  /** A from-scratch view, straight from decide(). */
  view(key: string): string | undefined {
    const svc = this.services.get(key);
    if (svc === undefined) return undefined;
    const slices = [...(this.slices.get(key)?.values() ?? [])];
    const legacy = this.legacy.get(key);
    const endpoints =
      slices.length > 0
        ? endpointsFromSlices(slices)
        : legacy !== undefined
          ? endpointsFromEndpoints(legacy)
          : [];
    const d = decide({
      service: topologyService(svc as { metadata?: unknown }),
      endpoints,
      nodeLabels: (n) => this.nodes.get(n),
      node: CLIENT,
      health: (n) => this.health.get(n),
    });
    return render({
      internal: keptEndpoints(d.internal),
      internalRule: d.internal.rule,
      ...(d.external !== undefined
        ? { external: keptEndpoints(d.external), externalRule: d.external.rule }
        : {}),
      usablePools: usablePoolsOf(
        d.internal.rule.kind === 'local' || d.external?.rule.kind === 'local'
          ? endpoints
          : [...keptEndpoints(d.internal), ...(d.external !== undefined ? keptEndpoints(d.external) : [])],
        (n) => this.health.get(n),
      ),
      unhealthy: unhealthyOf(endpoints, (n) => this.health.get(n)),
    });
  }

  /** Whether the index should still hold an entry for `key`. */
  known(key: string): boolean {
    return this.services.has(key) || (this.slices.get(key)?.size ?? 0) > 0 || this.legacy.has(key);
  }
}

function apply(idx: TopologyIndex, o: Op): string[] {
  switch (o.op) {
    case 'node':
      return idx.setNode(o.name, o.labels);
    case 'service':
      return idx.setService(o.key, o.svc === undefined ? undefined : service(o.key, o.svc));
    case 'slice':
      return idx.setSlice(o.key, o.name, o.value);
    case 'endpoints':
      return idx.setEndpoints(o.key, o.value);
    case 'health':
      return idx.setHealth(o.name, o.healthy);
  }
}

/** What a view serves: kept endpoints (all of each), and the rules, per kind of traffic. */
function render(v: Omit<TopologyView, 'key'> | undefined): string | undefined {
  if (v === undefined) return undefined;
  const eps = (l: readonly TopologyEndpoint[] | undefined) => l?.map((e) => JSON.stringify(e));
  const rule = (r: Rule | undefined) => (r === undefined ? undefined : [r.kind, r.source, r.keys]);
  return JSON.stringify({
    internal: eps(v.internal),
    internalRule: rule(v.internalRule),
    external: eps(v.external) ?? null,
    externalRule: rule(v.externalRule) ?? null,
    usablePools: v.usablePools ?? null,
    unhealthy:
      v.unhealthy === undefined ? null : [[...v.unhealthy.ids].sort(), [...v.unhealthy.addresses].sort()],
  });
}

function feed(model: Model): TopologyIndex {
  const idx = new TopologyIndex(CLIENT);
  for (const [n, l] of model.nodes) idx.setNode(n, l);
  for (const [n, h] of model.health) idx.setHealth(n, h);
  for (const [k, s] of model.services) idx.setService(k, s);
  for (const [k, m] of model.slices) for (const [n, s] of m) idx.setSlice(k, n, s);
  for (const [k, e] of model.legacy) idx.setEndpoints(k, e);
  return idx;
}

describe('TopologyIndex (property)', () => {
  it('keeps every view equal to a from-scratch one, and each call returns exactly the Services whose view changed', () => {
    fc.assert(
      fc.property(fc.tuple(setupArb, fc.array(opArb, { maxLength: 30, size: 'max' })), ([setup, rest]) => {
        const ops = [...setup, ...rest];
        const idx = new TopologyIndex(CLIENT);
        const model = new Model();
        let before = new Map(SERVICES.map((k) => [k, model.view(k)]));
        ops.forEach((o, i) => {
          const returned = apply(idx, o);
          model.apply(o);
          const after = new Map(SERVICES.map((k) => [k, model.view(k)]));
          const at = `after op ${i} ${JSON.stringify(o)}`;
          assert.equal(new Set(returned).size, returned.length, `${at}: duplicate keys`);
          assert.deepEqual(
            [...returned].sort(),
            SERVICES.filter((k) => before.get(k) !== after.get(k)),
            `${at}: returned keys`,
          );
          for (const k of SERVICES) assert.equal(render(idx.view(k)), after.get(k), `${at}: view of ${k}`);
          before = after;
        });
        // (a) also against a fresh index fed the final state
        const fresh = feed(model);
        for (const k of SERVICES)
          assert.equal(render(idx.view(k)), render(fresh.view(k)), `fresh view of ${k}`);
        assert.deepEqual(
          [...idx.views()].map((v) => v.key).sort(),
          SERVICES.filter((k) => model.services.has(k)),
        );
        assert.equal(idx.stats().services, SERVICES.filter((k) => model.known(k)).length);
        assert.deepEqual(idx.stats(), fresh.stats());
      }),
      { numRuns: 400 },
    );
  });
});

describe('TopologyIndex: what counts as a changed view', () => {
  it('reports a kept endpoint whose node or hints changed, though its address and conditions did not', () => {
    const idx = new TopologyIndex('n1');
    idx.setService('ns/a', service('ns/a'));
    const mk = (nodeName: string, zone: string) => ({
      metadata: { name: 's' },
      addressType: 'IPv4',
      ports: [{ port: 80 }],
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          nodeName,
          conditions: { ready: true },
          hints: { forZones: [{ name: zone }] },
        },
      ],
    });
    assert.deepEqual(idx.setSlice('ns/a', 's', mk('n2', 'b')), ['ns/a']);
    assert.deepEqual(idx.setSlice('ns/a', 's', mk('n3', 'c')), ['ns/a']);
    assert.equal(idx.view('ns/a')?.internal[0]?.nodeName, 'n3');
    assert.deepEqual(idx.setSlice('ns/a', 's', mk('n3', 'c')), []);
  });

  it('does not report a view whose unhealthy endpoints are the same set in another order', () => {
    const idx = new TopologyIndex('n0');
    idx.setService('ns/c', service('ns/c'));
    const slice = (name: string, ips: string[]) => ({
      metadata: { name },
      addressType: 'IPv4',
      ports: [{ port: 80 }],
      endpoints: ips.map((ip) => ({ addresses: [ip], nodeName: 'n1', conditions: {} })),
    });
    idx.setSlice('ns/c', 's2', slice('s2', ['10.0.0.1', '10.0.0.5']));
    idx.setSlice('ns/c', 's1', slice('s1', ['10.0.0.5']));
    assert.deepEqual(idx.setHealth('n1', false), ['ns/c']);
    // s1 ordered first, so 10.0.0.5 came before 10.0.0.1; without s1 the set is the same
    assert.deepEqual(idx.setSlice('ns/c', 's1', undefined), []);
    assert.deepEqual([...(idx.view('ns/c')?.unhealthy?.ids ?? [])].length, 2);
  });
});

describe('TopologyIndex: this node relabelled', () => {
  const keysSvc = (key: string) => ({
    metadata: {
      namespace: 'ns',
      name: key.split('/')[1],
      annotations: { 'service.svcplane.io/topology-keys': '["unit"]' },
    },
    spec: { ports: [{ port: 80 }] },
  });
  const on = (name: string, ip: string, nodeName?: string) => ({
    metadata: { name },
    addressType: 'IPv4',
    ports: [{ port: 80 }],
    endpoints: [
      { addresses: [ip], conditions: { ready: true }, ...(nodeName !== undefined ? { nodeName } : {}) },
    ],
  });

  it('recomputes only the Services with an endpoint in the old or new unit, on an unknown node, or without a node', () => {
    const idx = new TopologyIndex('n1');
    idx.setNode('n1', { unit: 'a' });
    idx.setNode('n2', { unit: 'a' });
    idx.setNode('n3', { unit: 'b' });
    idx.setNode('n4', { unit: 'c' });
    for (const [key, node] of [
      ['ns/in-a', 'n2'],
      ['ns/in-b', 'n3'],
      ['ns/in-c', 'n4'],
      ['ns/ghost', 'gone'],
      ['ns/nodeless', undefined],
    ] as const) {
      idx.setService(key, keysSvc(key));
      idx.setSlice(key, 's', on('s', '10.0.0.1', node));
    }
    const before = idx.recomputed;
    const changed = idx.setNode('n1', { unit: 'b' });
    assert.deepEqual(changed.sort(), ['ns/in-a', 'ns/in-b']);
    // in-c cannot change (no endpoint in a or b); ghost and nodeless are recomputed to be safe
    assert.equal(idx.recomputed - before, 4);
  });

  it("counts this node's own endpoints, whose value moved with it (regression)", () => {
    const idx = new TopologyIndex('n1');
    idx.setNode('n1', { unit: 'a' });
    idx.setService('ns/c', keysSvc('ns/c'));
    idx.setSlice('ns/c', 's', on('s', '10.0.0.1', 'n1'));
    assert.equal(idx.view('ns/c')?.internal.length, 1);
    assert.deepEqual(idx.setNode('n1', { other: 'a' }), ['ns/c']);
    assert.equal(idx.view('ns/c')?.internal.length, 0);
  });
});
