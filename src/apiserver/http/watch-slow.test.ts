// A watcher that stops reading is closed with an ERROR (410 Expired) once more than the server's
// per-watcher queue waits unsent, so it relists instead of holding the server's memory; nothing is
// dropped silently before that. Over a real TLS connection, where the socket's own buffers fill first.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../../api/resources.js';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';

const SERVICES = mustFindResource('', 'services');

/** A GET's body, with the admin token (over `agent`'s connections when given). */
function get(api: InProcessApiServer, path: string, agent?: https.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${api.server.url}${path}`, {
      ...(agent === undefined
        ? { rejectUnauthorized: false } // the test server's throwaway certificate, on loopback
        : { agent }),
      headers: { Authorization: `Bearer ${api.token}` },
    });
    req.on('response', (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (body += d));
      r.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a watcher that stops reading', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer({ maxWatchQueueBytes: 256 * 1024 });
  });
  after(() => api?.stop());

  it('gets every event in order, then ERROR 410, and its stream ends', { timeout: 60_000 }, async () => {
    let res!: IncomingMessage;
    await new Promise<void>((resolve, reject) => {
      const req = https.request(`${api.server.url}/api/v1/namespaces/default/services?watch=true`, {
        rejectUnauthorized: false, // the test server's throwaway certificate, on loopback
        headers: { Authorization: `Bearer ${api.token}` },
      });
      req.on('response', (r) => {
        res = r;
        r.pause(); // read nothing until the server has given up on us
        resolve();
      });
      req.on('error', reject);
      req.end();
    });
    const watching = await get(api, '/metrics');
    assert.match(
      watching,
      /^apiserver_registered_watchers\{.*kind="Service".*\} 1$/m,
      'the watch is registered',
    );
    // ~30 MB of events: more than loopback's socket buffers and the 256 KiB queue together.
    const big = 'q'.repeat(150_000);
    for (let i = 0; i < 200; i++) {
      await api.client.create(SERVICES, 'default', {
        metadata: { name: `slow-${i}`, annotations: { big } },
        spec: { ports: [{ port: 80 }] },
      });
    }
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.resume();
    await new Promise<void>((resolve) => res.on('end', () => resolve()));
    const events = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Record<string, unknown> });
    const last = events.at(-1)!;
    assert.equal(last.type, 'ERROR');
    assert.equal(last.object['code'], 410);
    assert.match(String(last.object['message']), /fell too far behind/);
    // (the default namespace's `kubernetes` Service comes first)
    const added = events
      .slice(0, -1)
      .filter(
        (e) =>
          e.object['metadata'] !== undefined &&
          (e.object['metadata'] as { name: string }).name !== 'kubernetes',
      );
    assert.ok(added.length > 0 && added.length < 200, `${added.length} events before the error`);
    added.forEach((e, i) => {
      assert.equal(e.type, 'ADDED');
      assert.equal((e.object['metadata'] as { name: string }).name, `slow-${i}`);
    });
    // The server let go of it: no watcher registered (the gauge is labelled by kind, as kube's), and the
    // close counted as a slow watcher's (by resource).
    const sum = (name: string, label: string, text: string): number =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && l.includes(label))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    const registered = (text: string): number => sum('apiserver_registered_watchers', 'kind="Service"', text);
    let metrics = '';
    for (let i = 0; i < 50; i++) {
      metrics = await get(api, '/metrics');
      if (registered(metrics) === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.match(metrics, /^apiserver_registered_watchers\{.*kind="Service".*\} 0$/m);
    assert.equal(registered(metrics), 0, 'the slow watcher is unregistered');
    assert.ok(
      sum('apiserver_terminated_watchers_total', 'resource="services"', metrics) >= 1,
      'its close is counted',
    );
  });

  it(
    'a HEAD watch sends no body bytes: the next request on the connection reads a clean response',
    { timeout: 30_000 },
    async () => {
      await api.client.create(SERVICES, 'default', {
        metadata: { name: 'head-1' },
        spec: { ports: [{ port: 80 }] },
      });
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
      const headers = { Authorization: `Bearer ${api.token}` };
      try {
        const head = await new Promise<number>((resolve, reject) => {
          const req = https.request(
            `${api.server.url}/api/v1/namespaces/default/services?watch=true&timeoutSeconds=1`,
            { method: 'HEAD', agent, headers },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end();
        });
        assert.equal(head, 200);
        const version = await get(api, '/version', agent);
        assert.equal((JSON.parse(version) as { major: string }).major, '1');
      } finally {
        agent.destroy();
      }
    },
  );
});

describe('a watch whose replay is larger than the queue limit', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer({ maxWatchQueueBytes: 64 * 1024 });
    const big = 'r'.repeat(20_000);
    for (let i = 0; i < 20; i++) {
      await api.client.create(SERVICES, 'default', {
        metadata: { name: `replay-${i}`, annotations: { big } },
        spec: { ports: [{ port: 80 }] },
      });
    }
  });
  after(() => api?.stop());

  it('sends the whole initial state to a client that reads, then the initial-events-end bookmark, and leaves no watcher behind', async () => {
    const before = api.server.cache.watcherCount(SERVICES);
    const text = await get(
      api,
      '/api/v1/namespaces/default/services?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1',
    );
    const events = text
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { type: string; object: { metadata?: { annotations?: Record<string, string> } } },
      );
    assert.equal(events.filter((e) => e.type === 'ADDED').length, 21); // 20 + the kubernetes Service
    assert.equal(
      events.some((e) => e.type === 'ERROR'),
      false,
    );
    assert.equal(
      events.find((e) => e.type === 'BOOKMARK')?.object.metadata?.annotations?.['k8s.io/initial-events-end'],
      'true',
    );
    // timeoutSeconds ended it: the cache forgot the watcher
    for (let i = 0; i < 50 && api.server.cache.watcherCount(SERVICES) !== before; i++)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(api.server.cache.watcherCount(SERVICES), before);
  });
});
