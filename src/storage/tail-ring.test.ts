import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WatchEvent } from './store.js';
import { TailRing } from './tail-ring.js';

const ev = (revision: number, key = `/k/${revision}`): WatchEvent => ({
  type: 'PUT',
  key,
  value: new Uint8Array(),
  revision,
  createRevision: revision,
});

describe('TailRing', () => {
  it('holds every change above its floor; evicting raises the floor', () => {
    const r = new TailRing(3, 10);
    [11, 12, 13].forEach((n) => r.push(ev(n)));
    assert.ok(r.covers(10));
    r.push(ev(14));
    assert.equal(r.floor, 11);
    assert.ok(!r.covers(10));
    assert.deepEqual(
      r.readAfter('/', 11, 100).events.map((e) => e.revision),
      [12, 13, 14],
    );
  });

  it('readAfter() with a small max advances the cursor past non-matching events', () => {
    const r = new TailRing(10, 0);
    [1, 2, 3, 4].forEach((n) => r.push(ev(n, n % 2 ? '/a/x' : '/b/x')));
    assert.deepEqual(r.readAfter('/b/', 0, 1), { events: [], through: 1 });
    assert.deepEqual(
      r.readAfter('/b/', 1, 1).events.map((e) => e.revision),
      [2],
    );
    assert.equal(r.readAfter('/b/', 4, 10).through, 4);
  });

  it('keeps several changes of one revision together, and never splits them across reads', () => {
    const r = new TailRing(10, 0);
    r.push(ev(1));
    r.push(ev(2, '/k/a'));
    r.push(ev(2, '/k/b'));
    r.push(ev(2, '/k/c'));
    r.push(ev(3));
    const first = r.readAfter('/', 0, 2); // max 2 would cut revision 2 after /k/a
    assert.deepEqual(
      first.events.map((e) => e.key),
      ['/k/1', '/k/a', '/k/b', '/k/c'],
    );
    assert.equal(first.through, 2);
    assert.deepEqual(
      r.readAfter('/', 2, 2).events.map((e) => e.key),
      ['/k/3'],
    );
  });

  it('refuses a revision older than the newest', () => {
    const r = new TailRing(4, 5);
    assert.throws(() => r.push(ev(5)));
    r.push(ev(7));
    assert.throws(() => r.push(ev(6)));
    r.push(ev(7, '/other')); // same revision: allowed
  });
});
