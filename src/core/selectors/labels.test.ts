import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesLabels } from '../../api/label-match.js';
import {
  labelSelectorToString,
  parseLabelSelector,
  selectorFromSet,
  SelectorError,
  type LabelOperator,
} from './labels.js';

const matches = (sel: string, labels: Record<string, string>): boolean =>
  matchesLabels(parseLabelSelector(sel), labels);

describe('label selectors: matching (Kubernetes semantics)', () => {
  const table: Array<[string, Record<string, string>, boolean]> = [
    ['', {}, true],
    ['', { a: 'b' }, true],
    ['x=a', { x: 'a' }, true],
    ['x=a', { x: 'b' }, false],
    ['x=a', {}, false],
    ['x==a', { x: 'a' }, true],
    ['x!=a', {}, true], // absent counts as "not equal"
    ['x!=a', { x: 'b' }, true],
    ['x!=a', { x: 'a' }, false],
    ['x', { x: '' }, true],
    ['x', {}, false],
    ['!x', {}, true],
    ['!x', { x: 'a' }, false],
    ['x in (a,b)', { x: 'b' }, true],
    ['x in (a,b)', { x: 'c' }, false],
    ['x in (a,b)', {}, false],
    ['x notin (a,b)', {}, true],
    ['x notin (a,b)', { x: 'c' }, true],
    ['x notin (a,b)', { x: 'a' }, false],
    ['x>1', { x: '2' }, true],
    ['x>1', { x: '1' }, false],
    ['x>1', { x: 'two' }, false],
    ['x>1', {}, false],
    ['x<1', { x: '-5' }, true],
    ['x>9223372036854775806', { x: '9223372036854775807' }, true], // int64, beyond 2^53
    ['x=', { x: '' }, true],
    ['x=', { x: 'a' }, false],
    ['x in (a,)', { x: '' }, true],
    ['x in (,)', { x: '' }, true],
    ['x in (,)', { x: 'a' }, false],
    ['x=in', { x: 'in' }, true], // keywords are plain values after an operator
    ['x=a,y=b', { x: 'a', y: 'b' }, true],
    ['x=a,y=b', { x: 'a' }, false],
    [' x = a , y in ( b , c ) ', { x: 'a', y: 'c' }, true],
    ['example.com/x=a', { 'example.com/x': 'a' }, true],
    // what kube-proxy sends (≤ 1.31)
    ['!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name', { app: 'web' }, true],
    [
      '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name',
      { 'service.kubernetes.io/headless': '' },
      false,
    ],
  ];
  for (const [sel, labels, want] of table) {
    it(`${JSON.stringify(sel)} ${want ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      assert.equal(matches(sel, labels), want);
    });
  }

  it('selectorFromSet() matches exactly the labels it was built from (a Service selector)', () => {
    const sel = selectorFromSet({ app: 'web', tier: 'fe' });
    assert.equal(matchesLabels(sel, { app: 'web', tier: 'fe', extra: 'x' }), true);
    assert.equal(matchesLabels(sel, { app: 'web' }), false);
    assert.equal(labelSelectorToString(sel), 'app=web,tier=fe');
  });
});

describe('label selectors: errors are kube-apiserver’s', () => {
  const valueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  const table: Array<[string, string]> = [
    ['env IN (a)', "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"],
    ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ['test-label=====name1', "unable to parse requirement: found '==', expected: identifier"],
    ['invalid=label=value', "found '=', expected: ',' or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    [
      'app=demo-{nginx}',
      `unable to parse requirement: values[0][app]: Invalid value: "demo-{nginx}": ${valueMsg}`,
    ],
    [
      'environment>qa',
      `unable to parse requirement: values[0]: Invalid value: "qa": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      'x in ()',
      "unable to parse requirement: values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    ],
    ['x in a', "unable to parse requirement: found 'a', expected: '('"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
  ];
  for (const [sel, msg] of table) {
    it(`${JSON.stringify(sel)} → ${msg.slice(0, 70)}`, () => {
      assert.throws(
        () => parseLabelSelector(sel),
        (e: unknown) => e instanceof SelectorError && e.message === msg,
      );
    });
  }

  it('an invalid key is reported with the qualified-name rules', () => {
    assert.throws(
      () => parseLabelSelector('a/b/c=x'),
      (e: unknown) =>
        e instanceof SelectorError &&
        e.message.startsWith(
          'unable to parse requirement: key: Invalid value: "a/b/c": a qualified name must consist of',
        ),
    );
    assert.throws(
      () => parseLabelSelector('-x'),
      (e: unknown) =>
        e instanceof SelectorError && e.message.includes('name part must consist of alphanumeric characters'),
    );
  });
});

// ---- properties ----

const keyArb = fc.constantFrom('a', 'app', 'x.y', 'example.com/zone', 'kubernetes.io/service-name', 'A_b-9');
const valueArb = fc.constantFrom('', 'a', 'web', 'x.y_z-1', 'Z9', '0', '12');
const intArb = fc.integer({ min: -1000, max: 1000 }).map(String);
const opArb = fc.constantFrom<LabelOperator>(
  'Exists',
  'DoesNotExist',
  'Equals',
  'DoubleEquals',
  'NotEquals',
  'In',
  'NotIn',
  'GreaterThan',
  'LessThan',
);
const reqArb = fc.record({
  key: keyArb,
  op: opArb,
  values: fc.array(valueArb, { minLength: 1, maxLength: 3 }),
  int: intArb,
});
type Req = { key: string; op: LabelOperator; values: string[]; int: string };

const render = (r: Req): string => {
  switch (r.op) {
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
    case 'Equals':
      return `${r.key}=${r.values[0]}`;
    case 'DoubleEquals':
      return `${r.key}==${r.values[0]}`;
    case 'NotEquals':
      return `${r.key}!=${r.values[0]}`;
    case 'In':
      return `${r.key} in (${r.values.join(',') || ','})`;
    case 'NotIn':
      return `${r.key} notin (${r.values.join(',') || ','})`;
    case 'GreaterThan':
      return `${r.key}>${r.int}`;
    case 'LessThan':
      return `${r.key}<${r.int}`;
  }
};

/** The meaning of one requirement, written independently of the implementation. */
const holds = (r: Req, labels: Record<string, string>): boolean => {
  const v = labels[r.key];
  const asInt = v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
  switch (r.op) {
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Equals':
    case 'DoubleEquals':
      return v === r.values[0];
    case 'NotEquals':
      return v !== r.values[0];
    case 'In':
      return v !== undefined && r.values.includes(v);
    case 'NotIn':
      return v === undefined || !r.values.includes(v);
    case 'GreaterThan':
      return asInt !== undefined && asInt > Number(r.int);
    case 'LessThan':
      return asInt !== undefined && asInt < Number(r.int);
  }
};

const labelsArb = fc.dictionary(keyArb, fc.oneof(valueArb, intArb), { maxKeys: 4 });

describe('label selectors: properties', () => {
  it('matching a parsed selector agrees with the meaning of each requirement', () => {
    fc.assert(
      fc.property(fc.array(reqArb, { minLength: 0, maxLength: 4 }), labelsArb, (reqs, labels) => {
        const sel = parseLabelSelector(reqs.map(render).join(','));
        assert.equal(
          matchesLabels(sel, labels),
          reqs.every((r) => holds(r, labels)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('the canonical string parses back to the same selector', () => {
    fc.assert(
      fc.property(fc.array(reqArb, { maxLength: 4 }), (reqs) => {
        const sel = parseLabelSelector(reqs.map(render).join(' , '));
        assert.deepEqual(parseLabelSelector(labelSelectorToString(sel)), sel);
      }),
      { numRuns: 1000 },
    );
  });

  it('any input either parses or fails with a SelectorError, never anything else', () => {
    const chars = fc.constantFrom(
      'a',
      'b',
      '=',
      '!',
      ',',
      '(',
      ')',
      ' ',
      'in',
      'notin',
      '<',
      '>',
      '1',
      '/',
      '.',
      '-',
      '{',
    );
    fc.assert(
      fc.property(
        fc.array(chars, { maxLength: 14 }).map((xs) => xs.join('')),
        (input) => {
          try {
            parseLabelSelector(input);
          } catch (e) {
            assert.ok(e instanceof SelectorError, `${JSON.stringify(input)} threw ${String(e)}`);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
