// When a Mirror says a relist is under way (writes wait): from its first page through its removals, and
// not before a page came (a list hanging on an unreachable upstream holds the offline rewrite back).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { Mirror } from './mirror.js';

const obj = (name: string): KObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

describe('Mirror.relisting', () => {
  it('is false until a page is applied, and true through the removals', () => {
    const during: boolean[] = [];
    const m: Mirror = new Mirror({
      relisting: () => {},
      put: () => {},
      remove: () => during.push(m.relisting),
    });
    m.replace([obj('a'), obj('b')]);
    m.paged.beginReplace();
    assert.equal(m.relisting, false, 'no page yet: the last whole state');
    m.paged.replacePage([obj('a')]);
    assert.equal(m.relisting, true);
    m.paged.endReplace();
    assert.equal(m.relisting, false);
    assert.deepEqual(during, [true], 'b removed while still relisting');

    // An empty relist removes everything, still as a relist.
    m.paged.beginReplace();
    m.paged.endReplace();
    assert.deepEqual(during, [true, true]);
  });
});
