import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUTONOMY_DEFAULTS, decodeLocalInfo, healthChanges, parseAutonomyFlag } from './health-report.js';

describe('parseAutonomyFlag (--service-autonomy-enhancement)', () => {
  it("reads SuperEdge's form; keys not given keep SuperEdge's defaults", () => {
    assert.deepEqual(parseAutonomyFlag('enabled=true,interval=30,address=http://localhost:51005/localinfo'), {
      enabled: true,
      intervalSeconds: 30,
      address: 'http://localhost:51005/localinfo',
    });
    assert.deepEqual(parseAutonomyFlag('enabled=true'), { ...AUTONOMY_DEFAULTS, enabled: true });
    assert.deepEqual(parseAutonomyFlag(' interval=5 , enabled=true ,'), {
      ...AUTONOMY_DEFAULTS,
      enabled: true,
      intervalSeconds: 5,
    });
    assert.deepEqual(parseAutonomyFlag('enabled=false'), AUTONOMY_DEFAULTS);
    assert.deepEqual(parseAutonomyFlag(''), AUTONOMY_DEFAULTS);
    // An address may carry a query, with its own '=' signs.
    assert.equal(
      parseAutonomyFlag('enabled=true,address=https://127.0.0.1:9/info?x=1').address,
      'https://127.0.0.1:9/info?x=1',
    );
  });

  for (const [value, message] of [
    ['enabled=yes', /enabled=yes: want true or false/],
    ['enabled', /"enabled" is not key=value/],
    ['=true', /"=true" is not key=value/],
    ['interval=0', /interval=0: want whole seconds, at least 1/],
    ['interval=1.5', /interval=1.5: want whole seconds/],
    ['interval=-3', /interval=-3/],
    ['interval=30s', /interval=30s/],
    ['address=localhost:51005', /want an http or https URL/],
    ['address=not a url', /address=not a url: not a URL/],
    ['address=file:///etc/passwd', /want an http or https URL/],
    ['timeout=5', /unknown key "timeout"/],
    ['enabled=true,enabled=false', /enabled is given twice/],
  ] as const) {
    it(`refuses ${value}`, () => assert.throws(() => parseAutonomyFlag(value), message));
  }
});

describe('decodeLocalInfo (edge-health /localinfo)', () => {
  it('takes Normal per node, in any case, ignoring the other fields', () => {
    const got = decodeLocalInfo(
      JSON.stringify({
        'edge-0': { Normal: true, Hamc: 'x', Time: '2026-11-27T07:00:00Z' },
        'edge-1': { Normal: false },
        'edge-2': { normal: false },
      }),
    );
    assert.deepEqual(
      [...got],
      [
        ['edge-0', true],
        ['edge-1', false],
        ['edge-2', false],
      ],
    );
  });

  it('an entry without a boolean Normal carries no opinion', () => {
    const got = decodeLocalInfo(
      JSON.stringify({ a: { Normal: 'false' }, b: {}, c: null, d: false, e: [], '': { Normal: false } }),
    );
    assert.deepEqual([...got], []);
    assert.equal(decodeLocalInfo('{}').size, 0);
  });

  for (const body of ['', 'nope', '[]', 'null', '3', '"x"'])
    it(`refuses ${JSON.stringify(body)}`, () => assert.throws(() => decodeLocalInfo(body), /JSON/));
});

describe('healthChanges', () => {
  const m = (o: Record<string, boolean>) => new Map(Object.entries(o));
  it('lists each node whose verdict differs, a dropped one as no opinion', () => {
    assert.deepEqual(healthChanges(m({ a: true, b: false, c: false }), m({ a: false, b: false, d: true })), [
      ['a', false],
      ['c', undefined],
      ['d', true],
    ]);
    assert.deepEqual(healthChanges(m({ a: false }), m({ a: false })), []);
    assert.deepEqual(healthChanges(m({}), m({})), []);
  });
});
