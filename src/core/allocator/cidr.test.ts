import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  canonicalIP,
  cidrContains,
  cidrSize,
  familyBits,
  formatAddress,
  formatCidr,
  indexedAddress,
  parseAddress,
  parseCidrRange,
} from './cidr.js';

const v6 = (value: bigint): { family: 'IPv6'; value: bigint } => ({ family: 'IPv6', value });

describe('parseAddress', () => {
  it('reads IPv4 as a 32-bit integer and IPv6 as a 128-bit integer', () => {
    assert.deepEqual(parseAddress('10.96.0.1'), { family: 'IPv4', value: 0x0a600001n });
    assert.deepEqual(parseAddress('255.255.255.255'), { family: 'IPv4', value: 0xffffffffn });
    assert.deepEqual(parseAddress('0.0.0.0'), { family: 'IPv4', value: 0n });
    assert.deepEqual(parseAddress('::'), { family: 'IPv6', value: 0n });
    assert.deepEqual(parseAddress('::1'), { family: 'IPv6', value: 1n });
    assert.deepEqual(parseAddress('2001:db8::1'), {
      family: 'IPv6',
      value: (0x2001n << 112n) | (0xdb8n << 96n) | 1n,
    });
  });

  it('counts an IPv4-mapped IPv6 address as IPv4 (Go To4)', () => {
    assert.deepEqual(parseAddress('::ffff:10.0.0.1'), { family: 'IPv4', value: 0x0a000001n });
    assert.deepEqual(parseAddress('::ffff:a00:1'), { family: 'IPv4', value: 0x0a000001n });
  });

  it('refuses what is not an address', () => {
    for (const bad of [
      '',
      'None',
      '10.0.0',
      '10.0.0.256',
      '10.0.0.01',
      '1::2::3',
      'fe80::1%eth0',
      '10.0.0.0/24',
    ]) {
      assert.equal(parseAddress(bad), undefined, bad);
    }
  });
});

describe('formatAddress / canonicalIP (one spelling per address)', () => {
  it('formats IPv4 as a dotted quad', () => {
    assert.equal(formatAddress({ family: 'IPv4', value: 0xc0a80101n }), '192.168.1.1');
    assert.equal(formatAddress({ family: 'IPv4', value: 0n }), '0.0.0.0');
  });

  const rfc5952: [string, string][] = [
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:DB8::ABCD', '2001:db8::abcd'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['fe80:0:0:0:0:0:0:0', 'fe80::'],
    // a single zero group is not compressed
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    // the longest run wins
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    // on a tie, the first run wins
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2000:0::1', '2000::1'],
    ['2001:db8:1::1:0', '2001:db8:1::1:0'],
    ['::ffff:192.168.1.1', '192.168.1.1'],
    ['192.168.1.1', '192.168.1.1'],
  ];
  for (const [input, want] of rfc5952) {
    it(`spells ${input} as ${want}`, () => {
      assert.equal(canonicalIP(input), want);
    });
  }

  it('returns undefined for text that is not an address', () => {
    assert.equal(canonicalIP('not-an-ip'), undefined);
    assert.equal(canonicalIP(''), undefined);
  });

  it('agrees with the WHATWG URL IPv6 serializer (RFC 5952) for any non-mapped IPv6 address', () => {
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 0xffff }));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
        const value = groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
        fc.pre(value >> 32n !== 0xffffn); // IPv4-mapped: counted as IPv4 here, printed in hex by WHATWG
        const text = formatAddress(v6(value));
        const whatwg = new URL(`http://[${groups.map((g) => g.toString(16)).join(':')}]/`).hostname;
        assert.equal(`[${text}]`, whatwg);
        assert.deepEqual(parseAddress(text), v6(value));
      }),
      { seed: 5952, numRuns: 2000 },
    );
  });

  it('round-trips every IPv4 address', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const text = formatAddress({ family: 'IPv4', value: BigInt(n) });
        assert.deepEqual(parseAddress(text), { family: 'IPv4', value: BigInt(n) });
        assert.equal(canonicalIP(text), text);
      }),
      { seed: 4, numRuns: 2000 },
    );
  });
});

describe('parseCidrRange', () => {
  it('clears the host bits like Go ParseCIDR', () => {
    const c = parseCidrRange('10.96.0.5/12')!;
    assert.equal(c.family, 'IPv4');
    assert.equal(c.prefix, 12);
    assert.equal(c.bits, 32);
    assert.equal(formatCidr(c), '10.96.0.0/12');
    assert.equal(formatCidr(parseCidrRange('fd00::1/126')!), 'fd00::/126');
    assert.equal(formatCidr(parseCidrRange('2001:DB8:0:0::/48')!), '2001:db8::/48');
  });

  it('brings an IPv4-mapped IPv6 CIDR to its IPv4 prefix', () => {
    const c = parseCidrRange('::ffff:10.0.0.0/104')!;
    assert.equal(c.family, 'IPv4');
    assert.equal(c.prefix, 8);
    assert.equal(formatCidr(c), '10.0.0.0/8');
  });

  it('refuses text that is not a CIDR', () => {
    for (const bad of [
      '10.0.0.0',
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/024',
      '10.0.0.0/-1',
      'x/8',
      '10.0.0.0/8/8',
      '',
    ]) {
      assert.equal(parseCidrRange(bad), undefined, bad);
    }
  });
});

describe('cidrSize, cidrContains, indexedAddress', () => {
  it('sizes a CIDR as 2^(host bits), network and broadcast included', () => {
    assert.equal(cidrSize(parseCidrRange('192.168.1.0/24')!), 256n);
    assert.equal(cidrSize(parseCidrRange('192.168.1.0/32')!), 1n);
    assert.equal(cidrSize(parseCidrRange('2001:db8:1::/48')!), 1n << 80n);
    assert.equal(cidrSize(parseCidrRange('::/0')!), 1n << 128n);
    assert.equal(familyBits('IPv4'), 32);
    assert.equal(familyBits('IPv6'), 128);
  });

  it('contains exactly the addresses of its own family between network and last address', () => {
    const c = parseCidrRange('192.168.1.0/24')!;
    const has = (ip: string): boolean => cidrContains(c, parseAddress(ip)!);
    assert.equal(has('192.168.1.0'), true);
    assert.equal(has('192.168.1.255'), true);
    assert.equal(has('192.168.0.255'), false);
    assert.equal(has('192.168.2.0'), false);
    assert.equal(has('::ffff:192.168.1.7'), true);
    assert.equal(cidrContains(c, v6(0xc0a80101n)), false); // ::c0a8:101 is IPv6, not 192.168.1.1
    const d = parseCidrRange('2001:db8:1::/48')!;
    assert.equal(cidrContains(d, parseAddress('2001:db8:1:ffff:ffff:ffff:ffff:ffff')!), true);
    assert.equal(cidrContains(d, parseAddress('2001:db8:2::')!), false);
  });

  it('indexes addresses from the network address (GetIndexedIP)', () => {
    const c = parseCidrRange('10.0.0.0/24')!;
    assert.equal(formatAddress(indexedAddress(c, 1n)), '10.0.0.1');
    assert.equal(formatAddress(indexedAddress(c, 254n)), '10.0.0.254');
    assert.equal(formatAddress(indexedAddress(parseCidrRange('2001:db8::/112')!, 65536n)), '2001:db8::1:0');
  });
});
