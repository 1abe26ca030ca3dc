import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareBytes, stringMap } from './read.js';

describe('compareBytes', () => {
  const rows: Array<[string, string, number]> = [
    ['10.0.0.10', '10.0.0.2', -1],
    ['10.0.0.2', '10.0.0.10', 1],
    ['10.0.0.1', '10.0.0.10', -1],
    ['abc', 'abc', 0],
    ['B', 'a', -1],
    // UTF-8 byte order is code point order: U+FFFF (EF BF BF) < U+10000 (F0 90 80 80), although the
    // UTF-16 code units of U+10000 (D800 DC00) sort before FFFF.
    ['\uffff', '\u{10000}', -1],
    ['x\u{10000}b', 'x\u{10000}a', 1],
  ];
  for (const [a, b, want] of rows) {
    it(`orders ${JSON.stringify(a)} ${want < 0 ? 'before' : want > 0 ? 'after' : 'with'} ${JSON.stringify(b)}`, () => {
      assert.equal(Math.sign(compareBytes(a, b)), want);
    });
  }
});

describe('stringMap', () => {
  it('keeps string entries only and reads anything else as {}', () => {
    assert.deepEqual(stringMap({ a: 'x', b: 1, c: null, d: '' }), { a: 'x', d: '' });
    assert.deepEqual(stringMap(['a']), {});
    assert.deepEqual(stringMap(null), {});
  });
});
