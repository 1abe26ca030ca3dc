import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addr, nthIP, port } from './testing/builders.js';
import { countAddresses, truncateEndpoints } from './truncate.js';
import type { EndpointSubset } from './types.js';

/** Subset i has ready[i] ready and notReady[i] not-ready addresses (all distinct) and port 8000+i. */
function subsets(ready: number[], notReady: number[]): EndpointSubset[] {
  let n = 0;
  return ready.map((r, i) => ({
    addresses: Array.from({ length: r }, () => addr(nthIP(n++))),
    notReadyAddresses: Array.from({ length: notReady[i] ?? 0 }, () => addr(nthIP(n++))),
    ports: [port(8000 + i)],
  }));
}

const readyCounts = (s: EndpointSubset[]): number[] => s.map((x) => x.addresses?.length ?? 0);
const notReadyCounts = (s: EndpointSubset[]): number[] => s.map((x) => x.notReadyAddresses?.length ?? 0);

describe('truncateEndpoints (TestTruncateEndpoints vectors)', () => {
  const rows: Array<[string, number[], number[], number[], number[], boolean]> = [
    [
      '450 + 450 = 900: under capacity',
      [50, 100, 100, 100, 100],
      [50, 100, 100, 100, 100],
      [50, 100, 100, 100, 100],
      [50, 100, 100, 100, 100],
      false,
    ],
    [
      '500 + 500 = 1000: at capacity, not over it',
      [100, 100, 100, 100, 100],
      [100, 100, 100, 100, 100],
      [100, 100, 100, 100, 100],
      [100, 100, 100, 100, 100],
      false,
    ],
    [
      '280 ready + 1000 not ready: not-ready share the remaining 720',
      [90, 110, 50, 10, 20],
      [101, 200, 200, 201, 298],
      [90, 110, 50, 10, 20],
      [73, 144, 144, 145, 214],
      true,
    ],
    [
      '2100 ready: ready share 1000, every not-ready dropped',
      [205, 400, 402, 400, 693],
      [100, 200, 200, 200, 300],
      [98, 191, 192, 191, 328],
      [0, 0, 0, 0, 0],
      true,
    ],
  ];
  for (const [what, ready, notReady, wantReady, wantNotReady, wantTruncated] of rows) {
    it(`${what} → ready ${wantReady.join(',')}, not ready ${wantNotReady.join(',')}`, () => {
      const got = truncateEndpoints(subsets(ready, notReady));
      assert.equal(got.truncated, wantTruncated);
      assert.deepEqual(readyCounts(got.subsets), wantReady);
      assert.deepEqual(notReadyCounts(got.subsets), wantNotReady);
      assert.ok(countAddresses(got.subsets) <= 1000);
    });
  }
});

describe('truncateEndpoints', () => {
  it('leaves 250 addresses alone', () => {
    const input = subsets([200], [50]);
    const got = truncateEndpoints(input);
    assert.equal(got.truncated, false);
    assert.deepEqual(got.subsets, input);
  });

  it('cuts 1,200 ready addresses to the FIRST 1,000', () => {
    const input = subsets([1200], [0]);
    const got = truncateEndpoints(input);
    assert.equal(got.truncated, true);
    assert.deepEqual(got.subsets[0]!.addresses, input[0]!.addresses!.slice(0, 1000));
    assert.deepEqual(got.subsets[0]!.ports, input[0]!.ports);
  });

  it('truncates at 1,001 addresses, not at 1,000', () => {
    assert.equal(truncateEndpoints(subsets([1000], [0])).truncated, false);
    assert.equal(truncateEndpoints(subsets([1000], [1])).truncated, true);
    assert.deepEqual(notReadyCounts(truncateEndpoints(subsets([1000], [1])).subsets), [0]);
  });

  it('keeps every ready address and fills the rest with not-ready ones: 600 + 600 → 600 + 400', () => {
    const got = truncateEndpoints(subsets([300, 300], [200, 400]));
    assert.deepEqual(readyCounts(got.subsets), [300, 300]);
    // ceil(200/600 × 400) = 134, then ceil(400/600 × 400) = 267 capped by the 266 left.
    assert.deepEqual(notReadyCounts(got.subsets), [134, 266]);
  });

  it('honours another maximum', () => {
    const got = truncateEndpoints(subsets([3, 3], [2, 2]), 5);
    // 6 ready > 5: ceil(3/6 × 5) = 3, then 3 capped by the 2 left; not-ready dropped.
    assert.deepEqual(readyCounts(got.subsets), [3, 2]);
    assert.deepEqual(notReadyCounts(got.subsets), [0, 0]);
  });

  it('drops a subset whose share ran out instead of writing it with ports only', () => {
    const input = subsets(
      Array.from({ length: 1001 }, () => 1),
      [],
    );
    const got = truncateEndpoints(input);
    assert.equal(got.subsets.length, 1000);
    assert.ok(got.subsets.every((s) => s.addresses?.length === 1));
    assert.deepEqual(got.subsets.at(-1)!.ports, [port(8000 + 999)]);
  });

  it('does not modify its input', () => {
    const input = subsets([700, 700], [10, 10]);
    const before = structuredClone(input);
    truncateEndpoints(input);
    assert.deepEqual(input, before);
  });
});
