// HealthPoller against a real loopback HTTP server that answers as each step says.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HealthPoller, type HealthPollerOptions } from './health-poller.js';

describe('HealthPoller', () => {
  let server: Server;
  let address: string;
  let answer: { status: number; body: string } | 'hang' = { status: 200, body: '{}' };
  const held: (() => void)[] = [];
  before(async () => {
    server = createServer((req, res) => {
      if (answer === 'hang') {
        held.push(() => res.destroy());
        return;
      }
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}/localinfo`;
  });
  after(() => {
    for (const f of held) f();
    server.close();
  });

  // A generous timeout by default: a loaded machine must not turn a prompt loopback answer into a failure.
  function poller(intervalMs = 1_000, timeoutMs = 2_000, wording?: HealthPollerOptions['wording']) {
    const applied: [string, boolean | undefined][] = [];
    const lines: string[] = [];
    let failed = 0;
    const p = new HealthPoller({
      address,
      intervalMs,
      timeoutMs,
      apply: (node, healthy) => applied.push([node, healthy]),
      onFailure: () => failed++,
      log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) },
      ...(wording === undefined ? {} : { wording }),
    });
    return { p, applied, lines, failed: () => failed };
  }

  it("logs a caller's own wording for a node reported unhealthy and back", async () => {
    const { p, lines } = poller(1_000, 2_000, { unhealthy: 'shown unhealthy', back: 'shown healthy' });
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    answer = { status: 200, body: JSON.stringify({ a: { Normal: true } }) };
    await p.tick();
    p.stop();
    assert.deepEqual(lines, ['warn shown unhealthy', 'info shown healthy']);
  });

  it('passes on only the verdicts that change, and logs each', async () => {
    const { p, applied, lines } = poller();
    answer = { status: 200, body: JSON.stringify({ a: { Normal: true }, b: { Normal: false } }) };
    await p.tick();
    assert.deepEqual(applied, [
      ['a', true],
      ['b', false],
    ]);
    assert.equal(p.unhealthy(), 1);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false }, b: { Normal: false } }) };
    await p.tick();
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    assert.deepEqual(applied.slice(2), [
      ['a', false],
      ['b', undefined],
    ]);
    assert.deepEqual(lines, [
      'warn node reported unhealthy: its endpoints are left out of every Service',
      'warn node reported unhealthy: its endpoints are left out of every Service',
      'info node no longer reported unhealthy: its endpoints are back',
    ]);
    p.stop();
  });

  it('a failed poll (error, not the format, no answer) keeps the last answer and is counted, logged once', async () => {
    const { p, applied, lines, failed } = poller();
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    for (const bad of [{ status: 500, body: 'oops' }, { status: 200, body: '[]' }, 'hang'] as const) {
      answer = bad;
      await p.tick();
    }
    assert.deepEqual(applied, [['a', false]]);
    assert.equal(failed(), 3);
    assert.equal(p.failures, 3);
    assert.equal(lines.filter((l) => l.startsWith('warn the health source does not answer')).length, 1);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    assert.ok(lines.includes('info the health source answers again'));
    p.stop();
  });

  it('an answer stays in force two intervals plus the timeout, then every node counts as healthy', async () => {
    // interval 500 ms, timeout 100 ms: in force for 1,100 ms after it came.
    const { p, applied, lines } = poller(500, 100);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    const at = Date.now();
    await p.tick(); // and then every 500 ms
    answer = { status: 503, body: '' };
    await new Promise((r) => setTimeout(r, 800 - (Date.now() - at)));
    assert.ok(p.failures >= 1, 'a poll failed meanwhile');
    assert.deepEqual(applied, [['a', false]], 'still in force after a failed poll');
    const deadline = Date.now() + 5_000;
    while (applied.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(Date.now() - at >= 1_000, `dropped after ${Date.now() - at} ms`);
    assert.deepEqual(applied.at(-1), ['a', undefined]);
    assert.ok(lines.some((l) => l.startsWith('warn the last health answer is too old')));
    assert.equal(p.unhealthy(), 0);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    assert.deepEqual(applied.at(-1), ['a', false]);
    p.stop();
  });

  it('an apply that throws is logged, and polling goes on', async () => {
    const lines: string[] = [];
    let polls = 0;
    const p = new HealthPoller({
      address,
      intervalMs: 20,
      apply: () => {
        throw new Error('boom');
      },
      fetch: (input, init) => {
        polls++;
        return fetch(input, init);
      },
      log: { info: () => undefined, warn: (m) => lines.push(m) },
    });
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    p.start();
    const deadline = Date.now() + 5_000;
    while (polls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    p.stop();
    assert.ok(polls >= 3);
    assert.ok(lines.includes('applying the health answer failed'));
  });

  it('a source that never answered changes nothing', async () => {
    const { p, applied } = poller();
    answer = { status: 404, body: 'not found' };
    await p.tick();
    await p.tick();
    assert.deepEqual(applied, []);
    assert.equal(p.failures, 2);
    p.stop();
  });

  it('polls again every interval once started, and not after stop', async () => {
    answer = { status: 200, body: '{}' };
    let polls = 0;
    const p = new HealthPoller({
      address,
      intervalMs: 20,
      apply: () => undefined,
      log: { info: () => undefined, warn: () => undefined },
      fetch: (input, init) => {
        polls++;
        return fetch(input, init);
      },
    });
    p.start();
    const deadline = Date.now() + 5_000;
    while (polls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    p.stop();
    const stoppedAt = polls;
    assert.ok(stoppedAt >= 3);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(polls <= stoppedAt + 1);
  });
});
