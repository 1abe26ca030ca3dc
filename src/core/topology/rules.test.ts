// Reading a Service's topology settings (topologyService), the rules it carries (serviceRules), which one
// decides (chooseRules) and what is reported (topologyProblems). The externally-accessible predicate is
// kube-proxy's (pkg/proxy/serviceport.go); the annotation-era hint values are the EndpointSlice
// controller's (topology-mode, and the older topology-aware-hints, "Auto" or "auto"); the precedence is the
// one rules.ts documents.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseRules, serviceRules, topologyProblems, topologyService } from './rules.js';
import {
  HOSTNAME,
  OPENYURT_KEYS,
  SUPEREDGE_KEYS,
  SVCPLANE_KEYS,
  TOPOLOGY_MODE,
  ZONE,
  svc,
  svcJSON,
  type SvcOptions,
} from './testing/builders.js';
import type { RuleKind, RuleSource } from './types.js';

const SITE = 'example.com/site';

/** svcJSON with its spec/status patched by hand, for wrong-typed fields. */
function patched(o: SvcOptions, spec: Record<string, unknown>, status?: unknown) {
  const base = svcJSON(o);
  return {
    metadata: base.metadata,
    spec: { ...(base.spec as Record<string, unknown>), ...spec },
    status: status === undefined ? base.status : status,
  };
}

describe('topologyService: reading a Service', () => {
  it('reads the fields the engine needs', () => {
    const s = svc({
      name: 'api',
      namespace: 'shop',
      topologyKeys: [HOSTNAME, '*'],
      superedge: [SITE],
      internalTrafficPolicy: 'Local',
      externalTrafficPolicy: 'Cluster',
      trafficDistribution: 'PreferClose',
    });
    assert.equal(s.name, 'api');
    assert.equal(s.namespace, 'shop');
    assert.deepEqual(s.topologyKeys, [HOSTNAME, '*']);
    assert.deepEqual(s.annotations, { [SUPEREDGE_KEYS]: JSON.stringify([SITE]) });
    // Only what a rule reads is kept: kubectl's last-applied configuration is not.
    const applied = topologyService({
      metadata: {
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{"big":"x"}',
          'service.kubernetes.io/topology-mode': 'Auto',
        },
      },
    });
    assert.deepEqual(applied.annotations, { 'service.kubernetes.io/topology-mode': 'Auto' });
    assert.equal(s.internalTrafficPolicy, 'Local');
    assert.equal(s.externalTrafficPolicy, 'Cluster');
    assert.equal(s.trafficDistribution, 'PreferClose');
    assert.equal(s.externallyAccessible, false);
  });

  describe('externallyAccessible: nodePort ≠ 0, a load-balancer VIP, or an external IP', () => {
    const rows: readonly (readonly [string, ReturnType<typeof svcJSON>, boolean])[] = [
      ['a plain ClusterIP', svcJSON(), false],
      ['a NodePort with a node port', svcJSON({ type: 'NodePort', nodePort: 30080 }), true],
      ['a LoadBalancer with a node port', svcJSON({ type: 'LoadBalancer' }), true],
      ['node port 0', svcJSON({ type: 'NodePort', nodePort: 0 }), false],
      ['externalIPs', svcJSON({ externalIPs: ['192.0.2.10'] }), true],
      ['empty externalIPs', svcJSON({ externalIPs: [] }), false],
      ['a load-balancer ingress IP', svcJSON({ lbIngress: [{ ip: '203.0.113.7' }] }), true],
      ['an empty load-balancer ingress list', svcJSON({ lbIngress: [] }), false],
      // A hostname-only ingress carries no VIP (kube-proxy's LoadBalancerVIPs take ingress[].ip only).
      [
        'a hostname-only load-balancer ingress',
        svcJSON({ lbIngress: [{ hostname: 'lb.example.com' }] }),
        false,
      ],
      // wrong-typed fields read as absent
      ['a node port given as a string', patched({}, { ports: [{ port: 80, nodePort: '30080' }] }), false],
      ['ports not a list', patched({}, { ports: { port: 80, nodePort: 30080 } }), false],
      ['externalIPs not a list', patched({}, { externalIPs: '192.0.2.10' }), false],
      ['externalIPs entries not strings', patched({}, { externalIPs: [7] }), false],
      ['ingress not a list', patched({}, {}, { loadBalancer: { ingress: { ip: '203.0.113.7' } } }), false],
      ['ingress entries not objects', patched({}, {}, { loadBalancer: { ingress: ['203.0.113.7'] } }), false],
      ['status not an object', patched({}, {}, 'broken'), false],
    ];
    for (const [label, json, want] of rows) {
      it(label, () => assert.equal(topologyService(json).externallyAccessible, want));
    }
  });

  it('wrong-typed fields read as absent', () => {
    const s = topologyService({
      metadata: {
        name: 7,
        namespace: 'default',
        annotations: { [SUPEREDGE_KEYS]: 5, 'openyurt.io/topologyKeys': 'kubernetes.io/hostname' },
      },
      spec: {
        topologyKeys: HOSTNAME,
        internalTrafficPolicy: 5,
        externalTrafficPolicy: ['Local'],
        trafficDistribution: {},
      },
    });
    assert.equal(s.name, '');
    assert.equal(s.namespace, 'default');
    assert.deepEqual(s.annotations, { 'openyurt.io/topologyKeys': 'kubernetes.io/hostname' });
    assert.deepEqual(s.topologyKeys, []);
    assert.equal(s.internalTrafficPolicy, undefined);
    assert.equal(s.externalTrafficPolicy, undefined);
    assert.equal(s.trafficDistribution, undefined);
    assert.equal(s.externallyAccessible, false);
  });

  it('missing or non-object metadata, spec and status', () => {
    for (const json of [{}, { metadata: null, spec: 'x', status: [] }]) {
      const s = topologyService(json);
      assert.equal(s.name, '');
      assert.equal(s.namespace, '');
      assert.deepEqual(s.annotations, {});
      assert.deepEqual(s.topologyKeys, []);
      assert.equal(s.externallyAccessible, false);
    }
  });
});

describe('serviceRules: the rules a Service carries', () => {
  it('none', () => {
    const r = serviceRules(svc());
    assert.deepEqual(r, { internalLocal: false, externalLocal: false, problems: [] });
  });

  it('spec.topologyKeys, the svcplane annotation, and spec winning over it', () => {
    assert.deepEqual(serviceRules(svc({ topologyKeys: [HOSTNAME, ZONE] })).ordered, {
      kind: 'ordered-keys',
      source: 'spec.topologyKeys',
      keys: [HOSTNAME, ZONE],
    });
    assert.deepEqual(serviceRules(svc({ svcplaneKeys: [ZONE, '*'] })).ordered, {
      kind: 'ordered-keys',
      source: `annotation ${SVCPLANE_KEYS}`,
      keys: [ZONE, '*'],
    });
    const both = serviceRules(svc({ topologyKeys: [HOSTNAME], svcplaneKeys: [ZONE] }));
    assert.equal(both.ordered?.source, 'spec.topologyKeys');
    assert.equal(both.problems.length, 1);
    assert.equal(both.problems[0]?.reason, 'TopologyRuleConflict');
  });

  it('empty lists are no rule, silently', () => {
    const r = serviceRules(svc({ topologyKeys: [], svcplaneKeys: [], superedge: [] }));
    assert.equal(r.ordered, undefined);
    assert.equal(r.superedge, undefined);
    assert.deepEqual(r.problems, []);
  });

  it('the svcplane annotation is validated as the API validates spec.topologyKeys', () => {
    const r = serviceRules(svc({ svcplaneKeys: ['*', ZONE] }));
    assert.deepEqual(r.problems, [
      {
        reason: 'InvalidTopologyAnnotation',
        message: `metadata.annotations[${SVCPLANE_KEYS}][0]: Invalid value: "*": "*" must be the last value specified`,
      },
    ]);
    assert.deepEqual(r.ordered?.keys, ['*', ZONE]);
    // KEP-536: topologyKeys cannot be combined with externalTrafficPolicy=Local.
    const etp = serviceRules(svc({ type: 'NodePort', svcplaneKeys: [ZONE], externalTrafficPolicy: 'Local' }));
    assert.ok(
      etp.problems.some(
        (p) => p.reason === 'InvalidTopologyAnnotation' && p.message.includes('externalTrafficPolicy=Local'),
      ),
    );
  });

  it('SuperEdge: a JSON array of keys', () => {
    assert.deepEqual(serviceRules(svc({ superedge: [SITE, ZONE] })).superedge, {
      kind: 'superedge',
      source: 'annotation topologyKeys',
      keys: [SITE, ZONE],
    });
    for (const raw of ['["a"', '"a"', '[1]', '{"a":"b"}', '']) {
      const r = serviceRules(svc({ superedge: raw }));
      assert.equal(r.superedge, undefined, raw);
      assert.equal(r.problems.length, 1, raw);
      assert.equal(r.problems[0]?.reason, 'InvalidTopologyAnnotation', raw);
      assert.match(r.problems[0]?.message ?? '', /metadata\.annotations\[topologyKeys\]/, raw);
    }
  });

  it('SuperEdge with "*": kept as written, and reported (it matches nothing)', () => {
    const r = serviceRules(svc({ superedge: [SITE, '*'] }));
    assert.deepEqual(r.superedge?.keys, [SITE, '*']);
    assert.equal(r.problems.length, 1);
    assert.equal(r.problems[0]?.reason, 'InvalidTopologyAnnotation');
  });

  it('OpenYurt: one of three values', () => {
    for (const v of [HOSTNAME, 'openyurt.io/nodepool', 'kubernetes.io/zone']) {
      const r = serviceRules(svc({ openyurt: v }));
      assert.deepEqual(r.openyurt, { kind: 'openyurt', source: `annotation ${OPENYURT_KEYS}`, keys: [v] });
      assert.deepEqual(r.problems, []);
    }
    assert.deepEqual(serviceRules(svc({ openyurt: '' })), {
      internalLocal: false,
      externalLocal: false,
      problems: [],
    });
    for (const v of [ZONE, 'openyurt.io/NodePool', 'kubernetes.io/hostname ']) {
      const r = serviceRules(svc({ openyurt: v }));
      assert.equal(r.openyurt, undefined, v);
      assert.equal(r.problems.length, 1, v);
      assert.equal(r.problems[0]?.reason, 'InvalidTopologyAnnotation', v);
    }
  });

  it('hints are asked for by trafficDistribution, or by topology-mode "Auto"/"auto" only (annotation era)', () => {
    assert.notEqual(serviceRules(svc({ trafficDistribution: 'PreferClose' })).hintsRequested, undefined);
    assert.notEqual(serviceRules(svc({ trafficDistribution: 'PreferSameNode' })).hintsRequested, undefined);
    for (const v of ['Auto', 'auto'])
      assert.notEqual(
        serviceRules(svc({ annotations: { [TOPOLOGY_MODE]: v } })).hintsRequested,
        undefined,
        v,
      );
    assert.notEqual(
      serviceRules(svc({ annotations: { 'service.kubernetes.io/topology-aware-hints': 'auto' } }))
        .hintsRequested,
      undefined,
    );
    for (const v of ['', 'disabled', 'Disabled', 'aUto', 'PreferZone'])
      assert.equal(serviceRules(svc({ annotations: { [TOPOLOGY_MODE]: v } })).hintsRequested, undefined, v);
  });

  it('traffic policies: eTP Local counts only when externally accessible', () => {
    assert.equal(serviceRules(svc({ internalTrafficPolicy: 'Local' })).internalLocal, true);
    assert.equal(serviceRules(svc({ internalTrafficPolicy: 'Cluster' })).internalLocal, false);
    assert.equal(serviceRules(svc({ externalTrafficPolicy: 'Local' })).externalLocal, false);
    assert.equal(serviceRules(svc({ type: 'NodePort', externalTrafficPolicy: 'Local' })).externalLocal, true);
    assert.equal(
      serviceRules(svc({ externalIPs: ['192.0.2.10'], externalTrafficPolicy: 'Local' })).externalLocal,
      true,
    );
  });
});

describe('chooseRules: precedence (Local, ordered keys, SuperEdge, OpenYurt, hints, none)', () => {
  interface Row {
    readonly name: string;
    readonly service: SvcOptions;
    readonly hinted?: boolean;
    readonly internal: readonly [RuleKind, RuleSource];
    /** null: no external decision. */
    readonly external: readonly [RuleKind, RuleSource] | null;
    /** Expected TopologyRuleConflict messages, as patterns, in order. */
    readonly conflicts: readonly RegExp[];
  }
  const rows: Row[] = [
    { name: 'nothing', service: {}, internal: ['none', 'none'], external: null, conflicts: [] },
    {
      name: 'hints in the slices, nothing asked for',
      service: {},
      hinted: true,
      internal: ['hints', 'endpoint hints'],
      external: null,
      conflicts: [],
    },
    {
      name: 'trafficDistribution',
      service: { trafficDistribution: 'PreferClose' },
      internal: ['hints', 'endpoint hints'],
      external: null,
      conflicts: [],
    },
    {
      name: 'OpenYurt over hints in the slices (nothing asked for: no conflict)',
      service: { openyurt: HOSTNAME },
      hinted: true,
      internal: ['openyurt', 'annotation openyurt.io/topologyKeys'],
      external: null,
      conflicts: [],
    },
    {
      name: 'OpenYurt over topology-mode Auto',
      service: { openyurt: HOSTNAME, annotations: { [TOPOLOGY_MODE]: 'Auto' } },
      internal: ['openyurt', 'annotation openyurt.io/topologyKeys'],
      external: null,
      conflicts: [/topology-mode=Auto/],
    },
    {
      name: 'SuperEdge over OpenYurt',
      service: { superedge: [SITE], openyurt: HOSTNAME },
      internal: ['superedge', 'annotation topologyKeys'],
      external: null,
      conflicts: [/^annotation topologyKeys decides.*openyurt\.io\/topologyKeys is ignored/],
    },
    {
      name: 'svcplane ordered keys over SuperEdge and OpenYurt',
      service: { svcplaneKeys: [ZONE], superedge: [SITE], openyurt: HOSTNAME },
      internal: ['ordered-keys', `annotation ${SVCPLANE_KEYS}`],
      external: null,
      conflicts: [/annotation topologyKeys, annotation openyurt\.io\/topologyKeys are ignored/],
    },
    {
      name: 'spec.topologyKeys over a different svcplane annotation and SuperEdge',
      service: { topologyKeys: [ZONE], svcplaneKeys: [HOSTNAME], superedge: [SITE] },
      internal: ['ordered-keys', 'spec.topologyKeys'],
      external: null,
      conflicts: [/spec\.topologyKeys decides/, /annotation topologyKeys is ignored/],
    },
    {
      name: 'internalTrafficPolicy Local alone',
      service: { internalTrafficPolicy: 'Local' },
      internal: ['local', 'spec.internalTrafficPolicy'],
      external: null,
      conflicts: [],
    },
    {
      name: 'internalTrafficPolicy Local over trafficDistribution (upstream: Local takes precedence)',
      service: { internalTrafficPolicy: 'Local', trafficDistribution: 'PreferClose' },
      internal: ['local', 'spec.internalTrafficPolicy'],
      external: null,
      conflicts: [],
    },
    {
      name: 'internalTrafficPolicy Local over SuperEdge',
      service: { internalTrafficPolicy: 'Local', superedge: [SITE] },
      internal: ['local', 'spec.internalTrafficPolicy'],
      external: null,
      conflicts: [/internalTrafficPolicy=Local decides internal traffic.*annotation topologyKeys is ignored/],
    },
    {
      name: 'NodePort, internalTrafficPolicy Local and SuperEdge: SuperEdge for external traffic',
      service: { type: 'NodePort', internalTrafficPolicy: 'Local', superedge: [SITE] },
      internal: ['local', 'spec.internalTrafficPolicy'],
      external: ['superedge', 'annotation topologyKeys'],
      conflicts: [/annotation topologyKeys applies to external traffic only/],
    },
    {
      name: 'NodePort, externalTrafficPolicy Local and SuperEdge: SuperEdge for internal traffic',
      service: { type: 'NodePort', externalTrafficPolicy: 'Local', superedge: [SITE] },
      internal: ['superedge', 'annotation topologyKeys'],
      external: ['local', 'spec.externalTrafficPolicy'],
      conflicts: [/externalTrafficPolicy=Local decides external traffic.*applies to internal traffic only/],
    },
    {
      name: 'NodePort with spec.topologyKeys: the keys decide both',
      service: { type: 'NodePort', topologyKeys: [HOSTNAME, '*'] },
      internal: ['ordered-keys', 'spec.topologyKeys'],
      external: ['ordered-keys', 'spec.topologyKeys'],
      conflicts: [],
    },
    {
      name: 'load-balancer ingress with externalTrafficPolicy Local',
      service: { lbIngress: [{ ip: '203.0.113.7' }], externalTrafficPolicy: 'Local' },
      internal: ['none', 'none'],
      external: ['local', 'spec.externalTrafficPolicy'],
      conflicts: [],
    },
    {
      name: 'ClusterIP with externalTrafficPolicy Local: no external decision',
      service: { externalTrafficPolicy: 'Local' },
      internal: ['none', 'none'],
      external: null,
      conflicts: [],
    },
  ];

  for (const row of rows) {
    it(row.name, () => {
      const s = svc(row.service);
      const c = chooseRules(s, serviceRules(s), row.hinted ?? false);
      assert.deepEqual([c.internal.kind, c.internal.source], row.internal);
      assert.deepEqual(c.external === undefined ? null : [c.external.kind, c.external.source], row.external);
      assert.equal('external' in c, row.external !== null);
      const conflicts = c.problems.filter((p) => p.reason === 'TopologyRuleConflict');
      assert.equal(conflicts.length, row.conflicts.length, JSON.stringify(c.problems));
      row.conflicts.forEach((re, i) => assert.match(conflicts[i]?.message ?? '', re));
      assert.deepEqual(
        c.problems.filter((p) => p.reason !== 'TopologyRuleConflict'),
        [],
      );
    });
  }

  it('the rule deciding external traffic, when it is the base rule, is the same rule as internal', () => {
    const s = svc({ type: 'NodePort', superedge: [SITE] });
    const c = chooseRules(s, serviceRules(s));
    assert.deepEqual(c.external, c.internal);
  });
});

describe('topologyProblems: every problem of a Service as JSON', () => {
  it('a clean Service has none', () => {
    assert.deepEqual(topologyProblems(svcJSON({ superedge: [SITE] })), []);
    assert.deepEqual(topologyProblems(svcJSON()), []);
  });

  it('malformed annotations and conflicts, together', () => {
    const problems = topologyProblems(
      svcJSON({
        superedge: 'not json',
        openyurt: ZONE,
        svcplaneKeys: [HOSTNAME],
        trafficDistribution: 'PreferClose',
      }),
    );
    assert.deepEqual(
      problems.map((p) => p.reason),
      ['InvalidTopologyAnnotation', 'InvalidTopologyAnnotation', 'TopologyRuleConflict'],
    );
    assert.match(problems[2]?.message ?? '', /spec\.trafficDistribution=PreferClose is ignored/);
  });
});

describe('topologyService: load-balancer VIPs', () => {
  it('does not count an ingress with ipMode Proxy as a VIP (kube-proxy skips it)', () => {
    const s = (ingress: unknown[]) =>
      topologyService({
        metadata: { name: 'x' },
        spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
        status: { loadBalancer: { ingress } },
      });
    assert.equal(s([{ ip: '203.0.113.7', ipMode: 'Proxy' }]).externallyAccessible, false);
    assert.equal(s([{ ip: '203.0.113.7', ipMode: 'VIP' }]).externallyAccessible, true);
    assert.equal(s([{ ip: '203.0.113.7' }]).externallyAccessible, true);
  });
});
