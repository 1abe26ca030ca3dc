import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { mustFindResource } from '../../api/resources.js';
import type { CachedObject } from './cached-object.js';
import type { CacheEvent } from './delivery.js';
import { EventHistory } from './history.js';

const SERVICES = mustFindResource('', 'services');

const object = (rv: number, size: number): CachedObject => ({
  key: `/k/${rv}`,
  namespace: 'ns',
  name: `o${rv}`,
  rv,
  json: 'x'.repeat(size),
  size,
  labels: {},
  fields: {},
});

const event = (revision: number, cur: number, prev: number | undefined): CacheEvent => ({
  revision,
  resource: SERVICES,
  type: 'PUT',
  cur: object(revision, cur),
  prev: prev === undefined ? undefined : object(revision - 1, prev),
});

describe('EventHistory (property)', () => {
  it('holds the newest events within both bounds, and exactly the changes after its floor', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 400 }), fc.option(fc.integer({ min: 1, max: 400 }))), {
          maxLength: 80,
        }),
        fc.integer({ min: 0, max: 100 }),
        (maxEvents, maxBytes, sizes, start) => {
          const h = new EventHistory(maxEvents, maxBytes);
          h.reset(start);
          const all = sizes.map(([cur, prev], i) => event(start + 1 + i, cur, prev ?? undefined));
          for (const ev of all) h.push(ev);
          // The model: the longest suffix within both bounds.
          const bytesOf = (ev: CacheEvent) => ev.cur.json.length + (ev.prev?.json.length ?? 0);
          let keep = 0;
          let bytes = 0;
          while (
            keep < all.length &&
            keep < maxEvents &&
            bytes + bytesOf(all[all.length - 1 - keep]!) <= maxBytes
          ) {
            bytes += bytesOf(all[all.length - 1 - keep]!);
            keep++;
          }
          const kept = all.slice(all.length - keep);
          const floor = keep === all.length ? start : all[all.length - keep - 1]!.revision;
          assert.deepEqual(h.stats(), { events: keep, bytes, floor, maxEvents, maxBytes });
          assert.equal(h.floor, floor);
          for (let from = floor; from <= start + all.length; from++)
            assert.deepEqual(
              [...h.after(from)].map((e) => e.revision),
              kept.filter((e) => e.revision > from).map((e) => e.revision),
            );
        },
      ),
    );
  });

  it('compacts its array without losing an event', () => {
    const h = new EventHistory(3, Infinity);
    h.reset(0);
    for (let r = 1; r <= 10_000; r++) h.push(event(r, 1, undefined));
    assert.deepEqual(
      [...h.after(0)].map((e) => e.revision),
      [9_998, 9_999, 10_000],
    );
    assert.equal(h.floor, 9_997);
  });
});
