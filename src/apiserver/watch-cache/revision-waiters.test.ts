import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RevisionWaiters } from './revision-waiters.js';

const timedOut = (): Error => new Error('timed out');

/** Which of the promises have settled, and how, after the current turn. */
async function states(ps: Promise<void>[]): Promise<string[]> {
  const out = ps.map(() => 'pending');
  ps.forEach((p, i) =>
    p.then(
      () => (out[i] = 'resolved'),
      (e: Error) => (out[i] = e.message),
    ),
  );
  await new Promise((r) => setImmediate(r));
  return out;
}

describe('RevisionWaiters', () => {
  it('ends the waits for the revision reached and below, and keeps the others', async () => {
    const w = new RevisionWaiters(60_000);
    const ps = [w.wait(3, timedOut), w.wait(5, timedOut), w.wait(4, timedOut)];
    w.advance(4);
    assert.deepEqual(await states(ps), ['resolved', 'pending', 'resolved']);
    assert.equal(w.size, 1);
    w.advance(5);
    assert.deepEqual(await states(ps), ['resolved', 'resolved', 'resolved']);
    assert.equal(w.size, 0);
  });

  it('forgets a waiter whose signal aborts, and rejects it with the reason', async () => {
    const w = new RevisionWaiters(60_000);
    const ac = new AbortController();
    const ps = [w.wait(10, timedOut, ac.signal), w.wait(10, timedOut)];
    ac.abort(new Error('client gone'));
    assert.deepEqual(await states(ps), ['client gone', 'pending']);
    assert.equal(w.size, 1);
    w.releaseAll();
    assert.equal(w.size, 0);
  });

  it('does not wait at all on a signal already aborted', async () => {
    const w = new RevisionWaiters(60_000);
    const ac = new AbortController();
    ac.abort(new Error('already gone'));
    assert.deepEqual(await states([w.wait(10, timedOut, ac.signal)]), ['already gone']);
    assert.equal(w.size, 0);
  });

  it('a waiter ended by advance ignores a later abort', async () => {
    const w = new RevisionWaiters(60_000);
    const ac = new AbortController();
    const ps = [w.wait(3, timedOut, ac.signal)];
    w.advance(3);
    ac.abort(new Error('late'));
    assert.deepEqual(await states(ps), ['resolved']);
    assert.equal(w.size, 0);
  });

  it('rejects with the given error after the timeout, and forgets the waiter', async () => {
    const w = new RevisionWaiters(5);
    const ac = new AbortController();
    await assert.rejects(w.wait(10, timedOut, ac.signal), /timed out/);
    assert.equal(w.size, 0);
    ac.abort(); // a late abort after the timeout changes nothing
    assert.equal(w.size, 0);
  });

  it('releaseAll ends every wait', async () => {
    const w = new RevisionWaiters(60_000);
    const ps = [w.wait(7, timedOut), w.wait(8, timedOut)];
    w.releaseAll();
    assert.deepEqual(await states(ps), ['resolved', 'resolved']);
    assert.equal(w.size, 0);
  });
});
