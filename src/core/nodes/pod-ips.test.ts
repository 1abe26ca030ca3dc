import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseCidrRange, type Cidr } from '../allocator/cidr.js';
import { NodeCidrError } from './pod-cidrs.js';
import { PodIPPool } from './pod-ips.js';

const cidr = (s: string): Cidr => {
  const c = parseCidrRange(s);
  if (c === undefined) throw new Error(`bad test CIDR ${s}`);
  return c;
};

describe('PodIPPool', () => {
  it('hands out addresses in order after the network address, one per key, idempotently', () => {
    const pool = new PodIPPool([cidr('127.10.0.0/24')]);
    assert.deepEqual(pool.allocate('a'), ['127.10.0.1']);
    assert.deepEqual(pool.allocate('b'), ['127.10.0.2']);
    assert.deepEqual(pool.allocate('a'), ['127.10.0.1']);
    assert.equal(pool.size, 2);
    assert.equal(pool.ownerOf('127.10.0.2'), 'b');
  });

  it('never hands out the network or broadcast address, and reports ErrCIDRFull when the range is used up', () => {
    const pool = new PodIPPool([cidr('10.0.0.0/29')]);
    const got = ['a', 'b', 'c', 'd', 'e', 'f'].map((k) => pool.allocate(k)[0]);
    assert.deepEqual(got, ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    assert.throws(
      () => pool.allocate('g'),
      (e: unknown) => e instanceof NodeCidrError && e.code === 'ErrCIDRFull',
    );
    assert.equal(pool.get('g'), undefined);
  });

  it('gives a dual-stack pod one address of each family, primary first', () => {
    const pool = new PodIPPool([cidr('fd00:10:244:1::/64'), cidr('10.244.1.0/24')]);
    assert.deepEqual(pool.allocate('a'), ['fd00:10:244:1::1', '10.244.1.1']);
    assert.deepEqual(pool.allocate('b'), ['fd00:10:244:1::2', '10.244.1.2']);
  });

  it('takes nothing of either family when one family is full', () => {
    const pool = new PodIPPool([cidr('10.0.0.0/30'), cidr('fd00::/64')]);
    pool.allocate('a');
    pool.allocate('b');
    assert.throws(() => pool.allocate('c'), NodeCidrError);
    pool.release('a');
    assert.deepEqual(pool.allocate('c'), ['10.0.0.1', 'fd00::3']);
  });

  it('releases an address for reuse, round-robin: after the rest of the range', () => {
    const pool = new PodIPPool([cidr('10.0.0.0/29')]);
    pool.allocate('a');
    pool.allocate('b');
    assert.deepEqual(pool.release('a'), ['10.0.0.1']);
    assert.deepEqual(pool.release('a'), []);
    assert.deepEqual(pool.allocate('c'), ['10.0.0.3']);
    for (const k of ['d', 'e', 'f']) pool.allocate(k);
    assert.deepEqual(pool.allocate('g'), ['10.0.0.1']);
  });

  it('re-reserves existing pods first (after a restart) and refuses foreign, taken or mismatched addresses', () => {
    const pool = new PodIPPool([cidr('10.0.0.0/24'), cidr('fd00::/64')]);
    assert.equal(pool.reserve('a', ['10.0.0.7', 'fd00::7']), undefined);
    assert.equal(pool.reserve('a', ['10.0.0.7', 'fd00:0::7']), undefined);
    assert.match(String(pool.reserve('b', ['10.0.0.7', 'fd00::8'])), /held by a/);
    assert.match(String(pool.reserve('b', ['10.0.1.7', 'fd00::8'])), /not a usable address/);
    assert.match(String(pool.reserve('b', ['10.0.0.0', 'fd00::8'])), /not a usable address/);
    assert.match(String(pool.reserve('b', ['10.0.0.8'])), /one address per pod CIDR/);
    assert.equal(pool.get('b'), undefined);
    assert.notEqual(pool.allocate('c')[0], '10.0.0.7');
  });

  it('never hands out a duplicate, the network or the broadcast address, whatever the order of allocations and releases (property)', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('alloc' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ op: fc.constant('release' as const), key: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const pool = new PodIPPool([cidr('10.1.2.0/27'), cidr('fd00::/120')]);
        const live = new Map<number, readonly string[]>();
        for (const o of ops) {
          if (o.op === 'release') {
            pool.release(String(o.key));
            live.delete(o.key);
            continue;
          }
          try {
            live.set(o.key, pool.allocate(String(o.key)));
          } catch (e) {
            assert.ok(e instanceof NodeCidrError);
            assert.ok(live.size >= 30 && !live.has(o.key));
          }
          const v4 = [...live.values()].map((ips) => ips[0]!);
          const v6 = [...live.values()].map((ips) => ips[1]!);
          assert.equal(new Set(v4).size, v4.length);
          assert.equal(new Set(v6).size, v6.length);
          for (const ip of v4) {
            assert.ok(ip !== '10.1.2.0' && ip !== '10.1.2.31' && ip.startsWith('10.1.2.'), ip);
          }
          for (const ip of v6) assert.ok(ip !== 'fd00::' && ip.startsWith('fd00::'), ip);
        }
      }),
    );
  });
});
