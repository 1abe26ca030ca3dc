import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  compareForDeletion,
  deletionCost,
  logBucket,
  podsToDelete,
  POD_DELETION_COST,
  rankedPod,
  ranksOnSameNode,
  sortForDeletion,
  type RankedPod,
} from './replicaset-ranking.js';
import { pod, T0, type PodOpts } from './testing/replicaset-builders.js';

const NOW = T0 + 3600_000;
const HOUR = 3600_000;

/** The names of `opts` in deletion order. */
const order = (opts: PodOpts[], related: PodOpts[] = []): string[] =>
  sortForDeletion(
    opts.map((o) => pod(o)),
    related.map((o) => pod(o)),
    NOW,
  ).map((r) => r.pod.metadata.name!);

describe("deletion ranking (upstream's ActivePodsWithRanks): the first rule that differs decides", () => {
  const cases: Array<[string, PodOpts, PodOpts]> = [
    // [rule, deleted first, deleted later]; everything else that would decide otherwise points the other way
    ['1. unscheduled before scheduled', { phase: 'Running', ready: T0 }, { node: 'n1', phase: 'Pending' }],
    [
      '2. Pending before Unknown',
      { node: 'n', phase: 'Pending', ready: T0 },
      { node: 'n', phase: 'Unknown' },
    ],
    [
      '2. Unknown before Running',
      { node: 'n', phase: 'Unknown', ready: T0 },
      { node: 'n', phase: 'Running' },
    ],
    [
      '3. not Ready before Ready',
      { node: 'n', restarts: 0, created: T0 - HOUR },
      { node: 'n', ready: T0, restarts: 9 },
    ],
    [
      '4. lower deletion cost first',
      { node: 'n', ready: T0 - HOUR, annotations: { [POD_DELETION_COST]: '-5' } },
      { node: 'n', ready: T0 },
    ],
    [
      '6. Ready for less time first',
      { node: 'n', ready: T0, restarts: 0 },
      { node: 'n', ready: T0 - 2 * HOUR, restarts: 5 },
    ],
    ['6. a Ready without a time is newest', { node: 'n', ready: true }, { node: 'n', ready: T0 }],
    [
      '7. more restarts first',
      { node: 'n', restarts: 3, created: T0 - HOUR },
      { node: 'n', restarts: 1, created: T0 },
    ],
    ['8. newer first', { node: 'n', created: T0, uid: 'z' }, { node: 'n', created: T0 - 2 * HOUR, uid: 'a' }],
  ];
  for (const [rule, first, later] of cases) {
    it(rule, () => {
      assert.deepEqual(
        order([
          { ...later, name: 'later' },
          { ...first, name: 'first' },
        ]),
        ['first', 'later'],
      );
      assert.deepEqual(
        order([
          { ...first, name: 'first' },
          { ...later, name: 'later' },
        ]),
        ['first', 'later'],
      );
    });
  }

  it('5. more related pods on the same node first', () => {
    const related: PodOpts[] = [
      { name: 'r1', node: 'crowded' },
      { name: 'r2', node: 'crowded' },
      { name: 'r3', node: 'crowded' },
      { name: 'r4', node: 'quiet' },
      { name: 'gone', node: 'quiet', phase: 'Failed' }, // not active: not counted
    ];
    assert.deepEqual(
      order(
        [
          { name: 'q', node: 'quiet', created: T0 },
          { name: 'c', node: 'crowded', created: T0 - 2 * HOUR },
        ],
        related,
      ),
      ['c', 'q'],
    );
  });

  it('equal buckets fall back to the UID (rules 6 and 8)', () => {
    // 1000 s and 1001 s ago share floor(log2(ns)) = 39
    assert.equal(logBucket(NOW - 1000_000, NOW), logBucket(NOW - 1001_000, NOW));
    assert.deepEqual(
      order([
        { name: 'b', node: 'n', ready: NOW - 1000_000, uid: 'uid-2' },
        { name: 'a', node: 'n', ready: NOW - 1001_000, uid: 'uid-1' },
      ]),
      ['a', 'b'],
    );
    assert.deepEqual(
      order([
        { name: 'b', node: 'n', created: NOW - 1000_000, uid: 'uid-2' },
        { name: 'a', node: 'n', created: NOW - 1001_000, uid: 'uid-1' },
      ]),
      ['a', 'b'],
    );
  });

  it('the issue’s example: unscheduled, pending and not-ready pods go before ready ones, newer before older', () => {
    assert.deepEqual(
      order([
        { name: 'ready-old', node: 'n', ready: T0 - 2 * HOUR, created: T0 - 3 * HOUR },
        { name: 'ready-new', node: 'n', ready: T0, created: T0 },
        { name: 'running-not-ready', node: 'n' },
        { name: 'pending', node: 'n', phase: 'Pending' },
        { name: 'unscheduled', phase: 'Pending' },
      ]),
      ['unscheduled', 'pending', 'running-not-ready', 'ready-new', 'ready-old'],
    );
  });
});

describe('deletionCost()', () => {
  const cases: Array<[string | undefined, number]> = [
    [undefined, 0],
    ['7', 7],
    ['-3', -3],
    ['+4', 4],
    ['2147483647', 2147483647],
    ['2147483648', 0],
    ['1.5', 0],
    [' 1', 0],
    ['abc', 0],
  ];
  for (const [raw, want] of cases)
    it(`${JSON.stringify(raw)} → ${want}`, () =>
      assert.equal(
        deletionCost(pod(raw === undefined ? {} : { annotations: { [POD_DELETION_COST]: raw } })),
        want,
      ));
});

describe('ranksOnSameNode()', () => {
  it('counts active related pods per node, each pod once', () => {
    const related = [
      pod({ name: 'a', node: 'n1' }),
      pod({ name: 'a', node: 'n1' }), // same uid: counted once
      pod({ name: 'b', node: 'n1' }),
      pod({ name: 'c', node: 'n2', deleting: true }),
      pod({ name: 'd' }),
    ];
    assert.deepEqual(
      ranksOnSameNode([pod({ node: 'n1' }), pod({ node: 'n2' }), pod({}), pod({ node: 'n3' })], related),
      [2, 0, 1, 0],
    );
  });
});

describe('podsToDelete()', () => {
  it('takes all pods when the count covers them, else the first in ranking order', () => {
    const pods = [pod({ name: 'r', node: 'n', ready: T0 }), pod({ name: 'u' })];
    assert.deepEqual(
      podsToDelete(pods, [], 5, NOW).map((p) => p.metadata.name),
      ['r', 'u'],
    );
    assert.deepEqual(
      podsToDelete(pods, [], 1, NOW).map((p) => p.metadata.name),
      ['u'],
    );
    assert.deepEqual(podsToDelete(pods, [], 0, NOW), []);
  });
});

// ---- properties ------------------------------------------------------------------------------------

const podArb = (i: number): fc.Arbitrary<RankedPod> =>
  fc
    .record({
      node: fc.constantFrom(undefined, 'n1', 'n2'),
      phase: fc.constantFrom('Pending', 'Unknown', 'Running', ''),
      ready: fc.oneof(
        fc.constant(undefined),
        fc.constant(true),
        fc.integer({ min: T0 - 10 * HOUR, max: NOW }),
      ),
      cost: fc.constantFrom(undefined, '-1', '0', '1'),
      restarts: fc.nat(2),
      created: fc.integer({ min: T0 - 10 * HOUR, max: NOW }),
      uid: fc.constantFrom('u1', 'u2', 'u3', 'u4'),
      rank: fc.nat(3),
    })
    .map((r) =>
      rankedPod(
        pod({
          name: `p${i}`,
          uid: r.uid,
          ...(r.node === undefined ? {} : { node: r.node }),
          phase: r.phase,
          ...(r.ready === undefined ? {} : { ready: r.ready }),
          ...(r.cost === undefined ? {} : { annotations: { [POD_DELETION_COST]: r.cost } }),
          restarts: r.restarts,
          created: r.created,
        }),
        r.rank,
        NOW,
      ),
    );

const three = fc.tuple(podArb(0), podArb(1), podArb(2));

describe("compareForDeletion() is a total order consistent with upstream's ranking", () => {
  it('antisymmetric, and 0 only for the same pod', () => {
    fc.assert(
      fc.property(three, ([a, b]) => {
        assert.equal(Math.sign(compareForDeletion(a, b)), -Math.sign(compareForDeletion(b, a)));
        assert.notEqual(compareForDeletion(a, b), 0);
        assert.equal(compareForDeletion(a, a), 0);
      }),
    );
  });
  it('transitive', () => {
    fc.assert(
      fc.property(three, ([a, b, c]) => {
        if (compareForDeletion(a, b) < 0 && compareForDeletion(b, c) < 0)
          assert.ok(compareForDeletion(a, c) < 0);
      }),
      { numRuns: 2000 },
    );
  });
  it('the first five rules decide exactly as written', () => {
    fc.assert(
      fc.property(three, ([a, b]) => {
        const c = Math.sign(compareForDeletion(a, b));
        const keys: Array<[number, number]> = [
          [a.unscheduled ? 0 : 1, b.unscheduled ? 0 : 1],
          [a.phase, b.phase],
          [a.ready ? 1 : 0, b.ready ? 1 : 0],
          [a.cost, b.cost],
          [-a.rank, -b.rank],
        ];
        for (const [x, y] of keys) {
          if (x !== y) return assert.equal(c, Math.sign(x - y));
        }
        // Both Ready with different non-zero buckets: the more recent bucket first.
        if (
          a.ready &&
          b.ready &&
          a.readyBucket !== undefined &&
          b.readyBucket !== undefined &&
          a.readyBucket !== b.readyBucket
        )
          return assert.equal(c, Math.sign(a.readyBucket - b.readyBucket));
        if (!(a.ready && b.ready) && a.restarts !== b.restarts)
          return assert.equal(c, Math.sign(b.restarts - a.restarts));
      }),
      { numRuns: 2000 },
    );
  });
  it('sorting is independent of the input order', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 2, maxLength: 8 }), (seeds) => {
        const pods = seeds.map((s, i) =>
          pod({
            name: `p${i}`,
            ...(s % 3 === 0 ? {} : { node: `n${s % 2}` }),
            phase: ['Pending', 'Running'][s % 2]!,
            ...(s % 5 < 2 ? {} : { ready: T0 - (s % 7) * 1000 }),
            restarts: s % 4,
            created: T0 - (s % 11) * 60_000,
          }),
        );
        const forward = sortForDeletion(pods, pods, NOW).map((r) => r.pod.metadata.name);
        const backward = sortForDeletion([...pods].reverse(), pods, NOW).map((r) => r.pod.metadata.name);
        assert.deepEqual(forward, backward);
      }),
    );
  });
});
