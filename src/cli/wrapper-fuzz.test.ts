// The wrapper under hostile input: 2,000 malformed or hostile requests from a seeded generator
// (test/support/hostile-requests.ts) over real sockets to its plain-HTTP port. No answer ≥ 500, no
// request left hanging, every rejection a Kubernetes Status of its code (Node's own plain-text answers
// to what is not HTTP aside), and afterwards no request in flight, no watcher, and the heap back within
// 10% of where it started. `npm run bench -- wrapper-fuzz` runs 100,000.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { runHostile } from '../../test/support/hostile-requests.js';
import { until } from '../../test/e2e/testing/until.js';
import {
  heapAfterGc,
  startWrapperUnderTest,
  type WrapperUnderTest,
} from '../../test/support/wrapper-under-test.js';

const get = (port: number, path: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });

/** The wrapper's requests in flight (besides the /metrics request asking) and its watchers. */
async function busy(port: number): Promise<{ inflight: number; watchers: number }> {
  const text = (await get(port, '/metrics')).body;
  const sum = (re: RegExp): number => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  return {
    inflight: sum(/^apiserver_current_inflight_requests\{[^}]*\} (\S+)$/gm) - 1,
    watchers: sum(/^apiserver_registered_watchers\{[^}]*\} (\S+)$/gm),
  };
}

describe('the wrapper under hostile input', () => {
  let w: WrapperUnderTest;
  before(async () => {
    w = await startWrapperUnderTest();
  });
  after(() => w?.stop());

  it(
    'answers 2,000 hostile requests without a 5xx, a hang or a non-Status rejection',
    { timeout: 120_000 },
    async () => {
      await runHostile(w.port, 1, 300); // warm up: code paths compiled, caches filled
      await until('the warm-up to settle', 30_000, async () => {
        const b = await busy(w.port);
        return b.inflight === 0 && b.watchers === 0;
      });
      const heapBefore = heapAfterGc();
      const summary = await runHostile(w.port, 2, 2_000);
      assert.deepEqual(summary.failures, []);
      assert.equal(summary.fiveXX, 0);
      assert.equal(summary.requests, 2_000);
      let last = { inflight: -1, watchers: -1 };
      await until(
        () => `no request in flight and no watcher (have ${JSON.stringify(last)})`,
        30_000,
        async () => {
          last = await busy(w.port);
          return last.inflight === 0 && last.watchers === 0;
        },
      );
      assert.equal((await get(w.port, '/healthz')).status, 200, 'the wrapper still serves');
      let heapAfter = 0;
      await until(
        () => `the heap back within 10% of ${heapBefore} (have ${heapAfter})`,
        30_000,
        () => (heapAfter = heapAfterGc()) <= heapBefore * 1.1,
        500,
      );
    },
  );
});
