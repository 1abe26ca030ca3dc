// Which copy intern() returns cannot be seen from JavaScript (=== compares contents); the benchmark's
// heap figures show it. These tests hold what can be seen: equal values back, one entry per distinct
// string, and the bound.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Interner } from './intern.js';

describe('Interner', () => {
  it('gives back an equal string and keeps one entry per distinct string', () => {
    const t = new Interner(10);
    for (const s of ['bench-wrap-00', 'bench-wrap-00', 'other', 'bench-wrap-00'])
      assert.equal(t.intern(s), s);
    assert.equal(t.size, 2);
  });

  it('starts over past its limit, so unique values cost at most `limit` entries', () => {
    const t = new Interner(3);
    for (let i = 0; i < 10; i++) assert.equal(t.intern(`v${i}`), `v${i}`);
    assert.ok(t.size <= 3, `${t.size} entries`);
  });
});
