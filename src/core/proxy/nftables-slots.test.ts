// Endpoint ranges of the nftables mode: what each chain gets, what it keeps, and undo.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  ENDPOINT_MAPS,
  MIN_RANGE,
  emptySlots,
  endpointMapOf,
  releaseSlots,
  takeSlots,
  type SlotSpace,
} from './nftables-slots.js';

describe('endpoint ranges', () => {
  it('gives each chain a power-of-two range aligned to its size, and keeps it while the endpoints fit', () => {
    const s = emptySlots();
    assert.deepEqual(takeSlots(s, 'a', 3), { base: 0, size: MIN_RANGE });
    assert.deepEqual(takeSlots(s, 'b', 17), { base: 32, size: 32 });
    assert.deepEqual(takeSlots(s, 'c', 1), { base: 64, size: 16 });
    assert.deepEqual(takeSlots(s, 'a', 16), { base: 0, size: 16 }, 'still fits');
    assert.deepEqual(takeSlots(s, 'a', 1), { base: 0, size: 16 }, 'fewer endpoints keep the range');
    // Grown past its range: a new one, and the old one is free for the next chain of that size.
    assert.deepEqual(takeSlots(s, 'a', 20), { base: 96, size: 32 });
    assert.deepEqual(takeSlots(s, 'd', 2), { base: 0, size: 16 });
    releaseSlots(s, 'b');
    releaseSlots(s, 'b');
    assert.deepEqual(takeSlots(s, 'e', 30), { base: 32, size: 32 });
  });

  it('spreads ranges over the endpoint maps', () => {
    assert.equal(endpointMapOf(0, 'tcp'), 'endpoints-tcp-0');
    assert.equal(endpointMapOf(MIN_RANGE, 'udp'), 'endpoints-udp-1');
    assert.equal(endpointMapOf(MIN_RANGE * ENDPOINT_MAPS, 'tcp'), 'endpoints-tcp-0');
    assert.equal(endpointMapOf(MIN_RANGE * ENDPOINT_MAPS + 5 * MIN_RANGE, 'sctp'), 'endpoints-sctp-5');
  });

  it('never overlaps two chains, and undo puts the space back exactly', () => {
    const op = fc.record({
      chain: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      k: fc.integer({ min: 1, max: 70 }),
      release: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), fc.array(op, { maxLength: 30 }), (setup, later) => {
        const s: SlotSpace = emptySlots();
        const run = (ops: typeof setup, record?: (u: () => void) => void): void => {
          for (const o of ops)
            if (o.release) releaseSlots(s, o.chain, record);
            else {
              const r = takeSlots(s, o.chain, o.k, record);
              assert.ok(r.size >= o.k && r.base % r.size === 0);
            }
        };
        run(setup);
        const before = structuredClone(s);
        const undo: (() => void)[] = [];
        run(later, (u) => undo.push(u));
        const ranges = [...s.ranges.values()].sort((x, y) => x.base - y.base);
        for (let i = 1; i < ranges.length; i++)
          assert.ok(ranges[i - 1]!.base + ranges[i - 1]!.size <= ranges[i]!.base, 'ranges overlap');
        const free = [...s.free].flatMap(([size, bases]) => bases.map((base) => ({ base, size })));
        for (const f of free)
          for (const r of ranges)
            assert.ok(f.base + f.size <= r.base || r.base + r.size <= f.base, 'free range in use');
        for (const u of undo.reverse()) u();
        assert.deepEqual(s, before);
      }),
      { numRuns: 300 },
    );
  });
});
