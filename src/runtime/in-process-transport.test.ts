// The in-process transport: first against small request listeners (the HTTP it carries, streaming,
// abort on both sides, backpressure, close), then against the real API server's handler on the memory
// store (test/support/in-process-apiserver.ts): CRUD, pagination, watch from a resourceVersion, 410,
// 401, and an Informer that syncs over it.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { Client, isApiError, type WatchEvent } from './client.js';
import { inProcessTransport } from './in-process-transport.js';
import { Informer } from './informer.js';

const NODES = mustFindResource('', 'nodes');
const SERVICES = mustFindResource('', 'services');
const LEASES = mustFindResource('coordination.k8s.io', 'leases');

async function readAll(body: NodeJS.ReadableStream): Promise<string> {
  let s = '';
  for await (const c of body) s += String(c);
  return s;
}

/** Resolves when `cond` holds, checking on every turn of the event loop; fails after `ms`. */
async function eventually(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const node = (name: string): object => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const lease = (name: string): object => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name },
  spec: { holderIdentity: 'test' },
});

describe('inProcessTransport against a request listener', () => {
  it('carries method, path, query, headers and body, and the status back', async () => {
    let seen:
      | {
          method: string | undefined;
          url: string | undefined;
          headers: IncomingMessage['headers'];
          body: string;
        }
      | undefined;
    const t = inProcessTransport(
      (req, res) => {
        void readAll(req).then((body) => {
          seen = { method: req.method, url: req.url, headers: req.headers, body };
          assert.equal(req.socket.remoteAddress, '127.0.0.1');
          res.writeHead(201, { 'Content-Type': 'application/json' });
          res.end('{"ok":true}');
        });
      },
      { token: 's3cret' },
    );
    const r = await t.send({
      method: 'PATCH',
      path: '/api/v1/namespaces/x/pods/p/status?fieldManager=me',
      body: '{"a":1}',
      contentType: 'application/merge-patch+json',
    });
    assert.equal(r.status, 201);
    assert.equal(await readAll(r.body), '{"ok":true}');
    assert.equal(seen?.method, 'PATCH');
    assert.equal(seen?.url, '/api/v1/namespaces/x/pods/p/status?fieldManager=me');
    assert.equal(seen?.headers.authorization, 'Bearer s3cret');
    assert.equal(seen?.headers['content-type'], 'application/merge-patch+json');
    assert.equal(seen?.headers.accept, 'application/json');
    assert.equal(seen?.body, '{"a":1}');
    t.close();
  });

  it('sends no Authorization header without a token', async () => {
    const t = inProcessTransport((req, res) => res.end(String(req.headers.authorization)));
    const r = await t.send({ method: 'GET', path: '/' });
    assert.equal(await readAll(r.body), 'undefined');
    t.close();
  });

  it('streams a response as it is written, and an abort ends it on both sides', async () => {
    let serverClosed = false;
    let push: ((line: string) => void) | undefined;
    const t = inProcessTransport((_req, res: ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      push = (line) => res.write(`${line}\n`);
      res.once('close', () => (serverClosed = true));
    });
    const ac = new AbortController();
    const r = await t.send({ method: 'GET', path: '/watch', signal: ac.signal });
    assert.equal(r.status, 200);
    const got: string[] = [];
    r.body.on('data', (c: Buffer) => got.push(...String(c).trim().split('\n')));
    push!('one');
    await eventually('the first line', () => got.length === 1);
    push!('two');
    await eventually('the second line', () => got.length === 2);
    assert.deepEqual(got, ['one', 'two']);
    const ended = new Promise<void>((resolve) => r.body.once('close', () => resolve()));
    r.body.on('error', () => {}); // the aborted response errors; the test only wants it closed
    ac.abort();
    await ended;
    await eventually('the listener to see the client go', () => serverClosed);
  });

  it('rejects a request whose signal is already aborted, without calling the listener', async () => {
    let calls = 0;
    const t = inProcessTransport((_req, res) => {
      calls++;
      res.end();
    });
    await assert.rejects(
      t.send({ method: 'GET', path: '/', signal: AbortSignal.abort() }),
      (err: Error) => err.name === 'AbortError',
    );
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 0);
    t.close();
  });

  it('holds a writer back while the reader does not read (backpressure)', async () => {
    let queued = -1;
    let writes = 0;
    const t = inProcessTransport((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      while (res.write(chunk)) {
        writes++;
        if (writes > 1000) break; // 64 MB without a full buffer: no backpressure at all
      }
      queued = res.writableLength;
      res.once('close', () => {});
    });
    const ac = new AbortController();
    const r = await t.send({ method: 'GET', path: '/', signal: ac.signal });
    r.body.pause();
    await eventually('the listener to fill its buffer', () => queued >= 0);
    assert.ok(writes < 1000, `writes stopped at ${writes} chunks`);
    assert.ok(queued > 0);
    r.body.on('error', () => {});
    ac.abort();
  });

  it('close() ends open responses and refuses new requests', async () => {
    let serverClosed = false;
    const t = inProcessTransport((_req, res) => {
      res.writeHead(200);
      res.flushHeaders();
      res.once('close', () => (serverClosed = true));
    });
    const r = await t.send({ method: 'GET', path: '/' });
    const ended = new Promise<void>((resolve) => r.body.once('close', () => resolve()));
    r.body.on('error', () => {});
    t.close();
    await ended;
    await eventually('the listener to see the connection go', () => serverClosed);
    await assert.rejects(t.send({ method: 'GET', path: '/' }), /closed/);
  });
});

describe('inProcessTransport against the API server', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer({ token: 'admin-token', watchCacheHistory: 20 });
  });
  after(() => api.stop());

  it('creates, gets, updates and deletes', async () => {
    const c = api.client;
    const created = await c.create(NODES, '', node('n-crud'));
    assert.equal(created.metadata.name, 'n-crud');
    assert.ok(created.metadata.resourceVersion);
    const got = await c.get(NODES, '', 'n-crud');
    assert.equal(got.metadata.uid, created.metadata.uid);
    const patched = await c.patch(NODES, '', 'n-crud', 'merge', { metadata: { labels: { a: 'b' } } });
    assert.deepEqual(patched.metadata.labels, { a: 'b' });
    await assert.rejects(
      c.update(NODES, { ...got, metadata: { ...got.metadata, labels: { stale: 'x' } } }),
      (err) => isApiError(err, 409),
    );
    await c.delete(NODES, '', 'n-crud');
    await assert.rejects(
      c.get(NODES, '', 'n-crud'),
      (err) => isApiError(err, 404) && err.reason === 'NotFound',
    );
  });

  it('lists in pages with limit and continue', async () => {
    const c = api.client;
    for (let i = 0; i < 5; i++) await c.create(LEASES, 'default', lease(`page-${i}`));
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await c.list(LEASES, {
        namespace: 'default',
        limit: 2,
        ...(cont === undefined ? {} : { continue: cont }),
      });
      pages++;
      assert.ok(page.items.length <= 2);
      names.push(...page.items.map((o) => o.metadata.name ?? ''));
      cont = page.metadata.continue || undefined;
    } while (cont !== undefined);
    assert.equal(pages, 3);
    assert.deepEqual(names, ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
  });

  it('watches from a resourceVersion: only what came after it, live, until aborted', async () => {
    const c = api.client;
    const first = await c.create(SERVICES, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'w-0' },
      spec: { ports: [{ port: 80 }] },
    });
    await c.create(NODES, '', node('w-1'));
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    const done = (async () => {
      for await (const ev of c.watch(
        NODES,
        { resourceVersion: first.metadata.resourceVersion! },
        ac.signal,
      )) {
        events.push(ev);
      }
    })();
    await eventually('the event from history', () => events.length === 1);
    await c.create(NODES, '', node('w-2'));
    await eventually('the live event', () => events.length === 2);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED w-1', 'ADDED w-2'],
    );
    assert.equal(api.server.cache.watcherCount(NODES), 1);
    ac.abort();
    await done; // the generator returns quietly on abort
    await eventually('the server to drop the watcher', () => api.server.cache.watcherCount(NODES) === 0);
  });

  it('an old resourceVersion gets a 410 Expired ERROR event', async () => {
    const c = api.client;
    const old = await c.create(NODES, '', node('gone-0'));
    for (let i = 1; i <= 25; i++) await c.create(NODES, '', node(`gone-${i}`));
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    for await (const ev of c.watch(NODES, { resourceVersion: old.metadata.resourceVersion! }, ac.signal)) {
      events.push(ev);
    }
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'ERROR');
    const status = events[0]!.object as unknown as { code: number; reason: string };
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
  });

  it('refuses a wrong token and a missing one with 401', async () => {
    for (const token of ['wrong-token', null]) {
      const c = new Client(api.transport(token));
      await assert.rejects(c.list(NODES), (err) => isApiError(err, 401) && err.reason === 'Unauthorized');
    }
  });

  it('an Informer lists, watches and follows changes over it', async () => {
    const c = api.client;
    await c.create(LEASES, 'kube-node-lease', lease('inf-a'));
    const inf = new Informer(c, LEASES, {
      namespace: 'kube-node-lease',
      reflector: { pageSize: 1, watchTimeoutSeconds: () => 60 },
    });
    const log: string[] = [];
    inf.addHandlers({
      onAdd: (o: KObject) => log.push(`add ${o.metadata.name}`),
      onUpdate: (_old: KObject, o: KObject) => log.push(`update ${o.metadata.name}`),
      onDelete: (o: KObject) => log.push(`delete ${o.metadata.name}`),
    });
    inf.start();
    try {
      await inf.waitForSync();
      assert.deepEqual(inf.indexer.keys(), ['kube-node-lease/inf-a']);
      await c.create(LEASES, 'kube-node-lease', lease('inf-b'));
      await c.patch(LEASES, 'kube-node-lease', 'inf-a', 'merge', { spec: { holderIdentity: 'other' } });
      await c.delete(LEASES, 'kube-node-lease', 'inf-b');
      await eventually('the informer to follow', () => log.length === 4);
      assert.deepEqual(log, ['add inf-a', 'add inf-b', 'update inf-a', 'delete inf-b']);
      const a = inf.indexer.get('kube-node-lease/inf-a') as { spec?: { holderIdentity?: string } };
      assert.equal(a.spec?.holderIdentity, 'other');
      assert.equal(inf.reflector.relists, 1);
    } finally {
      await inf.stop();
    }
  });
});
