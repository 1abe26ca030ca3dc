import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import type { KObject } from '../api/object.js';
import type { ChangeEvent } from '../core/dashboard/types.js';
import { DashboardWorld } from '../core/dashboard/world.js';
import { dashboardApp } from './app.js';

const page = mkdtempSync(join(tmpdir(), 'dash-page-'));
writeFileSync(join(page, 'index.html'), '<!doctype html><script src="app.js"></script>');
writeFileSync(join(page, 'app.js'), 'console.log(1)');
const empty = mkdtempSync(join(tmpdir(), 'dash-empty-'));
after(() => {
  rmSync(page, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

const silent = { info() {}, warn() {}, error() {} };

interface SetupOptions {
  readonly acceptHosts?: readonly RegExp[];
  readonly keepaliveMs?: number;
  /** Counts the reactions added to `closed`. */
  readonly onThen?: () => void;
}

function setup(base = '', pageDir = page, so: SetupOptions = {}) {
  const world = new DashboardWorld();
  world.apply('node', 'upsert', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'edge-1', labels: { 'topology.kubernetes.io/zone': 'z1' } },
  } as KObject);
  world.apply('service', 'upsert', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: { ports: [{ port: 80 }], topologyKeys: ['topology.kubernetes.io/zone'] },
  } as KObject);
  const subs = new Set<(e: ChangeEvent) => void>();
  let close!: () => void;
  const closed = new Promise<void>((r) => (close = r));
  if (so.onThen !== undefined) {
    const then = closed.then.bind(closed);
    const onThen = so.onThen;
    closed.then = ((...args: Parameters<typeof then>) => {
      onThen();
      return then(...args);
    }) as typeof closed.then;
  }
  const app = dashboardApp({
    world,
    subscribe: (fn) => {
      subs.add(fn);
      return () => subs.delete(fn);
    },
    base,
    pageDir,
    log: silent,
    closed,
    ...(so.acceptHosts === undefined ? {} : { acceptHosts: so.acceptHosts }),
    ...(so.keepaliveMs === undefined ? {} : { keepaliveMs: so.keepaliveMs }),
  });
  return { app, world, subs, close };
}

const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

describe('dashboardApp: static files', () => {
  it('serves index.html at the root and files by name, with their types', async () => {
    const { app } = setup();
    const root = await app.request('/');
    assert.equal(root.status, 200);
    assert.match(root.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await root.text(), /app\.js/);
    const js = await app.request('/app.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
  });

  it('answers 404 for a missing file and a name that climbs out, 503 without a bundle', async () => {
    const { app } = setup();
    const missing = await app.request('/nope.js');
    assert.equal(missing.status, 404);
    assert.equal((await json(missing))['reason'], 'NotFound');
    assert.equal((await app.request('/..%2Fpackage.json')).status, 404);
    assert.equal((await app.request('/.env')).status, 404);
    const unbuilt = await setup('', empty).app.request('/');
    assert.equal(unbuilt.status, 503);
    const s = await json(unbuilt);
    assert.equal(s['kind'], 'Status');
    assert.equal(s['reason'], 'ServiceUnavailable');
    assert.match(String(s['message']), /npm run build/);
  });

  it('under a mount point: redirects the bare prefix and serves only below it', async () => {
    const { app } = setup('/dashboard');
    const bare = await app.request('/dashboard');
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), '/dashboard/');
    assert.equal((await app.request('/dashboard/')).status, 200);
    assert.equal((await app.request('/dashboard/api/layout')).status, 200);
    assert.equal((await app.request('/api/layout')).status, 404);
  });
});

describe('dashboardApp: the API', () => {
  it('api/layout answers the layout for the query', async () => {
    const { app } = setup();
    const l = await json(await app.request('/api/layout?name=we&group='));
    assert.equal(l['groupKey'], '');
    assert.deepEqual(
      (l['columns'] as { key: string }[]).map((c) => c.key),
      ['default/web'],
    );
    assert.deepEqual(
      (l['rows'] as { node: string }[]).map((r) => r.node),
      ['edge-1'],
    );
  });

  it('api/cells answers the cells, stale for an old version, 400 for a bad range or version', async () => {
    const { app, world } = setup();
    const v = world.layout({}).version;
    const ok = await json(await app.request(`/api/cells?version=${v}&rows=0-5&cols=0-0`));
    assert.equal(ok['stale'], false);
    assert.deepEqual(ok['cells'], [[{ kept: 0, total: 0, state: 'refused' }]]);
    const stale = await json(await app.request(`/api/cells?version=${v + 100}&rows=0-5&cols=0-0`));
    assert.deepEqual(stale, { stale: true, version: v });
    for (const q of [
      `version=${v}&rows=5-1&cols=0-0`,
      `version=${v}&rows=x&cols=0-0`,
      `version=${v}&cols=0-0`,
      `version=abc&rows=0-1&cols=0-0`,
      `rows=0-1&cols=0-0`,
    ]) {
      const res = await app.request(`/api/cells?${q}`);
      assert.equal(res.status, 400, q);
      const s = await json(res);
      assert.equal(s['reason'], 'BadRequest', q);
      assert.equal(s['code'], 400, q);
    }
  });

  it('api/cells refuses more than 1,000 rows, 1,000 columns or 250,000 cells, before clipping', async () => {
    const { app, world } = setup();
    const v = world.layout({}).version;
    for (const [rows, cols] of [
      ['0-999999999', '0-999999999'],
      ['0-1000', '0-0'],
      ['0-0', '5-1005'],
      ['0-500', '0-499'],
    ]) {
      const res = await app.request(`/api/cells?version=${v}&rows=${rows}&cols=${cols}`);
      assert.equal(res.status, 400, `${rows} ${cols}`);
      const s = await json(res);
      assert.equal(s['kind'], 'Status');
      assert.equal(s['reason'], 'BadRequest');
      assert.match(String(s['message']), /at most 1000 rows, 1000 columns and 250000 cells per request/);
    }
    for (const [rows, cols] of [
      ['0-999', '0-0'],
      ['0-0', '1000-1999'],
      ['0-499', '0-499'],
    ]) {
      const res = await app.request(`/api/cells?version=${v}&rows=${rows}&cols=${cols}`);
      assert.equal(res.status, 200, `${rows} ${cols}`);
    }
  });

  it('api/explain answers explain for the pair; 404 for an unknown node or Service, 400 without one', async () => {
    const { app } = setup();
    const ok = await json(await app.request('/api/explain?node=edge-1&service=default/web'));
    assert.match(String(ok['text']), /^Service default\/web, seen from node edge-1/);
    assert.equal((ok['json'] as { source: string }).source, 'no EndpointSlices or Endpoints');
    const node = await app.request('/api/explain?node=ghost&service=default/web');
    assert.equal(node.status, 404);
    assert.equal((await json(node))['message'], 'nodes "ghost" not found');
    const svc = await app.request('/api/explain?node=edge-1&service=default/nope');
    assert.equal(svc.status, 404);
    assert.equal((await json(svc))['message'], 'services "default/nope" not found');
    assert.equal((await app.request('/api/explain?node=edge-1')).status, 400);
  });

  it('api/service answers the Service view; 404 for an unknown one, 400 without one', async () => {
    const { app } = setup();
    const ok = await json(await app.request('/api/service?service=default/web'));
    assert.equal(ok['key'], 'default/web');
    assert.equal((await app.request('/api/service?service=x/y')).status, 404);
    assert.equal((await app.request('/api/service')).status, 400);
  });

  it('an unknown path is a NotFound Status', async () => {
    const res = await setup().app.request('/api/nope');
    assert.equal(res.status, 404);
    assert.equal((await json(res))['kind'], 'Status');
  });
});

describe('dashboardApp: api/events', () => {
  it('streams each change as an event, and ends when the server stops', async () => {
    const { app, subs, close } = setup();
    const res = await app.request('/api/events');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    const until = async (re: RegExp) => {
      while (!re.test(text)) {
        const { value, done } = await reader.read();
        if (done) return false;
        text += dec.decode(value);
      }
      return true;
    };
    assert.ok(await until(/: connected\n\n/));
    assert.equal(subs.size, 1);
    const e: ChangeEvent = { generation: 7, nodes: ['edge-1'], services: [] };
    for (const fn of subs) fn(e);
    assert.ok(await until(/event: change\ndata: .*\n\n/));
    assert.deepEqual(JSON.parse(/data: (.*)\n/.exec(text)![1]!), e);
    close();
    assert.equal(await until(/never/), false);
    assert.equal(subs.size, 0);
  });
});

describe('dashboardApp: headers and hosts', () => {
  it('says nosniff on every answer: a file, the API, a Status, the event stream', async () => {
    const { app, close } = setup();
    for (const path of ['/', '/app.js', '/api/layout', '/api/cells', '/api/nope', '/nope.js']) {
      const res = await app.request(path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
    }
    const events = await app.request('/api/events');
    assert.equal(events.headers.get('x-content-type-options'), 'nosniff');
    close();
    await events.body!.cancel();
  });

  it('with acceptHosts: 403 Forbidden for another Host, any port of an accepted one served', async () => {
    const acceptHosts = [/^localhost$/, /^127\.0\.0\.1$/, /^\[::1\]$/];
    const { app } = setup('', page, { acceptHosts });
    for (const host of ['localhost', 'localhost:9090', '127.0.0.1:80', '[::1]:9090', '[0:0::1]']) {
      const res = await app.request('/api/layout', { headers: { Host: host } });
      assert.equal(res.status, 200, host);
    }
    for (const host of [
      'evil.example',
      'evil.example:9090',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '',
    ]) {
      const res = await app.request('/api/layout', { headers: host === '' ? {} : { Host: host } });
      assert.equal(res.status, 403, host);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const s = await json(res);
      assert.equal(s['kind'], 'Status');
      assert.equal(s['reason'], 'Forbidden');
      assert.equal(s['code'], 403);
    }
    const ev = await app.request('/api/events', { headers: { Host: 'evil.example' } });
    assert.equal(ev.status, 403);
  });

  it("without acceptHosts (svcplane up's mount): any Host", async () => {
    const { app } = setup('/dashboard');
    const res = await app.request('/dashboard/api/layout', { headers: { Host: 'svcplane.example:6443' } });
    assert.equal(res.status, 200);
  });
});

describe('dashboardApp: api/events holds little for a client that does not read', () => {
  const reader = (res: Response) => {
    const r = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    return {
      get text() {
        return text;
      },
      async until(re: RegExp) {
        while (!re.test(text)) {
          const { value, done } = await r.read();
          if (done) return false;
          text += dec.decode(value);
        }
        return true;
      },
      cancel: () => r.cancel(),
    };
  };
  const changes = (text: string) =>
    [...text.matchAll(/event: change\ndata: (.*)\n\n/g)].map((m) => JSON.parse(m[1]!) as ChangeEvent);
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it('merges the changes it has not sent into one event: every node and Service, the last generation', async () => {
    const { app, subs, close } = setup();
    const r = reader(await app.request('/api/events'));
    assert.ok(await r.until(/: connected\n\n/));
    const send = (e: ChangeEvent) => {
      for (const fn of subs) fn(e);
    };
    // The first goes to a write the client does not take; the rest wait behind it, merged.
    send({ generation: 1, nodes: ['a'], services: [] });
    await turns(5);
    send({ generation: 2, nodes: ['b'], services: ['ns/x'] });
    send({ generation: 3, nodes: ['a', 'b'], services: ['ns/y'] });
    send({ generation: 4, nodes: [], services: ['ns/x'] });
    assert.ok(await r.until(/"generation":4/));
    const got = changes(r.text);
    assert.ok(got.length <= 2, `${got.length} events`);
    assert.deepEqual(new Set(got.flatMap((e) => e.nodes)), new Set(['a', 'b']));
    assert.deepEqual(new Set(got.flatMap((e) => e.services)), new Set(['ns/x', 'ns/y']));
    const last = got.at(-1)!;
    assert.equal(last.generation, 4);
    assert.deepEqual(new Set(last.services), new Set(['ns/x', 'ns/y']));
    close();
    assert.equal(await r.until(/never/), false);
  });

  it('adds no keepalive behind a write the client has not taken', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const { app, subs, close } = setup('', page, { keepaliveMs: 1_000 });
      const r = reader(await app.request('/api/events'));
      assert.ok(await r.until(/: connected\n\n/));
      for (let i = 0; i < 50; i++) {
        mock.timers.tick(1_000);
        await turns(1);
      }
      for (const fn of subs) fn({ generation: 1, nodes: ['a'], services: [] });
      assert.ok(await r.until(/event: change/));
      // One chunk the stream buffers, one write waiting behind it; none of the other 48.
      const keepalives = r.text.match(/: keepalive\n\n/g)?.length ?? 0;
      assert.ok(keepalives <= 2, `${keepalives} keepalives queued`);
      close();
      assert.equal(await r.until(/never/), false);
    } finally {
      mock.timers.reset();
    }
  });

  it("reacts to the server's stop once, not once per stream; a stream the client ends unsubscribes", async () => {
    let thens = 0;
    const { app, subs, close } = setup('', page, { onThen: () => thens++ });
    const before = thens;
    for (let i = 0; i < 5; i++) {
      const r = reader(await app.request('/api/events'));
      assert.ok(await r.until(/: connected\n\n/));
      assert.equal(subs.size, 1);
      await r.cancel();
      await turns(5);
      assert.equal(subs.size, 0);
    }
    assert.equal(thens - before, 0);
    assert.ok(thens <= 1);
    const r = reader(await app.request('/api/events'));
    assert.ok(await r.until(/: connected\n\n/));
    close();
    assert.equal(await r.until(/never/), false);
    assert.equal(subs.size, 0);
  });
});
