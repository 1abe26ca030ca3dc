// List/watch correctness against a real `svcplane up` over raw HTTPS: resume without gaps or
// duplicates, 410 for expired resource versions, a randomized many-watcher consistency check,
// bookmarks, watch-list (sendInitialEvents), timeouts, selector transitions, Table events, header
// flushing and a clean end of open streams on SIGTERM.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startUp, type TestServer } from './testing/server.js';

const BIN = path.resolve('bin/svcplane.js');

// ------------------------------------------------------------------------------ NDJSON stream reader

interface WatchEvent {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    code?: number;
    reason?: string;
    metadata?: {
      name?: string;
      namespace?: string;
      resourceVersion?: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    rows?: { cells: unknown[]; object?: { metadata?: { name?: string } } }[];
    [k: string]: unknown;
  };
}

/** How a stream finished: `end` = the chunked body was terminated properly; `error` = reset/aborted. */
type Ending = { how: 'end' } | { how: 'error'; error: string } | { how: 'closed-by-us' };

class WatchStream {
  readonly events: WatchEvent[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** Milliseconds from the request to the response headers. */
  headersAfterMs = -1;
  readonly response: Promise<void>;
  readonly ended: Promise<Ending>;
  private readonly req: ClientRequest;
  private pending = '';
  private cursor = 0;
  private waiter: (() => void) | undefined;
  private ending: Ending | undefined;
  private closedByUs = false;
  /** Called synchronously for each event as it is parsed. */
  onEvent: ((e: WatchEvent) => void) | undefined;
  body = '';

  constructor(srv: Pick<TestServer, 'url' | 'token' | 'ca'>, pathAndQuery: string, accept?: string) {
    const u = new URL(pathAndQuery, srv.url);
    const t0 = Date.now();
    let resolveResponse!: () => void;
    let rejectResponse!: (e: Error) => void;
    this.response = new Promise((res, rej) => ((resolveResponse = res), (rejectResponse = rej)));
    this.response.catch(() => {}); // a stream we close before its headers rejects; nobody may be waiting
    let resolveEnded!: (e: Ending) => void;
    this.ended = new Promise((res) => (resolveEnded = res));
    const finish = (e: Ending): void => {
      if (this.ending !== undefined) return;
      this.ending = this.closedByUs ? { how: 'closed-by-us' } : e;
      resolveEnded(this.ending);
      this.wake();
    };
    this.req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'GET',
        agent: new Agent({ ca: srv.ca, keepAlive: false }),
        headers: {
          Authorization: `Bearer ${srv.token}`,
          ...(accept === undefined ? {} : { Accept: accept }),
        },
      },
      (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        this.headersAfterMs = Date.now() - t0;
        resolveResponse();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (this.closedByUs) return;
          if (this.status !== 200) {
            this.body += chunk;
            return;
          }
          this.pending += chunk;
          let nl: number;
          while ((nl = this.pending.indexOf('\n')) >= 0) {
            const line = this.pending.slice(0, nl);
            this.pending = this.pending.slice(nl + 1);
            if (line.trim() === '') continue;
            const ev = JSON.parse(line) as WatchEvent;
            this.events.push(ev);
            this.onEvent?.(ev);
          }
          this.wake();
        });
        res.on('end', () => finish(res.complete ? { how: 'end' } : { how: 'error', error: 'incomplete' }));
        res.on('error', (err) => finish({ how: 'error', error: String(err) }));
        res.on('close', () =>
          finish(res.complete ? { how: 'end' } : { how: 'error', error: 'closed early' }),
        );
      },
    );
    this.req.on('error', (err) => {
      rejectResponse(err);
      finish({ how: 'error', error: String(err) });
    });
    this.req.end();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** The next event not yet returned by next(); undefined when the stream ended first. */
  async next(timeoutMs = 5_000): Promise<WatchEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.cursor >= this.events.length) {
      if (this.ending !== undefined) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms (have ${this.events.length})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.events[this.cursor++];
  }

  /** The next `n` events. */
  async take(n: number, timeoutMs = 5_000): Promise<WatchEvent[]> {
    const out: WatchEvent[] = [];
    for (let i = 0; i < n; i++) {
      const e = await this.next(timeoutMs);
      if (e === undefined) throw new Error(`stream ended after ${out.length} of ${n} events`);
      out.push(e);
    }
    return out;
  }

  /** Asserts no further event arrives within `ms`. */
  async expectQuiet(ms: number): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal(
      this.events.length,
      this.cursor,
      `unexpected events: ${JSON.stringify(this.events.slice(this.cursor).map(brief))}`,
    );
  }

  close(): void {
    this.closedByUs = true;
    this.req.destroy();
  }

  get isOpen(): boolean {
    return this.ending === undefined && !this.closedByUs;
  }
}

const brief = (e: WatchEvent): string =>
  `${e.type} ${e.object.metadata?.namespace ?? ''}/${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`;

const rvOf = (o: { metadata?: { resourceVersion?: string } }): number => Number(o.metadata?.resourceVersion);

// --------------------------------------------------------------------------------------- helpers

const svcBody = (name: string, labels: Record<string, string> = {}): unknown => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, labels },
  spec: { ports: [{ port: 80 }] },
});

type Srv = Pick<TestServer, 'url' | 'token' | 'ca'>;

async function ensureNamespace(srv: Srv, ns: string): Promise<void> {
  const r = await call(srv, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
  });
  assert.ok(r.status === 201 || r.status === 409, `create namespace ${ns}: ${r.status} ${r.text}`);
}

interface Meta {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
}

async function createSvc(
  srv: Srv,
  ns: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const r = await call(srv, 'POST', `/api/v1/namespaces/${ns}/services`, { body: svcBody(name, labels) });
  assert.equal(r.status, 201, `create ${ns}/${name}: ${r.text}`);
  return rvOf(r.json<Meta>());
}

async function labelSvc(
  srv: Srv,
  ns: string,
  name: string,
  labels: Record<string, string | null>,
): Promise<number> {
  const r = await call(srv, 'PATCH', `/api/v1/namespaces/${ns}/services/${name}`, {
    rawBody: JSON.stringify({ metadata: { labels } }),
    contentType: 'application/merge-patch+json',
  });
  assert.equal(r.status, 200, `patch ${ns}/${name}: ${r.text}`);
  return rvOf(r.json<Meta>());
}

async function deleteSvc(srv: Srv, ns: string, name: string): Promise<void> {
  const r = await call(srv, 'DELETE', `/api/v1/namespaces/${ns}/services/${name}`);
  assert.equal(r.status, 200, `delete ${ns}/${name}: ${r.text}`);
}

async function list(
  srv: Srv,
  ns: string | undefined,
  query = '',
): Promise<{ rv: number; items: Map<string, number> }> {
  const base = ns === undefined ? '/api/v1/services' : `/api/v1/namespaces/${ns}/services`;
  const r = await call(srv, 'GET', `${base}${query === '' ? '' : `?${query}`}`);
  assert.equal(r.status, 200, r.text);
  const body = r.json<{ metadata: { resourceVersion: string }; items: Meta[] }>();
  const items = new Map<string, number>();
  for (const o of body.items) items.set(`${o.metadata.namespace}/${o.metadata.name}`, rvOf(o));
  return { rv: Number(body.metadata.resourceVersion), items };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ----------------------------------------------------------------------------------------- tests

describe('watch (shared server)', () => {
  let srv: TestServer;
  const open: WatchStream[] = [];
  const watch = (p: string, accept?: string): WatchStream => {
    const w = new WatchStream(srv, p, accept);
    open.push(w);
    return w;
  };

  before(async () => {
    srv = await startUp({ env: { SVCPLANE_BOOKMARK_INTERVAL_MS: '250' } });
  });
  after(async () => {
    for (const w of open) w.close();
    await srv?.destroy();
  });

  it('a watch from R gets exactly the events after R, in order; a resumed watch gets exactly what it missed', async () => {
    const ns = 'w-exact';
    await ensureNamespace(srv, ns);
    const expected: { type: string; name: string; rv?: number }[] = [];
    const r0 = await createSvc(srv, ns, 'a');
    const r1 = await createSvc(srv, ns, 'b', { k: '1' });
    expected.push({ type: 'MODIFIED', name: 'a', rv: await labelSvc(srv, ns, 'a', { k: '2' }) });
    await deleteSvc(srv, ns, 'b');
    expected.push({ type: 'DELETED', name: 'b' });
    expected.push({ type: 'ADDED', name: 'c', rv: await createSvc(srv, ns, 'c') });
    assert.ok(r1 > r0);

    // From r1 (history replay), then live events on the same stream.
    const w = watch(`/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${r1}`);
    await w.response;
    assert.equal(w.status, 200);
    const replay = await w.take(3);
    expected.push({ type: 'MODIFIED', name: 'c', rv: await labelSvc(srv, ns, 'c', { live: 'y' }) });
    await deleteSvc(srv, ns, 'a');
    expected.push({ type: 'DELETED', name: 'a' });
    const live = await w.take(2);
    const got = [...replay, ...live];
    assert.deepEqual(
      got.map((e) => `${e.type} ${e.object.metadata?.name}`),
      expected.map((e) => `${e.type} ${e.name}`),
    );
    for (let i = 0; i < got.length; i++) {
      const e = got[i]!;
      assert.equal(e.object.kind, 'Service');
      assert.equal(e.object.apiVersion, 'v1');
      if (expected[i]!.rv !== undefined) assert.equal(rvOf(e.object), expected[i]!.rv, brief(e));
      if (i > 0) assert.ok(rvOf(e.object) > rvOf(got[i - 1]!.object), 'resourceVersions increase');
    }
    assert.ok(rvOf(got[0]!.object) > r1, 'nothing at or before R');
    await w.expectQuiet(200);
    w.close();

    // Same history from r0 includes b's creation first.
    const w0 = watch(`/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${r0}`);
    const first = await w0.take(6);
    assert.deepEqual(
      first.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED b', 'MODIFIED a', 'DELETED b', 'ADDED c', 'MODIFIED c', 'DELETED a'],
    );
    await w0.expectQuiet(100);
    w0.close();

    // Disconnect after two events, write while away, resume from the last RV seen.
    const start = await createSvc(srv, ns, 'd');
    const w1 = watch(`/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${start}`);
    await w1.response;
    const m1 = await labelSvc(srv, ns, 'd', { n: '1' });
    const m2 = await labelSvc(srv, ns, 'd', { n: '2' });
    const seen = await w1.take(2);
    assert.deepEqual(
      seen.map((e) => rvOf(e.object)),
      [m1, m2],
    );
    w1.close();
    const missed = [
      await labelSvc(srv, ns, 'd', { n: '3' }),
      await createSvc(srv, ns, 'e'),
      await labelSvc(srv, ns, 'e', { n: '1' }),
    ];
    await deleteSvc(srv, ns, 'e');
    const w2 = watch(`/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${m2}`);
    const resumed = await w2.take(4);
    assert.deepEqual(
      resumed.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['MODIFIED d', 'ADDED e', 'MODIFIED e', 'DELETED e'],
    );
    assert.deepEqual(
      resumed.slice(0, 3).map((e) => rvOf(e.object)),
      missed,
    );
    assert.ok(rvOf(resumed[3]!.object) > missed[2]!);
    await w2.expectQuiet(200);
    w2.close();
  });

  it('allowWatchBookmarks=true yields BOOKMARKs typed as the watched kind, with a resourceVersion', async () => {
    const ns = 'w-bookmark';
    await ensureNamespace(srv, ns);
    const { rv } = await list(srv, ns);
    const w = watch(
      `/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`,
    );
    await w.response;
    // A write elsewhere moves the revision on without an event for this watcher.
    await ensureNamespace(srv, 'w-bookmark-other');
    const other = await createSvc(srv, 'w-bookmark-other', 'x');
    let bm: WatchEvent | undefined;
    for (;;) {
      const e = await w.next(3_000);
      assert.ok(e !== undefined, 'stream ended');
      assert.equal(e.type, 'BOOKMARK', brief(e));
      if (rvOf(e.object) >= other) {
        bm = e;
        break;
      }
    }
    assert.equal(bm.object.kind, 'Service');
    assert.equal(bm.object.apiVersion, 'v1');
    assert.match(bm.object.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.equal(bm.object.metadata?.annotations?.['k8s.io/initial-events-end'], undefined);
    // An event after the bookmark is still delivered, with a larger RV.
    const added = await createSvc(srv, ns, 'after-bookmark');
    let e: WatchEvent | undefined;
    do e = await w.next(3_000);
    while (e?.type === 'BOOKMARK');
    assert.equal(e?.type, 'ADDED');
    assert.equal(rvOf(e.object), added);
    w.close();
    // Without allowWatchBookmarks: no bookmark, even when the revision moves on.
    const { rv: rv2 } = await list(srv, ns);
    const quiet = watch(`/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${rv2}`);
    await quiet.response;
    await createSvc(srv, 'w-bookmark-other', 'y');
    await quiet.expectQuiet(700);
    quiet.close();
  });

  it('sendInitialEvents: ADDED per object, the initial-events-end BOOKMARK, then live events', async () => {
    const ns = 'w-initial';
    await ensureNamespace(srv, ns);
    const rvs = new Map<string, number>();
    for (const n of ['i1', 'i2', 'i3']) rvs.set(n, await createSvc(srv, ns, n, { app: 'i' }));
    await createSvc(srv, ns, 'other', { app: 'o' });
    const base = `/api/v1/namespaces/${ns}/services?watch=true&labelSelector=app%3Di`;
    const w = watch(
      `${base}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
    );
    const initial = await w.take(3);
    assert.deepEqual(
      initial.map((e) => e.type),
      ['ADDED', 'ADDED', 'ADDED'],
    );
    assert.deepEqual(new Map(initial.map((e) => [e.object.metadata!.name!, rvOf(e.object)])), rvs);
    const end = await w.next();
    assert.equal(end?.type, 'BOOKMARK');
    assert.equal(end.object.kind, 'Service');
    assert.equal(end.object.apiVersion, 'v1');
    assert.equal(end.object.metadata?.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(rvOf(end.object) >= Math.max(...rvs.values()));
    const live = await labelSvc(srv, ns, 'i2', { extra: '1' });
    let e: WatchEvent | undefined;
    do e = await w.next();
    while (e?.type === 'BOOKMARK');
    assert.equal(e?.type, 'MODIFIED');
    assert.equal(e.object.metadata?.name, 'i2');
    assert.equal(rvOf(e.object), live);
    w.close();

    // Invalid combinations are refused with a 4xx Status, never a 200 that ignores them.
    for (const q of [
      '&sendInitialEvents=true&allowWatchBookmarks=true',
      '&sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
      '&resourceVersionMatch=NotOlderThan',
    ]) {
      const r = await call(srv, 'GET', `${base}${q}`);
      assert.ok(r.status >= 400 && r.status < 500, `${q}: ${r.status}`);
      assert.equal(r.json().kind, 'Status', q);
    }
    const r = await call(srv, 'GET', `${base}&sendInitialEvents=true&allowWatchBookmarks=true`);
    assert.equal(r.status, 422, r.text);
  });

  it('timeoutSeconds=1 ends the stream cleanly after about a second', async () => {
    const t0 = Date.now();
    const w = watch('/api/v1/namespaces/w-timeout/services?watch=true&timeoutSeconds=1');
    await w.response;
    assert.equal(w.status, 200);
    const ending = await w.ended;
    const took = Date.now() - t0;
    assert.deepEqual(ending, { how: 'end' });
    assert.ok(took >= 900 && took < 3_000, `took ${took} ms`);
  });

  it('label selector transitions: relabelled out is DELETED, relabelled back is ADDED', async () => {
    const ns = 'w-select';
    await ensureNamespace(srv, ns);
    const { rv } = await list(srv, ns);
    const w = watch(
      `/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${rv}&labelSelector=app%3Dweb`,
    );
    await w.response;
    const steps: [string, number][] = [];
    steps.push(['ADDED', await createSvc(srv, ns, 's', { app: 'web' })]);
    await createSvc(srv, ns, 'unrelated', { app: 'db' });
    steps.push(['MODIFIED', await labelSvc(srv, ns, 's', { tier: 'front' })]);
    steps.push(['DELETED', await labelSvc(srv, ns, 's', { app: 'api' })]);
    await labelSvc(srv, ns, 's', { tier: 'back' }); // outside the selector: nothing
    steps.push(['ADDED', await labelSvc(srv, ns, 's', { app: 'web' })]);
    steps.push(['ADDED', await labelSvc(srv, ns, 'unrelated', { app: 'web' })]);
    const got = await w.take(steps.length);
    assert.deepEqual(
      got.map((e) => [e.type, rvOf(e.object)]),
      steps,
    );
    // The DELETED object is the last state that matched, stamped with the transition's RV.
    assert.equal(got[2]!.object.metadata?.labels?.app, 'web');
    assert.equal(got[2]!.object.metadata?.name, 's');
    assert.equal(got[4]!.object.metadata?.name, 'unrelated');
    await w.expectQuiet(200);
    w.close();
  });

  it('Accept as=Table: every watch event is a Table with one row', async () => {
    const ns = 'w-table';
    await ensureNamespace(srv, ns);
    const { rv } = await list(srv, ns);
    const w = watch(
      `/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${rv}`,
      'application/json;as=Table;v=v1;g=meta.k8s.io',
    );
    await w.response;
    assert.match(String(w.headers['content-type']), /application\/json/);
    await createSvc(srv, ns, 't1');
    await labelSvc(srv, ns, 't1', { a: 'b' });
    await deleteSvc(srv, ns, 't1');
    const got = await w.take(3);
    assert.deepEqual(
      got.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    for (const e of got) {
      assert.equal(e.object.kind, 'Table');
      assert.equal(e.object.apiVersion, 'meta.k8s.io/v1');
      assert.equal(e.object.rows?.length, 1);
      assert.equal(e.object.rows[0]!.cells[0], 't1');
      assert.equal(e.object.rows[0]!.object?.metadata?.name, 't1');
    }
    w.close();
  });

  it('response headers arrive at once on a watch that has no events', async () => {
    const { rv } = await list(srv, 'w-empty');
    for (const q of [`resourceVersion=${rv}`, '', 'resourceVersion=0', 'allowWatchBookmarks=true']) {
      const w = watch(`/api/v1/namespaces/w-empty/services?watch=true&${q}`);
      await Promise.race([w.response, sleep(1_500)]);
      assert.equal(w.status, 200, `headers for ${q}`);
      assert.ok(w.headersAfterMs < 1_000, `${q}: headers after ${w.headersAfterMs} ms`);
      assert.match(String(w.headers['content-type']), /^application\/json/);
      assert.ok(w.isOpen);
      w.close();
    }
  });

  it('boolean query parameters parse as Go does: watch=True, allowWatchBookmarks=True (the Python client)', async () => {
    const ns = 'w-bool';
    await ensureNamespace(srv, ns);
    const { rv } = await list(srv, ns);
    const w = watch(
      `/api/v1/namespaces/${ns}/services?watch=True&resourceVersion=${rv}&allowWatchBookmarks=True`,
    );
    await w.response;
    assert.equal(w.status, 200);
    const created = await createSvc(srv, ns, 'b1');
    const ev = await w.next();
    assert.equal(ev?.type, 'ADDED');
    assert.equal(rvOf(ev.object), created);
    await createSvc(srv, 'w-bookmark-other', 'bool-elsewhere');
    const bm = await w.next(3_000);
    assert.equal(bm?.type, 'BOOKMARK');
    w.close();
    // watch=false (or F, 0) is a plain list.
    for (const v of ['false', 'F', '0']) {
      const r = await call(srv, 'GET', `/api/v1/namespaces/${ns}/services?watch=${v}`);
      assert.equal(r.status, 200);
      assert.equal(r.json().kind, 'ServiceList', v);
    }
  });

  it('property: 20 watchers that drop and resume at random converge on the final LIST', async (t) => {
    const seed = Number(process.env.WATCH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    t.diagnostic(`seed ${seed} (rerun with WATCH_SEED=${seed})`);
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const namespaces = ['w-prop-a', 'w-prop-b'];
    for (const ns of namespaces) await ensureNamespace(srv, ns);
    const selectors = [
      '',
      'app=a',
      'app!=b',
      'app in (a,c)',
      'tier',
      '!tier',
      'app=b,tier=y',
      'app notin (a)',
    ];

    interface Watcher {
      id: number;
      ns: string | undefined;
      selector: string;
      state: Map<string, number>;
      lastRV: number;
      stream: WatchStream | undefined;
      problems: string[];
      reconnects: number;
      /** Resumes from bookmark RVs too, as client-go does. */
      bookmarks: boolean;
      bookmarksSeen: number;
    }
    const watchers: Watcher[] = [];
    for (let i = 0; i < 20; i++) {
      const ns = i % 3 === 0 ? undefined : pick(namespaces);
      const selector = i < 4 ? '' : pick(selectors);
      const q = selector === '' ? '' : `labelSelector=${encodeURIComponent(selector)}`;
      const l = await list(srv, ns, q);
      watchers.push({
        id: i,
        ns,
        selector,
        state: l.items,
        lastRV: l.rv,
        stream: undefined,
        problems: [],
        reconnects: 0,
        bookmarks: i % 4 === 1,
        bookmarksSeen: 0,
      });
    }
    const connect = (w: Watcher): void => {
      w.stream?.close();
      const base = w.ns === undefined ? '/api/v1/services' : `/api/v1/namespaces/${w.ns}/services`;
      const sel = w.selector === '' ? '' : `&labelSelector=${encodeURIComponent(w.selector)}`;
      const bm = w.bookmarks ? '&allowWatchBookmarks=true' : '';
      const s = watch(`${base}?watch=true&resourceVersion=${w.lastRV}${sel}${bm}`);
      s.onEvent = (e) => {
        const key = `${e.object.metadata?.namespace}/${e.object.metadata?.name}`;
        const rv = rvOf(e.object);
        if (e.type === 'BOOKMARK' && w.bookmarks) {
          if (rv < w.lastRV) w.problems.push(`BOOKMARK ${rv} goes back from ${w.lastRV}`);
          w.lastRV = rv;
          w.bookmarksSeen++;
          return;
        }
        if (e.type !== 'ADDED' && e.type !== 'MODIFIED' && e.type !== 'DELETED') {
          w.problems.push(`unexpected ${e.type}: ${JSON.stringify(e.object)}`);
          return;
        }
        if (!(rv > w.lastRV))
          w.problems.push(`${brief(e)}: RV not after ${w.lastRV} (duplicate or reordered)`);
        const had = w.state.has(key);
        if (e.type === 'ADDED' && had) w.problems.push(`${brief(e)}: ADDED for a known object`);
        if (e.type !== 'ADDED' && !had) w.problems.push(`${brief(e)}: ${e.type} for an unknown object (gap)`);
        if (e.type === 'DELETED') w.state.delete(key);
        else w.state.set(key, rv);
        w.lastRV = rv;
      };
      w.stream = s;
    };
    for (const w of watchers) connect(w);

    // The writer's model of the world, so every write is valid.
    const alive = new Map<string, Set<string>>(namespaces.map((ns) => [ns, new Set<string>()]));
    const randomLabels = (): Record<string, string> => {
      const l: Record<string, string> = {};
      if (rnd() < 0.85) l.app = pick(['a', 'b', 'c']);
      if (rnd() < 0.5) l.tier = pick(['x', 'y']);
      return l;
    };
    const oneWrite = async (ns: string, name: string): Promise<void> => {
      const set = alive.get(ns)!;
      if (!set.has(name)) {
        set.add(name);
        await createSvc(srv, ns, name, randomLabels());
      } else if (rnd() < 0.3) {
        set.delete(name);
        await deleteSvc(srv, ns, name);
      } else {
        const patch: Record<string, string | null> = {};
        patch.app = rnd() < 0.2 ? null : pick(['a', 'b', 'c']);
        patch.tier = rnd() < 0.4 ? null : pick(['x', 'y']);
        await labelSvc(srv, ns, name, patch);
      }
    };
    let writes = 0;
    while (writes < 200) {
      // A batch of concurrent writes to distinct objects.
      const batch = new Map<string, [string, string]>();
      const n = Math.min(1 + Math.floor(rnd() * 4), 200 - writes);
      while (batch.size < n) {
        const ns = pick(namespaces);
        const name = `s${Math.floor(rnd() * 25)}`;
        batch.set(`${ns}/${name}`, [ns, name]);
      }
      await Promise.all([...batch.values()].map(([ns, name]) => oneWrite(ns, name)));
      writes += n;
      for (const w of watchers) {
        if (rnd() < 0.12 && w.stream?.isOpen === true) {
          w.stream.close();
          w.reconnects++;
          const delay = Math.floor(rnd() * 40);
          if (delay < 10) connect(w);
          else setTimeout(() => connect(w), delay);
        }
      }
    }
    await sleep(60); // every delayed reconnect has happened

    const failures: string[] = [];
    for (const w of watchers) {
      const q = w.selector === '' ? '' : `labelSelector=${encodeURIComponent(w.selector)}`;
      let final = await list(srv, w.ns, q);
      const deadline = Date.now() + 5_000;
      const same = (): boolean =>
        final.items.size === w.state.size && [...final.items].every(([k, rv]) => w.state.get(k) === rv);
      while (!same() && Date.now() < deadline) {
        await sleep(50);
        final = await list(srv, w.ns, q);
      }
      if (!same()) {
        const diff = [...new Set([...final.items.keys(), ...w.state.keys()])]
          .filter((k) => final.items.get(k) !== w.state.get(k))
          .map((k) => `${k}: list=${final.items.get(k)} watch=${w.state.get(k)}`);
        failures.push(`watcher ${w.id} (ns=${w.ns ?? '*'} sel=${w.selector}): ${diff.join('; ')}`);
      }
      if (w.problems.length > 0) failures.push(`watcher ${w.id}: ${w.problems.slice(0, 5).join('; ')}`);
      if (!w.stream!.isOpen) failures.push(`watcher ${w.id}: stream ended unexpectedly`);
      w.stream!.close();
    }
    const reconnects = watchers.reduce((a, w) => a + w.reconnects, 0);
    const bookmarks = watchers.reduce((a, w) => a + w.bookmarksSeen, 0);
    t.diagnostic(`${writes} writes, ${reconnects} reconnects, ${bookmarks} bookmarks`);
    assert.deepEqual(failures, [], `seed ${seed} (rerun with WATCH_SEED=${seed})`);
    assert.ok(reconnects > 20, `seed ${seed}: only ${reconnects} reconnects`);
  });
});

describe('watch: expired resource versions', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-watch-exp-'));
  let srv: TestServer | undefined;
  after(async () => {
    await srv?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('after a restart an old RV gets ERROR 410 Expired and the stream closes; after compaction Exact LIST is 410', async () => {
    srv = await startUp({ dataDir });
    const ns = 'w-expired';
    await ensureNamespace(srv, ns);
    const r1 = await createSvc(srv, ns, 'e1');
    const r2 = await createSvc(srv, ns, 'e2');
    const r3 = await labelSvc(srv, ns, 'e1', { v: '3' });
    const exact = async (
      rv: number,
    ): Promise<{ status: number; items: Map<string, number>; body: string }> => {
      const r = await call(
        srv!,
        'GET',
        `/api/v1/namespaces/${ns}/services?resourceVersion=${rv}&resourceVersionMatch=Exact`,
      );
      const items = new Map<string, number>();
      if (r.status === 200)
        for (const o of r.json<{ items: Meta[] }>().items) items.set(o.metadata.name, rvOf(o));
      return { status: r.status, items, body: r.text };
    };
    const atR1 = await exact(r1);
    assert.equal(atR1.status, 200, atR1.body);
    assert.deepEqual(atR1.items, new Map([['e1', r1]]));
    assert.equal(await srv.stop(), 0);

    srv = await startUp({ dataDir });
    // The watch cache history now starts at the current revision: r1 is too old.
    const w = new WatchStream(srv, `/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${r1}`);
    await w.response;
    assert.equal(w.status, 200);
    const err = await w.next();
    assert.equal(err?.type, 'ERROR', JSON.stringify(err));
    assert.equal(err.object.kind, 'Status');
    assert.equal(err.object.code, 410);
    assert.equal(err.object.reason, 'Expired');
    assert.equal(await w.next(), undefined, 'nothing after the ERROR');
    assert.deepEqual(await w.ended, { how: 'end' });

    // From the current RV the watch works.
    const { rv: now } = await list(srv, ns);
    assert.ok(now >= r3);
    const live = new WatchStream(srv, `/api/v1/namespaces/${ns}/services?watch=true&resourceVersion=${now}`);
    const r4 = await labelSvc(srv, ns, 'e2', { v: '4' });
    const ev = await live.next();
    assert.equal(ev?.type, 'MODIFIED');
    assert.equal(rvOf(ev.object), r4);
    live.close();
    // History in the store is still there, so the Exact LIST still works.
    assert.deepEqual(
      (await exact(r2)).items,
      new Map([
        ['e1', r1],
        ['e2', r2],
      ]),
    );
    assert.equal(await srv.stop(), 0);

    const compact = spawnSync(
      process.execPath,
      [BIN, 'store', 'compact', String(r3), '--data-dir', dataDir],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(compact.status, 0, compact.stderr);

    srv = await startUp({ dataDir });
    const gone = await exact(r1);
    assert.equal(gone.status, 410, gone.body);
    const status = JSON.parse(gone.body) as { kind: string; reason: string; code: number };
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, 410);
    assert.equal(status.reason, 'Expired');
    const kept = await exact(r3);
    assert.equal(kept.status, 200, kept.body);
    assert.deepEqual(
      kept.items,
      new Map([
        ['e1', r3],
        ['e2', r2],
      ]),
    );
  });
});

describe('watch: server shutdown', () => {
  it('SIGTERM ends an open watch cleanly (terminated chunked body) and the process exits 0', async () => {
    const srv = await startUp();
    try {
      const { rv } = await list(srv, 'default');
      const w = new WatchStream(srv, `/api/v1/namespaces/default/services?watch=true&resourceVersion=${rv}`);
      const idle = new WatchStream(srv, '/api/v1/services?watch=true&allowWatchBookmarks=true');
      await Promise.all([w.response, idle.response]);
      const created = await createSvc(srv, 'default', 'before-term');
      const ev = await w.next();
      assert.equal(rvOf(ev!.object), created);
      const t0 = Date.now();
      const code = await srv.stop();
      assert.equal(code, 0, srv.stderr());
      assert.deepEqual(await w.ended, { how: 'end' });
      assert.deepEqual(await idle.ended, { how: 'end' });
      assert.ok(Date.now() - t0 < 5_000, `shutdown took ${Date.now() - t0} ms`);
    } finally {
      await srv.destroy();
    }
  });
});
