import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import type { Client } from '../runtime/client.js';
import { Informer } from '../runtime/informer.js';
import { enqueueOnChange, keyedController, onChange } from './controller-wiring.js';

const SERVICES = mustFindResource('', 'services');
// Informers tell handlers on their own queues, after the cache write: wait for delivery.
async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setImmediate(r));
  }
}

const svc = (name: string, rv: string): KObject =>
  ({ metadata: { namespace: 'ns', name, resourceVersion: rv } }) as unknown as KObject;

describe('controller wiring', () => {
  it('enqueueOnChange queues the object key on add, update and delete', async () => {
    const inf = new Informer({} as Client, SERVICES);
    const seen: string[] = [];
    const controller = keyedController(
      {
        name: 'wiring-test',
        workers: 1,
        reconcile: (key) => {
          seen.push(key);
          return Promise.resolve();
        },
      },
      {},
    );
    enqueueOnChange(inf, controller);
    inf.indexer.apply('ADDED', svc('a', '1'));
    inf.indexer.apply('MODIFIED', svc('b', '2'));
    await until(() => controller.queue.length === 2);
    assert.equal(controller.queue.length, 2);
    controller.start();
    while (seen.length < 2) await new Promise((r) => setImmediate(r));
    await controller.stop();
    assert.deepEqual(seen.sort(), ['ns/a', 'ns/b']);
  });

  it('onChange passes the old version on an update only', async () => {
    const inf = new Informer({} as Client, SERVICES);
    const calls: [string | undefined, string][] = [];
    onChange(inf, (old, o) => calls.push([old?.metadata.resourceVersion, o.metadata.resourceVersion ?? '']));
    inf.indexer.apply('ADDED', svc('a', '1'));
    inf.indexer.apply('MODIFIED', svc('a', '2'));
    inf.indexer.apply('DELETED', svc('a', '3'));
    await until(() => calls.length === 3);
    assert.deepEqual(calls, [
      [undefined, '1'],
      ['1', '2'],
      [undefined, '3'],
    ]);
  });

  it('keyedController takes the caller workers over the default and reports errors without `dropped`', async () => {
    const errors: unknown[][] = [];
    const controller = keyedController(
      { name: 'wiring-test-err', workers: 3, maxRetries: 0, reconcile: () => Promise.reject(new Error('x')) },
      { workers: 1, onError: (...args: unknown[]) => errors.push(args) },
    );
    controller.enqueue('k');
    controller.start();
    while (errors.length < 1) await new Promise((r) => setImmediate(r));
    await controller.stop();
    assert.equal(errors[0]!.length, 2);
    assert.equal(errors[0]![0], 'k');
  });
});
