import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goQuote, goQuoteList } from './go-quote.js';

describe('goQuote', () => {
  it("quotes as Go's %q does", () => {
    assert.equal(goQuote('plain'), '"plain"');
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('tab\there\nnl'), '"tab\\there\\nnl"');
    assert.equal(goQuote('\x00\x1b\x7f'), '"\\x00\\x1b\\x7f"');
    assert.equal(goQuote('héllo 世界 ✓'), '"héllo 世界 ✓"');
    assert.equal(goQuote('\u200b'), '"\\u200b"');
    assert.equal(goQuote('\u{e0001}'), '"\\U000e0001"');
  });
});

describe('goQuoteList', () => {
  it('prints a []string as Go does', () => {
    assert.equal(goQuoteList([]), '[]');
    assert.equal(goQuoteList(['get', 'list']), '["get" "list"]');
  });
});
