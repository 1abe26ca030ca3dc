import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { int64, labelSelectorMatches, matchesLabels, matchesRequirement } from './label-match.js';

describe('labelSelectorMatches() (metav1.LabelSelector)', () => {
  it('reads matchLabels and matchExpressions', () => {
    const s = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'x', operator: 'DoesNotExist' },
      ],
    };
    assert.equal(labelSelectorMatches(s, { app: 'web', tier: 'a' }), true);
    assert.equal(labelSelectorMatches(s, { app: 'web', tier: 'c' }), false);
    assert.equal(labelSelectorMatches(s, { app: 'web', tier: 'a', x: '' }), false);
    assert.equal(labelSelectorMatches(undefined, { app: 'web' }), false);
    assert.equal(labelSelectorMatches({}, { app: 'web' }), true);
  });

  it('NotIn and Exists; missing labels are no labels', () => {
    const s = { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] };
    assert.equal(labelSelectorMatches(s, undefined), true);
    assert.equal(labelSelectorMatches(s, { tier: 'a' }), false);
    assert.equal(labelSelectorMatches(s, { tier: 'b' }), true);
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'k', operator: 'Exists' }] }, { k: '' }),
      true,
    );
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'k', operator: 'Exists' }] }, {}), false);
  });

  it('an operator metav1 does not know matches nothing, even one a parsed selector knows', () => {
    for (const operator of ['Gt', 'GreaterThan', 'Equals', 'in', '']) {
      const s = { matchExpressions: [{ key: 'n', operator, values: ['1'] }] };
      assert.equal(labelSelectorMatches(s, { n: '5' }), false, operator);
      assert.equal(labelSelectorMatches(s, { n: '1' }), false, operator);
    }
  });

  it('a key is matched only as an own label, never an inherited property', () => {
    assert.equal(labelSelectorMatches({ matchLabels: { toString: 'x' } }, {}), false);
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}),
      false,
    );
  });
});

describe('matchesRequirement() / matchesLabels()', () => {
  it('compares GreaterThan and LessThan as 64-bit integers; a label that is not one never matches', () => {
    const gt = { key: 'n', operator: 'GreaterThan', values: ['9'] };
    assert.equal(matchesRequirement(gt, { n: '10' }), true);
    assert.equal(matchesRequirement(gt, { n: '9' }), false);
    assert.equal(matchesRequirement(gt, { n: 'ten' }), false);
    assert.equal(matchesRequirement(gt, {}), false);
    assert.equal(matchesRequirement({ key: 'n', operator: 'LessThan', values: ['-1'] }, { n: '-2' }), true);
  });

  it('no requirements match everything, also no labels', () => {
    assert.equal(matchesLabels({ requirements: [] }, undefined), true);
  });

  it('int64 takes what strconv.ParseInt(v, 10, 64) takes', () => {
    assert.equal(int64('+7'), 7n);
    assert.equal(int64('-9223372036854775808'), -(2n ** 63n));
    assert.equal(int64('9223372036854775808'), undefined);
    assert.equal(int64('1.5'), undefined);
    assert.equal(int64(''), undefined);
  });
});
