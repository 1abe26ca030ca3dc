// --pod-ip-on-restart new: every pod that ran gets a new address, the round-robin continues from the
// checkpoint's position, and a full range makes a pod wait rather than reuse blindly.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseCidrRange, type Cidr } from '../allocator/cidr.js';
import { readdressPods } from './pod-ip-restart.js';
import { PodIPPool } from './pod-ips.js';

const cidr = (s: string): Cidr => {
  const c = parseCidrRange(s);
  if (c === undefined) throw new Error(`bad test CIDR ${s}`);
  return c;
};

describe('PodIPPool cursors', () => {
  it('reports and resumes the round-robin position (wrapping a value past the range)', () => {
    const a = new PodIPPool([cidr('127.10.0.0/24')]);
    a.allocate('x');
    a.allocate('y');
    assert.deepEqual(a.cursors, [2]);
    const b = new PodIPPool([cidr('127.10.0.0/24')]);
    b.resume(a.cursors);
    assert.deepEqual(b.allocate('z'), ['127.10.0.3']);
    const c = new PodIPPool([cidr('127.10.0.0/30')]);
    c.resume([7]); // two usable addresses: 7 % 2 = 1
    assert.deepEqual(c.allocate('z'), ['127.10.0.2']);
  });
});

describe('readdressPods', () => {
  const cases: Array<{
    name: string;
    range: string;
    cursor: number;
    /** Addresses held by pods that did not run before (new ones). */
    taken?: string[];
    pods: Array<[string, string[]]>;
    want: Record<string, string[] | undefined>;
  }> = [
    {
      name: 'a pod does not get its own previous address back, even when the cursor points at it',
      range: '127.10.0.0/24',
      cursor: 0,
      pods: [['a', ['127.10.0.1']]],
      want: { a: ['127.10.0.2'] },
    },
    {
      name: 'the round-robin continues from the checkpoint position',
      range: '127.10.0.0/24',
      cursor: 5,
      pods: [
        ['a', ['127.10.0.1']],
        ['b', ['127.10.0.2']],
      ],
      want: { a: ['127.10.0.6'], b: ['127.10.0.7'] },
    },
    {
      name: "no pod gets another restarted pod's previous address while others are free",
      range: '127.10.0.0/29',
      cursor: 0,
      pods: [
        ['a', ['127.10.0.2']],
        ['b', ['127.10.0.1']],
      ],
      want: { a: ['127.10.0.3'], b: ['127.10.0.4'] },
    },
    {
      name: "a range with no other address: a pod gets another restarted pod's old address, not its own",
      range: '127.10.0.0/30',
      cursor: 0,
      pods: [
        ['a', ['127.10.0.1']],
        ['b', ['127.10.0.2']],
      ],
      want: { a: ['127.10.0.2'], b: ['127.10.0.1'] },
    },
    {
      name: 'a pod whose old address is the only free one gets it again (nothing else is left)',
      range: '127.10.0.0/30',
      cursor: 0,
      taken: ['127.10.0.2'],
      pods: [['a', ['127.10.0.1']]],
      want: { a: ['127.10.0.1'] },
    },
    {
      name: 'a pod without previous addresses simply gets the next one',
      range: '127.10.0.0/24',
      cursor: 3,
      pods: [['a', []]],
      want: { a: ['127.10.0.4'] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pool = new PodIPPool([cidr(c.range)]);
      for (const [i, ip] of (c.taken ?? []).entries()) assert.equal(pool.reserve(`new${i}`, [ip]), undefined);
      pool.resume([c.cursor]);
      const got = readdressPods(
        pool,
        c.pods.map(([key, previous]) => ({ key, previous })),
      );
      assert.deepEqual(Object.fromEntries(got), c.want);
      // What is chosen is held by the pod; the previous addresses are free again.
      for (const [k, ips] of got) assert.deepEqual(pool.get(k), ips);
      assert.equal(pool.size, c.pods.length + (c.taken?.length ?? 0));
    });
  }

  it('a pod that already holds addresses keeps them', () => {
    const pool = new PodIPPool([cidr('127.10.0.0/24')]);
    pool.allocate('a');
    assert.deepEqual(Object.fromEntries(readdressPods(pool, [{ key: 'a', previous: ['127.10.0.9'] }])), {
      a: ['127.10.0.1'],
    });
  });

  it('with room to spare: every pod gets a new, distinct address in range, none its previous one', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 254 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 300 }),
        (previous, cursor) => {
          const pool = new PodIPPool([cidr('127.10.0.0/24')]);
          pool.resume([cursor]);
          // 254 usable addresses; the pods' previous ones plus new ones fit when 2n <= 254.
          const pods = previous.map((o, i) => ({ key: `p${i}`, previous: [`127.10.0.${o}`] }));
          const got = readdressPods(pool, pods);
          const all = pods.map((p) => got.get(p.key)?.[0]);
          assert.ok(all.every((ip) => ip !== undefined && ip.startsWith('127.10.0.')));
          assert.equal(new Set(all).size, all.length);
          for (const [i, p] of pods.entries()) assert.notEqual(all[i], p.previous[0]);
          // No pod got ANY restarted pod's previous address.
          const old = new Set(pods.map((p) => p.previous[0]));
          assert.ok(all.every((ip) => !old.has(ip!)));
        },
      ),
    );
  });
});
