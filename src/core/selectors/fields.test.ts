import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkSupportedFields,
  fieldSelectorToString,
  matchesFields,
  parseFieldSelector,
  requiresExactMatch,
} from './fields.js';
import { SelectorError } from './labels.js';

describe('field selectors', () => {
  const table: Array<[string, Record<string, string>, boolean]> = [
    ['', { 'metadata.name': 'x' }, true],
    ['metadata.name=web', { 'metadata.name': 'web' }, true],
    ['metadata.name==web', { 'metadata.name': 'web' }, true],
    ['metadata.name=web', { 'metadata.name': 'db' }, false],
    ['metadata.name!=web', { 'metadata.name': 'db' }, true],
    // kube-proxy ≥ 1.32 on Services
    ['spec.clusterIP!=None', { 'spec.clusterIP': '10.96.0.10' }, true],
    ['spec.clusterIP!=None', { 'spec.clusterIP': 'None' }, false],
    // the scheduler's "unassigned pods": an empty value, and a missing field reads as ""
    ['spec.nodeName=', { 'spec.nodeName': '' }, true],
    ['spec.nodeName=', {}, true],
    ['spec.nodeName=', { 'spec.nodeName': 'n1' }, false],
    [
      'involvedObject.kind=Service,involvedObject.name=x',
      { 'involvedObject.kind': 'Service', 'involvedObject.name': 'x' },
      true,
    ],
    [
      'involvedObject.kind=Service,involvedObject.name=x',
      { 'involvedObject.kind': 'Pod', 'involvedObject.name': 'x' },
      false,
    ],
    ['metadata.name=a\\,b', { 'metadata.name': 'a,b' }, true],
    ['metadata.name=a\\=b\\\\', { 'metadata.name': 'a=b\\' }, true],
  ];
  for (const [sel, fields, want] of table) {
    it(`${JSON.stringify(sel)} ${want ? 'matches' : 'does not match'} ${JSON.stringify(fields)}`, () => {
      assert.equal(matchesFields(parseFieldSelector(sel), fields), want);
    });
  }

  it('a term without an operator is kube-apiserver’s "can\'t understand" error', () => {
    assert.throws(
      () => parseFieldSelector('metadata.name=x,foo'),
      (e: unknown) =>
        e instanceof SelectorError &&
        e.message === "invalid selector: 'metadata.name=x,foo'; can't understand 'foo'",
    );
  });

  it('rejects a bad escape or an unescaped "=" in a value', () => {
    assert.throws(() => parseFieldSelector('a=b\\x'), SelectorError);
    assert.throws(() => parseFieldSelector('a=b=c'), SelectorError);
  });

  it('checkSupportedFields() names the first unsupported field as kube-apiserver does', () => {
    const sel = parseFieldSelector('metadata.name=x,spec.foo=y');
    assert.throws(
      () => checkSupportedFields(sel, new Set(['metadata.name', 'metadata.namespace'])),
      (e: unknown) => e instanceof SelectorError && e.message === 'field label not supported: spec.foo',
    );
    checkSupportedFields(sel, new Set(['metadata.name', 'spec.foo']));
  });

  it('requiresExactMatch() finds metadata.name=… (kubectl delete waits this way)', () => {
    assert.equal(requiresExactMatch(parseFieldSelector('metadata.name=slow1'), 'metadata.name'), 'slow1');
    assert.equal(requiresExactMatch(parseFieldSelector('metadata.name!=slow1'), 'metadata.name'), undefined);
    assert.equal(requiresExactMatch(parseFieldSelector(''), 'metadata.name'), undefined);
  });

  it('the string form parses back to the same selector, escapes included', () => {
    const field = fc.constantFrom('metadata.name', 'spec.clusterIP', 'status.phase');
    const value = fc.string({ maxLength: 6, unit: fc.constantFrom('a', ',', '=', '\\', 'b', ' ', '!') });
    const term = fc.record({
      field,
      operator: fc.constantFrom('Equals' as const, 'DoubleEquals' as const, 'NotEquals' as const),
      value,
    });
    fc.assert(
      fc.property(fc.array(term, { minLength: 1, maxLength: 4 }), (requirements) => {
        const sel = { requirements: requirements.map((r) => ({ ...r })) };
        assert.deepEqual(parseFieldSelector(fieldSelectorToString(sel)), sel);
      }),
      { numRuns: 1000 },
    );
  });
});
