import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SchedulerCache } from './cache.js';
import { filterNode } from './filters.js';
import { podInfoOf } from './pod-info.js';
import { numFeasibleNodesToFind, schedulePod, seededRandom, selectHost } from './schedule.js';
import { node, pod, type NodeOptions, type PodOptions } from './testing/builders.js';

function cluster(nodes: [string, NodeOptions][]): SchedulerCache {
  const c = new SchedulerCache();
  for (const [name, o] of nodes) c.setNode(node(name, o));
  return c;
}

/** Schedules and assumes, as the scheduler does; returns the chosen node or the message. */
function place(c: SchedulerCache, p: PodOptions, random = seededRandom(1), start = 0): string {
  const info = podInfoOf(pod(p));
  const r = schedulePod({ pod: info, nodes: c.nodeList(), start, random, zoneCount: c.zoneOwnerCount });
  if (r.kind === 'Unschedulable') return r.message;
  c.assume(info, r.node.name);
  return r.node.name;
}

describe('numFeasibleNodesToFind', () => {
  const table: [number, number][] = [
    [0, 0],
    [50, 50],
    [99, 99],
    [100, 100],
    [1000, 420],
    [5000, 500],
    [6000, 300],
    [200, 100],
  ];
  for (const [n, want] of table)
    it(`${n} nodes → ${want}`, () => assert.equal(numFeasibleNodesToFind(n), want));
});

describe('schedulePod', () => {
  it('places a pod on the only node matching its nodeSelector', () => {
    const c = cluster([
      ['a', {}],
      ['b', { labels: { disk: 'ssd' } }],
      ['c', {}],
    ]);
    assert.equal(place(c, { nodeSelector: { disk: 'ssd' } }), 'b');
  });

  it('reports the upstream message when nothing fits', () => {
    const c = cluster([
      ['a', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }],
      ['b', {}],
      ['c', {}],
    ]);
    assert.equal(
      place(c, { nodeSelector: { disk: 'ssd' } }),
      "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
    );
  });

  it('says so when there are no nodes', () => {
    assert.equal(place(new SchedulerCache(), {}), 'no nodes available to schedule pods');
  });

  it('avoids a tainted node unless the pod tolerates it', () => {
    const c = cluster([
      ['tainted', { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] }],
      ['plain', { pods: 1 }],
    ]);
    assert.equal(place(c, {}), 'plain');
    assert.equal(
      place(c, {}),
      '0/2 nodes are available: 1 Too many pods, 1 node(s) had untolerated taint {dedicated: x}. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..',
    );
    assert.equal(place(c, { tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), 'tainted');
  });

  it('prefers nodes without untolerated PreferNoSchedule taints', () => {
    const c = cluster([
      ['soft', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }],
      ['clean', {}],
    ]);
    for (let seed = 0; seed < 20; seed++) {
      const fresh = cluster([
        ['soft', { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] }],
        ['clean', {}],
      ]);
      assert.equal(place(fresh, {}, seededRandom(seed)), 'clean');
    }
    assert.equal(c.nodeCount, 2);
  });

  it('prefers nodes matching preferred affinity', () => {
    for (let seed = 0; seed < 20; seed++) {
      const c = cluster([
        ['a', {}],
        ['b', { labels: { fast: 'yes' } }],
        ['c', {}],
      ]);
      const o: PodOptions = {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 50,
              preference: { matchExpressions: [{ key: 'fast', operator: 'In', values: ['yes'] }] },
            },
          ],
        },
      };
      assert.equal(place(c, o, seededRandom(seed)), 'b');
    }
  });

  it('never places more pods on a node than its allocatable pods, thanks to assumed pods', () => {
    const c = cluster([
      ['a', { pods: 2 }],
      ['b', { pods: 3 }],
    ]);
    const placed = Array.from({ length: 6 }, () => place(c, {}));
    assert.equal(placed.filter((n) => n === 'a').length, 2);
    assert.equal(placed.filter((n) => n === 'b').length, 3);
    assert.match(placed[5]!, /^0\/2 nodes are available: 2 Too many pods\./);
  });

  it('continues filtering where the previous cycle stopped', () => {
    const c = cluster(Array.from({ length: 300 }, (_, i): [string, NodeOptions] => [`n${i}`, {}]));
    const info = podInfoOf(pod());
    const r = schedulePod({
      pod: info,
      nodes: c.nodeList(),
      start: 250,
      random: seededRandom(1),
      zoneCount: c.zoneOwnerCount,
    });
    assert.equal(r.kind, 'Scheduled');
    if (r.kind !== 'Scheduled') return;
    assert.equal(r.evaluatedNodes, numFeasibleNodesToFind(300));
    assert.equal(r.nextStart, (250 + numFeasibleNodesToFind(300)) % 300);
  });

  it('spreads the pods of one owner across zones as well as nodes', () => {
    const c = cluster([
      ['a1', { labels: { 'topology.kubernetes.io/zone': 'a' } }],
      ['a2', { labels: { 'topology.kubernetes.io/zone': 'a' } }],
      ['b1', { labels: { 'topology.kubernetes.io/zone': 'b' } }],
      ['b2', { labels: { 'topology.kubernetes.io/zone': 'b' } }],
    ]);
    const first = place(c, { owner: 'rs' }, seededRandom(3));
    const second = place(c, { owner: 'rs' }, seededRandom(3));
    assert.notEqual(first[0], second[0], `${first} and ${second} share a zone`);
  });
});

describe('scheduling properties', () => {
  const nodeArb = fc.record({
    labels: fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('1', '2', '10')),
    taints: fc.array(
      fc.record({
        key: fc.constantFrom('t1', 't2'),
        value: fc.constantFrom('', 'x'),
        effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
      }),
      { maxLength: 2 },
    ),
    unschedulable: fc.boolean(),
    ready: fc.boolean(),
    pods: fc.integer({ min: 0, max: 3 }),
    cpu: fc.constantFrom('1', '2', '500m'),
  });
  const podArb = fc.record({
    nodeSelector: fc.dictionary(fc.constantFrom('a', 'b'), fc.constantFrom('1', '2'), { maxKeys: 1 }),
    tolerations: fc.array(
      fc.record({
        key: fc.constantFrom('t1', 't2', ''),
        operator: fc.constantFrom('Exists', 'Equal'),
        value: fc.constantFrom('', 'x'),
      }),
      { maxLength: 2 },
    ),
    requests: fc.constantFrom(undefined, { cpu: '300m' }, { cpu: '1' }),
    op: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'),
  });

  it('a chosen node passes every filter, and an unschedulable pod fails on every node', () => {
    fc.assert(
      fc.property(
        fc.array(nodeArb, { maxLength: 8 }),
        fc.array(podArb, { minLength: 1, maxLength: 12 }),
        fc.integer(),
        (nodes, pods, seed) => {
          const c = cluster(nodes.map((o, i) => [`n${i}`, o]));
          const random = seededRandom(seed);
          let start = 0;
          for (const p of pods) {
            const values =
              p.op === 'Gt' || p.op === 'Lt' ? ['1'] : p.op === 'In' || p.op === 'NotIn' ? ['1', '2'] : [];
            const o: PodOptions = {
              nodeSelector: p.nodeSelector,
              tolerations: p.tolerations.map((t) => (t.key === '' ? { operator: 'Exists' } : t)),
              ...(p.requests === undefined ? {} : { requests: p.requests }),
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'c', operator: p.op, values }] }],
                },
              },
            };
            const info = podInfoOf(pod(o));
            const r = schedulePod({
              pod: info,
              nodes: c.nodeList(),
              start,
              random,
              zoneCount: c.zoneOwnerCount,
            });
            start = r.nextStart;
            if (r.kind === 'Scheduled') {
              assert.equal(filterNode(info, r.node), undefined);
              c.assume(info, r.node.name);
            } else {
              for (const n of c.nodeList()) assert.notEqual(filterNode(info, n), undefined);
              assert.equal(r.failures.size, c.nodeCount);
            }
          }
          for (const n of c.nodeList()) assert.ok(n.podCount <= Math.max(n.allowedPods, 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('N pods of one owner over N equal feasible nodes land one per node', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        fc.integer({ min: 0, max: 5 }),
        (n, seed, others) => {
          const c = cluster(Array.from({ length: n }, (_, i): [string, NodeOptions] => [`n${i}`, {}]));
          // Pods of another owner, all on the first node, must not change the spread of ours.
          for (let i = 0; i < others; i++)
            c.setPod(pod({ name: `other${i}`, nodeName: 'n0', owner: 'other', phase: 'Running' }));
          const random = seededRandom(seed);
          const placed = new Set<string>();
          for (let i = 0; i < n; i++) placed.add(place(c, { name: `web-${i}`, owner: 'web' }, random));
          assert.equal(placed.size, n);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('ties are broken by the random source, so each equal node gets chosen', () => {
    const seen = new Set<string>();
    const random = seededRandom(42);
    for (let i = 0; i < 200; i++) seen.add(selectHost(['a', 'b', 'c'], [5, 5, 5], random));
    assert.deepEqual([...seen].sort(), ['a', 'b', 'c']);
    assert.equal(selectHost(['a', 'b', 'c'], [1, 9, 5], random), 'b');
  });

  it('is deterministic for a given seed', () => {
    const run = (): string[] => {
      const c = cluster(Array.from({ length: 10 }, (_, i): [string, NodeOptions] => [`n${i}`, {}]));
      const random = seededRandom(7);
      return Array.from({ length: 30 }, (_, i) => place(c, { name: `x${i}` }, random));
    };
    assert.deepEqual(run(), run());
  });
});
