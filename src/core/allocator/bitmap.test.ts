import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AllocationBitmap, type Random } from './bitmap.js';

/** A seeded PRNG (mulberry32): floats in [0, 1). */
function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const constant =
  (x: number): Random =>
  () =>
    x;

const taken = (b: AllocationBitmap): number[] => {
  const out: number[] = [];
  b.forEach((i) => out.push(i));
  return out;
};

describe('AllocationBitmap construction', () => {
  it('starts empty with every value free', () => {
    const b = new AllocationBitmap(100, 16);
    assert.equal(b.max, 100);
    assert.equal(b.offset, 16);
    assert.equal(b.count, 0);
    assert.equal(b.free(), 100);
    assert.deepEqual(taken(b), []);
  });

  it('refuses a negative or fractional size, and an offset not smaller than the size', () => {
    assert.throws(() => new AllocationBitmap(-1), {
      name: 'RangeError',
      message: 'bitmap size -1 is not valid',
    });
    assert.throws(() => new AllocationBitmap(1.5), RangeError);
    assert.throws(() => new AllocationBitmap(16, 16), {
      name: 'RangeError',
      message: 'offset 16 out of range',
    });
    assert.throws(() => new AllocationBitmap(16, -1), RangeError);
    assert.doesNotThrow(() => new AllocationBitmap(17, 16));
    assert.doesNotThrow(() => new AllocationBitmap(0));
  });
});

describe('AllocationBitmap.allocate / release / has', () => {
  it('takes a free offset once; taking it again reports "not allocated" without an error', () => {
    const b = new AllocationBitmap(10);
    assert.equal(b.allocate(3), true);
    assert.equal(b.has(3), true);
    assert.equal(b.count, 1);
    assert.equal(b.free(), 9);
    assert.equal(b.allocate(3), false);
    assert.equal(b.count, 1);
  });

  it('throws "offset %d out of range [0,%d]" outside [0, max) (the message says max, which is excluded)', () => {
    const b = new AllocationBitmap(5);
    assert.throws(() => b.allocate(5), { message: 'offset 5 out of range [0,5]' });
    assert.throws(() => b.allocate(-1), { message: 'offset -1 out of range [0,5]' });
    assert.throws(() => b.allocate(1.5), { message: 'offset 1.5 out of range [0,5]' });
    assert.equal(b.count, 0);
  });

  it('release frees a taken offset and is a silent no-op for a free or out-of-range one', () => {
    const b = new AllocationBitmap(40);
    b.allocate(33);
    b.release(33);
    assert.equal(b.has(33), false);
    assert.equal(b.count, 0);
    b.release(33);
    b.release(-1);
    b.release(40);
    b.release(2.5);
    assert.equal(b.count, 0);
    assert.equal(b.free(), 40);
  });

  it('has is false outside the range', () => {
    const b = new AllocationBitmap(8);
    b.allocate(7);
    assert.equal(b.has(7), true);
    assert.equal(b.has(8), false);
    assert.equal(b.has(-1), false);
  });
});

describe('AllocationBitmap.allocateNext (random scan with offset)', () => {
  it('reports full (undefined) for an empty-size bitmap and a full one', () => {
    assert.equal(new AllocationBitmap(0).allocateNext(constant(0)), undefined);
    const b = new AllocationBitmap(3);
    for (let i = 0; i < 3; i++) assert.notEqual(b.allocateNext(seeded(i)), undefined);
    assert.equal(b.allocateNext(seeded(9)), undefined);
    assert.equal(b.count, 3);
  });

  it('starts at offset + floor(r * (max - offset)) in the upper block', () => {
    const b = new AllocationBitmap(254, 16); // upper block: 238 values
    assert.equal(b.allocateNext(constant(0)), 16);
    assert.equal(b.allocateNext(constant(0.5)), 16 + 119);
    assert.equal(b.allocateNext(constant(0.999999)), 253);
  });

  it('scans forward from a taken start and wraps to the start of the upper block, never into the lower one', () => {
    const b = new AllocationBitmap(64, 16);
    b.allocate(63);
    assert.equal(b.allocateNext(constant(0.999999)), 16); // start 63 taken → wrap to offset
    b.allocate(40);
    b.allocate(41);
    assert.equal(b.allocateNext(constant((40 - 16) / 48)), 42);
  });

  it('skips whole taken words while scanning', () => {
    const b = new AllocationBitmap(200);
    for (let i = 0; i < 150; i++) b.allocate(i);
    assert.equal(b.allocateNext(constant(0)), 150);
  });

  it('falls back to the lower block only once the upper block is full, starting at floor(r * offset)', () => {
    const b = new AllocationBitmap(20, 16);
    for (let i = 16; i < 20; i++) b.allocate(i);
    assert.equal(b.allocateNext(constant(0.5)), 8);
    assert.equal(b.allocateNext(constant(0.5)), 9);
    b.allocate(15);
    assert.equal(b.allocateNext(constant(0.99)), 0); // start 15 taken → wrap to 0
  });

  it('with offset 0 scans the whole range from a uniform start', () => {
    const b = new AllocationBitmap(10);
    assert.equal(b.allocateNext(constant(0.75)), 7);
    b.allocate(8);
    b.allocate(9);
    assert.equal(b.allocateNext(constant(0.75)), 0);
  });

  it('pickNext names the value allocateNext would take without taking it', () => {
    const b = new AllocationBitmap(50, 16);
    assert.equal(b.pickNext(constant(0.25)), 16 + Math.floor(0.25 * 34));
    assert.equal(b.count, 0);
    assert.equal(b.allocateNext(constant(0.25)), 16 + Math.floor(0.25 * 34));
  });
});

describe('AllocationBitmap.forEach', () => {
  it('visits taken offsets in ascending order, across word boundaries and bit 31', () => {
    const b = new AllocationBitmap(100);
    for (const i of [99, 31, 0, 32, 64, 63, 5]) b.allocate(i);
    assert.deepEqual(taken(b), [0, 5, 31, 32, 63, 64, 99]);
  });
});

describe('AllocationBitmap.snapshot / restore (RangeAllocation.data)', () => {
  const cases: [number[], number[]][] = [
    [[], []],
    [[0], [0x01]],
    [
      [0, 8],
      [0x01, 0x01],
    ],
    [[7], [0x80]],
    [[31], [0x80, 0x00, 0x00, 0x00]],
    [[32], [0x01, 0x00, 0x00, 0x00, 0x00]],
    [
      [1, 9, 17],
      [0x02, 0x02, 0x02],
    ],
  ];
  for (const [offsets, bytes] of cases) {
    it(`encodes {${offsets.join(',')}} as big-endian minimal bytes [${bytes.join(',')}]`, () => {
      const b = new AllocationBitmap(64);
      for (const o of offsets) b.allocate(o);
      assert.deepEqual([...b.snapshot()], bytes);
      const r = new AllocationBitmap(64);
      r.allocate(50); // replaced by the restore
      r.restore(Uint8Array.from(bytes));
      assert.deepEqual(taken(r), offsets);
      assert.equal(r.count, offsets.length);
    });
  }

  it('clone is an independent copy', () => {
    const b = new AllocationBitmap(10, 0);
    b.allocate(1);
    const c = b.clone();
    c.allocate(2);
    b.release(1);
    assert.deepEqual(taken(b), []);
    assert.deepEqual(taken(c), [1, 2]);
    assert.equal(c.count, 2);
  });
});

type Op =
  | { kind: 'allocate'; at: number }
  | { kind: 'release'; at: number }
  | { kind: 'next' }
  | { kind: 'snapshot' };

const opArb = (max: number): fc.Arbitrary<Op> =>
  fc.oneof(
    fc.record({ kind: fc.constant('allocate' as const), at: fc.integer({ min: 0, max: max - 1 }) }),
    fc.record({ kind: fc.constant('release' as const), at: fc.integer({ min: 0, max: max - 1 }) }),
    fc.constant({ kind: 'next' as const }),
    fc.constant({ kind: 'next' as const }),
    fc.constant({ kind: 'snapshot' as const }),
  );

describe('AllocationBitmap properties', () => {
  it('matches a model set under any sequence of allocate / allocateNext / release / snapshot→restore', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 90 })
          .chain((max) =>
            fc.tuple(
              fc.constant(max),
              max > 16 ? fc.constantFrom(0, 16) : fc.constant(0),
              fc.array(opArb(max), { maxLength: 200 }),
              fc.integer(),
            ),
          ),
        ([max, offset, ops, seed]) => {
          let b = new AllocationBitmap(max, offset);
          const model = new Set<number>();
          const rnd = seeded(seed);
          for (const op of ops) {
            if (op.kind === 'allocate') {
              assert.equal(b.allocate(op.at), !model.has(op.at));
              model.add(op.at);
            } else if (op.kind === 'release') {
              b.release(op.at);
              model.delete(op.at);
            } else if (op.kind === 'next') {
              const upperFull = [...Array(max - offset).keys()].every((i) => model.has(offset + i));
              const got = b.allocateNext(rnd);
              if (model.size === max) {
                assert.equal(got, undefined);
              } else {
                assert.notEqual(got, undefined);
                assert.equal(model.has(got!), false, 'double allocation');
                assert.ok(got! >= 0 && got! < max);
                if (!upperFull)
                  assert.ok(got! >= offset, `lower-block ${got} used while the upper block had room`);
                model.add(got!);
              }
            } else {
              const r = new AllocationBitmap(max, offset);
              r.restore(b.snapshot());
              b = r;
            }
            assert.equal(b.count, model.size);
            assert.equal(b.free(), max - model.size);
            assert.deepEqual(
              taken(b),
              [...model].sort((x, y) => x - y),
            );
          }
        },
      ),
      { seed: 1070, numRuns: 300 },
    );
  });

  it('allocateNext alone fills the whole upper block before it touches the lower block', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 17, max: 300 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer(),
        (max, off, seed) => {
          fc.pre(off < max);
          const b = new AllocationBitmap(max, off);
          const rnd = seeded(seed);
          const firsts: number[] = [];
          for (let i = 0; i < max - off; i++) firsts.push(b.allocateNext(rnd)!);
          assert.deepEqual(
            [...firsts].sort((x, y) => x - y),
            [...Array(max - off).keys()].map((i) => off + i),
          );
          const rest: number[] = [];
          for (let i = 0; i < off; i++) rest.push(b.allocateNext(rnd)!);
          assert.deepEqual(
            [...rest].sort((x, y) => x - y),
            [...Array(off).keys()],
          );
          assert.equal(b.allocateNext(rnd), undefined);
        },
      ),
      { seed: 3668, numRuns: 200 },
    );
  });

  it('snapshot bytes are the big-endian integer whose bit i is offset i', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 199 }), { maxLength: 60 }), (offsets) => {
        const b = new AllocationBitmap(200);
        for (const o of offsets) b.allocate(o);
        const want = offsets.reduce((acc, o) => acc | (1n << BigInt(o)), 0n);
        const bytes = b.snapshot();
        const got = [...bytes].reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);
        assert.equal(got, want);
        assert.ok(bytes.length === 0 || bytes[0] !== 0, 'no leading zero byte');
      }),
      { seed: 8, numRuns: 300 },
    );
  });
});
