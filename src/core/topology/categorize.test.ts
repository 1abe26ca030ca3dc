// kube-proxy's CategorizeEndpoints (pkg/proxy/topology.go), as tables in the shape of upstream's
// pkg/proxy/topology_test.go, with 1.33+ semantics. Endpoints are written in a short notation: ".3{a}RL"
// is 10.0.0.3, hinted for zone a, ready (R), on this node (L); "S+T" is serving and terminating, not ready.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { categorizeEndpoints, type CategorizeService, type TopologyMode } from './categorize.js';
import {
  ZONE,
  TOPOLOGY_MODE,
  ep,
  fromSlices,
  node,
  run,
  slice,
  sliceEndpoint,
  svc,
} from './testing/builders.js';
import type { TopologyEndpoint } from './types.js';

const THIS_NODE = 'node-local';
const OTHER_NODE = 'node-remote';

/** ".3" → 10.0.0.3; flags: R ready (and serving), S serving, T terminating, L on this node. */
function e(
  short: string,
  flags: string,
  zones?: readonly string[],
  nodes?: readonly string[],
  nodeName?: string,
): TopologyEndpoint {
  const ready = flags.includes('R');
  return ep(`10.0.0${short}`, {
    ready,
    serving: ready || flags.includes('S'),
    terminating: flags.includes('T'),
    node: nodeName ?? (flags.includes('L') ? THIS_NODE : OTHER_NODE),
    ...(zones !== undefined ? { forZones: zones } : {}),
    ...(nodes !== undefined ? { forNodes: nodes } : {}),
  });
}

/** 10.0.0.3 → ".3", sorted. */
const short = (eps: readonly TopologyEndpoint[] | undefined): string[] | null =>
  eps === undefined ? null : eps.map((x) => (x.addresses[0] ?? '').replace(/^10\.0\.0/, '')).sort();

/** kube-proxy's service-port predicates (pkg/proxy/serviceport.go), from the Service's shape. */
function policy(p: {
  nodePort?: boolean;
  iTP?: 'Local' | 'Cluster';
  eTP?: 'Local' | 'Cluster';
}): CategorizeService {
  const externallyAccessible = p.nodePort === true;
  const internalPolicyLocal = p.iTP === 'Local';
  const externalPolicyLocal = externallyAccessible && p.eTP === 'Local';
  return {
    usesCluster: !internalPolicyLocal || externallyAccessible,
    usesLocal: internalPolicyLocal || externalPolicyLocal,
  };
}

const CLUSTER_IP = policy({});

interface Row {
  readonly name: string;
  readonly svc: CategorizeService;
  /** The node's topology.kubernetes.io/zone label ("" when it has none). */
  readonly zone: string;
  readonly eps: readonly TopologyEndpoint[];
  /** null: absent (nil). */
  readonly cluster: readonly string[] | null;
  readonly local: readonly string[] | null;
  /** Defaults to cluster when local is null (step 2: all = cluster). */
  readonly all?: readonly string[];
  readonly hasAny: boolean;
  readonly mode?: TopologyMode;
  readonly servingTerminating?: boolean;
}

const ZONE_HINTED = [e('.3', 'R', ['a']), e('.4', 'R', ['b']), e('.5', 'R', ['c']), e('.6', 'R', ['a'])];
const ZONE_HINTED_LOCAL = [
  e('.3', 'RL', ['a']),
  e('.4', 'RL', ['b']),
  e('.5', 'R', ['c']),
  e('.6', 'R', ['a']),
];

const rows: Row[] = [
  {
    name: 'ClusterIP, zone a: only the endpoints hinted for a',
    svc: CLUSTER_IP,
    zone: 'a',
    eps: ZONE_HINTED,
    cluster: ['.3', '.6'],
    local: null,
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'NodePort eTP=Local, zone a',
    svc: policy({ nodePort: true, eTP: 'Local' }),
    zone: 'a',
    eps: ZONE_HINTED_LOCAL,
    cluster: ['.3', '.6'],
    local: ['.3', '.4'],
    all: ['.3', '.4', '.6'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'NodePort iTP=Local, zone a',
    svc: policy({ nodePort: true, iTP: 'Local' }),
    zone: 'a',
    eps: ZONE_HINTED_LOCAL,
    cluster: ['.3', '.6'],
    local: ['.3', '.4'],
    all: ['.3', '.4', '.6'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'ClusterIP, node with no labels (zone "")',
    svc: CLUSTER_IP,
    zone: '',
    eps: [e('.3', 'R', ['a'])],
    cluster: ['.3'],
    local: null,
    hasAny: true,
    mode: '',
  },
  {
    name: 'ClusterIP, zone label ""',
    svc: CLUSTER_IP,
    zone: '',
    eps: [e('.3', 'R', ['a'])],
    cluster: ['.3'],
    local: null,
    hasAny: true,
    mode: '',
  },
  {
    name: 'ClusterIP, zone b with no endpoint hinted for b: no filtering',
    svc: CLUSTER_IP,
    zone: 'b',
    eps: [e('.3', 'R', ['a'])],
    cluster: ['.3'],
    local: null,
    hasAny: true,
    mode: '',
  },
  {
    name: 'ClusterIP, zone a, a not-ready endpoint hinted for a is not used',
    svc: CLUSTER_IP,
    zone: 'a',
    eps: [e('.3', 'R', ['a']), e('.4', 'R', ['b']), e('.5', 'R', ['c']), e('.6', '', ['a'])],
    cluster: ['.3'],
    local: null,
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'ClusterIP, zone a, no ready endpoint in a: no filtering',
    svc: CLUSTER_IP,
    zone: 'a',
    eps: [e('.3', '', ['a']), e('.4', 'R', ['b']), e('.5', 'R', ['c']), e('.6', '', ['a'])],
    cluster: ['.4', '.5'],
    local: null,
    hasAny: true,
    mode: '',
  },
  {
    name: 'ClusterIP, zone a, one ready endpoint without a hint: no filtering',
    svc: CLUSTER_IP,
    zone: 'a',
    eps: [e('.3', 'R', ['a']), e('.4', 'R', ['b']), e('.5', 'R', []), e('.6', 'R', ['a'])],
    cluster: ['.3', '.4', '.5', '.6'],
    local: null,
    hasAny: true,
    mode: '',
  },
  {
    name: 'ClusterIP, zone c, endpoints hinted for several zones',
    svc: CLUSTER_IP,
    zone: 'c',
    eps: [
      e('.3', 'R', ['a', 'b', 'c']),
      e('.4', 'R', ['b', 'c']),
      e('.5', 'R', ['b', 'd']),
      e('.6', 'R', ['c']),
    ],
    cluster: ['.3', '.4', '.6'],
    local: null,
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'NodePort eTP=Local, zone a, 10.0.0.0-3',
    svc: policy({ nodePort: true, eTP: 'Local' }),
    zone: 'a',
    eps: [e('.0', 'RL', ['a']), e('.1', 'RL', ['b']), e('.2', 'R', ['a']), e('.3', 'R', ['b'])],
    cluster: ['.0', '.2'],
    local: ['.0', '.1'],
    all: ['.0', '.1', '.2'],
    hasAny: true,
    mode: 'PreferSameZone',
  },
  {
    name: 'ClusterIP iTP=Local, no endpoints',
    svc: policy({ iTP: 'Local' }),
    zone: '',
    eps: [],
    cluster: null,
    local: [],
    all: [],
    hasAny: false,
  },
  {
    name: 'ClusterIP iTP=Local, only remote ready endpoints: none, but hasAny',
    svc: policy({ iTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'R'), e('.1', 'R')],
    cluster: null,
    local: [],
    all: [],
    hasAny: true,
  },
  {
    name: 'ClusterIP iTP=Local, two local ready endpoints',
    svc: policy({ iTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'RL'), e('.1', 'RL')],
    cluster: null,
    local: ['.0', '.1'],
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'ClusterIP iTP=Local, one local and one remote',
    svc: policy({ iTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'RL'), e('.1', 'R')],
    cluster: null,
    local: ['.0'],
    all: ['.0'],
    hasAny: true,
  },
  {
    name: 'ClusterIP, nothing ready',
    svc: CLUSTER_IP,
    zone: '',
    eps: [e('.0', ''), e('.1', '')],
    cluster: [],
    local: null,
    hasAny: false,
  },
  {
    name: 'ClusterIP, one not ready and one ready',
    svc: CLUSTER_IP,
    zone: '',
    eps: [e('.0', ''), e('.1', 'R')],
    cluster: ['.1'],
    local: null,
    hasAny: true,
  },
  {
    name: 'ClusterIP, only serving-terminating endpoints: terminating fallback',
    svc: CLUSTER_IP,
    zone: '',
    eps: [e('.0', 'STL'), e('.1', 'ST')],
    cluster: ['.0', '.1'],
    local: null,
    hasAny: true,
    servingTerminating: true,
  },
  {
    name: 'NodePort iTP=Local eTP=Cluster',
    svc: policy({ nodePort: true, iTP: 'Local', eTP: 'Cluster' }),
    zone: '',
    eps: [e('.0', 'RL'), e('.1', 'R')],
    cluster: ['.0', '.1'],
    local: ['.0'],
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'NodePort iTP=Cluster eTP=Local',
    svc: policy({ nodePort: true, iTP: 'Cluster', eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'RL'), e('.1', 'R')],
    cluster: ['.0', '.1'],
    local: ['.0'],
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'NodePort iTP=Local eTP=Local',
    svc: policy({ nodePort: true, iTP: 'Local', eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'RL'), e('.1', 'R')],
    cluster: ['.0', '.1'],
    local: ['.0'],
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'NodePort both Local, only remote ready endpoints',
    svc: policy({ nodePort: true, iTP: 'Local', eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'R'), e('.1', 'R')],
    cluster: ['.0', '.1'],
    local: [],
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'NodePort both Local, only remote serving-terminating endpoints',
    svc: policy({ nodePort: true, iTP: 'Local', eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'ST'), e('.1', 'ST')],
    cluster: ['.0', '.1'],
    local: [],
    all: ['.0', '.1'],
    hasAny: true,
    servingTerminating: true,
  },
  {
    name: 'NodePort eTP=Local: remote ready, local not serving, local and remote serving-terminating',
    svc: policy({ nodePort: true, eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'R'), e('.1', 'L'), e('.2', 'STL'), e('.3', 'ST')],
    cluster: ['.0'],
    local: ['.2'],
    all: ['.0', '.2'],
    hasAny: true,
  },
  {
    name: 'ClusterIP with eTP=Local but not externally accessible',
    svc: policy({ eTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'R'), e('.1', 'RL')],
    cluster: ['.0', '.1'],
    local: null,
    all: ['.0', '.1'],
    hasAny: true,
  },
  {
    name: 'ClusterIP iTP=Local (internal only)',
    svc: policy({ iTP: 'Local' }),
    zone: '',
    eps: [e('.0', 'R'), e('.1', 'RL')],
    cluster: null,
    local: ['.1'],
    all: ['.1'],
    hasAny: true,
  },
];

describe('categorizeEndpoints: upstream topology_test.go vectors', () => {
  for (const r of rows) {
    it(r.name, () => {
      const c = categorizeEndpoints(r.eps, r.svc, THIS_NODE, r.zone);
      assert.deepEqual(short(c.cluster), r.cluster, 'cluster');
      assert.deepEqual(short(c.local), r.local, 'local');
      assert.deepEqual(short(c.all), [...(r.all ?? r.cluster ?? [])].sort(), 'all');
      assert.equal(c.hasAny, r.hasAny, 'hasAny');
      if (r.mode !== undefined) assert.equal(c.mode, r.mode, 'mode');
      assert.equal(c.servingTerminating, r.servingTerminating ?? false, 'servingTerminating');
    });
  }

  it('the service-port predicates: UsesClusterEndpoints and UsesLocalEndpoints', () => {
    assert.deepEqual(policy({}), { usesCluster: true, usesLocal: false });
    assert.deepEqual(policy({ iTP: 'Local' }), { usesCluster: false, usesLocal: true });
    assert.deepEqual(policy({ eTP: 'Local' }), { usesCluster: true, usesLocal: false });
    assert.deepEqual(policy({ nodePort: true, eTP: 'Local' }), { usesCluster: true, usesLocal: true });
    assert.deepEqual(policy({ nodePort: true, iTP: 'Local' }), { usesCluster: true, usesLocal: true });
  });
});

describe('categorizeEndpoints: PreferSameNode vectors (gate on, the 1.34+ default)', () => {
  // node-1 is in zone a; .3{a}{node-1} .4{b}{node-2} .5{c}{node-3} .6{a}{node-4}
  const vectors = (noHintsOn4 = false): TopologyEndpoint[] => [
    e('.3', 'R', ['a'], ['node-1'], 'node-1'),
    noHintsOn4 ? e('.4', 'R', undefined, undefined, 'node-2') : e('.4', 'R', ['b'], ['node-2'], 'node-2'),
    e('.5', 'R', ['c'], ['node-3'], 'node-3'),
    e('.6', 'R', ['a'], ['node-4'], 'node-4'),
  ];

  it('node-1: only the endpoint hinted for node-1', () => {
    const c = categorizeEndpoints(vectors(), CLUSTER_IP, 'node-1', 'a');
    assert.deepEqual(short(c.cluster), ['.3']);
    assert.equal(c.mode, 'PreferSameNode');
  });

  it('.4 has no hints at all: no node and no zone filtering, all 4', () => {
    const c = categorizeEndpoints(vectors(true), CLUSTER_IP, 'node-1', 'a');
    assert.deepEqual(short(c.cluster), ['.3', '.4', '.5', '.6']);
    assert.equal(c.mode, '');
  });

  it('node-0 (no endpoint hinted for it) falls back to its zone: .3 and .6', () => {
    const c = categorizeEndpoints(vectors(), CLUSTER_IP, 'node-0', 'a');
    assert.deepEqual(short(c.cluster), ['.3', '.6']);
    assert.equal(c.mode, 'PreferSameZone');
  });
  // "gate off → .3,.6" is not expressible: categorizeEndpoints models the gate as on.
});

describe('categorizeEndpoints: annotation-free rules (1.31+: hints in the slices are honoured as they are)', () => {
  it('the mode looks at ready endpoints only: a not-ready endpoint without hints does not disable it', () => {
    const c = categorizeEndpoints(
      [e('.3', 'R', ['a']), e('.4', 'R', ['b']), e('.5', ''), e('.6', 'ST')],
      CLUSTER_IP,
      THIS_NODE,
      'a',
    );
    assert.deepEqual(short(c.cluster), ['.3']);
    assert.equal(c.mode, 'PreferSameZone');
  });

  it('node hints on only some ready endpoints: zone hints decide', () => {
    const c = categorizeEndpoints(
      [e('.3', 'R', ['a'], [THIS_NODE]), e('.4', 'R', ['a']), e('.5', 'R', ['b'])],
      CLUSTER_IP,
      THIS_NODE,
      'a',
    );
    assert.deepEqual(short(c.cluster), ['.3', '.4']);
    assert.equal(c.mode, 'PreferSameZone');
  });

  it('the serving-terminating fallback ignores hints', () => {
    const c = categorizeEndpoints([e('.3', 'ST', ['a']), e('.4', 'ST', ['b'])], CLUSTER_IP, THIS_NODE, 'a');
    assert.deepEqual(short(c.cluster), ['.3', '.4']);
    assert.equal(c.servingTerminating, true);
  });

  it('a node without a zone label matches no zone hint', () => {
    const c = categorizeEndpoints([e('.3', 'R', ['a']), e('.4', 'R', ['b'])], CLUSTER_IP, THIS_NODE, '');
    assert.deepEqual(short(c.cluster), ['.3', '.4']);
    assert.equal(c.mode, '');
  });

  // The same through decide(): with no annotation and no trafficDistribution, hints in the slices apply; the
  // topology-mode annotation's value does not change kube-proxy's selection.
  const nodes = [node('n1', { [ZONE]: 'a' }), node('n2', { [ZONE]: 'b' }), node('bare', {})];
  const hintedSlices = () =>
    fromSlices(
      slice('web-1', [
        sliceEndpoint('10.0.0.3', { node: 'n1', zone: 'a', forZones: ['a'] }),
        sliceEndpoint('10.0.0.4', { node: 'n2', zone: 'b', forZones: ['b'] }),
      ]),
    );
  const plainSlices = () =>
    fromSlices(
      slice('web-1', [
        sliceEndpoint('10.0.0.3', { node: 'n1', zone: 'a' }),
        sliceEndpoint('10.0.0.4', { node: 'n2', zone: 'b' }),
      ]),
    );

  for (const [label, annotations] of [
    ['no annotation', {}],
    ['topology-mode "disabled"', { [TOPOLOGY_MODE]: 'disabled' }],
    ['topology-mode "aUto"', { [TOPOLOGY_MODE]: 'aUto' }],
    ['topology-mode "Auto"', { [TOPOLOGY_MODE]: 'Auto' }],
  ] as const) {
    it(`decide: hinted slices with ${label}: zone hints apply`, () => {
      const r = run({ service: svc({ annotations }), endpoints: hintedSlices(), nodes, node: 'n1' });
      assert.deepEqual(r.internal, ['10.0.0.3']);
      assert.deepEqual(r.reasons, { '10.0.0.3': 'hint-zone', '10.0.0.4': 'not-hinted' });
      assert.equal(r.decision.internal.rule.kind, 'hints');
    });
  }

  it('decide: hinted slices, client node without labels: every ready endpoint', () => {
    const r = run({ service: svc(), endpoints: hintedSlices(), nodes, node: 'bare' });
    assert.deepEqual(r.internal, ['10.0.0.3', '10.0.0.4']);
    assert.equal(r.decision.internal.pools[0]?.mode, '');
  });

  it('decide: topology-mode Auto without hints in the slices: every ready endpoint', () => {
    const r = run({
      service: svc({ annotations: { [TOPOLOGY_MODE]: 'Auto' } }),
      endpoints: plainSlices(),
      nodes,
      node: 'n1',
    });
    assert.deepEqual(r.internal, ['10.0.0.3', '10.0.0.4']);
    assert.deepEqual(r.reasons, { '10.0.0.3': 'cluster', '10.0.0.4': 'cluster' });
  });

  it('decide: no hints and nothing asked for: no rule', () => {
    const r = run({ service: svc(), endpoints: plainSlices(), nodes, node: 'n1' });
    assert.deepEqual(r.internal, ['10.0.0.3', '10.0.0.4']);
    assert.deepEqual(r.reasons, { '10.0.0.3': 'no-rule', '10.0.0.4': 'no-rule' });
    assert.equal(r.decision.internal.rule.kind, 'none');
  });
});
