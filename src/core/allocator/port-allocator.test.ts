import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Random } from './bitmap.js';
import { AllocatorError, type AllocatorErrorCode } from './errors.js';
import {
  calculatePortRangeOffset,
  formatPortRange,
  parsePortRange,
  PortAllocator,
  portRangeContains,
} from './port-allocator.js';

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

const rejects = (fn: () => unknown, code: AllocatorErrorCode, message: string): void => {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AllocatorError, `not an AllocatorError: ${String(err)}`);
    assert.equal(err.code, code);
    assert.equal(err.message, message);
    return true;
  });
};
const listed = (a: PortAllocator): number[] => {
  const out: number[] = [];
  a.forEach((p) => out.push(p));
  return out;
};
const newAlloc = (range: string): PortAllocator => new PortAllocator(parsePortRange(range));
const notInRange = (spec: string): string =>
  `provided port is not in the valid range. The range of valid ports is ${spec}`;

describe('parsePortRange (apimachinery PortRange.Set)', () => {
  const ok: [string, number, number, string][] = [
    ['30000-32767', 30000, 2768, '30000-32767'],
    ['  30000-32767  ', 30000, 2768, '30000-32767'],
    ['10000-10200', 10000, 201, '10000-10200'],
    ['100-200', 100, 101, '100-200'],
    ['8080', 8080, 1, '8080-8080'],
    ['30000+100', 30000, 101, '30000-30100'],
    ['0-65535', 0, 65536, '0-65535'],
    ['65535', 65535, 1, '65535-65535'],
    ['', 0, 0, ''],
    ['   ', 0, 0, ''],
  ];
  for (const [text, base, size, str] of ok) {
    it(`"${text}" → base ${base}, size ${size}, printed "${str}"`, () => {
      const r = parsePortRange(text);
      assert.deepEqual(r, { base, size });
      assert.equal(formatPortRange(r), str);
    });
  }

  const bad: [string, string][] = [
    ['1-2+3', 'unable to parse port range: 1-2+3'],
    [' 1+2-3 ', 'unable to parse port range: 1+2-3'],
    ['0-65536', 'the port range cannot be greater than 65535: 0-65536'],
    ['70000', 'the port range cannot be greater than 65535: 70000'],
    ['65535+1', 'the port range cannot be greater than 65535: 65535+1'],
    ['200-100', 'end port cannot be less than start port: 200-100'],
  ];
  for (const [text, message] of bad) {
    it(`"${text}" is refused: ${message}`, () => {
      assert.throws(() => parsePortRange(text), { message });
    });
  }

  it('refuses non-numeric parts', () => {
    for (const text of ['abc', '-5', '10-', '+5', '1-x', '1.5'])
      assert.throws(() => parsePortRange(text), RangeError, text);
  });

  it('Contains(p) = p >= base && p − base < size', () => {
    const r = parsePortRange('100-200');
    assert.equal(portRangeContains(r, 99), false);
    assert.equal(portRangeContains(r, 100), true);
    assert.equal(portRangeContains(r, 200), true);
    assert.equal(portRangeContains(r, 201), false);
    assert.equal(portRangeContains(r, 150.5), false);
    assert.equal(portRangeContains(parsePortRange(''), 0), false);
  });
});

describe('calculatePortRangeOffset', () => {
  const vectors: [number, number][] = [
    [2768, 86],
    [10, 0],
    [16, 0],
    [17, 16],
    [128, 16],
    [2048, 64],
    [4096, 128],
    [8192, 128],
  ];
  for (const [size, want] of vectors) {
    it(`size ${size} → ${want}`, () => {
      assert.equal(calculatePortRangeOffset({ base: 30000, size }), want);
    });
  }
});

describe('PortAllocator', () => {
  it('10000-10200: 201 free, fill → ErrFull, a released port is the next one, out-of-range and taken ports refused', () => {
    const a = newAlloc('10000-10200');
    const rnd = seeded(201);
    assert.equal(a.free(), 201);
    assert.equal(a.spec, '10000-10200');
    const seen = new Set<number>();
    for (let i = 0; i < 201; i++) {
      const p = a.allocateNext(rnd);
      assert.ok(p >= 10000 && p <= 10200, String(p));
      assert.equal(seen.has(p), false, `${p} handed out twice`);
      seen.add(p);
    }
    assert.equal(a.free(), 0);
    rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');
    a.release(10005);
    assert.equal(a.free(), 1);
    assert.equal(a.used(), 200);
    assert.equal(a.allocateNext(rnd), 10005);
    for (const p of [1, 20000, 10201, 9999]) {
      rejects(() => a.allocate(p), 'ErrNotInRange', notInRange('10000-10200'));
    }
    rejects(() => a.allocate(10001), 'ErrAllocated', 'provided port is already allocated');
  });

  it('TestAllocateReserved 30000-30128: 113 allocateNext fill exactly 30016..30128, then 30000..30015 statically', () => {
    const a = newAlloc('30000-30128');
    const rnd = seeded(129);
    assert.equal(a.bitmap.offset, 16);
    const got = new Set<number>();
    for (let i = 0; i < 113; i++) got.add(a.allocateNext(rnd));
    assert.deepEqual(got, new Set([...Array(113).keys()].map((i) => 30016 + i)));
    assert.equal(a.free(), 16);
    for (let p = 30000; p <= 30015; p++) a.allocate(p);
    assert.equal(a.free(), 0);
    rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');
  });

  it('with the default range, dynamic allocation uses 30086–32767 before 30000–30085', () => {
    const a = newAlloc('30000-32767');
    const rnd = seeded(2768);
    for (let i = 0; i < 2768 - 86; i++) {
      const p = a.allocateNext(rnd);
      assert.ok(p >= 30086, String(p));
    }
    assert.ok(a.allocateNext(rnd) < 30086);
  });

  it('TestNewFromSnapshot 200-300: 50 allocations survive snapshot → fromSnapshot (Free 51, Used 50)', () => {
    const a = newAlloc('200-300');
    const rnd = seeded(50);
    for (let i = 0; i < 50; i++) a.allocateNext(rnd);
    const snap = a.snapshot();
    assert.equal(snap.range, '200-300');
    const b = PortAllocator.fromSnapshot(snap);
    assert.equal(b.free(), 51);
    assert.equal(b.used(), 50);
    assert.deepEqual(listed(b), listed(a));
  });

  it('TestSnapshot: restoring a snapshot of another port range is ErrMismatchedNetwork', () => {
    const a = newAlloc('10000-10200');
    a.allocate(10000);
    const msg = 'the provided port range does not match the current port range';
    rejects(() => a.restore({ range: '200-300', data: new Uint8Array([1]) }), 'ErrMismatchedNetwork', msg);
    rejects(
      () => a.restore({ range: '10000-10201', data: new Uint8Array([1]) }),
      'ErrMismatchedNetwork',
      msg,
    );
    rejects(() => a.restore({ range: 'x-y', data: new Uint8Array([1]) }), 'ErrMismatchedNetwork', msg);
    assert.deepEqual(listed(a), [10000]);
    a.restore({ range: '10000+200', data: new Uint8Array([0x01, 0x00]) });
    assert.deepEqual(listed(a), [10008]);
  });

  it('offset 0 of the bitmap is the first port: port base+8 alone is the bytes [0x01, 0x00]', () => {
    const a = newAlloc('30000-32767');
    a.allocate(30008);
    assert.deepEqual([...a.snapshot().data], [0x01, 0x00]);
    a.allocate(30000);
    assert.deepEqual([...a.snapshot().data], [0x01, 0x01]);
  });

  it('release outside the range, of a free port or of a non-integer is a silent no-op', () => {
    const a = newAlloc('100-200');
    a.allocate(150);
    a.release(99);
    a.release(201);
    a.release(151);
    a.release(150.5);
    assert.deepEqual(listed(a), [150]);
    assert.equal(a.has(150), true);
    assert.equal(a.has(1000), false);
    a.release(150);
    assert.equal(a.used(), 0);
  });

  it('an empty range ("") holds nothing', () => {
    const a = newAlloc('');
    assert.equal(a.free(), 0);
    assert.equal(a.spec, '');
    rejects(() => a.allocate(0), 'ErrNotInRange', notInRange(''));
    rejects(() => a.allocateNext(seeded(0)), 'ErrFull', 'range is full');
  });
});

describe('PortAllocator properties', () => {
  it('never hands out a port twice and tracks a model set through allocate / allocateNext / release / snapshot→restore', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('30000-30040', '100-116', '5000-5010', '7000+63'),
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('allocate' as const), port: fc.integer({ min: -3, max: 70 }) }),
            fc.record({ kind: fc.constant('release' as const), port: fc.integer({ min: -3, max: 70 }) }),
            fc.constant({ kind: 'next' as const }),
            fc.constant({ kind: 'next' as const }),
            fc.constant({ kind: 'snapshot' as const }),
          ),
          { maxLength: 150 },
        ),
        fc.integer(),
        (range, ops, seed) => {
          let a = newAlloc(range);
          const { base, size } = a.range;
          const offset = calculatePortRangeOffset(a.range);
          const rnd = seeded(seed);
          const model = new Set<number>();
          for (const op of ops) {
            if (op.kind === 'allocate' || op.kind === 'release') {
              const port = base + op.port;
              const inRange = op.port >= 0 && op.port < size;
              if (op.kind === 'release') {
                a.release(port);
                model.delete(port);
              } else if (!inRange) {
                rejects(() => a.allocate(port), 'ErrNotInRange', notInRange(a.spec));
              } else if (model.has(port)) {
                rejects(() => a.allocate(port), 'ErrAllocated', 'provided port is already allocated');
              } else {
                a.allocate(port);
                model.add(port);
              }
            } else if (op.kind === 'next') {
              if (model.size === size) {
                rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');
                continue;
              }
              let upperFree = false;
              for (let p = base + offset; p < base + size; p++) if (!model.has(p)) upperFree = true;
              const p = a.allocateNext(rnd);
              assert.ok(p >= base && p < base + size, `${p} outside ${range}`);
              assert.equal(model.has(p), false, `${p} handed out twice`);
              if (upperFree)
                assert.ok(p >= base + offset, `${p} from the static block while the dynamic one had room`);
              model.add(p);
            } else {
              a = PortAllocator.fromSnapshot(a.snapshot());
            }
            assert.equal(a.used(), model.size);
            assert.equal(a.free(), size - model.size);
            assert.deepEqual(
              listed(a),
              [...model].sort((x, y) => x - y),
            );
          }
        },
      ),
      { seed: 3668, numRuns: 300 },
    );
  });
});
