// HealthPoller against a real loopback HTTP server that answers as each step says.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HealthPoller } from './health-poller.js';

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

  function poller(clock: { t: number }) {
    const applied: [string, boolean | undefined][] = [];
    const lines: string[] = [];
    const p = new HealthPoller({
      address,
      intervalMs: 1_000,
      timeoutMs: 200,
      now: () => clock.t,
      apply: (node, healthy) => applied.push([node, healthy]),
      log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) },
    });
    return { p, applied, lines };
  }

  it('passes on only the verdicts that change, and logs each', async () => {
    const clock = { t: 0 };
    const { p, applied, lines } = poller(clock);
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

  it('keeps the last answer through a failed poll, drops it once too old, and takes the next answer', async () => {
    const clock = { t: 0 };
    const { p, applied, lines } = poller(clock);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    for (const [step, bad] of [
      [1, { status: 500, body: 'oops' }],
      [2, { status: 200, body: '[]' }],
      [3, 'hang'],
    ] as const) {
      answer = bad;
      clock.t = step * 1_000; // within two intervals plus the timeout (2,200 ms) of the answer
      if (step === 3) clock.t = 2_100;
      await p.tick();
      assert.deepEqual(applied, [['a', false]], `step ${step}`);
    }
    assert.equal(p.failures, 3);
    assert.equal(lines.filter((l) => l.startsWith('warn the health source does not answer')).length, 1);
    clock.t = 2_300;
    answer = { status: 503, body: '' };
    await p.tick();
    assert.deepEqual(applied.at(-1), ['a', undefined]);
    assert.ok(lines.some((l) => l.startsWith('warn the last health answer is too old')));
    assert.equal(p.unhealthy(), 0);
    answer = { status: 200, body: JSON.stringify({ a: { Normal: false } }) };
    await p.tick();
    assert.deepEqual(applied.at(-1), ['a', false]);
    assert.ok(lines.includes('info the health source answers again'));
    p.stop();
  });

  it('a source that never answered changes nothing', async () => {
    const { p, applied } = poller({ t: 10_000_000 });
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
