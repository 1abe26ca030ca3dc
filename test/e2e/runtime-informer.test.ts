// Informers against a real `svcplane up` that restarts underneath them: the reflector backs off,
// resumes or relists, and the cache ends equal to a fresh LIST; a Service deleted while the server was
// down (straight in the store) is reported deleted to the handlers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { mustFindResource } from '../../src/api/resources.js';
import { Client } from '../../src/runtime/client.js';
import { SharedInformerFactory } from '../../src/runtime/informer.js';
import { kubeconfigTransport } from '../../src/runtime/kubeconfig.js';
import { freePort } from '../../src/storage/etcd/testing/etcd-server.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { startUp } from './testing/server.js';
import { until } from './testing/until.js';

const SERVICES = mustFindResource('', 'services');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-informer-'));
after(() => rmSync(work, { recursive: true, force: true }));

const svc = (name: string): object => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }] },
});

describe('informers across an apiserver restart', () => {
  it('converge to a fresh LIST and report what was deleted while the server was down', async () => {
    const dataDir = path.join(work, 'data');
    const port = await freePort();
    const args = ['--secure-port', String(port)];
    let srv = await startUp({ dataDir, args });
    const client = new Client(kubeconfigTransport({ path: srv.kubeconfig }));
    const factory = new SharedInformerFactory(client, {
      reflector: { backoffInitialMs: 100, backoffMaxMs: 400 },
    });
    const inf = factory.informer(SERVICES);
    assert.equal(factory.informer(SERVICES), inf, 'one informer per resource');
    const deleted: string[] = [];
    inf.addHandlers({ onDelete: (o) => deleted.push(o.metadata.name ?? '') });
    factory.start();
    try {
      await factory.waitForSync();
      await client.create(SERVICES, 'default', svc('keep'));
      await client.create(SERVICES, 'default', svc('doomed'));
      await until('the informer to see both', 5000, () => inf.indexer.size === 3);

      assert.equal(await srv.stop(), 0);
      const store = await SqliteStore.open({ dataDir });
      await store.delete('/services/specs/default/doomed');
      await store.close();
      srv = await startUp({ dataDir, args });
      await client.create(SERVICES, 'default', svc('after'));

      await until('the informer to converge', 15_000, () => inf.indexer.get('default/after') !== undefined);
      const fresh = await client.list(SERVICES);
      const want = fresh.items.map(
        (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`,
      );
      await until('the cache to equal a fresh LIST', 5000, () => {
        const have = inf.indexer
          .list()
          .map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
        return JSON.stringify(have.sort()) === JSON.stringify([...want].sort());
      });
      assert.deepEqual(deleted, ['doomed']);
      assert.ok(inf.reflector.relists >= 1);
    } finally {
      await factory.stop();
      client.transport.close();
      await srv.destroy();
    }
  });
});
