import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Random } from './bitmap.js';
import { formatAddress, parseAddress, parseCidrRange } from './cidr.js';
import { AllocatorError, isAllocatorError, type AllocatorErrorCode } from './errors.js';
import { calculateRangeOffset, IPAllocator, ipAt, ipOffset, ipRange } from './ip-allocator.js';

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
    assert.ok(isAllocatorError(err, code));
    return true;
  });
};

const listed = (a: IPAllocator): string[] => {
  const out: string[] = [];
  a.forEach((ip) => out.push(ip));
  return out;
};
const b64 = (data: Uint8Array): string => Buffer.from(data).toString('base64');
const newAlloc = (cidr: string): IPAllocator => new IPAllocator(ipRange(cidr));

describe('ipRange (usable addresses of a service CIDR)', () => {
  const table: [string, string, number, number, string][] = [
    // cidr, spec, max, offset, first usable
    ['10.0.0.0/24', '10.0.0.0/24', 254, 16, '10.0.0.1'],
    ['192.168.1.0/24', '192.168.1.0/24', 254, 16, '192.168.1.1'],
    ['10.0.0.0/15', '10.0.0.0/15', 131070, 256, '10.0.0.1'],
    ['10.0.0.0/12', '10.0.0.0/12', 1048574, 256, '10.0.0.1'], // IPv4 is not capped
    ['192.168.1.240/30', '192.168.1.240/30', 2, 0, '192.168.1.241'],
    ['192.168.1.0/31', '192.168.1.0/31', 0, 0, '192.168.1.1'],
    ['192.168.1.0/32', '192.168.1.0/32', 0, 0, '192.168.1.1'],
    ['192.168.1.0/25', '192.168.1.0/25', 126, 16, '192.168.1.1'],
    ['10.96.0.5/12', '10.96.0.0/12', 1048574, 256, '10.96.0.1'],
    // IPv6: only the network address is dropped, capped at 2^16 addresses
    ['2001:db8:1::/48', '2001:db8:1::/48', 65535, 256, '2001:db8:1::1'],
    ['2001:db8::/112', '2001:db8::/112', 65535, 256, '2001:db8::1'],
    ['2000::/108', '2000::/108', 65535, 256, '2000::1'],
    ['2001:db8::/120', '2001:db8::/120', 255, 16, '2001:db8::1'],
    ['fd00::/128', 'fd00::/128', 0, 0, 'fd00::1'],
  ];
  for (const [cidr, spec, max, offset, first] of table) {
    it(`${cidr}: ${max} usable from ${first}, static block ${offset}`, () => {
      const r = ipRange(cidr);
      assert.equal(r.spec, spec);
      assert.equal(r.max, max);
      assert.equal(r.offset, offset);
      assert.equal(ipAt(r, 0), first);
      assert.equal(r.family, cidr.includes(':') ? 'IPv6' : 'IPv4');
    });
  }

  it('maps offsets to addresses: the last IPv4 offset is broadcast − 1, the last IPv6 one is base + 65534', () => {
    const r = ipRange('10.0.0.0/24');
    assert.equal(ipAt(r, 253), '10.0.0.254');
    assert.equal(ipOffset(r, '10.0.0.254'), 253);
    assert.equal(ipOffset(r, '10.0.0.255'), undefined);
    assert.equal(ipOffset(r, '10.0.0.0'), undefined);
    const v6 = ipRange('2001:db8::/112');
    assert.equal(ipAt(v6, 65534), '2001:db8::ffff');
    assert.equal(ipOffset(v6, '2001:db8::ffff'), 65534);
    assert.equal(ipOffset(v6, '2001:0db8:0::0001'), 0);
    assert.equal(ipOffset(v6, 'garbage'), undefined);
  });

  it('the 10.96.0.0/12 static block is 10.96.0.1 … 10.96.1.0', () => {
    const r = ipRange('10.96.0.0/12');
    assert.equal(r.offset, 256);
    assert.equal(ipAt(r, 0), '10.96.0.1');
    assert.equal(ipAt(r, r.offset - 1), '10.96.1.0');
    assert.equal(ipAt(r, r.offset), '10.96.1.1');
  });

  it('refuses text that is not a CIDR and a range too large for a bitmap', () => {
    assert.throws(() => ipRange('10.0.0.0'), { name: 'RangeError', message: '10.0.0.0 is not a valid CIDR' });
    assert.throws(() => ipRange('10.0.0.0/7'), {
      name: 'RangeError',
      message: '10.0.0.0/7 is too large for an allocation bitmap',
    });
    assert.equal(ipRange(parseCidrRange('10.0.0.0/8')!).max, (1 << 24) - 2);
  });
});

describe('calculateRangeOffset (Test_calculateRangeOffset)', () => {
  const vectors: [string, number][] = [
    ['192.168.1.1/32', 0],
    ['fd00::1/128', 0],
    ['192.168.1.1/30', 0],
    ['fd00::1/126', 0],
    ['192.168.1.1/28', 0],
    ['192.168.1.1/27', 16],
    ['fd00::1/124', 0],
    ['fd00::1/122', 16],
    ['192.168.1.1/22', 64],
    ['fd00::1/118', 64],
    ['192.168.1.1/8', 256],
    ['fd00::1/12', 256],
  ];
  for (const [cidr, want] of vectors) {
    it(`${cidr} → ${want}`, () => {
      assert.equal(calculateRangeOffset(parseCidrRange(cidr)!), want);
    });
  }
});

describe('IPAllocator: TestAllocate', () => {
  const table: { cidr: string; free: number; outOfRange: string[]; first: string }[] = [
    {
      cidr: '192.168.1.0/24',
      free: 254,
      outOfRange: ['192.168.0.1', '192.168.1.0', '192.168.1.255', '192.168.2.2'],
      first: '192.168.1.1',
    },
    {
      cidr: '10.0.0.0/15',
      free: 131070,
      outOfRange: ['10.0.0.0', '10.15.255.255', '10.255.255.2'],
      first: '10.0.0.1',
    },
    {
      cidr: '2001:db8:1::/48',
      free: 65535,
      outOfRange: ['2001:db8::1', '2001:db8:1::', '2001:db8:1::1:0', '2001:db8:2::2'],
      first: '2001:db8:1::1',
    },
  ];
  for (const tc of table) {
    it(`${tc.cidr}: ${tc.free} free, out-of-range refused, fill → ErrFull, a released address is the next one`, () => {
      const a = newAlloc(tc.cidr);
      const rnd = seeded(tc.free);
      assert.equal(a.free(), tc.free);
      assert.equal(a.used(), 0);
      for (const ip of tc.outOfRange) {
        rejects(() => a.allocate(ip), 'ErrNotInRange', `provided IP ${ip} is not in the valid range`);
        assert.equal(a.has(ip), false);
        assert.equal(a.contains(ip), false);
      }
      const cidr = parseCidrRange(tc.cidr)!;
      const seen = new Set<string>();
      let x = '';
      for (let i = 0; i < tc.free; i++) {
        const ip = a.allocateNext(rnd);
        assert.equal(seen.has(ip), false, `${ip} handed out twice`);
        seen.add(ip);
        if (i === 100) x = ip;
      }
      for (const ip of seen) {
        const addr = parseAddress(ip)!;
        assert.ok(addr.value > cidr.network, ip);
        assert.ok(a.contains(ip), ip);
        assert.equal(formatAddress(addr), ip, 'canonical spelling');
      }
      assert.equal(a.free(), 0);
      rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');

      a.release(x);
      assert.equal(a.free(), 1);
      assert.equal(a.used(), tc.free - 1);
      assert.equal(a.allocateNext(rnd), x);
      a.release(x);
      rejects(() => a.allocate(tc.first), 'ErrAllocated', 'provided IP is already allocated');
      a.allocate(x);
      assert.equal(a.free(), 0);
    });
  }

  it('TestAllocateTiny: a /32 has nothing to give', () => {
    const a = newAlloc('192.168.1.0/32');
    assert.equal(a.free(), 0);
    rejects(() => a.allocateNext(seeded(1)), 'ErrFull', 'range is full');
  });

  it('TestAllocateSmall: a /30 gives its two host addresses, then is full', () => {
    const a = newAlloc('192.168.1.240/30');
    const rnd = seeded(30);
    assert.equal(a.free(), 2);
    assert.equal(a.range.max, 2);
    const one = a.allocateNext(rnd);
    const two = a.allocateNext(rnd);
    assert.notEqual(one, two);
    assert.deepEqual([one, two].sort(), ['192.168.1.241', '192.168.1.242']);
    rejects(() => a.allocate(one), 'ErrAllocated', 'provided IP is already allocated');
    rejects(() => a.allocate(two), 'ErrAllocated', 'provided IP is already allocated');
    for (let i = 0; i < 100; i++) rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');
    assert.equal(a.free(), 0);
  });

  it('TestAllocateReserved: on a /25, 110 allocateNext fill exactly .17–.126, then .1–.16 remain for static use', () => {
    const a = newAlloc('192.168.1.0/25');
    const rnd = seeded(25);
    assert.equal(a.range.max, 126);
    assert.equal(a.range.offset, 16);
    const got = new Set<string>();
    for (let i = 0; i < 110; i++) got.add(a.allocateNext(rnd));
    const upper = new Set([...Array(110).keys()].map((i) => `192.168.1.${17 + i}`));
    assert.deepEqual(got, upper);
    assert.equal(a.free(), 16);
    for (let i = 1; i <= 16; i++) a.allocate(`192.168.1.${i}`);
    assert.equal(a.free(), 0);
    a.release('192.168.1.10');
    assert.equal(a.allocateNext(rnd), '192.168.1.10');
    assert.equal(a.free(), 0);
  });

  it('dynamic allocation on a /24 stays within .17–.254 until those 238 are taken', () => {
    const a = newAlloc('10.0.0.0/24');
    const rnd = seeded(24);
    for (let i = 0; i < 238; i++) {
      const ip = a.allocateNext(rnd);
      assert.ok(Number(ip.split('.')[3]) >= 17, ip);
    }
    const next = a.allocateNext(rnd);
    assert.ok(Number(next.split('.')[3]) <= 16, next);
  });

  it('an IPv6 /112 after 264 allocations has 65271 free (capped to 2^16, last address usable)', () => {
    const a = newAlloc('2001:db8::/112');
    const rnd = seeded(112);
    for (let i = 0; i < 264; i++) a.allocateNext(rnd);
    assert.equal(a.free(), 65271);
    assert.equal(a.used(), 264);
  });

  it('the last address of an IPv6 range is allocatable, unlike the IPv4 broadcast', () => {
    const v6 = newAlloc('2001:db8::/120');
    v6.allocate('2001:db8::ff');
    assert.equal(v6.has('2001:db8::ff'), true);
    const v4 = newAlloc('10.0.0.0/24');
    rejects(
      () => v4.allocate('10.0.0.255'),
      'ErrNotInRange',
      'provided IP 10.0.0.255 is not in the valid range',
    );
  });

  it('an IPv4 /24 after 254 + 10 attempts has 10 ErrFull and 254 used', () => {
    const a = newAlloc('10.0.0.0/24');
    const rnd = seeded(264);
    let errors = 0;
    for (let i = 0; i < 264; i++) {
      try {
        a.allocateNext(rnd);
      } catch (err) {
        assert.ok(isAllocatorError(err, 'ErrFull'));
        errors++;
      }
    }
    assert.equal(errors, 10);
    assert.equal(a.used(), 254);
  });

  it('names an address of another family or a non-address as not in range', () => {
    const a = newAlloc('192.168.1.0/24');
    rejects(
      () => a.allocate('::ffff:192.168.2.1'),
      'ErrNotInRange',
      'provided IP ::ffff:192.168.2.1 is not in the valid range',
    );
    rejects(() => a.allocate('fd00::1'), 'ErrNotInRange', 'provided IP fd00::1 is not in the valid range');
    rejects(() => a.allocate('nope'), 'ErrNotInRange', 'provided IP nope is not in the valid range');
  });

  it('treats every spelling of an address as the same address', () => {
    const a = newAlloc('2001:db8::/64');
    a.allocate('2001:DB8:0:0::1');
    assert.equal(a.has('2001:db8::1'), true);
    rejects(() => a.allocate('2001:db8::0001'), 'ErrAllocated', 'provided IP is already allocated');
    assert.deepEqual(listed(a), ['2001:db8::1']);
    const b = newAlloc('192.168.1.0/24');
    b.allocate('::ffff:192.168.1.5');
    assert.deepEqual(listed(b), ['192.168.1.5']);
  });

  it('release of an out-of-range or free address is a silent no-op', () => {
    const a = newAlloc('192.168.1.0/24');
    a.allocate('192.168.1.7');
    a.release('192.168.0.7');
    a.release('192.168.1.8');
    a.release('garbage');
    assert.equal(a.used(), 1);
    a.release('192.168.1.7');
    assert.equal(a.used(), 0);
  });
});

describe('IPAllocator: TestForEach', () => {
  const sets: string[][] = [
    [],
    ['192.168.1.1'],
    ['192.168.1.1', '192.168.1.254'],
    ['192.168.1.1', '192.168.1.128', '192.168.1.254'],
  ];
  for (const set of sets) {
    it(`round-trips {${set.join(', ')}} in ascending order`, () => {
      const a = newAlloc('192.168.1.0/24');
      for (const ip of [...set].reverse()) a.allocate(ip);
      assert.deepEqual(listed(a), set);
    });
  }
});

describe('IPAllocator: snapshot / restore', () => {
  it('TestNewFromSnapshot: 128 allocations on a /24 survive snapshot → fromSnapshot (Free 126, Used 128)', () => {
    const a = newAlloc('192.168.0.0/24');
    const rnd = seeded(128);
    for (let i = 0; i < 128; i++) a.allocateNext(rnd);
    const snap = a.snapshot();
    assert.equal(snap.range, '192.168.0.0/24');
    const b = IPAllocator.fromSnapshot(snap);
    assert.equal(b.free(), 126);
    assert.equal(b.used(), 128);
    assert.deepEqual(listed(b), listed(a));
  });

  it('TestSnapshot: restoring a snapshot of another network is ErrMismatchedNetwork', () => {
    const a = newAlloc('192.168.1.0/24');
    a.allocate('192.168.1.1');
    const data = a.snapshot().data;
    const msg = 'the provided network does not match the current range';
    rejects(() => a.restore({ range: '192.168.2.0/24', data }), 'ErrMismatchedNetwork', msg);
    rejects(() => a.restore({ range: '192.168.1.0/25', data }), 'ErrMismatchedNetwork', msg);
    rejects(() => a.restore({ range: '::/24', data }), 'ErrMismatchedNetwork', msg);
    rejects(() => a.restore({ range: 'garbage', data }), 'ErrMismatchedNetwork', msg);
    assert.deepEqual(listed(a), ['192.168.1.1'], 'a refused restore changes nothing');
    // the same network spelled with host bits is the same range
    a.restore({ range: '192.168.1.77/24', data: new Uint8Array([0x02]) });
    assert.deepEqual(listed(a), ['192.168.1.2']);
  });

  it('RangeAllocation data: only 10.0.0.1 → "AQ=="; 10.0.0.1 and 10.0.0.9 → "AQE="; nothing → ""', () => {
    const a = newAlloc('10.0.0.0/24');
    assert.equal(b64(a.snapshot().data), '');
    a.allocate('10.0.0.1');
    assert.equal(b64(a.snapshot().data), 'AQ==');
    a.allocate('10.0.0.9');
    assert.equal(b64(a.snapshot().data), 'AQE=');
    const b = IPAllocator.fromSnapshot({ range: '10.0.0.0/24', data: Buffer.from('AQE=', 'base64') });
    assert.deepEqual(listed(b), ['10.0.0.1', '10.0.0.9']);
    assert.equal(b.used(), 2);
  });
});

describe('IPAllocator properties', () => {
  const ranges = ['10.0.0.0/27', '10.1.2.0/28', 'fd00::/122', 'fd00:1::/124'];
  it('never hands out an address twice and tracks a model set through allocate / allocateNext / release / snapshot→restore', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ranges),
        // offsets −2 … max+2 relative to the base, so the network address, broadcast and outsiders occur too
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('allocate' as const), at: fc.integer({ min: -2, max: 66 }) }),
            fc.record({ kind: fc.constant('release' as const), at: fc.integer({ min: -2, max: 66 }) }),
            fc.constant({ kind: 'next' as const }),
            fc.constant({ kind: 'next' as const }),
            fc.constant({ kind: 'snapshot' as const }),
          ),
          { maxLength: 150 },
        ),
        fc.integer(),
        (cidr, ops, seed) => {
          let a = newAlloc(cidr);
          const r = a.range;
          const rnd = seeded(seed);
          const model = new Set<number>();
          const ipOf = (off: number): string =>
            formatAddress({ family: r.family, value: r.base + BigInt(off) });
          for (const op of ops) {
            if (op.kind === 'allocate' || op.kind === 'release') {
              const ip = ipOf(op.at);
              const inRange = op.at >= 0 && op.at < r.max;
              if (op.kind === 'release') {
                a.release(ip);
                model.delete(op.at);
              } else if (!inRange) {
                rejects(() => a.allocate(ip), 'ErrNotInRange', `provided IP ${ip} is not in the valid range`);
              } else if (model.has(op.at)) {
                rejects(() => a.allocate(ip), 'ErrAllocated', 'provided IP is already allocated');
              } else {
                a.allocate(ip);
                model.add(op.at);
              }
            } else if (op.kind === 'next') {
              if (model.size === r.max) {
                rejects(() => a.allocateNext(rnd), 'ErrFull', 'range is full');
                continue;
              }
              let upperFree = false;
              for (let i = r.offset; i < r.max; i++) if (!model.has(i)) upperFree = true;
              const ip = a.allocateNext(rnd);
              const off = ipOffset(r, ip);
              assert.notEqual(off, undefined, `${ip} outside ${cidr}`);
              assert.equal(model.has(off!), false, `${ip} handed out twice`);
              if (upperFree)
                assert.ok(off! >= r.offset, `${ip} from the static block while the dynamic one had room`);
              model.add(off!);
            } else {
              a = IPAllocator.fromSnapshot(a.snapshot());
            }
            assert.equal(a.used(), model.size);
            assert.equal(a.free(), r.max - model.size);
            assert.deepEqual(listed(a), [...model].sort((x, y) => x - y).map(ipOf));
            for (const off of model) assert.ok(a.has(ipOf(off)));
          }
        },
      ),
      { seed: 2020, numRuns: 300 },
    );
  });
});
