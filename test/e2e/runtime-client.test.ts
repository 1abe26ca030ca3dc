// The runtime's REST client over a kubeconfig transport, against a real `svcplane up`: TLS and the
// token come from the kubeconfig; CRUD, selectors, pagination, watch and errors as ApiError.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../../src/api/resources.js';
import { Client, isApiError, type WatchEvent } from '../../src/runtime/client.js';
import { kubeconfigTransport } from '../../src/runtime/kubeconfig.js';
import { startUp, type TestServer } from './testing/server.js';

const SERVICES = mustFindResource('', 'services');
const svc = (name: string, labels: Record<string, string> = {}): object => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, labels },
  spec: { ports: [{ port: 80 }] },
});

describe('runtime client over a kubeconfig', () => {
  let srv: TestServer;
  let client: Client;
  before(async () => {
    srv = await startUp();
    client = new Client(kubeconfigTransport({ path: srv.kubeconfig }));
  });
  after(async () => {
    client?.transport.close();
    await srv?.destroy();
  });

  it('creates, reads, updates with compare-and-swap, patches and deletes', async () => {
    const created = await client.create(SERVICES, 'default', svc('a', { app: 'x' }));
    assert.match((created as unknown as { spec: { clusterIP: string } }).spec.clusterIP, /^10\./);
    const got = await client.get(SERVICES, 'default', 'a');
    assert.equal(got.metadata.uid, created.metadata.uid);
    const updated = await client.update(SERVICES, {
      ...got,
      metadata: { ...got.metadata, labels: { app: 'y' } },
    });
    assert.notEqual(updated.metadata.resourceVersion, got.metadata.resourceVersion);
    await assert.rejects(
      client.update(SERVICES, got),
      (e: unknown) => isApiError(e, 409) && e.reason === 'Conflict',
    );
    const patched = await client.patch(SERVICES, 'default', 'a', 'merge', {
      metadata: { labels: { p: '1' } },
    });
    assert.equal(patched.metadata.labels?.['p'], '1');
    await client.delete(SERVICES, 'default', 'a');
    await assert.rejects(
      client.get(SERVICES, 'default', 'a'),
      (e: unknown) => isApiError(e, 404) && e.reason === 'NotFound' && e.message === 'services "a" not found',
    );
  });

  it('lists with a label selector and pages with limit/continue at one resourceVersion', async () => {
    for (let i = 0; i < 5; i++) await client.create(SERVICES, 'default', svc(`p${i}`, { page: 'yes' }));
    const first = await client.list(SERVICES, { namespace: 'default', labelSelector: 'page=yes', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.metadata.continue);
    const names = first.items.map((o) => o.metadata.name ?? '');
    let cont: string | undefined = first.metadata.continue;
    while (cont) {
      const page = await client.list(SERVICES, {
        namespace: 'default',
        labelSelector: 'page=yes',
        limit: 2,
        continue: cont,
      });
      names.push(...page.items.map((o) => o.metadata.name ?? ''));
      assert.equal(page.metadata.resourceVersion, first.metadata.resourceVersion);
      cont = page.metadata.continue;
    }
    assert.deepEqual(names, ['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('watches from a resourceVersion and sees the changes after it', async () => {
    const list = await client.list(SERVICES, { namespace: 'default' });
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const ev of client.watch(
        SERVICES,
        { namespace: 'default', resourceVersion: list.metadata.resourceVersion!, allowWatchBookmarks: true },
        ac.signal,
      )) {
        events.push(ev);
        if (ev.type === 'DELETED') ac.abort();
      }
    })();
    await client.create(SERVICES, 'default', svc('w'));
    await client.delete(SERVICES, 'default', 'w');
    await done;
    assert.deepEqual(
      events.filter((e) => e.type !== 'BOOKMARK').map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'w'],
        ['DELETED', 'w'],
      ],
    );
  });

  it('a watch ends when the server ends it (timeoutSeconds); a bad selector is a 400 ApiError', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    for await (const ev of client.watch(SERVICES, { timeoutSeconds: 1, resourceVersion: '0' }, ac.signal)) {
      assert.ok(['ADDED', 'BOOKMARK'].includes(ev.type));
    }
    assert.ok(Date.now() - t0 < 5000);
    await assert.rejects(
      client.list(SERVICES, { fieldSelector: 'spec.foo=1' }),
      (e: unknown) =>
        isApiError(e, 400) &&
        e.reason === 'BadRequest' &&
        e.message === 'field label not supported: spec.foo',
    );
    await assert.rejects(
      (async () => {
        for await (const _ of client.watch(SERVICES, { fieldSelector: 'spec.foo=1' }, ac.signal)) void _;
      })(),
      (e: unknown) => isApiError(e, 400),
    );
  });
});
