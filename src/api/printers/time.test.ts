import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTimestamp, humanDuration, parseRFC3339, parseTimestamp, since } from './time.js';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (apimachinery duration.HumanDuration)', () => {
  const cases: [ms: number, want: string][] = [
    [-3 * s, '<invalid>'],
    [-2 * s, '<invalid>'],
    [-1999, '0s'],
    [-1 * s, '0s'],
    [0, '0s'],
    [999, '0s'],
    [1 * s, '1s'],
    [59 * s, '59s'],
    [60 * s, '60s'],
    [119 * s + 999, '119s'],
    [2 * m, '2m'],
    [2 * m + 5 * s, '2m5s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m, '10m'],
    [10 * m + 30 * s, '10m'],
    [179 * m + 59 * s, '179m'],
    [3 * h, '3h'],
    [3 * h + 20 * m, '3h20m'],
    [7 * h + 59 * m, '7h59m'],
    [8 * h, '8h'],
    [47 * h + 59 * m, '47h'],
    [2 * d, '2d'],
    [3 * d + 4 * h, '3d4h'],
    [7 * d + 23 * h, '7d23h'],
    [8 * d, '8d'],
    [729 * d + 23 * h, '729d'],
    [730 * d, '2y'],
    [730 * d + 45 * d, '2y45d'],
    [365 * 8 * d - 1 * d, '7y364d'],
    [365 * 8 * d, '8y'],
    [365 * 10 * d + 100 * d, '10y'],
    [Number.NaN, '<invalid>'],
  ];
  for (const [ms, want] of cases) {
    it(`${ms}ms → ${want}`, () => assert.equal(humanDuration(ms), want));
  }
});

describe('RFC 3339 timestamps', () => {
  it('parses Z, offsets and fractions, and round-trips through formatTimestamp', () => {
    const t = parseRFC3339('2024-05-01T12:00:00Z');
    assert.equal(t, 1714564800000);
    assert.equal(parseRFC3339('2024-05-01T14:00:00+02:00'), t);
    assert.equal(parseRFC3339('2024-05-01T11:30:00-00:30'), t);
    assert.equal(parseRFC3339('2024-05-01T12:00:00.123456Z'), 1714564800123);
    assert.equal(formatTimestamp(1714564800123), '2024-05-01T12:00:00Z');
    assert.equal(formatTimestamp(0), '1970-01-01T00:00:00Z');
    assert.equal(formatTimestamp(parseRFC3339('2000-02-29T23:59:59Z') ?? 0), '2000-02-29T23:59:59Z');
    assert.equal(formatTimestamp(parseRFC3339('0001-01-01T00:00:00Z') ?? 0), '0001-01-01T00:00:00Z');
  });

  it('rejects what is not RFC 3339, and treats Go zero time and null as unset', () => {
    for (const bad of [
      '2024-05-01',
      '2024-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-05-01T24:00:00Z',
      'now',
    ]) {
      assert.equal(parseRFC3339(bad), undefined, bad);
    }
    assert.equal(parseTimestamp('0001-01-01T00:00:00Z'), undefined);
    assert.equal(parseTimestamp(null), undefined);
    assert.equal(parseTimestamp(undefined), undefined);
    assert.equal(parseTimestamp(1714564800), undefined);
  });

  it('since: elapsed time, or <unknown> without a timestamp', () => {
    const now = 1714564800000;
    assert.equal(since('2024-05-01T11:55:00Z', now), '5m');
    assert.equal(since('2024-04-28T12:00:00Z', now), '3d');
    assert.equal(since(undefined, now), '<unknown>');
    assert.equal(since('0001-01-01T00:00:00Z', now), '<unknown>');
  });
});
