import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJsonObject, isPlainObject, recordOf } from './json.js';

describe('isPlainObject / isJsonObject', () => {
  it('holds for objects, parsed or built, empty or not', () => {
    for (const v of [{}, { a: 1 }, JSON.parse('{"__proto__":{"x":1}}'), Object.create(null)]) {
      assert.equal(isPlainObject(v), true);
      assert.equal(isJsonObject(v), true);
    }
  });
  it('fails for null, arrays and every scalar', () => {
    for (const v of [null, undefined, [], [1], 'a', '', 0, 1, true, false]) {
      assert.equal(isPlainObject(v), false, JSON.stringify(v));
      assert.equal(isJsonObject(v), false, JSON.stringify(v));
    }
  });
});

describe('recordOf', () => {
  it('is the object itself', () => {
    const o = { a: 1 };
    assert.equal(recordOf(o), o);
  });
  it('is a new empty object for anything else', () => {
    const a = recordOf(null);
    const b = recordOf([1]);
    assert.deepEqual(a, {});
    assert.deepEqual(b, {});
    assert.notEqual(a, b);
    assert.deepEqual(recordOf('x'), {});
    assert.deepEqual(recordOf(undefined), {});
  });
});
