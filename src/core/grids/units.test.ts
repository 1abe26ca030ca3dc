import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDNS1123Subdomain } from '../../api/validation/names.js';
import { chooseTemplate, unitObjectName, unitsOf } from './units.js';

describe('unitsOf', () => {
  it('gives the distinct non-empty values of the key, sorted', () => {
    const nodes = [
      { zone1: 'nodeunit2' },
      { zone1: 'nodeunit1' },
      { zone1: 'nodeunit2' },
      { zone1: '' },
      { other: 'x' },
      undefined,
    ];
    assert.deepEqual(unitsOf(nodes, 'zone1'), ['nodeunit1', 'nodeunit2']);
    assert.deepEqual(unitsOf(nodes, 'missing'), []);
  });
});

describe('unitObjectName', () => {
  const cases: Array<[string, string, string | RegExp]> = [
    ['deploymentgrid-demo', 'nodeunit1', 'deploymentgrid-demo-nodeunit1'], // the seed: SuperEdge's name
    ['dg', 'zone-a.east', 'dg-zone-a.east'],
    ['dg', 'Zone_A', /^dg-zone-a-[0-9a-f]{8}$/],
    ['dg', 'UPPER', /^dg-upper-[0-9a-f]{8}$/],
    ['dg', '-_-', /^dg-[0-9a-f]{8}$/],
    ['dg', 'a..b', /^dg-a-b-[0-9a-f]{8}$/],
  ];
  for (const [grid, value, want] of cases) {
    it(`${grid} + ${JSON.stringify(value)}`, () => {
      const got = unitObjectName(grid, value);
      if (typeof want === 'string') assert.equal(got, want);
      else assert.match(got, want);
    });
  }

  it('is always a valid name, stable, and different for values that read the same after the rewrite (property)', () => {
    const grid = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/);
    const value = fc.string({ minLength: 1, maxLength: 300 });
    fc.assert(
      fc.property(grid, value, value, (g, v, w) => {
        const a = unitObjectName(g, v);
        assert.deepEqual(isDNS1123Subdomain(a), [], a);
        assert.equal(unitObjectName(g, v), a);
        if (v !== w) assert.notEqual(unitObjectName(g, w), a, `${v} / ${w}`);
      }),
      { numRuns: 1000 },
    );
    assert.notEqual(unitObjectName('dg', 'Zone_A'), unitObjectName('dg', 'zone_a'));
  });
});

describe('chooseTemplate', () => {
  const spec = {
    template: 'T',
    templatePool: { small: 'S', big: 'B' },
    templates: { unit1: 'small', unit2: 'default', unit3: 'gone' },
    defaultTemplateName: 'big',
  };
  it('templates[value] names a pool entry; default means spec.template; else defaultTemplateName', () => {
    assert.deepEqual(chooseTemplate(spec, 'unit1'), { name: 'small', template: 'S' });
    assert.deepEqual(chooseTemplate(spec, 'unit2'), { name: 'default', template: 'T' });
    assert.deepEqual(chooseTemplate(spec, 'unit9'), { name: 'big', template: 'B' });
    assert.deepEqual(chooseTemplate({ template: 'T' }, 'x'), { name: 'default', template: 'T' });
    assert.deepEqual(chooseTemplate({ template: 'T', defaultTemplateName: '' }, 'x'), {
      name: 'default',
      template: 'T',
    });
  });
  it('a name missing from the pool is an error for that unit only', () => {
    assert.deepEqual(chooseTemplate(spec, 'unit3'), { error: 'template "gone" is not in spec.templatePool' });
    assert.deepEqual(chooseTemplate({}, 'x'), { error: 'spec.template is not set' });
    // "__proto__" is a unit value like any other, not a way into Object.prototype.
    assert.deepEqual(chooseTemplate(spec, '__proto__'), { name: 'big', template: 'B' });
  });
});
