import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  DEFAULT_ZONE_RATES,
  allFullyDisrupted,
  excludedFromDisruption,
  fullBucket,
  takeToken,
  zoneOf,
  zoneRate,
  zoneState,
} from './zones.js';

const labelled = (labels: Record<string, string>) => ({ metadata: { name: 'n', labels } });

describe('zones', () => {
  it('zoneOf: region and zone labels, GA before beta; none → the one default zone', () => {
    assert.equal(zoneOf(labelled({})), '');
    assert.equal(
      zoneOf(labelled({ 'topology.kubernetes.io/zone': 'a', 'failure-domain.beta.kubernetes.io/zone': 'b' })),
      ':\0:a',
    );
    assert.equal(
      zoneOf(
        labelled({ 'failure-domain.beta.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'z' }),
      ),
      'r:\0:z',
    );
    assert.equal(excludedFromDisruption(labelled({ 'node.kubernetes.io/exclude-disruption': '' })), true);
  });

  const T = 'True';
  const U = 'Unknown';
  const cases: [string[], string][] = [
    [[T, T], 'Normal'],
    [[U], 'FullDisruption'],
    [[U, U, 'False'], 'FullDisruption'],
    [[T, U], 'Normal'],
    [[T, U, U], 'Normal'], // not more than 2 not ready
    [[T, U, U, U], 'PartialDisruption'], // 3/4 ≥ 0.55
    [[T, T, U, U, U], 'PartialDisruption'], // 3/5 = 0.6
    [[T, T, T, U, U, U], 'Normal'], // 3/6 = 0.5
    [[], 'Normal'],
  ];
  for (const [statuses, want] of cases) {
    it(`zoneState(${statuses.join(',') || 'none'}) = ${want}`, () => {
      assert.equal(zoneState(statuses, 0.55), want);
    });
  }

  it('zoneRate: Normal and Full at the eviction rate; Partial at the secondary rate only when large', () => {
    assert.equal(zoneRate('Normal', 10, DEFAULT_ZONE_RATES), 0.1);
    assert.equal(zoneRate('FullDisruption', 10, DEFAULT_ZONE_RATES), 0.1);
    assert.equal(zoneRate('PartialDisruption', 50, DEFAULT_ZONE_RATES), 0);
    assert.equal(zoneRate('PartialDisruption', 51, DEFAULT_ZONE_RATES), 0.01);
  });

  it('allFullyDisrupted needs at least one zone and every zone fully disrupted', () => {
    assert.equal(allFullyDisrupted([]), false);
    assert.equal(allFullyDisrupted(['FullDisruption']), true);
    assert.equal(allFullyDisrupted(['FullDisruption', 'Normal']), false);
  });
});

describe('takeToken', () => {
  it('starts full (burst 1), then admits one per 1/qps seconds', () => {
    let b = fullBucket(1, 0);
    let r = takeToken(b, 0, 0.1);
    assert.equal(r.ok, true);
    b = r.bucket;
    r = takeToken(b, 5_000, 0.1);
    assert.equal(r.ok, false);
    b = r.bucket;
    r = takeToken(b, 10_000, 0.1);
    assert.equal(r.ok, true);
  });

  it('a rate of 0 admits nothing', () => {
    assert.equal(takeToken(fullBucket(1, 0), 1e9, 0).ok, false);
  });

  it('property: over any schedule, admissions never exceed burst + elapsed × qps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 60 }),
        fc.constantFrom(0.1, 0.5, 2),
        (gaps, qps) => {
          let b = fullBucket(1, 0);
          let now = 0;
          let admitted = 0;
          for (const g of gaps) {
            now += g;
            const r = takeToken(b, now, qps);
            b = r.bucket;
            if (r.ok) admitted++;
          }
          assert.ok(admitted <= 1 + (now / 1000) * qps + 1e-9);
        },
      ),
    );
  });
});
