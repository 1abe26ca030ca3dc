import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  WorkQueue,
  WorkqueueMetrics,
  defaultControllerRateLimiter,
  type Clock,
} from './workqueue.js';

/** A clock tests move by hand. */
class FakeClock implements Clock {
  t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 1;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== h);
  }
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (next === undefined || next.at > until) break;
      this.timers.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = until;
  }
  get pending(): number {
    return this.timers.length;
  }
}

const queue = (clock = new FakeClock()): { q: WorkQueue<string>; clock: FakeClock } => ({
  q: new WorkQueue<string>('test', { clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000) }),
  clock,
});

describe('WorkQueue', () => {
  it('deduplicates a key added several times before a worker takes it', async () => {
    const { q } = queue();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.length, 0);
  });

  it('never hands one key to two workers: a re-add while processing waits for done()', async () => {
    const { q } = queue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    assert.equal(q.length, 0, 'not queued while a worker holds it');
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    assert.equal(second, undefined);
    q.done(first!);
    await Promise.resolve();
    assert.equal(second, 'a');
  });

  it('a key added once while processing and once more is still processed once more', async () => {
    const { q } = queue();
    q.add('a');
    await q.get();
    q.add('a');
    q.add('a');
    q.done('a');
    assert.equal(q.length, 1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    assert.equal(q.length, 0);
  });

  it('a waiting worker gets the next added key at once', async () => {
    const { q } = queue();
    const got = q.get();
    q.add('x');
    assert.equal(await got, 'x');
  });

  it('addAfter delays the add; the earlier of two delayed adds wins', async () => {
    const { q, clock } = queue();
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    q.addAfter('a', 200);
    clock.advance(49);
    assert.equal(q.length, 0);
    clock.advance(1);
    assert.equal(q.length, 1);
    clock.advance(1000);
    assert.equal(q.length, 1, 'the later delayed adds were dropped');
    assert.equal(clock.pending, 0);
  });

  it('addRateLimited backs off exponentially per item; forget() starts over', async () => {
    const { q, clock } = queue();
    for (const delay of [5, 10, 20, 40]) {
      q.addRateLimited('a');
      clock.advance(delay - 1);
      assert.equal(q.length, 0, `not before ${delay} ms`);
      clock.advance(1);
      assert.equal(q.length, 1, `after ${delay} ms`);
      q.done((await q.get())!);
    }
    assert.equal(q.numRequeues('a'), 4);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    q.addRateLimited('a');
    clock.advance(5);
    assert.equal(q.length, 1, 'back to 5 ms');
  });

  it('shutDown wakes waiting workers with undefined and ignores later adds', async () => {
    const { q, clock } = queue();
    const waiting = q.get();
    q.addAfter('later', 100);
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('x');
    clock.advance(1000);
    assert.equal(await q.get(), undefined);
  });

  it('property: every added key is processed, never twice at once, and at least once after its last add', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constantFrom('add', 'get', 'done'), fc.constant('add')), { maxLength: 60 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 60, maxLength: 60 }),
        async (ops, keys) => {
          const { q } = queue();
          const held = new Set<string>();
          const needs = new Set<string>();
          for (let i = 0; i < ops.length; i++) {
            const key = keys[i]!;
            if (ops[i] === 'add') {
              q.add(key);
              needs.add(key);
            } else if (ops[i] === 'get' && q.length > 0) {
              const k = (await q.get())!;
              assert.ok(!held.has(k), `${k} handed out twice`);
              held.add(k);
              needs.delete(k);
            } else if (ops[i] === 'done' && held.size > 0) {
              const k = [...held][0]!;
              held.delete(k);
              q.done(k);
            }
          }
          // Drain: finish what is held, then process everything still queued.
          for (const k of held) q.done(k);
          held.clear();
          while (q.length > 0) {
            const k = (await q.get())!;
            needs.delete(k);
            q.done(k);
          }
          assert.deepEqual([...needs], [], 'a key added after its last processing was lost');
        },
      ),
    );
  });
});

describe('rate limiters', () => {
  it('ItemExponentialRateLimiter: 5 ms · 2^n capped', () => {
    const l = new ItemExponentialRateLimiter<string>(5, 1000);
    assert.deepEqual(
      Array.from({ length: 10 }, () => l.when('a')),
      [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000],
    );
    assert.equal(l.when('b'), 5, 'per item');
    l.forget('a');
    assert.equal(l.when('a'), 5);
  });

  it('BucketRateLimiter: a burst passes at once, then items wait 1/qps each; tokens refill', () => {
    const clock = new FakeClock();
    const l = new BucketRateLimiter<string>(10, 3, clock);
    assert.deepEqual([l.when(), l.when(), l.when()], [0, 0, 0]);
    assert.equal(l.when(), 100);
    assert.equal(l.when(), 200);
    clock.advance(1000); // +10 tokens, capped at the burst
    assert.deepEqual([l.when(), l.when()], [0, 0]);
  });

  it('MaxOf and the default controller limiter take the larger delay', () => {
    const clock = new FakeClock();
    const l = new MaxOfRateLimiter<string>(
      new ItemExponentialRateLimiter<string>(5, 1000),
      new BucketRateLimiter<string>(1, 1, clock),
    );
    assert.equal(l.when('a'), 5);
    assert.equal(l.when('a'), 1000, 'the bucket is empty: 1 s');
    const d = defaultControllerRateLimiter<string>(clock);
    assert.equal(d.when('x'), 5);
    assert.equal(d.when('x'), 10);
    assert.equal(d.numRequeues('x'), 2);
  });
});

describe('workqueue metrics', () => {
  it("counts adds, retries and depth under client-go's names", async () => {
    const registry = new Registry();
    const metrics = new WorkqueueMetrics(registry);
    const clock = new FakeClock();
    const q = new WorkQueue<string>('endpoint', { clock, metrics });
    q.add('a');
    q.add('b');
    q.add('a');
    clock.advance(5);
    const k = (await q.get())!;
    clock.advance(20);
    q.done(k);
    q.addRateLimited('a');
    q.updateUnfinishedWork();
    const text = await registry.metrics();
    assert.match(text, /workqueue_adds_total\{name="endpoint"\} 2/);
    assert.match(text, /workqueue_depth\{name="endpoint"\} 1/);
    assert.match(text, /workqueue_retries_total\{name="endpoint"\} 1/);
    assert.match(text, /workqueue_queue_duration_seconds_count\{name="endpoint"\} 1/);
    assert.match(text, /workqueue_work_duration_seconds_sum\{name="endpoint"\} 0.02/);
    assert.match(text, /workqueue_longest_running_processor_seconds\{name="endpoint"\} 0/);
  });
});
