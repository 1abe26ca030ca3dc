import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EndpointSliceTracker } from './tracker.js';

const SVC = 'default/web';

describe('EndpointSliceTracker', () => {
  it('knows nothing about a Service it never wrote for', () => {
    const t = new EndpointSliceTracker();
    assert.equal(t.stale(SVC, [], 0), false);
    assert.equal(t.observe(SVC, 'a', 1), 'other');
    assert.equal(t.observeDeletion(SVC, 'a'), 'other');
    assert.equal(t.hasPending(SVC), false);
  });

  it('a create not yet in the cache makes it stale; the event is the own write and clears it', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 1, 0);
    assert.equal(t.stale(SVC, [], 10), true);
    assert.equal(t.hasPending(SVC), true);
    assert.equal(t.observe(SVC, 'a', 1), 'own');
    assert.equal(t.hasPending(SVC), false);
    assert.equal(t.stale(SVC, [{ uid: 'a', generation: 1 }], 20), false);
  });

  it('an update is stale until the cache shows its generation', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 3, 0);
    assert.equal(t.stale(SVC, [{ uid: 'a', generation: 2 }], 1), true);
    assert.equal(t.stale(SVC, [{ uid: 'a', generation: 3 }], 1), false);
    assert.equal(t.stale(SVC, [{ uid: 'a', generation: 4 }], 1), false);
  });

  it('an older generation of an own write is own and keeps the expectation', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 3, 0);
    assert.equal(t.observe(SVC, 'a', 2), 'own');
    assert.equal(t.hasPending(SVC), true);
  });

  it('a newer generation than the own write is someone else: sync, and the expectation is met', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 3, 0);
    assert.equal(t.observe(SVC, 'a', 4), 'other');
    assert.equal(t.hasPending(SVC), false);
  });

  it('a delete is stale while the slice is still cached; its event is own', () => {
    const t = new EndpointSliceTracker();
    t.expectDeletion(SVC, 'a', 0);
    assert.equal(t.stale(SVC, [{ uid: 'a', generation: 1 }], 1), true);
    assert.equal(t.stale(SVC, [], 1), false);
    assert.equal(t.observe(SVC, 'a', 2), 'own', 'an update of ours arriving before the delete');
    assert.equal(t.hasPending(SVC), true);
    assert.equal(t.observeDeletion(SVC, 'a'), 'own');
    assert.equal(t.hasPending(SVC), false);
  });

  it('someone deleting a slice just written clears the expectation and asks for a sync', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 1, 0);
    assert.equal(t.observeDeletion(SVC, 'a'), 'other');
    assert.equal(t.stale(SVC, [], 1), false);
  });

  it('expectations expire after the ttl, so a lost event cannot block a Service for ever', () => {
    const t = new EndpointSliceTracker(1000);
    t.expect(SVC, 'a', 1, 0);
    assert.equal(t.stale(SVC, [], 1000), true);
    assert.equal(t.stale(SVC, [], 1001), false);
    assert.equal(t.hasPending(SVC), false);
  });

  it('Services are independent, and forget() drops one', () => {
    const t = new EndpointSliceTracker();
    t.expect(SVC, 'a', 1, 0);
    t.expect('default/other', 'b', 1, 0);
    assert.equal(t.stale('default/other', [{ uid: 'b', generation: 1 }], 1), false);
    assert.equal(t.stale(SVC, [], 1), true);
    t.forget(SVC);
    assert.equal(t.stale(SVC, [], 1), false);
    assert.equal(t.hasPending('default/other'), true);
  });

  it('property: once every write has been observed in order, nothing is pending or stale', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('x', 'y', 'z'), fc.boolean()), { minLength: 1, maxLength: 30 }),
        (writes) => {
          const t = new EndpointSliceTracker();
          const cache = new Map<string, number>();
          const live = new Map<string, { uid: string; generation: number }>(); // slice name → current object
          const events: Array<[string, number | 'deleted']> = [];
          let uids = 0;
          for (const [name, del] of writes) {
            const current = live.get(name);
            if (del) {
              if (current === undefined) continue;
              live.delete(name);
              t.expectDeletion(SVC, current.uid, 0);
              events.push([current.uid, 'deleted']);
            } else {
              // A uid is never reused: a slice created again after a delete is a new object.
              const next =
                current === undefined
                  ? { uid: `${name}-${uids++}`, generation: 1 }
                  : { ...current, generation: current.generation + 1 };
              live.set(name, next);
              t.expect(SVC, next.uid, next.generation, 0);
              events.push([next.uid, next.generation]);
            }
          }
          for (const [uid, g] of events) {
            assert.equal(g === 'deleted' ? t.observeDeletion(SVC, uid) : t.observe(SVC, uid, g), 'own');
            if (g === 'deleted') cache.delete(uid);
            else cache.set(uid, g);
          }
          const cached = [...cache].map(([uid, g]) => ({ uid, generation: g }));
          assert.equal(t.stale(SVC, cached, 1), false);
          assert.equal(t.hasPending(SVC), false);
        },
      ),
    );
  });
});
