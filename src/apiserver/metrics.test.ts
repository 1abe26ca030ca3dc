// etcd_request_retries_total is read from the store when /metrics is scraped.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryStore } from '../storage/memory/memory-store.js';
import type { StoreRetries } from '../storage/store.js';
import { ApiMetrics } from './metrics.js';

it('etcd_request_retries_total shows the store’s retries by operation and reason, as of the scrape', async () => {
  let retries: StoreRetries = [{ operation: 'create', reason: 'timeout', count: 2 }];
  const store = Object.assign(new MemoryStore(), { retries: () => retries });
  const metrics = new ApiMetrics();
  metrics.countStoreRetries(store);
  const scrape = async (): Promise<string[]> =>
    (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('etcd_request_retries_total{'));
  assert.deepEqual(await scrape(), ['etcd_request_retries_total{operation="create",reason="timeout"} 2']);
  retries = [
    { operation: 'create', reason: 'timeout', count: 3 },
    { operation: 'get', reason: 'leader_election', count: 1 },
  ];
  assert.deepEqual(await scrape(), [
    'etcd_request_retries_total{operation="create",reason="timeout"} 3',
    'etcd_request_retries_total{operation="get",reason="leader_election"} 1',
  ]);
});
