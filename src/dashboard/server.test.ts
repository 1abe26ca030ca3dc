import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Client } from '../runtime/client.js';
import { silentLogger } from '../runtime/logger.js';
import { createDashboard } from './server.js';

describe('createDashboard', () => {
  it('stops once, however often stop is called', async () => {
    const d = createDashboard({ client: {} as Client, log: silentLogger, base: '' });
    const first = d.stop();
    assert.equal(d.stop(), first);
    await first;
    assert.equal(d.stop(), first);
  });
});
