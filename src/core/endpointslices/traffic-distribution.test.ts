import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SliceInfo } from './slice-info.js';
import { ep, slice } from './testing/builders.js';
import { reconcileTrafficDistributionHints, validTrafficDistribution } from './traffic-distribution.js';
import type { Endpoint } from './types.js';

const hintsOf = (e: Endpoint | undefined): [string[], string[]] | undefined =>
  e?.hints === undefined
    ? undefined
    : [(e.hints.forZones ?? []).map((z) => z.name), (e.hints.forNodes ?? []).map((n) => n.name)];

/** Reconciles one slice to create holding `endpoint`; returns that endpoint's hints. */
const hintFor = (mode: unknown, endpoint: Endpoint) =>
  hintsOf(
    reconcileTrafficDistributionHints(mode, {
      toCreate: [slice({ endpoints: [endpoint] })],
      toUpdate: [],
      unchanged: [],
    }).toCreate[0]?.endpoints[0],
  );

describe('validTrafficDistribution', () => {
  it('accepts PreferClose, PreferSameZone and PreferSameNode only', () => {
    assert.deepEqual(
      ['PreferClose', 'PreferSameZone', 'PreferSameNode', 'preferclose', '', undefined, 3].map(
        validTrafficDistribution,
      ),
      ['PreferClose', 'PreferSameZone', 'PreferSameNode', undefined, undefined, undefined, undefined],
    );
  });
});

describe('reconcileTrafficDistributionHints: the hints an endpoint gets', () => {
  const z = { zone: 'z1', nodeName: 'n1' };
  // [mode, endpoint, hints ([forZones, forNodes]) or undefined]
  const rows: Array<[unknown, Endpoint, [string[], string[]] | undefined]> = [
    ['PreferClose', ep('10.0.0.1', z), [['z1'], []]],
    ['PreferSameZone', ep('10.0.0.1', z), [['z1'], []]],
    ['PreferSameNode', ep('10.0.0.1', z), [['z1'], ['n1']]],
    ['PreferSameZone', ep('10.0.0.1', { nodeName: 'n1' }), undefined],
    ['PreferSameNode', ep('10.0.0.1', { nodeName: 'n1' }), [[], ['n1']]],
    ['PreferSameNode', ep('10.0.0.1', { zone: 'z1' }), [['z1'], []]],
    ['PreferSameNode', ep('10.0.0.1'), undefined],
    ['PreferSameZone', ep('10.0.0.1', { ...z, hint: 'other', forNodes: ['n9'] }), [['z1'], []]],
    ['PreferSameZone', ep('10.0.0.1', { nodeName: 'n1', hint: 'stale' }), undefined],
    ['PreferSameZone', ep('10.0.0.1', { ...z, ready: false }), undefined],
    ['PreferSameZone', ep('10.0.0.1', { ...z, ready: false, hint: 'left' }), [['left'], []]],
    [undefined, ep('10.0.0.1', { ...z, hint: 'z1' }), undefined],
    ['Unknown', ep('10.0.0.1', { ...z, hint: 'z1' }), undefined],
    [undefined, ep('10.0.0.1', { ...z, ready: false, hint: 'z1' }), undefined],
  ];
  for (const [mode, endpoint, want] of rows) {
    it(`${String(mode)}: ${JSON.stringify([endpoint.conditions.ready, endpoint.zone, endpoint.nodeName, hintsOf(endpoint)])} → ${JSON.stringify(want)}`, () => {
      assert.deepEqual(hintFor(mode, endpoint), want);
    });
  }
});

describe('reconcileTrafficDistributionHints: unchanged slices', () => {
  const run = (mode: unknown, unchanged: SliceInfo['unchanged']) =>
    reconcileTrafficDistributionHints(mode, { toCreate: [], toUpdate: [], unchanged });

  it('leaves an unchanged slice whose hints are right alone', () => {
    const s = slice({
      endpoints: [
        ep('10.0.0.1', { zone: 'z1', nodeName: 'n1', hint: 'z1' }),
        ep('10.0.0.2', { ready: false }),
      ],
    });
    const r = run('PreferSameZone', [s]);
    assert.equal(r.unchanged[0], s);
    assert.deepEqual(r.toUpdate, []);
  });

  const wrong: Array<[string, unknown, Endpoint]> = [
    ['a missing zone hint', 'PreferClose', ep('10.0.0.1', { zone: 'z1' })],
    ['a wrong zone hint', 'PreferClose', ep('10.0.0.1', { zone: 'z1', hint: 'z2' })],
    ['two zone hints', 'PreferClose', ep('10.0.0.1', { zone: 'z1', hint: ['z1', 'z2'] })],
    ['a zone hint without a zone', 'PreferClose', ep('10.0.0.1', { hint: 'z1' })],
    [
      'a stale node hint',
      'PreferSameZone',
      ep('10.0.0.1', { zone: 'z1', nodeName: 'n1', hint: 'z1', forNodes: ['n1'] }),
    ],
    ['a missing node hint', 'PreferSameNode', ep('10.0.0.1', { zone: 'z1', nodeName: 'n1', hint: 'z1' })],
    [
      'a wrong node hint',
      'PreferSameNode',
      ep('10.0.0.1', { zone: 'z1', nodeName: 'n1', hint: 'z1', forNodes: ['n2'] }),
    ],
    ['any hint, without a trafficDistribution', undefined, ep('10.0.0.1', { zone: 'z1', hint: 'z1' })],
    ['an empty hints object, without a trafficDistribution', undefined, { ...ep('10.0.0.1'), hints: {} }],
  ];
  for (const [name, mode, endpoint] of wrong) {
    it(`moves an unchanged slice with ${name} to toUpdate, as a corrected copy`, () => {
      const s = slice({ endpoints: [endpoint] });
      const before = structuredClone(s);
      const r = run(mode, [s]);
      assert.deepEqual(r.unchanged, []);
      assert.equal(r.toUpdate.length, 1);
      assert.notEqual(r.toUpdate[0], s);
      assert.deepEqual(s, before);
      assert.equal(run(mode, r.toUpdate).toUpdate.length, 0, 'the corrected slice is right');
    });
  }

  it('does not move a slice for a stale hint on a not-ready endpoint under PreferSameZone', () => {
    const s = slice({ endpoints: [ep('10.0.0.1', { zone: 'z1', ready: false, hint: 'z9' })] });
    assert.equal(run('PreferSameZone', [s]).unchanged[0], s);
  });
});
