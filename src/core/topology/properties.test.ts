// Property tests for decide(): random nodes, endpoints, Services and clients over small alphabets (so that
// labels collide), checked against invariants computed independently of the engine.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decide, type DecideInput } from './decide.js';
import {
  HOSTNAME_LABEL,
  OPENYURT_KEYS_ANNOTATION,
  OPENYURT_NODEPOOL_LABEL,
  SUPEREDGE_KEYS_ANNOTATION,
  ZONE_LABEL,
} from './rules.js';
import type { Labels, RuleKind, TopologyEndpoint, TopologyService, TrafficDecision } from './types.js';

const RUNS = 300;
const KEYS = ['unit', ZONE_LABEL, HOSTNAME_LABEL, OPENYURT_NODEPOOL_LABEL];
const VALUES = ['a', 'b', 'n1'];
const NODES = ['n1', 'n2', 'n3', 'n4'];
/** Node names an endpoint or client may carry: `ghost` is never in the lookup. */
const NAMES = [...NODES, 'ghost'];
const POOLS = ['IPv4|:TCP:80', 'IPv6|:TCP:80', 'IPv4|web:TCP:8080'];

type Choice =
  | { readonly kind: 'none' }
  | { readonly kind: 'ordered'; readonly keys: readonly string[] }
  | { readonly kind: 'superedge'; readonly keys: readonly string[] }
  | { readonly kind: 'openyurt'; readonly value: string }
  | { readonly kind: 'itp-local' }
  | { readonly kind: 'etp-local' }
  | { readonly kind: 'distribution' };

const labelsArb: fc.Arbitrary<Labels> = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), {
  maxKeys: 4,
});
/** Some nodes are missing from the lookup. */
const nodesArb: fc.Arbitrary<Readonly<Record<string, Labels | undefined>>> = fc.record(
  Object.fromEntries(NODES.map((n) => [n, labelsArb])),
  { requiredKeys: [] },
);
const healthArb: fc.Arbitrary<Readonly<Record<string, boolean>>> = fc.dictionary(
  fc.constantFrom(...NAMES),
  fc.boolean(),
  { maxKeys: 3 },
);

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const rawEndpointArb = fc.record({
  pool: fc.constantFrom(...POOLS),
  ready: fc.boolean(),
  serving: fc.boolean(),
  terminating: fc.boolean(),
  nodeName: opt(fc.constantFrom(...NAMES)),
  zone: opt(fc.constantFrom(...VALUES)),
  forZones: opt(fc.subarray(VALUES)),
  forNodes: opt(fc.subarray(NAMES)),
});

const endpointsArb: fc.Arbitrary<TopologyEndpoint[]> = fc
  .array(rawEndpointArb, { maxLength: 8 })
  .map((raws) =>
    raws.map((r, i): TopologyEndpoint => {
      const addressType = r.pool.split('|')[0]!;
      const address = addressType === 'IPv6' ? `fd00::${i + 1}` : `10.0.0.${i + 1}`;
      return {
        id: `${r.pool}/${address}`,
        pool: r.pool,
        addressType,
        addresses: [address],
        ready: r.ready,
        serving: r.serving,
        terminating: r.terminating,
        ...(r.nodeName !== undefined ? { nodeName: r.nodeName } : {}),
        ...(r.zone !== undefined ? { zone: r.zone } : {}),
        ...(r.forZones !== undefined ? { forZones: r.forZones } : {}),
        ...(r.forNodes !== undefined ? { forNodes: r.forNodes } : {}),
        source: 'slice',
      };
    }),
  );

const choiceArb: fc.Arbitrary<Choice> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc
    .tuple(fc.shuffledSubarray(KEYS), fc.boolean())
    .map(([keys, star]) => ({ kind: 'ordered' as const, keys: star ? [...keys, '*'] : keys })),
  fc.shuffledSubarray(KEYS, { minLength: 1 }).map((keys) => ({ kind: 'superedge' as const, keys })),
  fc
    .constantFrom(HOSTNAME_LABEL, 'openyurt.io/nodepool', 'kubernetes.io/zone')
    .map((value) => ({ kind: 'openyurt' as const, value })),
  fc.constant({ kind: 'itp-local' as const }),
  fc.constant({ kind: 'etp-local' as const }),
  fc.constant({ kind: 'distribution' as const }),
);

function serviceOf(c: Choice, externallyAccessible: boolean): TopologyService {
  return {
    namespace: 'ns',
    name: 'svc',
    annotations:
      c.kind === 'superedge'
        ? { [SUPEREDGE_KEYS_ANNOTATION]: JSON.stringify(c.keys) }
        : c.kind === 'openyurt'
          ? { [OPENYURT_KEYS_ANNOTATION]: c.value }
          : {},
    topologyKeys: c.kind === 'ordered' ? c.keys : [],
    internalTrafficPolicy: c.kind === 'itp-local' ? 'Local' : 'Cluster',
    externalTrafficPolicy: c.kind === 'etp-local' ? 'Local' : undefined,
    trafficDistribution: c.kind === 'distribution' ? 'PreferClose' : undefined,
    externallyAccessible,
  };
}

interface Case {
  readonly choice: Choice;
  readonly nodes: Readonly<Record<string, Labels | undefined>>;
  readonly health: Readonly<Record<string, boolean>>;
  readonly endpoints: readonly TopologyEndpoint[];
  readonly client: string;
  readonly input: DecideInput;
}

const lookup = <T>(m: Readonly<Record<string, T>>, k: string): T | undefined =>
  Object.hasOwn(m, k) ? m[k] : undefined;

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    choice: choiceArb,
    externallyAccessible: fc.boolean(),
    nodes: nodesArb,
    health: healthArb,
    endpoints: endpointsArb,
    client: fc.constantFrom(...NAMES),
  })
  .map(({ choice, externallyAccessible, nodes, health, endpoints, client }) => ({
    choice,
    nodes,
    health,
    endpoints,
    client,
    input: {
      service: serviceOf(choice, externallyAccessible),
      endpoints,
      nodeLabels: (n: string) => lookup(nodes, n),
      node: client,
      health: (n: string) => lookup(health, n),
    },
  }));

/** The decisions for every kind of traffic the Service has. */
const decisions = (input: DecideInput): TrafficDecision[] => {
  const d = decide(input);
  return d.external === undefined ? [d.internal] : [d.internal, d.external];
};

/** An endpoint's topology, computed independently: its node's labels, else its own zone and nodeName. */
function topo(c: Case, ep: TopologyEndpoint, key: string): string | undefined {
  const labels = ep.nodeName === undefined ? undefined : lookup(c.nodes, ep.nodeName);
  if (labels !== undefined) return lookup(labels, key);
  if (key === ZONE_LABEL) return ep.zone;
  if (key === HOSTNAME_LABEL) return ep.nodeName;
  return undefined;
}

const healthy = (c: Case, ep: TopologyEndpoint) =>
  ep.nodeName === undefined || lookup(c.health, ep.nodeName) !== false;
const kept = (d: TrafficDecision) => d.verdicts.filter((v) => v.kept).map((v) => v.endpoint);

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

describe('decide (properties)', () => {
  it('gives every input endpoint exactly one verdict, in input order, and keeps a subset of them', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        for (const d of decisions(c.input)) {
          assert.equal(d.verdicts.length, c.endpoints.length);
          d.verdicts.forEach((v, i) => assert.equal(v.endpoint, c.endpoints[i]));
          const ids = kept(d).map((e) => e.id);
          assert.equal(new Set(ids).size, ids.length);
          for (const e of kept(d)) assert.ok(c.endpoints.includes(e));
          // the pool outcomes count what the verdicts keep
          assert.equal(
            d.pools.reduce((n, p) => n + p.kept, 0),
            ids.length,
          );
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('applies the rule the Service carries (precedence)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const d = decide(c.input);
        const hinted = c.endpoints.some(
          (e) => e.ready && ((e.forZones?.length ?? 0) > 0 || (e.forNodes?.length ?? 0) > 0),
        );
        const ch = c.choice;
        const base: RuleKind =
          ch.kind === 'ordered' && ch.keys.length > 0
            ? 'ordered-keys'
            : ch.kind === 'superedge'
              ? 'superedge'
              : ch.kind === 'openyurt'
                ? 'openyurt'
                : ch.kind === 'distribution' || hinted
                  ? 'hints'
                  : 'none';
        assert.equal(d.internal.rule.kind, ch.kind === 'itp-local' ? 'local' : base);
        if (!c.input.service.externallyAccessible) assert.equal(d.external, undefined);
        else assert.equal(d.external?.rule.kind, ch.kind === 'etp-local' ? 'local' : base);
      }),
      { numRuns: RUNS },
    );
  });

  it("never keeps an endpoint outside the client's unit under a strict rule, nor one on an unhealthy node", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const client = lookup(c.nodes, c.client);
        const sameValue = (ep: TopologyEndpoint, key: string) =>
          client !== undefined && lookup(client, key) !== undefined && topo(c, ep, key) === client[key];
        for (const d of decisions(c.input)) {
          const { kind, keys } = d.rule;
          for (const ep of kept(d)) {
            assert.ok(healthy(c, ep), `kept ${ep.id} on an unhealthy node`);
            if (kind === 'superedge' || (kind === 'ordered-keys' && !keys.includes('*')))
              assert.ok(
                keys.some((k) => sameValue(ep, k)),
                `${kind} ${JSON.stringify(keys)} kept ${ep.id} outside the client's unit`,
              );
            if (kind === 'local') assert.equal(ep.nodeName, c.client);
            if (kind === 'openyurt') {
              const pool = client === undefined ? undefined : lookup(client, OPENYURT_NODEPOOL_LABEL);
              if (keys[0] === HOSTNAME_LABEL || pool === undefined) assert.equal(ep.nodeName, c.client);
              else assert.equal(topo(c, ep, OPENYURT_NODEPOOL_LABEL), pool);
            }
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('never keeps nothing under ordered keys ending in "*" while a pool has a ready endpoint on a healthy node', () => {
    const starArb = caseArb.filter((c) => c.choice.kind === 'ordered' && c.choice.keys.at(-1) === '*');
    fc.assert(
      fc.property(starArb, (c) => {
        for (const d of decisions(c.input)) {
          if (d.rule.kind !== 'ordered-keys') continue;
          for (const pool of POOLS) {
            if (!c.endpoints.some((e) => e.pool === pool && e.ready && healthy(c, e))) continue;
            assert.ok(
              kept(d).some((e) => e.pool === pool && e.ready),
              `pool ${pool} keeps no ready endpoint`,
            );
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps ready endpoints, or (only when no kept endpoint is ready) serving-terminating ones', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        for (const d of decisions(c.input)) {
          for (const p of d.pools) {
            const k = kept(d).filter((e) => e.pool === p.pool);
            if (k.every((e) => e.ready)) continue;
            // a fallback: every kept endpoint is serving and terminating, none ready, and it says so
            for (const e of k) assert.ok(e.serving && e.terminating && !e.ready, `${e.id} in a fallback`);
            assert.equal(p.servingTerminating, true);
          }
          for (const v of d.verdicts)
            if (v.kept && !v.endpoint.ready) assert.equal(v.reason, 'serving-terminating');
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('is deterministic and never changes its inputs', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const snapshot = structuredClone({
          service: c.input.service,
          endpoints: c.endpoints,
          nodes: c.nodes,
          health: c.health,
        });
        deepFreeze(c.input.service);
        deepFreeze(c.endpoints);
        deepFreeze(c.nodes);
        deepFreeze(c.health);
        const first = decide(c.input);
        const second = decide(c.input);
        assert.deepEqual(second, first);
        // (structuredClone on both sides: fast-check's dictionaries have no prototype)
        assert.deepEqual(
          structuredClone({
            service: c.input.service,
            endpoints: c.endpoints,
            nodes: c.nodes,
            health: c.health,
          }),
          snapshot,
        );
      }),
      { numRuns: RUNS },
    );
  });
});
