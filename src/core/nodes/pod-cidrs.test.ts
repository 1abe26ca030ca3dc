import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatCidr, parseCidrRange, type Cidr } from '../allocator/cidr.js';
import {
  allocateNodeCIDRs,
  cidrRaceLoss,
  cidrsOverlap,
  CIDR_FULL_MESSAGE,
  defaultNodeMask,
  findCidrConflict,
  findSelfConflict,
  NodeCidrError,
  NodeCidrSet,
  parseCidrList,
  splitCidr,
} from './pod-cidrs.js';

const cidr = (s: string): Cidr => {
  const c = parseCidrRange(s);
  if (c === undefined) throw new Error(`bad test CIDR ${s}`);
  return c;
};

describe('parseCidrList', () => {
  it('reads one CIDR, or one per family, canonicalised', () => {
    const one = parseCidrList('10.244.1.7/24');
    assert.ok(Array.isArray(one));
    assert.deepEqual(one.map(formatCidr), ['10.244.1.0/24']);
    const two = parseCidrList('10.244.0.0/16, fd00:10:244::/56');
    assert.ok(Array.isArray(two));
    assert.deepEqual(two.map(formatCidr), ['10.244.0.0/16', 'fd00:10:244::/56']);
  });

  it('refuses text that is not a CIDR, two of one family, and more than two', () => {
    assert.match(String(parseCidrList('10.0.0.0')), /is not a CIDR/);
    assert.match(String(parseCidrList('')), /no CIDR given/);
    assert.match(String(parseCidrList('10.0.0.0/24,10.1.0.0/24')), /one IPv4 and one IPv6/);
    assert.match(String(parseCidrList('10.0.0.0/24,fd00::/64,10.1.0.0/24')), /at most two/);
  });
});

describe('cidrsOverlap', () => {
  const table: [string, string, boolean][] = [
    ['10.0.0.0/24', '10.0.0.0/24', true],
    ['10.0.0.0/16', '10.0.5.0/24', true],
    ['10.0.5.0/24', '10.0.0.0/16', true],
    ['10.0.0.0/24', '10.0.1.0/24', false],
    ['10.0.0.0/25', '10.0.0.128/25', false],
    ['127.10.0.0/24', '127.10.0.255/32', true],
    ['10.0.0.0/8', 'fd00::/8', false],
    ['fd00::/64', 'fd00::8000:0:0:0/65', true],
    ['fd00::/64', 'fd00:0:0:1::/64', false],
  ];
  for (const [a, b, want] of table) {
    it(`${a} and ${b}: ${want}`, () => assert.equal(cidrsOverlap(cidr(a), cidr(b)), want));
  }

  it('is symmetric and agrees with comparing address ranges (property)', () => {
    const v4 = fc.record({
      net: fc.integer({ min: 0, max: 0xffff }),
      prefix: fc.integer({ min: 16, max: 32 }),
    });
    fc.assert(
      fc.property(v4, v4, (x, y) => {
        const mk = (r: { net: number; prefix: number }): Cidr =>
          cidr(`10.${(r.net >> 8) & 255}.${r.net & 255}.0/${r.prefix}`);
        const a = mk(x);
        const b = mk(y);
        const end = (c: Cidr): bigint => c.network + (1n << BigInt(32 - c.prefix)) - 1n;
        const want = a.network <= end(b) && b.network <= end(a);
        return cidrsOverlap(a, b) === want && cidrsOverlap(b, a) === want;
      }),
    );
  });
});

describe('findCidrConflict / findSelfConflict', () => {
  it('names the first of my CIDRs that overlaps another node, and ignores my own nodes', () => {
    const hit = findCidrConflict(
      [
        { node: 'a', cidrs: ['10.0.0.0/24'] },
        { node: 'b', cidrs: ['10.0.1.0/24', 'fd00::/64'] },
      ],
      [
        { node: 'a', cidrs: ['10.0.0.0/24'] },
        { node: 'other', cidrs: ['10.0.0.0/23'] },
      ],
    );
    assert.deepEqual(hit, { node: 'a', cidr: '10.0.0.0/24', otherNode: 'other', otherCidr: '10.0.0.0/23' });
    assert.equal(
      findCidrConflict([{ node: 'a', cidrs: ['10.0.0.0/24'] }], [{ node: 'x', cidrs: ['10.0.1.0/24'] }]),
      undefined,
    );
  });

  it('finds two of my own nodes sharing a range', () => {
    const hit = findSelfConflict([
      { node: 'a', cidrs: ['10.0.0.0/24'] },
      { node: 'b', cidrs: ['10.0.1.0/24'] },
      { node: 'c', cidrs: ['10.0.0.128/25'] },
    ]);
    assert.equal(hit?.node, 'a');
    assert.equal(hit?.otherNode, 'c');
  });
});

describe('splitCidr / defaultNodeMask', () => {
  it('gives node i subnet i of the node mask', () => {
    assert.deepEqual(splitCidr(cidr('127.10.0.0/16'), 24, 3).map(formatCidr), [
      '127.10.0.0/24',
      '127.10.1.0/24',
      '127.10.2.0/24',
    ]);
    assert.deepEqual(splitCidr(cidr('fd00:10::/56'), 64, 2).map(formatCidr), [
      'fd00:10::/64',
      'fd00:10:0:1::/64',
    ]);
  });

  it('defaults to /24 (IPv4) or /64 (IPv6) unless the range is too small for the count', () => {
    assert.equal(defaultNodeMask(cidr('10.244.0.0/16'), 3), 24);
    assert.equal(defaultNodeMask(cidr('127.10.0.0/24'), 3), 26);
    assert.equal(defaultNodeMask(cidr('127.10.0.0/24'), 1), 24);
    assert.equal(defaultNodeMask(cidr('fd00::/48'), 1000), 64);
  });

  it('refuses a range too small for the count, or a mask outside it', () => {
    assert.throws(
      () => splitCidr(cidr('10.0.0.0/24'), 25, 3),
      (e: unknown) => e instanceof NodeCidrError && e.code === 'ErrCIDRFull',
    );
    assert.throws(
      () => splitCidr(cidr('10.0.0.0/24'), 16, 1),
      (e: unknown) => e instanceof NodeCidrError && e.code === 'ErrMaskSize',
    );
    assert.throws(() => splitCidr(cidr('fd00::/32'), 64, 1), /node CIDR size is too big/);
  });
});

describe('NodeCidrSet (node IPAM range allocator)', () => {
  it('hands out subnets in order from nextCandidate and reuses freed ones only after a wrap', () => {
    const set = new NodeCidrSet(cidr('10.244.0.0/22'), 24);
    const got = [set.allocateNext(), set.allocateNext()].map(formatCidr);
    assert.deepEqual(got, ['10.244.0.0/24', '10.244.1.0/24']);
    set.release(cidr('10.244.0.0/24'));
    assert.equal(formatCidr(set.allocateNext()), '10.244.2.0/24');
    assert.equal(formatCidr(set.allocateNext()), '10.244.3.0/24');
    assert.equal(formatCidr(set.allocateNext()), '10.244.0.0/24');
    assert.throws(() => set.allocateNext(), new RegExp(CIDR_FULL_MESSAGE));
  });

  it('skips subnets occupied by existing nodes and by overlapping reserved ranges', () => {
    const set = new NodeCidrSet(cidr('10.244.0.0/16'), 24);
    set.occupy(cidr('10.244.0.0/24'));
    set.occupy(cidr('10.244.2.0/23')); // covers .2 and .3
    set.occupy(cidr('192.168.0.0/24')); // outside: ignored
    set.occupy(cidr('fd00::/64')); // other family: ignored
    assert.deepEqual([set.allocateNext(), set.allocateNext()].map(formatCidr), [
      '10.244.1.0/24',
      '10.244.4.0/24',
    ]);
  });

  it('never hands out a subnet twice, nor one overlapping an occupied range (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 64 }),
        (taken, want) => {
          const set = new NodeCidrSet(cidr('10.0.0.0/18'), 24);
          const occupied = taken.map((i) => cidr(`10.0.${i}.0/24`));
          occupied.forEach((c) => set.occupy(c));
          const out: Cidr[] = [];
          for (let k = 0; k < want; k++) {
            try {
              out.push(set.allocateNext());
            } catch (e) {
              assert.ok(e instanceof NodeCidrError);
              assert.equal(out.length, 64 - taken.length);
              break;
            }
          }
          const all = [...occupied, ...out];
          for (let i = 0; i < all.length; i++)
            for (let j = i + 1; j < all.length; j++) assert.ok(!cidrsOverlap(all[i]!, all[j]!));
        },
      ),
    );
  });
});

describe('allocateNodeCIDRs', () => {
  it('keeps ranges nodes already have and gives new nodes the next free ones, dual-stack', () => {
    const out = allocateNodeCIDRs({
      clusterCIDRs: [cidr('10.244.0.0/16'), cidr('fd00:10:244::/56')],
      existing: [
        { node: 'old', cidrs: ['10.244.0.0/24', 'fd00:10:244::/64'] },
        { node: 'n-1', cidrs: ['10.244.7.0/24', 'fd00:10:244:7::/64'] },
      ],
      reserved: [cidr('10.244.1.0/24')],
      nodes: ['n-0', 'n-1', 'n-2'],
    });
    assert.deepEqual(Object.fromEntries(out), {
      'n-0': ['10.244.2.0/24', 'fd00:10:244:1::/64'],
      'n-1': ['10.244.7.0/24', 'fd00:10:244:7::/64'],
      'n-2': ['10.244.3.0/24', 'fd00:10:244:2::/64'],
    });
  });

  it('honours the mask size and reports a full range', () => {
    const out = allocateNodeCIDRs({
      clusterCIDRs: [cidr('10.0.0.0/24')],
      maskSizes: [26],
      existing: [],
      nodes: ['a', 'b'],
    });
    assert.deepEqual(Object.fromEntries(out), { a: ['10.0.0.0/26'], b: ['10.0.0.64/26'] });
    assert.throws(
      () => allocateNodeCIDRs({ clusterCIDRs: [cidr('10.0.0.0/24')], existing: [], nodes: ['a', 'b'] }),
      (e: unknown) => e instanceof NodeCidrError && e.code === 'ErrCIDRFull',
    );
  });
});

describe('cidrRaceLoss', () => {
  const T0 = 1_700_000_000_000;
  const T1 = T0 + 1000;
  const n = (node: string, cidrs: string, claimedMs: number) => ({
    node,
    cidrs: cidrs.split(','),
    claimedMs,
  });
  type Case = [string, ReturnType<typeof n>[], ReturnType<typeof n>[], string | undefined];
  // Expected: undefined (keep everything), or `node cidr/otherNode otherCidr` plus ' tie' on a tie.
  const table: Case[] = [
    ['no overlap: keep', [n('a', '10.0.0.0/24', T1)], [n('b', '10.0.1.0/24', T0)], undefined],
    ['the other is newer: keep', [n('a', '10.0.0.0/24', T0)], [n('b', '10.0.0.0/24', T1)], undefined],
    [
      'the other is older: yield',
      [n('a', '10.0.0.0/24', T1)],
      [n('b', '10.0.0.0/24', T0)],
      'a 10.0.0.0/24/b 10.0.0.0/24',
    ],
    [
      'same second: yield, a tie',
      [n('a', '10.0.0.0/24', T0)],
      [n('b', '10.0.0.0/24', T0)],
      'a 10.0.0.0/24/b 10.0.0.0/24 tie',
    ],
    [
      'same second, the smaller name: still yield',
      [n('a', '10.0.0.0/24', T0)],
      [n('z', '10.0.0.0/24', T0)],
      'a 10.0.0.0/24/z 10.0.0.0/24 tie',
    ],
    [
      'partial overlap counts',
      [n('a', '10.0.0.0/25', T1)],
      [n('b', '10.0.0.0/24', T0)],
      'a 10.0.0.0/25/b 10.0.0.0/24',
    ],
    [
      'a range just set on an old node yields to any overlap',
      [n('old', '10.0.0.0/24', Infinity)],
      [n('b', '10.0.0.0/24', T1)],
      'old 10.0.0.0/24/b 10.0.0.0/24',
    ],
    [
      'an old kept range wins against a new one',
      [n('old', '10.0.0.0/24', T0)],
      [n('b', '10.0.0.0/24', T1)],
      undefined,
    ],
    [
      'my own nodes in the list are not rivals',
      [n('a', '10.0.0.0/24', T1)],
      [n('a', '10.0.0.0/24', T0)],
      undefined,
    ],
    [
      'a strict loss is preferred over an earlier tie',
      [n('a', '10.0.0.0/24', T0), n('a2', '10.0.1.0/24', T1)],
      [n('b', '10.0.0.0/24', T0), n('c', '10.0.1.0/24', T0)],
      'a2 10.0.1.0/24/c 10.0.1.0/24',
    ],
    [
      'a loss on the second family',
      [n('a', '10.0.0.0/24,fd00::/64', T1)],
      [n('b', '10.0.9.0/24,fd00::/64', T0)],
      'a fd00::/64/b fd00::/64',
    ],
    ['families do not overlap each other', [n('a', 'fd00::/64', T1)], [n('b', '10.0.0.0/24', T0)], undefined],
    ['unparsable ranges are ignored', [n('a', 'junk', T1)], [n('b', 'junk', T0)], undefined],
  ];
  for (const [what, mine, others, want] of table) {
    it(what, () => {
      const loss = cidrRaceLoss(mine, others);
      const got =
        loss === undefined
          ? undefined
          : `${loss.node} ${loss.cidr}/${loss.otherNode} ${loss.otherCidr}${loss.tie ? ' tie' : ''}`;
      assert.equal(got, want);
    });
  }

  it('is settled one way for two racers that both see the overlap: never both keep', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 3 }), (ta, tb) => {
        const a = [n('a', '10.0.0.0/24', T0 + ta * 1000)];
        const b = [n('b', '10.0.0.0/24', T0 + tb * 1000)];
        return cidrRaceLoss(a, b) !== undefined || cidrRaceLoss(b, a) !== undefined;
      }),
    );
  });
});
