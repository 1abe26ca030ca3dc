import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller, TerminalError } from './controller.js';
import { ItemExponentialRateLimiter } from './workqueue.js';

const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Waits for a condition (the machine may be slow); fails after 5 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let t = 0; !ok(); t += 5) {
    if (t > 5000) throw new Error('timed out');
    await tick(5);
  }
}

describe('Controller', () => {
  it('reconciles each key once per burst of adds, never the same key concurrently', async () => {
    const running = new Set<string>();
    const calls: string[] = [];
    let overlap = false;
    const c = new Controller({
      name: 't',
      workers: 4,
      reconcile: async (key) => {
        if (running.has(key)) overlap = true;
        running.add(key);
        calls.push(key);
        await tick(5);
        running.delete(key);
      },
    });
    // Queued before the workers start: five adds of a key are one reconcile.
    for (let i = 0; i < 5; i++) for (const k of ['a', 'b', 'c']) c.enqueue(k);
    c.start();
    await until(() => calls.length >= 3 && running.size === 0);
    await tick(20);
    assert.deepEqual([...calls].sort(), ['a', 'b', 'c']);
    // Adds while a key is being reconciled: exactly one more reconcile, after the running one.
    calls.length = 0;
    c.enqueue('a');
    await tick(1);
    for (let i = 0; i < 5; i++) c.enqueue('a');
    await until(() => calls.length >= 2 && running.size === 0);
    await tick(20);
    await c.stop();
    assert.equal(overlap, false);
    assert.deepEqual(calls, ['a', 'a']);
  });

  it('a throw is retried with backoff until it succeeds; a TerminalError is not retried', async () => {
    const attempts = new Map<string, number>();
    const errors: [string, boolean][] = [];
    const c = new Controller({
      name: 't',
      workers: 1,
      queue: { rateLimiter: new ItemExponentialRateLimiter(1, 10) },
      reconcile: async (key) => {
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        if (key === 'flaky' && n < 3) throw new Error('not yet');
        if (key === 'bad') throw new TerminalError('never');
      },
      onError: (key, _err, dropped) => errors.push([key, dropped]),
    });
    c.start();
    c.enqueue('flaky');
    c.enqueue('bad');
    await until(() => attempts.get('flaky') === 3);
    await tick(20);
    await c.stop();
    assert.equal(attempts.get('flaky'), 3);
    assert.equal(attempts.get('bad'), 1);
    assert.deepEqual(errors, [
      ['flaky', false],
      ['bad', true],
      ['flaky', false],
    ]);
    assert.equal(c.queue.numRequeues('flaky'), 0, 'success forgets the backoff');
  });

  it('gives up after maxRetries', async () => {
    let n = 0;
    let dropped = false;
    const c = new Controller({
      name: 't',
      workers: 1,
      maxRetries: 3,
      queue: { rateLimiter: new ItemExponentialRateLimiter(1, 2) },
      reconcile: async () => {
        n++;
        throw new Error('always');
      },
      onError: (_k, _e, d) => (dropped ||= d),
    });
    c.start();
    c.enqueue('k');
    await until(() => dropped);
    await tick(20);
    await c.stop();
    assert.equal(n, 4, 'the first try and 3 retries');
    assert.ok(dropped);
  });

  it('requeueAfter brings the key back', async () => {
    let n = 0;
    const c = new Controller({
      name: 't',
      workers: 1,
      reconcile: async () => {
        n++;
        return n < 3 ? { requeueAfterMs: 5 } : undefined;
      },
    });
    c.start();
    c.enqueue('k');
    await until(() => n >= 3);
    await tick(30);
    await c.stop();
    assert.equal(n, 3);
  });
});
