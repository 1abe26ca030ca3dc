import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errText } from './err-text.js';

describe('errText', () => {
  it("is an Error's message", () => {
    assert.equal(errText(new Error('boom')), 'boom');
    assert.equal(errText(new TypeError('bad type')), 'bad type');
  });
  it('is String() of anything else', () => {
    assert.equal(errText('plain'), 'plain');
    assert.equal(errText(42), '42');
    assert.equal(errText(undefined), 'undefined');
    assert.equal(errText({ code: 'E' }), '[object Object]');
  });
});
