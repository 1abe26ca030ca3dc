// How slices are read: the packed form an index keeps gives back exactly what the slice reads as, and the
// merge of a Service's slices.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  endpointsFromSlices,
  endpointsOfSlice,
  mergeSliceEndpoints,
  packAddress,
  packSlice,
  unpackAddress,
  unpackSlice,
} from './endpoints.js';

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const nameArb = fc.constantFrom('n1', 'n2', 'zone-a', 'zone-b', '');
const endpointArb = fc.record(
  {
    addresses: fc.array(
      fc.constantFrom(
        '10.0.0.1',
        '10.0.0.2',
        'fd00::1',
        '10.0.0.3',
        '255.255.255.255',
        '010.0.0.1',
        '0.0.0.0',
      ),
      { maxLength: 3 },
    ),
    conditions: fc.record(
      { ready: maybe(fc.boolean()), serving: maybe(fc.boolean()), terminating: maybe(fc.boolean()) },
      { requiredKeys: [] },
    ),
    nodeName: nameArb,
    zone: nameArb,
    hints: fc.record(
      {
        forZones: fc.array(fc.record({ name: nameArb }), { maxLength: 2 }),
        forNodes: fc.array(fc.record({ name: nameArb }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    deprecatedTopology: fc.dictionary(fc.constantFrom('k1', 'k2'), nameArb, { maxKeys: 2 }),
    targetRef: fc.record({ kind: fc.constant('Pod'), namespace: fc.constant('default'), name: nameArb }),
  },
  { requiredKeys: ['addresses'] },
);
const sliceArb = fc.record({
  metadata: fc.record(
    {
      name: fc.constantFrom('web-a', 'web-b', 'web-c'),
      deletionTimestamp: fc.constant('2026-01-01T00:00:00Z'),
    },
    { requiredKeys: ['name'] },
  ),
  addressType: fc.constantFrom('IPv4', 'IPv6'),
  ports: fc.array(fc.record({ name: fc.constantFrom('http', 'dns'), port: fc.integer({ min: 1, max: 3 }) }), {
    maxLength: 2,
  }),
  endpoints: fc.array(endpointArb, { maxLength: 5 }),
});

describe('packed addresses', () => {
  it('a dotted-quad IPv4 address is a number, and anything else stays a string', () => {
    const table: Array<[string, string | number]> = [
      ['0.0.0.0', 0],
      ['10.0.0.1', 167_772_161],
      ['192.168.1.254', 3_232_236_030],
      ['255.255.255.255', 4_294_967_295],
      ['010.0.0.1', '010.0.0.1'], // not canonical: kept as written
      ['10.0.0.256', '10.0.0.256'],
      ['10.0.0', '10.0.0'],
      ['10.0.0.1.2', '10.0.0.1.2'],
      ['10.0.0.-1', '10.0.0.-1'],
      ['10.0.0. 1', '10.0.0. 1'],
      ['1e1.0.0.1', '1e1.0.0.1'],
      ['fd00::1', 'fd00::1'],
      ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
      ['', ''],
    ];
    for (const [a, want] of table) {
      assert.equal(packAddress(a), want, a);
      assert.equal(unpackAddress(packAddress(a)), a, a);
    }
  });

  it('unpack(pack(a)) is a for any string and any IPv4 address', () => {
    fc.assert(fc.property(fc.string(), (a) => unpackAddress(packAddress(a)) === a));
    fc.assert(
      fc.property(
        fc.ipV4(),
        (a) => typeof packAddress(a) === 'number' && unpackAddress(packAddress(a)) === a,
      ),
    );
    fc.assert(fc.property(fc.ipV4Extended(), (a) => unpackAddress(packAddress(a)) === a));
  });
});

describe('packed slices', () => {
  it('unpack(pack(slice)) is what the slice reads as, with and without targetRefs and interning', () => {
    fc.assert(
      fc.property(sliceArb, fc.boolean(), fc.boolean(), (slice, targetRefs, interned) => {
        const table = new Map<string, string>();
        const intern = (s: string) => table.get(s) ?? (table.set(s, s), s);
        const o = { targetRefs, ...(interned ? { intern } : {}) };
        assert.deepStrictEqual(unpackSlice(packSlice(slice, o)), endpointsOfSlice(slice, o));
      }),
      { numRuns: 500 },
    );
  });

  it('merging packed slices equals reading them together', () => {
    fc.assert(
      fc.property(fc.array(sliceArb, { maxLength: 3 }), (slices) => {
        const merged = mergeSliceEndpoints(slices.map((s) => unpackSlice(packSlice(s))));
        assert.deepStrictEqual(merged, endpointsFromSlices(slices));
      }),
      { numRuns: 300 },
    );
  });

  it('merges in slice-name order, skips slices being deleted and a second copy of an address in a pool', () => {
    const s = (name: string, ips: string[], extra: object = {}) => ({
      metadata: { name, ...extra },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80 }],
      endpoints: ips.map((ip) => ({ addresses: [ip] })),
    });
    const slices = [
      s('web-b', ['10.0.0.2', '10.0.0.1']),
      s('web-a', ['10.0.0.1']),
      s('web-c', ['10.0.0.9'], { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    ];
    const merged = mergeSliceEndpoints(slices.map((x) => unpackSlice(packSlice(x))));
    assert.deepEqual(
      merged.map((e) => `${e.source} ${e.id}`),
      ['web-a IPv4|http:TCP:80/10.0.0.1', 'web-b IPv4|http:TCP:80/10.0.0.2'],
    );
  });

  it('keeps no per-endpoint arrays for what no endpoint has', () => {
    const p = packSlice({
      metadata: { name: 's' },
      endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'n1' }, { addresses: ['10.0.0.2'] }],
    });
    assert.equal(p.zones, undefined);
    assert.equal(p.rare, undefined);
    assert.deepEqual(p.nodes, ['n1', undefined]);
    assert.deepEqual(p.conditions, [3, 3]); // ready and serving default to true
  });
});
