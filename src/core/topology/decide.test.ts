// decide(): which endpoints a client on a node may use, per traffic kind, and why. The tables come from the
// upstream behaviours, not from the code: kube-proxy's FilterTopologyEndpoint (topologyKeys, KEP-536,
// 1.17–1.21) and CategorizeEndpoints (pkg/proxy/topology.go, 1.33+), SuperEdge's application-grid-wrapper
// (filterConcernedAddresses/hasIntersectionLabel), OpenYurt's yurthub servicetopology filter, and the
// traffic policies (KEP-2086 internalTrafficPolicy, KEP-1669 terminating endpoints), plus svcplane's own
// documented rules (docs/topology.md and the file comments of decide.ts and rules.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HOSTNAME,
  NODEPOOL,
  REGION,
  SVCPLANE_KEYS,
  ZONE,
  ep,
  fromSlices,
  legacyEndpoints,
  node,
  run,
  slice,
  sliceEndpoint,
  svc,
  type EpOptions,
  type NodeSpec,
  type SvcOptions,
} from './testing/builders.js';
import type { Reason, TopologyEndpoint } from './types.js';

const H = HOSTNAME;
const Z = ZONE;
const SITE = 'example.com/site';
const RACK = 'example.com/rack';

const KEPT: ReadonlySet<Reason> = new Set<Reason>([
  'no-rule',
  'key-match',
  'any',
  'unit-match',
  'same-node',
  'same-pool',
  'hint-node',
  'hint-zone',
  'cluster',
  'serving-terminating',
]);

/** Ordered keys given either as spec.topologyKeys or as svcplane's annotation. */
type KeySource = 'spec.topologyKeys' | 'annotation service.svcplane.io/topology-keys';
const SOURCES: readonly KeySource[] = ['spec.topologyKeys', `annotation ${SVCPLANE_KEYS}`];
const ordered = (keys: readonly string[] | null, source: KeySource, more: SvcOptions = {}): SvcOptions =>
  keys === null
    ? more
    : source === 'spec.topologyKeys'
      ? { ...more, topologyKeys: keys }
      : { ...more, svcplaneKeys: keys };

// ------------------------------------------------------------------------------------------------------------
// a. ordered keys (FilterTopologyEndpoint)

describe('ordered keys: upstream TestFilterTopologyEndpoint vectors', () => {
  /** testNodeN with hostname, zone and region=cd; endpoints 1.1.N.1 and 1.1.N.2 on each node in `withEps`. */
  function cluster(zones: Readonly<Record<number, string>>, withEps: readonly number[]) {
    const nodes = Object.entries(zones).map(([n, zone]) =>
      node(`testNode${n}`, { [H]: `testNode${n}`, [Z]: zone, [REGION]: 'cd' }),
    );
    const endpoints = withEps.flatMap((n) => [
      ep(`1.1.${n}.1`, { node: `testNode${n}` }),
      ep(`1.1.${n}.2`, { node: `testNode${n}` }),
    ]);
    return { nodes, endpoints };
  }
  const on = (...ns: number[]): string[] => ns.flatMap((n) => [`1.1.${n}.1`, `1.1.${n}.2`]).sort();

  interface Row {
    readonly n: number;
    readonly zones: Readonly<Record<number, string>>;
    readonly eps: readonly number[];
    readonly current: number;
    readonly keys: readonly string[] | null;
    readonly want: readonly string[];
    readonly keptReason?: Reason;
    readonly droppedReason?: Reason;
    readonly matchedKey?: string;
  }
  const two = { 1: '90001', 2: '90001' };
  const four = { 1: '90001', 2: '90001', 3: '90002', 4: '90002' };
  const five = { 1: '90001', 2: '90001', 3: '90002', 4: '90002', 5: '90003' };
  const rows: Row[] = [
    { n: 0, zones: { 1: '90001' }, eps: [], current: 1, keys: null, want: [] },
    { n: 1, zones: two, eps: [1, 2], current: 1, keys: null, want: on(1, 2), keptReason: 'no-rule' },
    {
      n: 2,
      zones: two,
      eps: [1, 2],
      current: 1,
      keys: [H],
      want: on(1),
      keptReason: 'key-match',
      droppedReason: 'other-unit',
      matchedKey: H,
    },
    {
      n: 3,
      zones: { 1: '90001', 2: '90001', 3: '90001' },
      eps: [1, 2],
      current: 3,
      keys: [H],
      want: [],
      droppedReason: 'no-key-matched',
    },
    {
      n: 4,
      zones: four,
      eps: [1, 2, 3, 4],
      current: 2,
      keys: [Z],
      want: on(1, 2),
      keptReason: 'key-match',
      droppedReason: 'other-unit',
      matchedKey: Z,
    },
    {
      n: 5,
      zones: four,
      eps: [1, 2, 3, 4],
      current: 2,
      keys: [H],
      want: on(2),
      keptReason: 'key-match',
      droppedReason: 'other-unit',
      matchedKey: H,
    },
    {
      n: 6,
      zones: { ...four, 5: '90002' },
      eps: [1, 2, 3, 4],
      current: 5,
      keys: [H, Z],
      want: on(3, 4),
      keptReason: 'key-match',
      droppedReason: 'other-unit',
      matchedKey: Z,
    },
    {
      n: 7,
      zones: five,
      eps: [1, 2, 3, 4],
      current: 5,
      keys: [H, Z],
      want: [],
      droppedReason: 'no-key-matched',
    },
    {
      n: 8,
      zones: two,
      eps: [1, 2],
      current: 1,
      keys: [H, '*'],
      want: on(1),
      keptReason: 'key-match',
      droppedReason: 'lower-preference',
      matchedKey: H,
    },
    {
      n: 9,
      zones: { 1: '90001', 2: '90001', 3: '90001' },
      eps: [1, 2],
      current: 3,
      keys: [H, '*'],
      want: on(1, 2),
      keptReason: 'any',
      matchedKey: '*',
    },
    {
      n: 10,
      zones: five,
      eps: [1, 2, 3, 4],
      current: 5,
      keys: [H, Z, '*'],
      want: on(1, 2, 3, 4),
      keptReason: 'any',
      matchedKey: '*',
    },
  ];

  for (const source of SOURCES) {
    for (const r of rows) {
      it(`row ${r.n} via ${source}: keys ${JSON.stringify(r.keys)}, client testNode${r.current}`, () => {
        const { nodes, endpoints } = cluster(r.zones, r.eps);
        const res = run({
          service: svc(ordered(r.keys, source)),
          endpoints,
          nodes,
          node: `testNode${r.current}`,
        });
        assert.deepEqual(res.internal, r.want);
        for (const v of res.decision.internal.verdicts) {
          const want = v.kept ? r.keptReason : r.droppedReason;
          assert.equal(v.reason, want, `reason of ${v.endpoint.addresses[0] ?? ''}`);
        }
        assert.deepEqual(res.problems, []);
        assert.equal(res.decision.internal.rule.kind, r.keys === null ? 'none' : 'ordered-keys');
        if (r.keys !== null) assert.equal(res.decision.internal.rule.source, source);
        if (r.eps.length > 0)
          assert.equal(res.decision.internal.pools[0]?.matchedKey, r.matchedKey, 'matchedKey');
      });
    }
  }
});

describe('ordered keys: the upstream doc comment of spec.topologyKeys, sentence by sentence', () => {
  const nodes = [
    node('n1', { [H]: 'n1', [Z]: 'z1' }),
    node('n2', { [H]: 'n2', [Z]: 'z1' }),
    node('n3', { [H]: 'n3', [Z]: 'z2' }),
    node('bare', {}),
  ];
  const three = (first: EpOptions = {}) => [
    ep('10.1.0.1', { node: 'n1', ...first }),
    ep('10.1.0.2', { node: 'n2' }),
    ep('10.1.0.3', { node: 'n3' }),
  ];

  for (const source of SOURCES) {
    describe(`via ${source}`, () => {
      it('"Endpoints are chosen based on the first topology key with available backends"', () => {
        const r = run({ service: svc(ordered([H, Z, '*'], source)), endpoints: three(), nodes, node: 'n1' });
        assert.deepEqual(r.internal, ['10.1.0.1']);
        // The endpoint on n1 is not available: hostname has no backend, so zone decides.
        const r2 = run({
          service: svc(ordered([H, Z, '*'], source)),
          endpoints: three({ ready: false }),
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r2.internal, ['10.1.0.2']);
        assert.deepEqual(r2.reasons, {
          '10.1.0.1': 'not-serving',
          '10.1.0.2': 'key-match',
          '10.1.0.3': 'lower-preference',
        });
        assert.equal(r2.decision.internal.pools[0]?.matchedKey, Z);
        assert.equal(r2.decision.internal.pools[0]?.matchedValue, 'z1');
      });

      it('a key the client node lacks is skipped', () => {
        const r = run({
          service: svc(ordered([RACK, Z], source)),
          endpoints: three(),
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r.internal, ['10.1.0.1', '10.1.0.2']);
      });

      it('"If this field is specified and all entries have no backends that match the topology of the client, the service has no backends for that client and connections should fail"', () => {
        const r = run({
          service: svc(ordered([H, Z], source)),
          endpoints: [ep('10.1.0.3', { node: 'n3' })],
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r.internal, []);
        assert.deepEqual(r.reasons, { '10.1.0.3': 'no-key-matched' });
        assert.equal(r.decision.internal.pools[0]?.matchedKey, undefined);
      });

      it('"The special value "*" may be used to mean "any endpoint""', () => {
        const r = run({
          service: svc(ordered(['*'], source)),
          endpoints: [...three(), ep('10.1.0.4', { node: 'n1', ready: false })],
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r.internal, ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
        assert.deepEqual(r.reasons, {
          '10.1.0.1': 'any',
          '10.1.0.2': 'any',
          '10.1.0.3': 'any',
          '10.1.0.4': 'not-serving',
        });
      });

      it('a client node with no labels keeps everything only when "*" is last', () => {
        const keep = (keys: string[]) =>
          run({ service: svc(ordered(keys, source)), endpoints: three(), nodes, node: 'bare' });
        assert.deepEqual(keep([H, '*']).internal, ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
        assert.deepEqual(keep([H, '*']).reasons['10.1.0.1'], 'any');
        assert.deepEqual(keep(['*']).internal, ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
        assert.deepEqual(keep([H]).internal, []);
        assert.deepEqual(keep([H]).reasons, {
          '10.1.0.1': 'client-no-label',
          '10.1.0.2': 'client-no-label',
          '10.1.0.3': 'client-no-label',
        });
        assert.deepEqual(keep([Z, H]).internal, []);
        // FilterTopologyEndpoint: a node without labels looks at the last key only ("*" or nothing).
        assert.deepEqual(keep(['*', H]).internal, []);
      });

      it('a client node missing from the lookup is a node with no labels', () => {
        const keep = (keys: string[]) =>
          run({ service: svc(ordered(keys, source)), endpoints: three(), nodes, node: 'ghost' });
        assert.deepEqual(keep([H, '*']).internal, ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
        assert.deepEqual(keep([H]).internal, []);
        assert.equal(keep([H]).reasons['10.1.0.1'], 'client-unknown');
      });

      it('"If this is not specified or empty, no topology constraints will be applied"', () => {
        const r = run({ service: svc(ordered([], source)), endpoints: three(), nodes, node: 'n1' });
        assert.deepEqual(r.internal, ['10.1.0.1', '10.1.0.2', '10.1.0.3']);
        assert.equal(r.decision.internal.rule.kind, 'none');
        assert.deepEqual(r.problems, []);
      });

      it('serving-terminating endpoints are walked only when the walk over ready ones found nothing', () => {
        // [hostname, "*"]: the local endpoint is terminating; "*" still has ready endpoints, so it wins.
        const r = run({
          service: svc(ordered([H, '*'], source)),
          endpoints: three({ ready: false, serving: true, terminating: true }),
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r.internal, ['10.1.0.2', '10.1.0.3']);
        assert.equal(r.reasons['10.1.0.1'], 'terminating-unused');
        // [hostname] with nothing ready anywhere: the terminating local endpoint is used.
        const r2 = run({
          service: svc(ordered([H], source)),
          endpoints: [ep('10.1.0.1', { node: 'n1', ready: false, serving: true, terminating: true })],
          nodes,
          node: 'n1',
        });
        assert.deepEqual(r2.internal, ['10.1.0.1']);
        assert.deepEqual(r2.reasons, { '10.1.0.1': 'serving-terminating' });
        assert.equal(r2.decision.internal.pools[0]?.servingTerminating, true);
      });
    });
  }
});

// ------------------------------------------------------------------------------------------------------------
// b. SuperEdge's `topologyKeys` annotation

/** e1..e7: sites u1 (e1, e2) and u2 (e3, e4, e6), zones z1 (e1, e3) and z2 (e2, e4); e5 has neither. */
const EDGE_NODES: readonly NodeSpec[] = [
  node('e1', { [H]: 'e1', [SITE]: 'u1', [Z]: 'z1' }),
  node('e2', { [H]: 'e2', [SITE]: 'u1', [Z]: 'z2' }),
  node('e3', { [H]: 'e3', [SITE]: 'u2', [Z]: 'z1' }),
  node('e4', { [H]: 'e4', [SITE]: 'u2', [Z]: 'z2' }),
  node('e5', { [H]: 'e5' }),
  node('e6', { [H]: 'e6', [RACK]: 'r1', [SITE]: 'u2' }),
  node('e7', { [H]: 'e7', [RACK]: 'r1' }),
];
/** One endpoint 10.2.0.N on each eN. */
const edgeEps = (...ns: number[]): TopologyEndpoint[] => ns.map((n) => ep(`10.2.0.${n}`, { node: `e${n}` }));
const ALL_EDGE = [1, 2, 3, 4, 5, 6, 7];

describe('SuperEdge topologyKeys: application-grid-wrapper hasIntersectionLabel', () => {
  it('one key: the endpoints of the client node unit', () => {
    const r = run({
      service: svc({ superedge: [SITE] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2']);
    assert.deepEqual(r.reasons, {
      '10.2.0.1': 'unit-match',
      '10.2.0.2': 'unit-match',
      '10.2.0.3': 'other-unit',
      '10.2.0.4': 'other-unit',
      '10.2.0.5': 'no-topology',
      '10.2.0.6': 'other-unit',
      '10.2.0.7': 'no-topology',
    });
    assert.equal(r.decision.internal.rule.kind, 'superedge');
    assert.equal(r.decision.internal.rule.source, 'annotation topologyKeys');
    assert.deepEqual(r.problems, []);
  });

  it('a key named like an inherited property (constructor, __proto__, toString) is a label like any other', () => {
    // No node carries these labels: the client has none of the keys, whatever every object inherits.
    for (const key of ['constructor', '__proto__', 'toString']) {
      const sup = run({
        service: svc({ superedge: [key] }),
        endpoints: edgeEps(...ALL_EDGE),
        nodes: EDGE_NODES,
        node: 'e1',
      });
      assert.deepEqual(sup.internal, [], key);
      const ord = run({
        service: svc({ topologyKeys: [key] }),
        endpoints: edgeEps(...ALL_EDGE),
        nodes: EDGE_NODES,
        node: 'e1',
      });
      assert.deepEqual(ord.internal, [], key);
    }
  });

  it('several keys are OR-ed: any key with the same value on both nodes', () => {
    const r = run({
      service: svc({ superedge: [SITE, Z] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2', '10.2.0.3']);
    assert.deepEqual(r.reasons, {
      '10.2.0.1': 'unit-match',
      '10.2.0.2': 'unit-match',
      '10.2.0.3': 'unit-match',
      '10.2.0.4': 'other-unit',
      '10.2.0.5': 'no-topology',
      '10.2.0.6': 'other-unit',
      '10.2.0.7': 'no-topology',
    });
  });

  it('the order of the keys does not matter', () => {
    const a = run({
      service: svc({ superedge: [SITE, Z] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    const b = run({
      service: svc({ superedge: [Z, SITE] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(a.internal, b.internal);
  });

  it('a key counts only when present on both nodes (absent on both is not a match)', () => {
    // e1 lacks RACK: e6 (rack r1, site u2) and e7 (rack r1) are not in its unit.
    const r = run({
      service: svc({ superedge: [RACK, SITE] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2']);
    // e7 has only rack r1: e6 shares it; e5 (no rack, no site) and e1..e4 (site but no rack on e7) do not.
    const r7 = run({
      service: svc({ superedge: [RACK, SITE] }),
      endpoints: edgeEps(...ALL_EDGE),
      nodes: EDGE_NODES,
      node: 'e7',
    });
    assert.deepEqual(r7.internal, ['10.2.0.6', '10.2.0.7']);
    assert.equal(r7.reasons['10.2.0.5'], 'no-topology');
  });

  it('a client node with none of the keys keeps nothing', () => {
    const r = run({
      service: svc({ superedge: [SITE] }),
      endpoints: edgeEps(1, 2, 5),
      nodes: EDGE_NODES,
      node: 'e5',
    });
    assert.deepEqual(r.internal, []);
    assert.deepEqual(r.reasons, {
      '10.2.0.1': 'client-no-label',
      '10.2.0.2': 'client-no-label',
      '10.2.0.5': 'client-no-label',
    });
  });

  it('strict: a unit with no endpoints gets nothing (no fallback)', () => {
    const r = run({
      service: svc({ superedge: [SITE] }),
      endpoints: edgeEps(3, 4),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, []);
    assert.deepEqual(r.reasons, { '10.2.0.3': 'other-unit', '10.2.0.4': 'other-unit' });
    assert.equal(r.decision.internal.pools[0]?.kept, 0);
  });

  it('a client node missing from the node lookup keeps nothing', () => {
    const r = run({
      service: svc({ superedge: [SITE] }),
      endpoints: edgeEps(1, 3),
      nodes: EDGE_NODES,
      node: 'ghost',
    });
    assert.deepEqual(r.internal, []);
    assert.deepEqual(r.reasons, { '10.2.0.1': 'client-unknown', '10.2.0.3': 'client-unknown' });
  });

  it('no nodeName or an unknown node: dropped unless the endpoint itself gives a matching value', () => {
    const eps = [
      ep('10.2.1.1', {}),
      ep('10.2.1.2', { zone: 'z1' }),
      ep('10.2.1.3', { zone: 'z2' }),
      ep('10.2.1.4', { node: 'ghost' }),
      ep('10.2.1.5', { node: 'ghost', zone: 'z1' }),
      ep('10.2.1.6', { topology: { [Z]: 'z1' } }),
      // A known node's labels win over what the endpoint says.
      ep('10.2.1.7', { node: 'e2', zone: 'z1' }),
    ];
    const r = run({ service: svc({ superedge: [Z] }), endpoints: eps, nodes: EDGE_NODES, node: 'e1' });
    assert.deepEqual(r.internal, ['10.2.1.2', '10.2.1.5', '10.2.1.6']);
    assert.deepEqual(r.reasons, {
      '10.2.1.1': 'no-topology',
      '10.2.1.2': 'unit-match',
      '10.2.1.3': 'other-unit',
      '10.2.1.4': 'no-topology',
      '10.2.1.5': 'unit-match',
      '10.2.1.6': 'unit-match',
      '10.2.1.7': 'other-unit',
    });
    // Any key, not just the zone, from the v1beta1 topology map.
    const site = run({
      service: svc({ superedge: [SITE] }),
      endpoints: [
        ep('10.2.1.8', { topology: { [SITE]: 'u1' } }),
        ep('10.2.1.9', { topology: { [SITE]: 'u2' } }),
      ],
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(site.internal, ['10.2.1.8']);
  });

  describe('addresses and notReadyAddresses', () => {
    it('not-ready and unused terminating endpoints in the unit are dropped while a ready one exists', () => {
      const eps = [
        ep('10.2.0.1', { node: 'e1' }),
        ep('10.2.0.2', { node: 'e2', ready: false }),
        ep('10.2.0.12', { node: 'e2', ready: false, serving: true, terminating: true }),
        ep('10.2.0.22', { node: 'e2', ready: false, serving: true }),
        ep('10.2.0.3', { node: 'e3' }),
      ];
      const r = run({ service: svc({ superedge: [SITE] }), endpoints: eps, nodes: EDGE_NODES, node: 'e1' });
      assert.deepEqual(r.internal, ['10.2.0.1']);
      assert.deepEqual(r.reasons, {
        '10.2.0.1': 'unit-match',
        '10.2.0.2': 'not-serving',
        '10.2.0.12': 'terminating-unused',
        '10.2.0.22': 'not-ready',
        '10.2.0.3': 'other-unit',
      });
    });

    it('serving-terminating endpoints of the unit are used only when it has no ready one', () => {
      const eps = [
        ep('10.2.0.1', { node: 'e1', ready: false, serving: true, terminating: true }),
        ep('10.2.0.2', { node: 'e2', ready: false }),
        ep('10.2.0.3', { node: 'e3' }),
      ];
      const r = run({ service: svc({ superedge: [SITE] }), endpoints: eps, nodes: EDGE_NODES, node: 'e1' });
      assert.deepEqual(r.internal, ['10.2.0.1']);
      assert.deepEqual(r.reasons, {
        '10.2.0.1': 'serving-terminating',
        '10.2.0.2': 'not-serving',
        '10.2.0.3': 'other-unit',
      });
      assert.equal(r.decision.internal.pools[0]?.servingTerminating, true);
    });

    it('a unit with only not-ready endpoints gets nothing, not another unit', () => {
      const eps = [ep('10.2.0.1', { node: 'e1', ready: false }), ep('10.2.0.3', { node: 'e3' })];
      const r = run({ service: svc({ superedge: [SITE] }), endpoints: eps, nodes: EDGE_NODES, node: 'e1' });
      assert.deepEqual(r.internal, []);
      assert.deepEqual(r.reasons, { '10.2.0.1': 'not-serving', '10.2.0.3': 'other-unit' });
    });

    it('legacy Endpoints: addresses are used in the unit, notReadyAddresses never', () => {
      const eps = legacyEndpoints(
        [
          { ip: '10.2.0.1', node: 'e1' },
          { ip: '10.2.0.3', node: 'e3' },
        ],
        [
          { ip: '10.2.0.2', node: 'e2' },
          { ip: '10.2.0.4', node: 'e4' },
        ],
      );
      const r = run({ service: svc({ superedge: [SITE] }), endpoints: eps, nodes: EDGE_NODES, node: 'e1' });
      assert.deepEqual(r.internal, ['10.2.0.1']);
      assert.deepEqual(r.reasons, {
        '10.2.0.1': 'unit-match',
        '10.2.0.2': 'not-serving',
        '10.2.0.3': 'other-unit',
        '10.2.0.4': 'other-unit',
      });
      const onlyNotReady = legacyEndpoints(
        [{ ip: '10.2.0.3', node: 'e3' }],
        [{ ip: '10.2.0.2', node: 'e2' }],
      );
      const r2 = run({
        service: svc({ superedge: [SITE] }),
        endpoints: onlyNotReady,
        nodes: EDGE_NODES,
        node: 'e1',
      });
      assert.deepEqual(r2.internal, []);
    });
  });
});

// ------------------------------------------------------------------------------------------------------------
// c. OpenYurt's `openyurt.io/topologyKeys`

describe('OpenYurt openyurt.io/topologyKeys: servicetopology filter Service opt-in', () => {
  const nodes = [
    node('y1', { [H]: 'y1', [NODEPOOL]: 'p1' }),
    node('y2', { [H]: 'y2', [NODEPOOL]: 'p1' }),
    node('y3', { [H]: 'y3', [NODEPOOL]: 'p2' }),
    node('y4', { [H]: 'y4' }),
  ];
  const eps = () => [
    ep('10.3.0.1', { node: 'y1' }),
    ep('10.3.0.2', { node: 'y2' }),
    ep('10.3.0.3', { node: 'y3' }),
    ep('10.3.0.4', { node: 'y4' }),
    ep('10.3.0.9', {}),
  ];

  it('kubernetes.io/hostname: only this node', () => {
    const r = run({ service: svc({ openyurt: H }), endpoints: eps(), nodes, node: 'y1' });
    assert.deepEqual(r.internal, ['10.3.0.1']);
    assert.deepEqual(r.reasons, {
      '10.3.0.1': 'same-node',
      '10.3.0.2': 'other-unit',
      '10.3.0.3': 'other-unit',
      '10.3.0.4': 'other-unit',
      '10.3.0.9': 'no-topology',
    });
    assert.equal(r.decision.internal.rule.kind, 'openyurt');
    assert.equal(r.decision.internal.rule.source, 'annotation openyurt.io/topologyKeys');
    assert.deepEqual(r.problems, []);
  });

  for (const value of ['openyurt.io/nodepool', 'kubernetes.io/zone']) {
    it(`${value}: the endpoints whose node has this node's apps.openyurt.io/nodepool`, () => {
      const r = run({ service: svc({ openyurt: value }), endpoints: eps(), nodes, node: 'y1' });
      assert.deepEqual(r.internal, ['10.3.0.1', '10.3.0.2']);
      assert.deepEqual(r.reasons, {
        '10.3.0.1': 'same-pool',
        '10.3.0.2': 'same-pool',
        '10.3.0.3': 'other-unit',
        '10.3.0.4': 'no-topology',
        '10.3.0.9': 'no-topology',
      });
      assert.deepEqual(r.problems, []);
    });

    it(`${value}: a client node in no pool falls back to hostname`, () => {
      const r = run({ service: svc({ openyurt: value }), endpoints: eps(), nodes, node: 'y4' });
      assert.deepEqual(r.internal, ['10.3.0.4']);
      assert.equal(r.reasons['10.3.0.4'], 'same-node');
    });
  }

  it('strict: nothing on this node means nothing', () => {
    const r = run({
      service: svc({ openyurt: H }),
      endpoints: [ep('10.3.0.2', { node: 'y2' }), ep('10.3.0.3', { node: 'y3' })],
      nodes,
      node: 'y1',
    });
    assert.deepEqual(r.internal, []);
  });

  it('an unsupported value (topology.kubernetes.io/zone) filters nothing and is reported', () => {
    const r = run({ service: svc({ openyurt: Z }), endpoints: eps(), nodes, node: 'y1' });
    assert.deepEqual(r.internal, ['10.3.0.1', '10.3.0.2', '10.3.0.3', '10.3.0.4', '10.3.0.9']);
    assert.equal(r.reasons['10.3.0.3'], 'no-rule');
    assert.equal(r.decision.internal.rule.kind, 'none');
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'InvalidTopologyAnnotation');
    assert.match(r.problems[0]?.message ?? '', /openyurt\.io\/topologyKeys/);
    assert.match(r.problems[0]?.message ?? '', /"topology\.kubernetes\.io\/zone"/);
  });
});

// ------------------------------------------------------------------------------------------------------------
// d. traffic policies

describe('traffic policies: kube-proxy CategorizeEndpoints', () => {
  const nodes = [node('n1', { [H]: 'n1', [Z]: 'z1' }), node('n2', { [H]: 'n2', [Z]: 'z1' })];
  const two = (first: EpOptions = {}) => [
    ep('10.4.0.1', { node: 'n1', ...first }),
    ep('10.4.0.2', { node: 'n2' }),
  ];

  it('internalTrafficPolicy Local: node-local endpoints only', () => {
    const r = run({ service: svc({ internalTrafficPolicy: 'Local' }), endpoints: two(), nodes, node: 'n1' });
    assert.deepEqual(r.internal, ['10.4.0.1']);
    assert.deepEqual(r.reasons, { '10.4.0.1': 'same-node', '10.4.0.2': 'remote' });
    assert.equal(r.decision.internal.rule.kind, 'local');
    assert.equal(r.decision.internal.rule.source, 'spec.internalTrafficPolicy');
    assert.equal(r.external, undefined);
  });

  it('internalTrafficPolicy Local: a serving-terminating local endpoint when none is ready', () => {
    const r = run({
      service: svc({ internalTrafficPolicy: 'Local' }),
      endpoints: two({ ready: false, serving: true, terminating: true }),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(r.internal, ['10.4.0.1']);
    assert.deepEqual(r.reasons, { '10.4.0.1': 'serving-terminating', '10.4.0.2': 'remote' });
  });

  it('internalTrafficPolicy Local is strict: no local endpoint, nothing', () => {
    const none = run({
      service: svc({ internalTrafficPolicy: 'Local' }),
      endpoints: [ep('10.4.0.2', { node: 'n2' })],
      nodes,
      node: 'n1',
    });
    assert.deepEqual(none.internal, []);
    const notReady = run({
      service: svc({ internalTrafficPolicy: 'Local' }),
      endpoints: two({ ready: false }),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(notReady.internal, []);
    assert.deepEqual(notReady.reasons, { '10.4.0.1': 'not-serving', '10.4.0.2': 'remote' });
  });

  it('externalTrafficPolicy Local without a node port: ignored, and no external traffic', () => {
    const r = run({ service: svc({ externalTrafficPolicy: 'Local' }), endpoints: two(), nodes, node: 'n1' });
    assert.deepEqual(r.internal, ['10.4.0.1', '10.4.0.2']);
    assert.equal(r.decision.external, undefined);
    assert.equal('external' in r.decision, false);
  });

  it('externalTrafficPolicy Local with a node port: external traffic is node-local, internal is not', () => {
    const r = run({
      service: svc({ type: 'NodePort', nodePort: 30080, externalTrafficPolicy: 'Local' }),
      endpoints: two(),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(r.internal, ['10.4.0.1', '10.4.0.2']);
    assert.deepEqual(r.external, ['10.4.0.1']);
    assert.deepEqual(r.externalReasons, { '10.4.0.1': 'same-node', '10.4.0.2': 'remote' });
    assert.equal(r.decision.external?.rule.source, 'spec.externalTrafficPolicy');
  });

  for (const [label, o] of [
    ['externalIPs', { externalIPs: ['192.0.2.10'] }],
    ['a load-balancer ingress IP', { lbIngress: [{ ip: '203.0.113.7' }] }],
  ] as const) {
    it(`externalTrafficPolicy Local with ${label}: external traffic is node-local`, () => {
      const r = run({
        service: svc({ ...o, externalTrafficPolicy: 'Local' }),
        endpoints: two(),
        nodes,
        node: 'n1',
      });
      assert.deepEqual(r.external, ['10.4.0.1']);
      assert.deepEqual(r.internal, ['10.4.0.1', '10.4.0.2']);
    });
  }

  it('a plain ClusterIP Service has no external decision', () => {
    const r = run({ service: svc(), endpoints: two(), nodes, node: 'n1' });
    assert.equal('external' in r.decision, false);
  });

  it('a plain NodePort Service: external is decided as internal', () => {
    const r = run({ service: svc({ type: 'NodePort' }), endpoints: two(), nodes, node: 'n1' });
    assert.deepEqual(r.external, r.internal);
    assert.deepEqual(r.external, ['10.4.0.1', '10.4.0.2']);
  });

  it('NodePort with internalTrafficPolicy Local: internal is local, external is not', () => {
    const r = run({
      service: svc({ type: 'NodePort', internalTrafficPolicy: 'Local' }),
      endpoints: two(),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(r.internal, ['10.4.0.1']);
    assert.deepEqual(r.external, ['10.4.0.1', '10.4.0.2']);
  });
});

// ------------------------------------------------------------------------------------------------------------
// e. precedence and problems

describe('precedence and problems (rules.ts: Local, ordered keys, SuperEdge, OpenYurt, hints)', () => {
  const eps = () => edgeEps(1, 2, 3, 4);

  for (const source of SOURCES) {
    it(`${source} and a SuperEdge annotation: the ordered keys decide; one conflict names SuperEdge's`, () => {
      const r = run({
        service: svc(ordered([Z], source, { superedge: [SITE] })),
        endpoints: eps(),
        nodes: EDGE_NODES,
        node: 'e1',
      });
      assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.3']);
      assert.equal(r.reasons['10.2.0.1'], 'key-match');
      assert.equal(r.decision.internal.rule.source, source);
      assert.equal(r.problems.length, 1);
      assert.equal(r.problems[0]?.reason, 'TopologyRuleConflict');
      assert.match(r.problems[0]?.message ?? '', /annotation topologyKeys/);
      assert.match(r.problems[0]?.message ?? '', /ignored/);
    });
  }

  it('spec.topologyKeys and a different svcplane annotation: spec decides; one conflict', () => {
    const r = run({
      service: svc({ topologyKeys: [Z], svcplaneKeys: [SITE] }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.3']);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'TopologyRuleConflict');
    assert.match(r.problems[0]?.message ?? '', new RegExp(SVCPLANE_KEYS.replace(/\./g, '\\.')));
  });

  it('spec.topologyKeys and the same svcplane annotation: no conflict', () => {
    const r = run({
      service: svc({ topologyKeys: [Z], svcplaneKeys: [Z] }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.problems, []);
  });

  it('SuperEdge and OpenYurt annotations: SuperEdge decides; one conflict names OpenYurt', () => {
    const r = run({
      service: svc({ superedge: [SITE], openyurt: H }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2']);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'TopologyRuleConflict');
    assert.match(r.problems[0]?.message ?? '', /openyurt\.io\/topologyKeys/);
  });

  it('trafficDistribution and a SuperEdge annotation: SuperEdge decides, hints are ignored', () => {
    // Hints would keep e2's and e3's endpoints for zone z1; the unit is e1 and e2.
    const hinted = [
      ep('10.2.0.1', { node: 'e1', zone: 'z1', forZones: ['z2'] }),
      ep('10.2.0.2', { node: 'e2', zone: 'z2', forZones: ['z1'] }),
      ep('10.2.0.3', { node: 'e3', zone: 'z1', forZones: ['z1'] }),
      ep('10.2.0.4', { node: 'e4', zone: 'z2', forZones: ['z2'] }),
    ];
    const r = run({
      service: svc({ superedge: [SITE], trafficDistribution: 'PreferClose' }),
      endpoints: hinted,
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2']);
    assert.equal(r.reasons['10.2.0.1'], 'unit-match');
    assert.equal(r.decision.internal.rule.kind, 'superedge');
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'TopologyRuleConflict');
    assert.match(r.problems[0]?.message ?? '', /trafficDistribution/);
  });

  it('internalTrafficPolicy Local and a SuperEdge annotation: Local decides internal traffic, and says so', () => {
    const r = run({
      service: svc({ superedge: [SITE], internalTrafficPolicy: 'Local' }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1']);
    assert.equal(r.reasons['10.2.0.2'], 'remote');
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'TopologyRuleConflict');
    assert.match(r.problems[0]?.message ?? '', /internalTrafficPolicy=Local/);
    assert.match(r.problems[0]?.message ?? '', /annotation topologyKeys/);
  });

  it('internalTrafficPolicy Local on a NodePort with SuperEdge: SuperEdge still decides external traffic', () => {
    const r = run({
      service: svc({ type: 'NodePort', superedge: [SITE], internalTrafficPolicy: 'Local' }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.internal, ['10.2.0.1']);
    assert.deepEqual(r.external, ['10.2.0.1', '10.2.0.2']);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]?.message ?? '', /external/);
  });

  for (const [label, o] of [
    ['SuperEdge, not JSON', { superedge: '["example.com/site"' }],
    ['SuperEdge, not a list', { superedge: '"example.com/site"' }],
    ['SuperEdge, not strings', { superedge: '[1]' }],
    ['svcplane, not JSON', { svcplaneKeys: 'topology.kubernetes.io/zone' }],
    ['svcplane, not a list', { svcplaneKeys: '{"k":"v"}' }],
  ] as const) {
    it(`a malformed annotation (${label}): InvalidTopologyAnnotation, and the rule is ignored`, () => {
      const r = run({ service: svc(o), endpoints: eps(), nodes: EDGE_NODES, node: 'e1' });
      assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2', '10.2.0.3', '10.2.0.4']);
      assert.equal(r.decision.internal.rule.kind, 'none');
      assert.equal(r.problems.length, 1);
      assert.equal(r.problems[0]?.reason, 'InvalidTopologyAnnotation');
    });
  }

  it('svcplane annotation ["*", zone]: the API\'s message for spec.topologyKeys, and the rule applied as written', () => {
    const r = run({
      service: svc({ svcplaneKeys: ['*', Z] }),
      endpoints: eps(),
      nodes: EDGE_NODES,
      node: 'e1',
    });
    assert.deepEqual(r.problems, [
      {
        reason: 'InvalidTopologyAnnotation',
        message: `metadata.annotations[${SVCPLANE_KEYS}][0]: Invalid value: "*": "*" must be the last value specified`,
      },
    ]);
    // As written, "*" comes first and matches any endpoint.
    assert.deepEqual(r.internal, ['10.2.0.1', '10.2.0.2', '10.2.0.3', '10.2.0.4']);
    assert.equal(r.reasons['10.2.0.1'], 'any');
    assert.equal(r.decision.internal.rule.kind, 'ordered-keys');
  });
});

// ------------------------------------------------------------------------------------------------------------
// f. endpoints with no node or an unknown node

describe('table: what an endpoint with no node or an unknown node gets under each rule', () => {
  // The client is n1 (zone z1, pool p1); n2 shares its zone and pool; n3 is in z2/p2; "ghost" is no node.
  const nodes = [
    node('n1', { [H]: 'n1', [Z]: 'z1', [NODEPOOL]: 'p1' }),
    node('n2', { [H]: 'n2', [Z]: 'z1', [NODEPOOL]: 'p1' }),
    node('n3', { [H]: 'n3', [Z]: 'z2', [NODEPOOL]: 'p2' }),
  ];
  const columns: readonly (readonly [string, string, EpOptions])[] = [
    ['no nodeName', '10.9.0.1', {}],
    ['no nodeName, zone z1', '10.9.0.2', { zone: 'z1' }],
    ['no nodeName, v1beta1 topology hostname=n1 zone=z1', '10.9.0.3', { topology: { [H]: 'n1', [Z]: 'z1' } }],
    ['unknown node', '10.9.0.4', { node: 'ghost' }],
    ['unknown node, zone z1', '10.9.0.5', { node: 'ghost', zone: 'z1' }],
    ['known node n1 (the client)', '10.9.0.6', { node: 'n1', zone: 'z1' }],
    ['known node n2 (same zone and pool)', '10.9.0.7', { node: 'n2', zone: 'z1' }],
    ['known node n3 (other zone and pool)', '10.9.0.8', { node: 'n3', zone: 'z2' }],
  ];
  const endpoints = (hints: boolean) =>
    columns.map(([, address, o]) =>
      ep(address, hints ? { ...o, forZones: [o.node === 'n3' ? 'z2' : 'z1'] } : o),
    );

  interface Row {
    readonly rule: string;
    readonly service: SvcOptions;
    readonly hints?: boolean;
    /** One reason per column, in column order. */
    readonly reasons: readonly Reason[];
  }
  const rows: Row[] = [
    {
      rule: 'ordered keys [topology.kubernetes.io/zone]',
      service: { topologyKeys: [Z] },
      reasons: [
        'no-topology',
        'key-match',
        'key-match',
        'no-topology',
        'key-match',
        'key-match',
        'key-match',
        'other-unit',
      ],
    },
    {
      rule: 'ordered keys [kubernetes.io/hostname]',
      service: { topologyKeys: [H] },
      reasons: [
        'no-topology',
        'no-topology',
        'key-match',
        'other-unit',
        'other-unit',
        'key-match',
        'other-unit',
        'other-unit',
      ],
    },
    {
      rule: 'SuperEdge [topology.kubernetes.io/zone]',
      service: { superedge: [Z] },
      reasons: [
        'no-topology',
        'unit-match',
        'unit-match',
        'no-topology',
        'unit-match',
        'unit-match',
        'unit-match',
        'other-unit',
      ],
    },
    {
      // OpenYurt's servicetopology filter keeps an endpoint whose nodeName is this node (v1 slices) or whose
      // topology["kubernetes.io/hostname"] is this node's name (v1beta1 slices).
      rule: 'OpenYurt kubernetes.io/hostname',
      service: { openyurt: H },
      reasons: [
        'no-topology',
        'no-topology',
        'same-node',
        'other-unit',
        'other-unit',
        'same-node',
        'other-unit',
        'other-unit',
      ],
    },
    {
      rule: 'OpenYurt openyurt.io/nodepool',
      service: { openyurt: 'openyurt.io/nodepool' },
      reasons: [
        'no-topology',
        'no-topology',
        'no-topology',
        'no-topology',
        'no-topology',
        'same-pool',
        'same-pool',
        'other-unit',
      ],
    },
    {
      rule: 'internalTrafficPolicy Local',
      service: { internalTrafficPolicy: 'Local' },
      reasons: ['remote', 'remote', 'remote', 'remote', 'remote', 'same-node', 'remote', 'remote'],
    },
    {
      rule: 'hints (trafficDistribution PreferClose; every endpoint hinted for its zone, z1 unless on n3)',
      service: { trafficDistribution: 'PreferClose' },
      hints: true,
      reasons: [
        'hint-zone',
        'hint-zone',
        'hint-zone',
        'hint-zone',
        'hint-zone',
        'hint-zone',
        'hint-zone',
        'not-hinted',
      ],
    },
    {
      rule: 'no rule',
      service: {},
      reasons: ['no-rule', 'no-rule', 'no-rule', 'no-rule', 'no-rule', 'no-rule', 'no-rule', 'no-rule'],
    },
  ];

  for (const row of rows) {
    it(row.rule, () => {
      const r = run({
        service: svc(row.service),
        endpoints: endpoints(row.hints ?? false),
        nodes,
        node: 'n1',
      });
      const want: Record<string, Reason> = {};
      const wantKept: string[] = [];
      columns.forEach(([, address], i) => {
        const reason = row.reasons[i]!;
        want[address] = reason;
        if (KEPT.has(reason)) wantKept.push(address);
      });
      const got = Object.fromEntries(columns.map(([label, address]) => [label, r.reasons[address]]));
      const wanted = Object.fromEntries(columns.map(([label, address]) => [label, want[address]]));
      assert.deepEqual(got, wanted);
      assert.deepEqual(r.internal, wantKept.sort());
    });
  }
});

// ------------------------------------------------------------------------------------------------------------
// g. node health

describe('node health: an unhealthy node drops its endpoints under every rule', () => {
  const nodes = [
    node('n1', { [H]: 'n1', [Z]: 'z1', [NODEPOOL]: 'p1', [SITE]: 'u1' }),
    node('n2', { [H]: 'n2', [Z]: 'z1', [NODEPOOL]: 'p1', [SITE]: 'u1' }),
  ];
  const endpoints = [
    ep('10.5.0.1', { node: 'n1', zone: 'z1', forZones: ['z1'] }),
    ep('10.5.0.2', { node: 'n2', zone: 'z1', forZones: ['z1'] }),
    ep('10.5.0.9', { zone: 'z1', forZones: ['z1'] }),
  ];
  interface Row {
    readonly rule: string;
    readonly service: SvcOptions;
    /** Kept with n1 unhealthy. */
    readonly unhealthy: readonly string[];
    /** Kept with no verdict on n1 (or n1 healthy). */
    readonly healthy: readonly string[];
  }
  const rows: Row[] = [
    {
      rule: 'no rule',
      service: {},
      unhealthy: ['10.5.0.2', '10.5.0.9'],
      healthy: ['10.5.0.1', '10.5.0.2', '10.5.0.9'],
    },
    {
      rule: 'hints',
      service: { trafficDistribution: 'PreferClose' },
      unhealthy: ['10.5.0.2', '10.5.0.9'],
      healthy: ['10.5.0.1', '10.5.0.2', '10.5.0.9'],
    },
    {
      rule: 'ordered keys via spec.topologyKeys [hostname, "*"]',
      service: { topologyKeys: [H, '*'] },
      unhealthy: ['10.5.0.2', '10.5.0.9'],
      healthy: ['10.5.0.1'],
    },
    {
      rule: 'ordered keys via svcplane annotation [hostname, "*"]',
      service: { svcplaneKeys: [H, '*'] },
      unhealthy: ['10.5.0.2', '10.5.0.9'],
      healthy: ['10.5.0.1'],
    },
    {
      rule: 'SuperEdge [site]',
      service: { superedge: [SITE] },
      unhealthy: ['10.5.0.2'],
      healthy: ['10.5.0.1', '10.5.0.2'],
    },
    { rule: 'OpenYurt hostname', service: { openyurt: H }, unhealthy: [], healthy: ['10.5.0.1'] },
    {
      rule: 'OpenYurt nodepool',
      service: { openyurt: 'openyurt.io/nodepool' },
      unhealthy: ['10.5.0.2'],
      healthy: ['10.5.0.1', '10.5.0.2'],
    },
    {
      rule: 'internalTrafficPolicy Local',
      service: { internalTrafficPolicy: 'Local' },
      unhealthy: [],
      healthy: ['10.5.0.1'],
    },
  ];

  for (const row of rows) {
    it(row.rule, () => {
      const sick = run({ service: svc(row.service), endpoints, nodes, node: 'n1', health: { n1: false } });
      assert.deepEqual(sick.internal, row.unhealthy);
      assert.equal(sick.reasons['10.5.0.1'], 'node-unhealthy');
      for (const health of [{}, { n1: true }, { n2: true }]) {
        const fine = run({ service: svc(row.service), endpoints, nodes, node: 'n1', health });
        assert.deepEqual(fine.internal, row.healthy, JSON.stringify(health));
      }
      const none = run({ service: svc(row.service), endpoints, nodes, node: 'n1' });
      assert.deepEqual(none.internal, row.healthy);
    });
  }

  it('externalTrafficPolicy Local on a NodePort: the external decision drops it too', () => {
    const r = run({
      service: svc({ type: 'NodePort', externalTrafficPolicy: 'Local' }),
      endpoints,
      nodes,
      node: 'n1',
      health: { n1: false },
    });
    assert.deepEqual(r.external, []);
    assert.equal(r.externalReasons?.['10.5.0.1'], 'node-unhealthy');
  });
});

// ------------------------------------------------------------------------------------------------------------
// h. dual-stack

describe('dual-stack: IPv4 and IPv6 slices are separate pools', () => {
  const nodes = [
    node('n1', { [H]: 'n1', [Z]: 'z1' }),
    node('n2', { [H]: 'n2', [Z]: 'z1' }),
    node('n3', { [H]: 'n3', [Z]: 'z2' }),
  ];
  const endpoints = () =>
    fromSlices(
      slice(
        'web-v4',
        [sliceEndpoint('10.0.0.2', { node: 'n2' }), sliceEndpoint('10.0.0.3', { node: 'n3' })],
        {
          addressType: 'IPv4',
        },
      ),
      slice('web-v6', [sliceEndpoint('fd00::1', { node: 'n1' }), sliceEndpoint('fd00::3', { node: 'n3' })], {
        addressType: 'IPv6',
      }),
    );

  for (const source of SOURCES) {
    it(`ordered keys via ${source} are evaluated per pool: hostname wins for IPv6 only`, () => {
      const r = run({ service: svc(ordered([H, Z], source)), endpoints: endpoints(), nodes, node: 'n1' });
      assert.deepEqual(r.internal, ['10.0.0.2', 'fd00::1']);
      assert.deepEqual(r.reasons, {
        '10.0.0.2': 'key-match',
        '10.0.0.3': 'other-unit',
        'fd00::1': 'key-match',
        'fd00::3': 'other-unit',
      });
      const pools = r.decision.internal.pools;
      assert.equal(pools.length, 2);
      const v4 = pools.find((p) => p.pool.startsWith('IPv4'));
      const v6 = pools.find((p) => p.pool.startsWith('IPv6'));
      assert.equal(v4?.matchedKey, Z);
      assert.equal(v6?.matchedKey, H);
    });

    it(`ordered keys via ${source}: [hostname] keeps IPv6 and leaves IPv4 with nothing`, () => {
      const r = run({ service: svc(ordered([H], source)), endpoints: endpoints(), nodes, node: 'n1' });
      assert.deepEqual(r.internal, ['fd00::1']);
      assert.equal(r.reasons['10.0.0.2'], 'no-key-matched');
      assert.equal(r.reasons['10.0.0.3'], 'no-key-matched');
    });
  }

  it('strict rules are per pool too: Local keeps only the IPv6 endpoint on this node', () => {
    const r = run({
      service: svc({ internalTrafficPolicy: 'Local' }),
      endpoints: endpoints(),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(r.internal, ['fd00::1']);
  });
});

describe('review regressions', () => {
  it('reads an unset serving condition as true, as kube-proxy does, so a terminating endpoint is a fallback', () => {
    const eps = fromSlices(
      slice('s', [sliceEndpoint('10.0.0.1', { node: 'n2', ready: false, terminating: true })]),
    );
    assert.equal(eps[0]?.serving, true);
    const r = run({ service: svc({}), endpoints: eps, nodes: [node('n1'), node('n2')], node: 'n1' });
    assert.deepEqual(r.internal, ['10.0.0.1']);
    assert.equal(r.reasons['10.0.0.1'], 'serving-terminating');
  });

  it('ordered keys in the terminating fallback judge a ready endpoint by topology, not as not ready', () => {
    const nodes = [node('a1', { [ZONE]: 'a' }), node('b1', { [ZONE]: 'b' })];
    const r = run({
      service: svc({ topologyKeys: [ZONE] }),
      endpoints: [
        ep('10.0.0.1', { node: 'b1' }),
        ep('10.0.0.2', { node: 'a1', ready: false, serving: true, terminating: true }),
      ],
      nodes,
      node: 'a1',
    });
    assert.deepEqual(r.internal, ['10.0.0.2']);
    assert.equal(r.reasons['10.0.0.1'], 'other-unit');
    assert.equal(r.reasons['10.0.0.2'], 'serving-terminating');
  });
});
