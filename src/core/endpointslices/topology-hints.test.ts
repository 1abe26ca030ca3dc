import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SliceInfo } from './slice-info.js';
import { ep, node, slice } from './testing/builders.js';
import {
  allocateHints,
  getAllocations,
  givingAndReceivingZones,
  zoneCPURatios,
  type AllocateHintsResult,
  type ZoneRatios,
} from './topology-hints.js';
import type { EndpointSlice } from './types.js';

const CP = { 'node-role.kubernetes.io/control-plane': '' };
const MASTER = { 'node-role.kubernetes.io/master': 'true' };

describe('zoneCPURatios (upstream TestSetNodes)', () => {
  const cases: Array<[string, Parameters<typeof zoneCPURatios>[0], ZoneRatios | undefined]> = [
    ['no nodes', [], undefined],
    ['one node', [node('n1', { zone: 'zone-a' })], undefined],
    ['two nodes in one zone', [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-a' })], undefined],
    [
      'two zones, equal CPU',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b' })],
      { 'zone-a': 0.5, 'zone-b': 0.5 },
    ],
    [
      'the only node of one zone is not ready',
      [node('n1', { zone: 'zone-a', ready: false }), node('n2', { zone: 'zone-b' })],
      undefined,
    ],
    [
      'the only node of one zone is a control-plane node',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b', labels: CP })],
      undefined,
    ],
    [
      'an unready node in a zone that has a ready one',
      [
        node('n1', { zone: 'zone-a' }),
        node('n2', { zone: 'zone-b' }),
        node('n3', { zone: 'zone-b', ready: false }),
      ],
      { 'zone-a': 0.5, 'zone-b': 0.5 },
    ],
    [
      'a control-plane node (control-plane or master label) does not count',
      [
        node('n1', { zone: 'zone-a' }),
        node('n2', { zone: 'zone-b' }),
        node('n3', { zone: 'zone-b', labels: CP, cpu: '8' }),
        node('n4', { zone: 'zone-a', labels: MASTER, cpu: '8' }),
      ],
      { 'zone-a': 0.5, 'zone-b': 0.5 },
    ],
    [
      'CPU in mixed units, three zones',
      [
        node('a1', { zone: 'zone-a', cpu: '1000m' }),
        node('a2', { zone: 'zone-a', cpu: '1' }),
        node('a3', { zone: 'zone-a', cpu: '1000m' }),
        node('a4', { zone: 'zone-a', cpu: '2' }),
        node('b1', { zone: 'zone-b', cpu: '3000m' }),
        node('b2', { zone: 'zone-b', cpu: '1.5' }),
        node('c1', { zone: 'zone-c', cpu: '500m' }),
      ],
      { 'zone-a': 0.5, 'zone-b': 0.45, 'zone-c': 0.05 },
    ],
    [
      'a counting node without a zone label disables everything',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b' }), node('n3')],
      undefined,
    ],
    [
      'a counting node with an empty zone label disables everything',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b' }), node('n3', { zone: '' })],
      undefined,
    ],
    [
      'a counting node without allocatable CPU disables everything',
      [
        node('n1', { zone: 'zone-a' }),
        node('n2', { zone: 'zone-b' }),
        node('n3', { zone: 'zone-b', cpu: '' }),
      ],
      undefined,
    ],
    [
      'a counting node with zero CPU disables everything',
      [
        node('n1', { zone: 'zone-a' }),
        node('n2', { zone: 'zone-b' }),
        node('n3', { zone: 'zone-b', cpu: '0' }),
      ],
      undefined,
    ],
    [
      'an unready node without a zone is ignored, not disqualifying',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b' }), node('n3', { ready: false })],
      { 'zone-a': 0.5, 'zone-b': 0.5 },
    ],
    [
      'a control-plane node without a zone is ignored, not disqualifying',
      [node('n1', { zone: 'zone-a' }), node('n2', { zone: 'zone-b' }), node('n3', { labels: CP })],
      { 'zone-a': 0.5, 'zone-b': 0.5 },
    ],
  ];
  for (const [name, nodes, want] of cases) {
    it(`${name} → ${JSON.stringify(want)}`, () => assert.deepEqual(zoneCPURatios(nodes), want));
  }
});

describe('getAllocations', () => {
  it('gives desired = share × N, minimum = ceil(desired / 1.2), maximum = minimum + N − Σminimum', () => {
    const r = getAllocations({ a: 0.35, b: 0.35, c: 0.3 }, 10);
    assert.ok(r.ok);
    assert.deepEqual(r.allocations, {
      a: { minimum: 3, desired: 3.5, maximum: 4 },
      b: { minimum: 3, desired: 3.5, maximum: 4 },
      c: { minimum: 3, desired: 3, maximum: 4 },
    });
  });

  it('raises desired to the minimum', () => {
    const r = getAllocations({ a: 0.05, b: 0.95 }, 20);
    assert.ok(r.ok);
    // a: desired 1 → minimum ceil(0.833) = 1; b: 19 → minimum ceil(15.83) = 16; max = min + 20 - 17.
    assert.deepEqual(r.allocations['a'], { minimum: 1, desired: 1, maximum: 4 });
    assert.deepEqual(r.allocations['b'], { minimum: 16, desired: 19, maximum: 19 });
  });

  const failures: Array<[string, ZoneRatios | undefined, number, string]> = [
    [
      'no zone shares',
      undefined,
      10,
      'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes',
    ],
    ['a single zone', { a: 1 }, 10, 'Nodes only ready in one zone'],
    [
      'fewer endpoints than zones',
      { a: 0.3, b: 0.4, c: 0.3 },
      2,
      'Insufficient number of endpoints (2 endpoints, 3 zones)',
    ],
    ['no endpoints', { a: 0.5, b: 0.5 }, 0, 'Insufficient number of endpoints (0 endpoints, 2 zones)'],
    [
      'minimums beyond N',
      { a: 0.1, b: 0.9 },
      2,
      'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (2 endpoints, 2 zones)',
    ],
    [
      'minimums beyond N with equal zones',
      { a: 0.5, b: 0.5 },
      5,
      'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (5 endpoints, 2 zones)',
    ],
  ];
  for (const [name, ratios, n, message] of failures) {
    it(`fails for ${name}`, () => assert.deepEqual(getAllocations(ratios, n), { ok: false, message }));
  }

  it('succeeds with exactly as many endpoints as zones when the minimums fit', () => {
    assert.equal(getAllocations({ a: 0.5, b: 0.5 }, 2).ok, true);
  });
});

describe('givingAndReceivingZones', () => {
  const alloc = (desired: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(desired).map(([z, d]) => [z, { minimum: 0, maximum: 100, desired: d }]),
    );
  const cases: Array<
    [string, Record<string, number>, Record<string, number>, [string, number][], [string, number][]]
  > = [
    ['balanced', { a: 2, b: 2 }, { a: 2, b: 2 }, [], []],
    ['one whole endpoint over and under', { a: 2, b: 2 }, { a: 3, b: 1 }, [['a', 1]], [['b', 1]]],
    ['1.5 over and under moves one', { a: 3.5, b: 3.5 }, { a: 5, b: 2 }, [['a', 1]], [['b', 1]]],
    ['both below 1 moves nothing', { a: 5.6, b: 4.4 }, { a: 5, b: 5 }, [], []],
    ['over 1.2, under 1: moves one', { a: 6.2, b: 4 }, { a: 5, b: 5 }, [['b', 1]], [['a', 1]]],
    [
      '0.8 to give, 1.4 to receive: moves one',
      { a: 1.4, b: 2.4, c: 2.2 },
      { a: 0, b: 3, c: 3 },
      [['c', 1]],
      [['a', 1]],
    ],
    [
      'equal surplus: the first zone by name gives',
      { a: 1.5, b: 1.5, c: 1 },
      { a: 2, b: 2, c: 0 },
      [['a', 1]],
      [['c', 1]],
    ],
    ['a surplus under 0.5 moves nothing', { a: 1.6, b: 2.6, c: 3.8 }, { a: 0, b: 3, c: 4 }, [], []],
    ['the most in surplus gives first', { a: 1, b: 1, c: 1 }, { a: 0, b: 2, c: 1 }, [['b', 1]], [['a', 1]]],
    [
      'several moves, ties broken by zone name',
      { a: 2, b: 2, c: 2, d: 2 },
      { a: 4, b: 4, c: 0, d: 0 },
      [
        ['a', 2],
        ['b', 2],
      ],
      [
        ['c', 2],
        ['d', 2],
      ],
    ],
  ];
  for (const [name, desired, have, giving, receiving] of cases) {
    it(name, () => {
      const r = givingAndReceivingZones(alloc(desired), new Map(Object.entries(have)));
      assert.deepEqual([...r.giving].sort(), giving);
      assert.deepEqual([...r.receiving].sort(), receiving);
    });
  }
});

/** Zone hint of each endpoint, in order, over create then update then unchanged slices. */
const hints = (r: SliceInfo): Array<string | undefined> =>
  [...r.toCreate, ...r.toUpdate, ...r.unchanged].flatMap((s) =>
    s.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name).join(',')),
  );

const cpuRatios = (cpu: Record<string, number>): ZoneRatios | undefined =>
  zoneCPURatios(Object.entries(cpu).map(([zone, c]) => node(`n-${zone}`, { zone, cpu: String(c) })));

/** One slice to create whose ready endpoints sit in `zones` ("-x" for a not-ready one in zone x). */
function vector(cpu: Record<string, number>, zones: string[]): AllocateHintsResult {
  const endpoints = zones.map((z, i) =>
    z.startsWith('-')
      ? ep(`10.0.0.${i}`, { zone: z.slice(1), ready: false })
      : ep(`10.0.0.${i}`, { zone: z }),
  );
  return allocateHints({
    cpuRatiosByZone: cpuRatios(cpu),
    addressType: 'IPv4',
    slices: { toCreate: [slice({ endpoints })], toUpdate: [], unchanged: [] },
  });
}

describe('allocateHints: allocation vectors (zone CPU, endpoint zones → endpoint hints)', () => {
  const cases: Array<[string, Record<string, number>, string[], Array<string | undefined>]> = [
    [
      'CPU 1:1:1, endpoints 2/2/2',
      { a: 1, b: 1, c: 1 },
      ['a', 'a', 'b', 'b', 'c', 'c'],
      ['a', 'a', 'b', 'b', 'c', 'c'],
    ],
    ['CPU 1:1, endpoints 1/1', { a: 1, b: 1 }, ['a', 'b'], ['a', 'b']],
    ['CPU 1:1, every endpoint in one zone', { a: 1, b: 1 }, ['a', 'a', 'a', 'a'], ['b', 'b', 'a', 'a']],
    ['CPU 3:1, endpoints 1/3', { a: 3, b: 1 }, ['a', 'b', 'b', 'b'], ['a', 'a', 'a', 'b']],
    [
      'CPU 1:1:1, endpoints 4/1/1',
      { a: 1, b: 1, c: 1 },
      ['a', 'a', 'a', 'a', 'b', 'c'],
      ['b', 'c', 'a', 'a', 'b', 'c'],
    ],
    [
      'CPU 62:38, endpoints 5/5: one moves',
      { a: 62, b: 38 },
      ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'b'],
      ['a', 'a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b'],
    ],
    [
      'CPU 56:44, endpoints 5/5: within 1, none moves',
      { a: 56, b: 44 },
      ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'b'],
      ['a', 'a', 'a', 'a', 'a', 'b', 'b', 'b', 'b', 'b'],
    ],
    [
      'CPU 1:9, endpoints 0/5: desired raised to the minimum, so one moves',
      { a: 1, b: 9 },
      ['b', 'b', 'b', 'b', 'b'],
      ['a', 'b', 'b', 'b', 'b'],
    ],
    [
      'not-ready endpoints get no hint and do not count',
      { a: 1, b: 1 },
      ['a', '-a', 'b', '-b'],
      ['a', undefined, 'b', undefined],
    ],
    [
      'an endpoint in a zone without nodes keeps its own zone',
      { a: 1, b: 1 },
      ['a', 'b', 'x', 'x'],
      ['a', 'b', 'x', 'x'],
    ],
  ];
  for (const [name, cpu, zones, want] of cases) {
    it(`${name} → ${JSON.stringify(want)}`, () => {
      const r = vector(cpu, zones);
      assert.deepEqual(hints(r), want);
      assert.deepEqual(
        r.events.map((e) => e.reason),
        ['TopologyAwareHintsEnabled'],
      );
    });
  }
});

describe('allocateHints: when hints are dropped', () => {
  const cases: Array<[string, Record<string, number> | 'none', string[], string]> = [
    [
      'no node information',
      'none',
      ['a', 'b'],
      'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes',
    ],
    [
      'fewer ready endpoints than zones',
      { a: 1, b: 1, c: 1 },
      ['a', 'b', '-c'],
      'Insufficient number of endpoints (2 endpoints, 3 zones)',
    ],
    [
      'minimums exceed the endpoints',
      { a: 1, b: 1 },
      ['a', 'a', 'b', 'b', 'b'],
      'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (5 endpoints, 2 zones)',
    ],
    [
      'a ready endpoint without zone',
      { a: 1, b: 1 },
      ['a', 'a', 'b', 'b', 'a', ''],
      'One or more endpoints do not have a zone specified',
    ],
  ];
  for (const [name, cpu, zones, message] of cases) {
    it(`${name}: no hints, event "${message}"`, () => {
      const endpoints = zones.map((z, i) =>
        z === ''
          ? ep(`10.0.0.${i}`)
          : z.startsWith('-')
            ? ep(`10.0.0.${i}`, { zone: z.slice(1), ready: false })
            : ep(`10.0.0.${i}`, { zone: z, hint: 'stale' }),
      );
      const r = allocateHints({
        cpuRatiosByZone: cpu === 'none' ? undefined : cpuRatios(cpu),
        addressType: 'IPv6',
        slices: { toCreate: [slice({ endpoints })], toUpdate: [], unchanged: [] },
      });
      assert.ok(hints(r).every((h) => h === undefined));
      assert.deepEqual(r.events, [
        { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: `${message}, addressType: IPv6` },
      ]);
      assert.equal(r.hintsByZone, undefined);
    });
  }

  it('strips hints from unchanged slices too, moving them to toUpdate', () => {
    const hinted = slice({ name: 's1', endpoints: [ep('10.0.0.1', { zone: 'a', hint: 'a' })] });
    const bare = slice({ name: 's2', endpoints: [ep('10.0.0.2', { zone: 'b' })] });
    const r = allocateHints({
      cpuRatiosByZone: undefined,
      addressType: 'IPv4',
      slices: { toCreate: [], toUpdate: [], unchanged: [hinted, bare] },
    });
    assert.deepEqual(
      r.toUpdate.map((s) => s.metadata.name),
      ['s1'],
    );
    assert.deepEqual(r.unchanged, [bare]);
    assert.equal(r.toUpdate[0]?.endpoints[0]?.hints, undefined);
  });
});

describe('allocateHints: slices already hinted', () => {
  const ratios = { a: 0.5, b: 0.5 };
  const run = (si: Partial<SliceInfo>, hintsPopulated = true): AllocateHintsResult =>
    allocateHints({
      cpuRatiosByZone: ratios,
      addressType: 'IPv4',
      slices: { toCreate: [], toUpdate: [], unchanged: [], ...si },
      hintsPopulated,
    });

  it('leaves an unchanged slice with valid hints untouched, and counts them', () => {
    const kept = slice({
      name: 'kept',
      endpoints: [ep('10.0.0.1', { zone: 'a', hint: 'a' }), ep('10.0.0.2', { zone: 'b', hint: 'b' })],
    });
    const created = slice({ endpoints: [ep('10.0.0.3', { zone: 'a' }), ep('10.0.0.4', { zone: 'a' })] });
    const r = run({ unchanged: [kept], toCreate: [created] });
    assert.equal(r.unchanged[0], kept);
    assert.deepEqual(r.toUpdate, []);
    // a holds 3 of 4 against a desired 2: one of the created endpoints goes to b.
    assert.deepEqual(hints(r), ['b', 'a', 'a', 'b']);
    assert.deepEqual([...r.hintsByZone!].sort(), [
      ['a', 2],
      ['b', 2],
    ]);
    assert.deepEqual(r.events, []);
  });

  const invalid: Array<[string, EndpointSlice]> = [
    [
      'a ready endpoint without hints',
      slice({ endpoints: [ep('10.0.0.1', { zone: 'a' }), ep('10.0.0.2', { zone: 'b', hint: 'b' })] }),
    ],
    [
      'a hint for a zone with no allocation',
      slice({
        endpoints: [ep('10.0.0.1', { zone: 'a', hint: 'x' }), ep('10.0.0.2', { zone: 'b', hint: 'b' })],
      }),
    ],
    [
      'more hints for a zone than its maximum',
      slice({
        endpoints: ['1', '2', '3']
          .map((i) => ep(`10.0.0.${i}`, { zone: 'a', hint: 'a' }))
          .concat([ep('10.0.0.4', { zone: 'b', hint: 'b' })]),
      }),
    ],
  ];
  for (const [name, s] of invalid) {
    it(`re-hints an unchanged slice with ${name}`, () => {
      const before = structuredClone(s);
      const r = run({ unchanged: [s] });
      assert.deepEqual(r.unchanged, []);
      assert.equal(r.toUpdate.length, 1);
      assert.deepEqual(s, before, 'the input slice is not modified');
      assert.ok(hints(r).every((h) => h === 'a' || h === 'b'));
    });
  }

  it('ignores not-ready endpoints when validating, and clears their hints when re-hinting', () => {
    const s = slice({
      endpoints: [
        ep('10.0.0.1', { zone: 'a', hint: 'a' }),
        ep('10.0.0.2', { zone: 'b', hint: 'b' }),
        ep('10.0.0.3', { zone: 'b', ready: false, hint: 'b' }),
      ],
    });
    assert.equal(run({ unchanged: [s] }).unchanged[0], s);
    const withNew = run({
      unchanged: [s],
      toCreate: [slice({ endpoints: [ep('10.0.0.9', { zone: 'a' }), ep('10.0.0.8', { zone: 'b' })] })],
    });
    assert.equal(withNew.unchanged[0], s);
    const broken = slice({
      endpoints: [
        ep('10.0.0.1', { zone: 'a' }),
        ep('10.0.0.2', { zone: 'b', hint: 'b' }),
        ep('10.0.0.3', { zone: 'b', ready: false, hint: 'b' }),
      ],
    });
    assert.deepEqual(hints(run({ unchanged: [broken] })), ['a', 'b', undefined]);
  });

  it('announces hints only when they were not populated before', () => {
    const s = slice({ endpoints: [ep('10.0.0.1', { zone: 'a' }), ep('10.0.0.2', { zone: 'b' })] });
    assert.deepEqual(run({ toCreate: [s] }, true).events, []);
    assert.deepEqual(run({ toCreate: [s] }, false).events, [
      {
        type: 'Normal',
        reason: 'TopologyAwareHintsEnabled',
        message: 'Topology Aware Hints has been enabled, addressType: IPv4',
      },
    ]);
  });
});

describe('allocateHints: upstream AddHints vectors', () => {
  it('ratios a .45 b .55, two ready endpoints and two not ready → own zones, not-ready unhinted', () => {
    const unset = ep('10.1.2.6', { zone: 'zone-b' });
    unset.conditions = {};
    const r = allocateHints({
      cpuRatiosByZone: { 'zone-a': 0.45, 'zone-b': 0.55 },
      addressType: 'IPv4',
      slices: {
        toCreate: [
          slice({
            endpoints: [
              ep('10.1.2.3', { zone: 'zone-a' }),
              ep('10.1.2.4', { zone: 'zone-b' }),
              ep('10.1.2.5', { zone: 'zone-b', ready: false }),
              unset,
            ],
          }),
        ],
        toUpdate: [],
        unchanged: [],
      },
    });
    assert.deepEqual(hints(r), ['zone-a', 'zone-b', undefined, undefined]);
    assert.deepEqual([...r.hintsByZone!].sort(), [
      ['zone-a', 1],
      ['zone-b', 1],
    ]);
  });

  it('ratios a .35 b .35 c .30 over create and update slices → the first zone-a endpoint goes to zone-b', () => {
    const a = { zone: 'zone-a' };
    const b = { zone: 'zone-b' };
    const c = { zone: 'zone-c' };
    const r = allocateHints({
      cpuRatiosByZone: { 'zone-a': 0.35, 'zone-b': 0.35, 'zone-c': 0.3 },
      addressType: 'IPv4',
      slices: {
        toCreate: [
          slice({ endpoints: [ep('10.1.2.3', a), ep('10.1.2.4', b)] }),
          slice({ endpoints: [ep('10.1.3.3', c), ep('10.1.3.4', c), ep('10.1.3.5', a)] }),
        ],
        toUpdate: [
          slice({ endpoints: [ep('10.2.2.3', a), ep('10.2.2.4', a)] }),
          slice({ endpoints: [ep('10.2.3.3', b), ep('10.2.3.4', c), ep('10.2.3.5', a)] }),
        ],
        unchanged: [],
      },
    });
    assert.deepEqual(hints(r), [
      'zone-b',
      'zone-b',
      'zone-c',
      'zone-c',
      'zone-a',
      'zone-a',
      'zone-a',
      'zone-b',
      'zone-c',
      'zone-a',
    ]);
    assert.deepEqual([...r.hintsByZone!].sort(), [
      ['zone-a', 4],
      ['zone-b', 3],
      ['zone-c', 3],
    ]);
  });
});
