import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
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

function setup(base = '', pageDir = page) {
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
