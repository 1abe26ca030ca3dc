// The API server's watch-cache history is bounded by bytes as well as by count: large objects under churn
// push the oldest events out, and a watch resumed from before them gets 410 Expired (then relists), while
// one resumed inside the history replays every later event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import type { WatchEvent } from '../runtime/client.js';
import { startInProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { API_HISTORY_BYTES } from './server.js';

const SERVICES = mustFindResource('', 'services');

const big = (name: string, i: number): KObject =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', annotations: { blob: `${i}:`.padEnd(4_000, 'x') } },
    spec: { ports: [{ port: 80 }] },
  }) as KObject;

async function watchFrom(
  api: Awaited<ReturnType<typeof startInProcessApiServer>>,
  rv: string,
  upTo: number,
): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const events: WatchEvent[] = [];
  for await (const ev of api.client.watch(SERVICES, { resourceVersion: rv }, ac.signal)) {
    events.push(ev);
    if (ev.type === 'ERROR' || events.length === upTo) ac.abort();
  }
  return events;
}

describe('the API server watch-cache history budget', () => {
  it('is 10,000 events and API_HISTORY_BYTES by default', async () => {
    const api = await startInProcessApiServer();
    try {
      const s = api.server.cache.historyStats();
      assert.equal(s.maxEvents, 10_000);
      assert.equal(s.maxBytes, API_HISTORY_BYTES);
      assert.ok(API_HISTORY_BYTES >= 64 * 2 ** 20 && API_HISTORY_BYTES <= 512 * 2 ** 20);
    } finally {
      await api.stop();
    }
  });

  it('drops the oldest events past the budget: 410 from before them, a full replay from inside', async () => {
    const api = await startInProcessApiServer({ watchCacheHistoryBytes: 60_000 });
    try {
      const c = api.client;
      const rvs: string[] = [];
      for (let i = 0; i < 30; i++) {
        const name = `big-${i % 3}`;
        const o =
          i < 3
            ? await c.create(SERVICES, 'default', big(name, i))
            : await c.patch(SERVICES, 'default', name, 'merge', {
                metadata: { annotations: { blob: `${i}:`.padEnd(4_000, 'x') } },
              });
        rvs.push(o.metadata.resourceVersion!);
      }
      const stats = api.server.cache.historyStats();
      assert.ok(stats.bytes <= 60_000, `history holds ${stats.bytes} bytes`);
      assert.ok(stats.events >= 3 && stats.events < 30, `history holds ${stats.events} events`);

      const expired = await watchFrom(api, rvs[0]!, 1);
      assert.equal(expired.length, 1);
      assert.equal(expired[0]!.type, 'ERROR');
      assert.equal((expired[0]!.object as unknown as { code: number }).code, 410);

      // From the floor (the revision just below the oldest event held): every later write, in order.
      const from = rvs.indexOf(String(stats.floor));
      assert.ok(from >= 0, `the floor ${stats.floor} is one of this test's writes`);
      const replay = await watchFrom(api, rvs[from]!, rvs.length - 1 - from);
      assert.deepEqual(
        replay.map((e) => [e.type, e.object.metadata.resourceVersion]),
        rvs.slice(from + 1).map((rv) => ['MODIFIED', rv]),
      );
    } finally {
      await api.stop();
    }
  });
});
