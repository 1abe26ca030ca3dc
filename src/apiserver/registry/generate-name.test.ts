// metadata.generateName: a generated name that is taken is generated again (KEP-4420), a bounded number
// of times, and the create then fails with the AlreadyExists of the last name tried.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mustFindResource } from '../../api/resources.js';
import { isStatusError } from '../../api/status.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { ensureSystemNamespaces } from '../namespace-lifecycle.js';
import { WatchCache } from '../watch-cache/watch-cache.js';
import { Registry, type WriteContext } from './registry.js';

const LEASES = mustFindResource('coordination.k8s.io', 'leases');
const ctx: WriteContext = { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict', warnings: [] };
const stops: (() => Promise<void>)[] = [];
after(async () => {
  for (const s of stops) await s();
});

/** A registry whose name generator draws from `draws` (each a value in [0, 1)), repeating the last. */
async function registry(draws: number[]): Promise<Registry> {
  const store = new MemoryStore();
  const cache = new WatchCache(store, {});
  cache.start();
  await cache.ready;
  stops.push(() => cache.stop());
  let i = 0;
  const reg = new Registry(store, cache, { random: () => draws[Math.min(i++, draws.length - 1)]! });
  await ensureSystemNamespaces(reg);
  return reg;
}

const lease = (meta: Record<string, string>): Record<string, unknown> => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: meta,
  spec: {},
});

describe('create with generateName', () => {
  it('generates another name when the first one is taken', async () => {
    // Five draws per name: the first name is all zeros, then the same again, then all 0.5s.
    const reg = await registry([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5]);
    const first = await reg.create(LEASES, 'default', lease({ generateName: 'l-' }), ctx);
    const second = await reg.create(LEASES, 'default', lease({ generateName: 'l-' }), ctx);
    assert.equal(second.metadata.generateName, 'l-');
    assert.notEqual(second.metadata.name, first.metadata.name);
  });

  it('gives up after 8 names, with AlreadyExists; a name that was given is never regenerated', async () => {
    const reg = await registry([0]);
    const first = await reg.create(LEASES, 'default', lease({ generateName: 'l-' }), ctx);
    await assert.rejects(reg.create(LEASES, 'default', lease({ generateName: 'l-' }), ctx), (err: unknown) =>
      isStatusError(err, 'AlreadyExists'),
    );
    await assert.rejects(
      reg.create(LEASES, 'default', lease({ name: first.metadata.name!, generateName: 'l-' }), ctx),
      (err: unknown) => isStatusError(err, 'AlreadyExists'),
    );
  });
});
