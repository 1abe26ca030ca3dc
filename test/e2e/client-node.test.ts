// @kubernetes/client-node 1.4.0 against a real `svcplane up`: typed calls and errors, and an informer
// that follows changes made by another client, survives a server restart on the same data dir
// (including changes written to the store while the server was down: 410, relist) and ends equal
// to a fresh LIST.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig, makeInformer, type V1Service } from '@kubernetes/client-node';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { call, startUp, type TestServer } from './testing/server.js';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(
  what: string,
  pred: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

type Srv = Pick<TestServer, 'url' | 'token' | 'ca'>;
interface Meta {
  metadata: { name: string; resourceVersion: string };
}

async function rawList(srv: Srv, ns: string): Promise<Map<string, string>> {
  const r = await call(srv, 'GET', `/api/v1/namespaces/${ns}/services`);
  assert.equal(r.status, 200, r.text);
  return new Map(r.json<{ items: Meta[] }>().items.map((o) => [o.metadata.name, o.metadata.resourceVersion]));
}

const svc = (name: string, labels: Record<string, string> = {}): V1Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, labels },
  spec: { ports: [{ port: 80 }] },
});

describe('@kubernetes/client-node 1.4.0', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-client-node-'));
  let srv: TestServer | undefined;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const c of cleanups) await c();
    await srv?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('typed calls, a 404 ApiException, and an informer that survives a restart', async (t) => {
    const port = await freePort();
    const args = ['--secure-port', String(port)];
    srv = await startUp({ dataDir, args });
    assert.equal(srv.port, port);
    const kc = new KubeConfig();
    kc.loadFromFile(srv.kubeconfig);
    const api = kc.makeApiClient(CoreV1Api);
    const ns = 'cn';
    await api.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });

    // Typed create + read; a missing object is an ApiException with code 404 and a Status body.
    const created = await api.createNamespacedService({
      namespace: ns,
      body: svc('typed', { via: 'typed' }),
    });
    assert.equal(created.metadata?.name, 'typed');
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    const read = await api.readNamespacedService({ name: 'typed', namespace: ns });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
    assert.equal(read.spec?.ports?.[0]?.port, 80);
    await assert.rejects(api.readNamespacedService({ name: 'nope', namespace: ns }), (err: unknown) => {
      assert.ok(err instanceof ApiException, String(err));
      assert.equal(err.code, 404);
      const body = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as {
        kind: string;
        reason: string;
      };
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'NotFound');
      return true;
    });

    // The informer, as an application runs it: restart after an error (1.4.0 stops on any error).
    let lists = 0;
    const informer = makeInformer(kc, `/api/v1/namespaces/${ns}/services`, () => {
      lists++;
      return api.listNamespacedService({ namespace: ns });
    });
    const seen: string[] = [];
    let errors = 0;
    let stopped = false;
    for (const verb of ['add', 'update', 'delete'] as const) {
      informer.on(verb, (o: V1Service) =>
        seen.push(`${verb} ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
      );
    }
    informer.on('error', () => {
      errors++;
      if (!stopped) setTimeout(() => void (stopped ? undefined : informer.start()), 250);
    });
    cleanups.push(async () => {
      stopped = true;
      await informer.stop();
    });
    await informer.start();
    assert.deepEqual(seen, [`add typed@${created.metadata?.resourceVersion}`]);

    const expectSeen = async (entry: string): Promise<void> =>
      waitFor(`informer event "${entry}" (seen: ${seen.join(', ')})`, () => seen.includes(entry));
    const cached = (): Map<string, string> =>
      new Map(informer.list(ns).map((o) => [o.metadata!.name!, o.metadata!.resourceVersion!]));

    // Changes by another client.
    const c1 = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, { body: svc('i1') });
    assert.equal(c1.status, 201, c1.text);
    await expectSeen(`add i1@${c1.json<Meta>().metadata.resourceVersion}`);
    const p1 = await call(srv, 'PATCH', `/api/v1/namespaces/${ns}/services/i1`, {
      rawBody: JSON.stringify({ metadata: { labels: { v: '2' } } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(p1.status, 200, p1.text);
    await expectSeen(`update i1@${p1.json<Meta>().metadata.resourceVersion}`);
    assert.equal(informer.get('i1', ns)?.metadata?.labels?.v, '2');
    const d1 = await call(srv, 'DELETE', `/api/v1/namespaces/${ns}/services/i1`);
    assert.equal(d1.status, 200, d1.text);
    await waitFor('delete i1', () => seen.some((s) => s.startsWith('delete i1@')));
    assert.equal(informer.get('i1', ns), undefined);
    for (const n of ['i2', 'i3', 'i4']) {
      const r = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, { body: svc(n) });
      assert.equal(r.status, 201, r.text);
    }
    await waitFor('the cache to equal a LIST before the restart', async () => {
      const want = await rawList(srv!, ns);
      return JSON.stringify([...cached()].sort()) === JSON.stringify([...want].sort());
    });

    // Stop the server. While it is down, another writer changes the store directly (as another
    // API server on shared storage would): i2 relabelled, i3 deleted.
    assert.equal(await srv.stop(), 0, srv.stderr());
    const store = SqliteStore.open({ dataDir });
    try {
      const key = (n: string): string => `/services/specs/${ns}/${n}`;
      const kv = await store.get(key('i2'));
      assert.ok(kv !== undefined, 'i2 is in the store');
      const obj = JSON.parse(Buffer.from(kv.value).toString('utf8')) as {
        metadata: { labels?: Record<string, string> };
      };
      obj.metadata.labels = { ...obj.metadata.labels, offline: 'yes' };
      await store.update(key('i2'), Buffer.from(JSON.stringify(obj)), kv.modRevision);
      await store.delete(key('i3'));
    } finally {
      await store.close();
    }
    await sleep(500); // the informer retries against a closed port meanwhile

    srv = await startUp({ dataDir, args });
    assert.equal(srv.port, port);
    // Changes after the restart, by another client.
    const c5 = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, { body: svc('i5') });
    assert.equal(c5.status, 201, c5.text);
    const p4 = await call(srv, 'PATCH', `/api/v1/namespaces/${ns}/services/i4`, {
      rawBody: JSON.stringify({ metadata: { labels: { after: 'restart' } } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(p4.status, 200, p4.text);

    let want = new Map<string, string>();
    await waitFor(
      'the informer cache to equal a fresh LIST after the restart',
      async () => {
        want = await rawList(srv!, ns);
        return JSON.stringify([...cached()].sort()) === JSON.stringify([...want].sort());
      },
      15_000,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}\ncache: ${JSON.stringify([...cached()])}\nlist:  ${JSON.stringify([...want])}\nevents: ${seen.join(', ')}`,
      );
    });
    assert.deepEqual([...want.keys()].sort(), ['i2', 'i4', 'i5', 'typed']);
    assert.equal(informer.get('i2', ns)?.metadata?.labels?.offline, 'yes');
    assert.equal(informer.get('i4', ns)?.metadata?.labels?.after, 'restart');
    assert.ok(
      seen.some((s) => s.startsWith('delete i3@')),
      `i3's deletion was noticed: ${seen.join(', ')}`,
    );

    // Still live after the restart.
    const d2 = await call(srv, 'DELETE', `/api/v1/namespaces/${ns}/services/typed`);
    assert.equal(d2.status, 200, d2.text);
    await waitFor('delete typed', () => informer.get('typed', ns) === undefined);
    t.diagnostic(`informer errors (reconnect attempts while down): ${errors}; lists: ${lists}`);
    // Its RV predates the restarted server's watch history: 410, then a relist.
    assert.ok(lists >= 2, `relisted after the restart (lists: ${lists})`);
    assert.ok(errors > 0, 'the informer noticed the server going away');
  });
});
