// The storage flags shared by `svcplane store`, `apiserver` and `up`.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openStoreFromFlags } from './store-command.js';
import { UsageError } from './flags.js';

it('--storage-retry-budget takes a duration, 0s included, and refuses anything else before connecting', async () => {
  const etcd = { 'storage-backend': 'etcd3', 'etcd-servers': 'http://127.0.0.1:1' };
  for (const bad of ['soon', '15', '-1s', '']) {
    await assert.rejects(
      openStoreFromFlags({ ...etcd, 'storage-retry-budget': bad }),
      (err) => err instanceof UsageError && err.message.includes('--storage-retry-budget'),
      bad,
    );
  }
  // A valid budget gets as far as etcd (none listens on port 1).
  await assert.rejects(openStoreFromFlags({ ...etcd, 'storage-retry-budget': '0s' }), /unreachable/);
});
