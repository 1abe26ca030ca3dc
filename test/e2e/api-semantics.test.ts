// API semantics over real HTTPS against one `svcplane up`: what kube-apiserver does for object
// metadata, LIST (selectors, paging, resourceVersion), writes (POST/PUT/PATCH in all four flavours,
// dryRun, status, field validation, YAML), DELETE (finalizers, preconditions, propagation,
// deletecollection, namespace termination), Tables, discovery, /metrics and content negotiation.
// Where an expectation is kube-apiserver's behaviour rather than an obvious contract, a comment says
// where in kube it comes from (looked up in the Kubernetes sources).
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { call, startUp, type Reply, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

interface Meta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Record<string, unknown>[];
  managedFields?: { manager?: string; operation?: string; fieldsType?: string; fieldsV1?: unknown }[];
}

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
  [k: string]: unknown;
}

interface List {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string; continue?: string };
  items: Obj[];
}

interface Status {
  kind: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    retryAfterSeconds?: number;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

type CallOpts = Parameters<typeof call>[3];

let srv: TestServer;

/** One request; asserts the status code (printing the body when it differs). */
async function send(method: string, path: string, code: number, opts: CallOpts = {}): Promise<Reply> {
  // Node's client does not chunk DELETE bodies: without a Content-Length the body would be read
  // as the start of the next request, so every body goes with its length.
  const raw = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const r = await call(srv, method, path, {
    ...opts,
    ...(raw === undefined
      ? {}
      : { rawBody: raw, headers: { ...opts.headers, 'Content-Length': String(Buffer.byteLength(raw)) } }),
  });
  assert.equal(r.status, code, `${method} ${path} → ${r.status}: ${r.text}`);
  return r;
}
const create = async (path: string, body: unknown): Promise<Obj> =>
  (await send('POST', path, 201, { body })).json<Obj>();
const get = async (path: string): Promise<Obj> => (await send('GET', path, 200)).json<Obj>();
const list = async (path: string): Promise<List> => (await send('GET', path, 200)).json<List>();
const names = (l: List): string[] => l.items.map((o) => o.metadata.name!).sort();
const patch = async (path: string, type: string, body: unknown, code = 200): Promise<Obj> =>
  (await send('PATCH', path, code, { body, contentType: `application/${type}` })).json<Obj>();
const merge = (path: string, body: unknown): Promise<Obj> => patch(path, 'merge-patch+json', body);

/** A value at a dotted path (`spec.ports.0.port`) of a decoded object. */
function at(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

const ns = (name: string): Promise<Obj> => create('/api/v1/namespaces', { metadata: { name } });
const svcs = (namespace: string): string => `/api/v1/namespaces/${namespace}/services`;
const pods = (namespace: string): string => `/api/v1/namespaces/${namespace}/pods`;

function service(
  name: string,
  opts: {
    labels?: Record<string, string>;
    clusterIP?: string;
    type?: string;
    ports?: Record<string, unknown>[];
    selector?: Record<string, string>;
    finalizers?: string[];
  } = {},
): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      ...(opts.labels === undefined ? {} : { labels: opts.labels }),
      ...(opts.finalizers === undefined ? {} : { finalizers: opts.finalizers }),
    },
    spec: {
      ports: opts.ports ?? [{ port: 80 }],
      ...(opts.clusterIP === undefined ? {} : { clusterIP: opts.clusterIP }),
      ...(opts.type === undefined ? {} : { type: opts.type }),
      ...(opts.selector === undefined ? {} : { selector: opts.selector }),
    },
  };
}

function pod(name: string, opts: { labels?: Record<string, string>; nodeName?: string } = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(opts.labels === undefined ? {} : { labels: opts.labels }) },
    spec: {
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
      ...(opts.nodeName === undefined ? {} : { nodeName: opts.nodeName }),
    },
  };
}

const deployment = (name: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
    },
  },
});

const serviceGrid = (name: string): Obj => ({
  apiVersion: 'superedge.io/v1',
  kind: 'ServiceGrid',
  metadata: { name },
  spec: { gridUniqKey: 'zone', template: { selector: { app: name }, ports: [{ port: 80 }] } },
});

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('API semantics over HTTPS', () => {
  before(async () => {
    srv = await startUp();
    for (const n of ['meta', 'gen', 'sel', 'paging', 'rv', 'writes', 'del', 'tbl', 'ev']) await ns(n);
  });
  after(async () => {
    await srv?.destroy();
  });

  // ------------------------------------------------------------------------------------ metadata

  describe('object metadata', () => {
    it('fills uid, creationTimestamp and an increasing numeric resourceVersion', async () => {
      const a = await create(svcs('meta'), service('a'));
      const b = await create(svcs('meta'), service('b'));
      for (const o of [a, b]) {
        assert.match(o.metadata.uid!, UUID);
        assert.match(o.metadata.creationTimestamp!, RFC3339_SECONDS);
        assert.match(o.metadata.resourceVersion!, /^[1-9]\d*$/);
        assert.equal(o.metadata.namespace, 'meta');
      }
      assert.notEqual(a.metadata.uid, b.metadata.uid);
      assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
      const updated = await merge(`${svcs('meta')}/a`, { metadata: { labels: { v: '2' } } });
      assert.ok(Number(updated.metadata.resourceVersion) > Number(b.metadata.resourceVersion));
      assert.equal(updated.metadata.uid, a.metadata.uid);
      assert.equal(updated.metadata.creationTimestamp, a.metadata.creationTimestamp);
      const got = await get(`${svcs('meta')}/a`);
      assert.equal(got.metadata.resourceVersion, updated.metadata.resourceVersion);
    });

    it('replaces a uid sent on create and accepts creationTimestamp: null', async () => {
      const body = service('given-uid');
      body.metadata.uid = '11111111-2222-3333-4444-555555555555';
      body.metadata.creationTimestamp = null;
      const o = await create(svcs('meta'), body);
      assert.notEqual(o.metadata.uid, body.metadata.uid);
      assert.match(o.metadata.uid!, UUID);
      assert.match(o.metadata.creationTimestamp!, RFC3339_SECONDS);
    });

    it('generateName appends 5 characters from the name generator alphabet', async () => {
      // kube's names.SimpleNameGenerator: utilrand.String(5), alphabet "bcdfghjklmnpqrstvwxz2456789".
      const seen = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const o = await create(svcs('meta'), {
          metadata: { generateName: 'web-' },
          spec: { ports: [{ port: 80 }] },
        });
        assert.match(o.metadata.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
        assert.equal(o.metadata.generateName, 'web-');
        seen.add(o.metadata.name!);
        await get(`${svcs('meta')}/${o.metadata.name!}`);
      }
      assert.equal(seen.size, 3);
    });

    it('the system namespaces exist and every namespace carries kubernetes.io/metadata.name', async () => {
      for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
        const o = await get(`/api/v1/namespaces/${name}`);
        assert.equal(o.metadata.labels?.['kubernetes.io/metadata.name'], name);
        assert.equal(at(o, 'status.phase'), 'Active');
      }
      const made = await get('/api/v1/namespaces/meta');
      assert.equal(made.metadata.labels?.['kubernetes.io/metadata.name'], 'meta');
      // The label is forced to the name on update too (kube: namespace PrepareForUpdate/defaulting).
      const relabelled = await merge('/api/v1/namespaces/meta', {
        metadata: { labels: { 'kubernetes.io/metadata.name': 'other', team: 'x' } },
      });
      assert.equal(relabelled.metadata.labels?.['kubernetes.io/metadata.name'], 'meta');
      assert.equal(relabelled.metadata.labels?.['team'], 'x');
    });

    it('stores ownerReferences and finalizers as given', async () => {
      const owner = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'owner',
        uid: '6f1c2a43-1d49-4b8e-9a55-0d3c1e2f4a5b',
        controller: true,
        blockOwnerDeletion: true,
      };
      const body = service('owned', { finalizers: ['example.com/keep', 'example.com/also'] });
      body.metadata.ownerReferences = [owner];
      const o = await create(svcs('meta'), body);
      assert.deepEqual(o.metadata.ownerReferences, [owner]);
      assert.deepEqual(o.metadata.finalizers, ['example.com/keep', 'example.com/also']);
      const got = await get(`${svcs('meta')}/owned`);
      assert.deepEqual(got.metadata.ownerReferences, [owner]);
      assert.deepEqual(got.metadata.finalizers, ['example.com/keep', 'example.com/also']);
    });

    it('generation: Services have none (kube svcStrategy never sets it)', async () => {
      // kube: rest.BeforeCreate does not set generation; only strategies do (deployments, CRs, pods),
      // and pkg/registry/core/service/strategy.go does not, so a Service has no metadata.generation.
      const o = await create(svcs('gen'), service('s'));
      assert.equal(o.metadata.generation, undefined);
      const changed = await merge(`${svcs('gen')}/s`, { spec: { ports: [{ port: 81 }] } });
      assert.equal(changed.metadata.generation, undefined);
    });

    it('generation: Deployments start at 1, bump on spec and annotation changes, not on labels or status', async () => {
      // kube: pkg/registry/apps/deployment/strategy.go PrepareForUpdate bumps on Spec or Annotations.
      const path = '/apis/apps/v1/namespaces/gen/deployments/d';
      const o = await create('/apis/apps/v1/namespaces/gen/deployments', deployment('d'));
      assert.equal(o.metadata.generation, 1);
      assert.equal((await merge(path, { metadata: { labels: { l: '1' } } })).metadata.generation, 1);
      const st = await patch(`${path}/status`, 'merge-patch+json', {
        status: { replicas: 1, observedGeneration: 1 },
      });
      assert.equal(st.metadata.generation, 1);
      assert.equal(at(st, 'status.replicas'), 1);
      assert.equal((await merge(path, { spec: { replicas: 3 } })).metadata.generation, 2);
      assert.equal((await merge(path, { metadata: { annotations: { a: '1' } } })).metadata.generation, 3);
      // A write that changes nothing changes no generation either.
      assert.equal((await merge(path, { spec: { replicas: 3 } })).metadata.generation, 3);
      // kube's markAsDeleting: a deletion held by a finalizer bumps the generation once.
      await merge(path, { metadata: { finalizers: ['example.com/hold'] } });
      const deleting = (await send('DELETE', path, 200)).json<Obj>();
      assert.equal(deleting.metadata.generation, 4);
      assert.ok(deleting.metadata.deletionTimestamp);
      assert.equal((await send('DELETE', path, 200)).json<Obj>().metadata.generation, 4);
      await merge(path, { metadata: { finalizers: null } });
      await send('GET', path, 404);
    });

    it('generation: custom resources (ServiceGrid) bump on anything but metadata and status', async () => {
      // kube: apiextensions-apiserver customresource strategy compares the object without metadata
      // (and without status when the status subresource is enabled).
      const base = '/apis/superedge.io/v1/namespaces/gen/servicegrids';
      const o = await create(base, serviceGrid('g'));
      assert.equal(o.metadata.generation, 1);
      assert.equal((await merge(`${base}/g`, { metadata: { labels: { l: '1' } } })).metadata.generation, 1);
      assert.equal(
        (await merge(`${base}/g`, { metadata: { annotations: { a: '1' } } })).metadata.generation,
        1,
      );
      const st = await patch(`${base}/g/status`, 'merge-patch+json', { status: { service: 'g-svc' } });
      assert.equal(st.metadata.generation, 1);
      assert.equal(at(st, 'status.service'), 'g-svc');
      assert.equal((await merge(`${base}/g`, { spec: { gridUniqKey: 'region' } })).metadata.generation, 2);
    });
  });

  // ---------------------------------------------------------------------------------------- list

  describe('list', () => {
    before(async () => {
      await create(svcs('sel'), service('a', { labels: { app: 'web', tier: 'fe' }, clusterIP: '10.96.1.1' }));
      await create(svcs('sel'), service('b', { labels: { app: 'web', tier: 'be' }, clusterIP: 'None' }));
      await create(svcs('sel'), service('c', { labels: { app: 'db' }, clusterIP: '10.96.1.3' }));
      await create(
        svcs('sel'),
        service('d', {
          labels: { tier: 'fe' },
          clusterIP: '10.96.1.4',
          type: 'NodePort',
          ports: [{ port: 80, nodePort: 30080 }],
        }),
      );
    });

    it('label selectors: =, ==, !=, in, notin, exists, !exists', async () => {
      const cases: [string, string[]][] = [
        ['app=web', ['a', 'b']],
        ['app==web', ['a', 'b']],
        // != and notin also match objects without the key (kube labels.Selector semantics).
        ['app!=web', ['c', 'd']],
        ['app in (web,db)', ['a', 'b', 'c']],
        ['app notin (web)', ['c', 'd']],
        ['app', ['a', 'b', 'c']],
        ['!app', ['d']],
        ['app=web,tier=fe', ['a']],
        ['tier in (fe),app', ['a']],
      ];
      for (const [sel, want] of cases) {
        const l = await list(`${svcs('sel')}?labelSelector=${encodeURIComponent(sel)}`);
        assert.deepEqual(names(l), want, sel);
      }
    });

    it('field selectors: metadata.name, metadata.namespace, spec.clusterIP, spec.type', async () => {
      const q = async (path: string, sel: string): Promise<string[]> =>
        names(await list(`${path}?fieldSelector=${encodeURIComponent(sel)}`));
      assert.deepEqual(await q(svcs('sel'), 'metadata.name=c'), ['c']);
      assert.deepEqual(await q(svcs('sel'), 'metadata.name!=c'), ['a', 'b', 'd']);
      assert.deepEqual(await q('/api/v1/services', 'metadata.namespace=sel'), ['a', 'b', 'c', 'd']);
      const both = await list(
        `/api/v1/services?fieldSelector=${encodeURIComponent('metadata.namespace=sel,metadata.name=a')}`,
      );
      assert.deepEqual(
        both.items.map((o) => `${o.metadata.namespace!}/${o.metadata.name!}`),
        ['sel/a'],
      );
      // kube-apiserver ≥ 1.30 serves spec.clusterIP and spec.type for Services (kube-proxy uses !=None).
      assert.deepEqual(await q(svcs('sel'), 'spec.clusterIP!=None'), ['a', 'c', 'd']);
      assert.deepEqual(await q(svcs('sel'), 'spec.clusterIP=None'), ['b']);
      assert.deepEqual(await q(svcs('sel'), 'spec.type=NodePort'), ['d']);
      assert.deepEqual(await q(svcs('sel'), 'spec.type=ClusterIP,metadata.name!=a'), ['b', 'c']);
      // An unsupported field is a 400 with kube's message.
      const bad = await send('GET', `${svcs('sel')}?fieldSelector=spec.sessionAffinity%3DNone`, 400);
      assert.match(bad.json<Status>().message, /field label not supported: spec\.sessionAffinity/);
    });

    it('field selectors: pods spec.nodeName and status.phase', async () => {
      await create(pods('sel'), pod('p1', { nodeName: 'node-1' }));
      await create(pods('sel'), pod('p2', { nodeName: 'node-2' }));
      await create(pods('sel'), pod('p3'));
      await patch(`${pods('sel')}/p2/status`, 'merge-patch+json', { status: { phase: 'Running' } });
      const q = async (sel: string): Promise<string[]> =>
        names(await list(`${pods('sel')}?fieldSelector=${encodeURIComponent(sel)}`));
      assert.deepEqual(await q('spec.nodeName=node-1'), ['p1']);
      // The scheduler's "unassigned pods" query.
      assert.deepEqual(await q('spec.nodeName='), ['p3']);
      assert.deepEqual(await q('status.phase=Running'), ['p2']);
      assert.deepEqual(await q('status.phase=Pending'), ['p1', 'p3']);
      assert.deepEqual(await q('status.phase!=Running,spec.nodeName!='), ['p1']);
    });

    it('field selectors: events involvedObject.kind/name', async () => {
      const ev = (name: string, kind: string, obj: string): Obj => ({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name },
        involvedObject: { kind, name: obj, namespace: 'sel', apiVersion: 'v1' },
        reason: 'Tested',
        message: 'an event',
        type: 'Normal',
        source: { component: 'e2e' },
        firstTimestamp: '2026-01-01T00:00:00Z',
        lastTimestamp: '2026-01-01T00:00:00Z',
        count: 1,
      });
      await create('/api/v1/namespaces/sel/events', ev('e1', 'Pod', 'p1'));
      await create('/api/v1/namespaces/sel/events', ev('e2', 'Pod', 'p2'));
      await create('/api/v1/namespaces/sel/events', ev('e3', 'Service', 'p1'));
      // Only this test's events: the controllers write their own about the namespace's pods (the
      // scheduler's FailedScheduling for the unbound ones).
      const mine = new Set(['e1', 'e2', 'e3']);
      const q = async (sel: string): Promise<string[]> =>
        names(await list(`/api/v1/namespaces/sel/events?fieldSelector=${encodeURIComponent(sel)}`)).filter(
          (n) => mine.has(n),
        );
      assert.deepEqual(await q('involvedObject.kind=Pod'), ['e1', 'e2']);
      assert.deepEqual(await q('involvedObject.name=p1'), ['e1', 'e3']);
      assert.deepEqual(await q('involvedObject.kind=Pod,involvedObject.name=p1'), ['e1']);
    });

    it('field selectors: nodes spec.unschedulable', async () => {
      await create('/api/v1/nodes', { metadata: { name: 'sem-cordoned' }, spec: { unschedulable: true } });
      await create('/api/v1/nodes', { metadata: { name: 'sem-open' }, spec: {} });
      const q = async (sel: string): Promise<string[]> =>
        names(await list(`/api/v1/nodes?fieldSelector=${encodeURIComponent(sel)}`)).filter((n) =>
          n.startsWith('sem-'),
        );
      assert.deepEqual(await q('spec.unschedulable=true'), ['sem-cordoned']);
      assert.deepEqual(await q('spec.unschedulable=false'), ['sem-open']);
    });

    it('a LIST spanning many chunks is exact: multi-byte text, and items larger than a chunk', async () => {
      await ns('biglist');
      const wide = '日本語 ✓ ünïcödé 😀 ';
      const made: Obj[] = [];
      made.push(
        await create(svcs('biglist'), {
          ...service('huge-ascii'),
          metadata: { name: 'huge-ascii', annotations: { big: 'a'.repeat(200_000) } },
        }),
      );
      made.push(
        await create(svcs('biglist'), {
          ...service('huge-wide'),
          metadata: { name: 'huge-wide', annotations: { big: wide.repeat(5_000) } },
        }),
      );
      for (let i = 0; i < 300; i++) {
        const s = service(`s${String(i).padStart(3, '0')}`);
        s.metadata.annotations = { note: `${wide}${i} ${'日'.repeat(500 + i * 11)}` };
        made.push(await create(svcs('biglist'), s));
      }
      const r = await send('GET', svcs('biglist'), 200);
      const l = r.json<List>();
      const byName = new Map(made.map((o) => [o.metadata.name!, o]));
      assert.equal(l.items.length, made.length);
      for (const item of l.items) assert.deepEqual(item, byName.get(item.metadata.name!));
    });

    it('a client that drops a LIST larger than the send window mid-way leaves the server serving', async () => {
      await ns('droplist');
      for (let i = 0; i < 40; i++) {
        const s = service(`d${i}`);
        s.metadata.annotations = { big: 'z'.repeat(200_000) };
        await create(svcs('droplist'), s);
      }
      // ~8 MB: more than the 4 MiB the server lets wait unflushed. Read one chunk, then hang up.
      const received = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          `${srv.url}${svcs('droplist')}`,
          { ca: srv.ca, headers: { Authorization: `Bearer ${srv.token}` } },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              req.destroy();
              resolve(chunk.length);
            });
          },
        );
        req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
        req.end();
      });
      assert.ok(received > 0);
      const l = await list(svcs('droplist'));
      assert.equal(l.items.length, 40);
      assert.equal((await call(srv, 'GET', '/readyz')).status, 200);
    });

    it('limit+continue returns every object once, all pages at the first page’s resourceVersion', async () => {
      const all = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
      for (const n of all) await create(svcs('paging'), service(n, { labels: { v: '1' } }));
      const first = await list(`${svcs('paging')}?limit=3`);
      assert.deepEqual(names(first), ['p0', 'p1', 'p2']);
      assert.ok(first.metadata.continue, 'a continue token');
      const rv = first.metadata.resourceVersion;
      // Writes between pages: none of them may show up in the later pages.
      await create(svcs('paging'), service('p7'));
      await send('DELETE', `${svcs('paging')}/p5`, 200);
      await merge(`${svcs('paging')}/p6`, { metadata: { labels: { v: '2' } } });
      const seen = [...first.items];
      let token: string | undefined = first.metadata.continue;
      let pages = 1;
      while (token !== undefined && token !== '') {
        const page = await list(`${svcs('paging')}?limit=3&continue=${encodeURIComponent(token)}`);
        assert.equal(
          page.metadata.resourceVersion,
          rv,
          'every page carries the first page’s resourceVersion',
        );
        seen.push(...page.items);
        token = page.metadata.continue;
        pages++;
      }
      assert.equal(pages, 3);
      assert.deepEqual(
        seen.map((o) => o.metadata.name),
        all,
      );
      assert.equal(seen.find((o) => o.metadata.name === 'p6')?.metadata.labels?.['v'], '1');
      // A fresh list sees the writes.
      assert.deepEqual(names(await list(svcs('paging'))), ['p0', 'p1', 'p2', 'p3', 'p4', 'p6', 'p7']);
    });

    it('resourceVersion: unset, 0, N (NotOlderThan), N with Exact, and Match without a version', async () => {
      const a = await create(svcs('rv'), service('a'));
      assert.deepEqual(names(await list(svcs('rv'))), ['a']);
      const any = await list(`${svcs('rv')}?resourceVersion=0`);
      assert.equal(any.kind, 'ServiceList');
      assert.match(any.metadata.resourceVersion, /^\d+$/);
      const n = a.metadata.resourceVersion!;
      for (const q of [`resourceVersion=${n}`, `resourceVersion=${n}&resourceVersionMatch=NotOlderThan`]) {
        const l = await list(`${svcs('rv')}?${q}`);
        assert.deepEqual(names(l), ['a'], q);
        assert.ok(Number(l.metadata.resourceVersion) >= Number(n), q);
      }
      await create(svcs('rv'), service('b'));
      await merge(`${svcs('rv')}/a`, { metadata: { labels: { later: 'yes' } } });
      const exact = await list(`${svcs('rv')}?resourceVersion=${n}&resourceVersionMatch=Exact`);
      assert.equal(exact.metadata.resourceVersion, n);
      assert.deepEqual(names(exact), ['a'], 'b was created after N');
      assert.equal(exact.items[0]!.metadata.labels?.['later'], undefined, 'a as it was at N');
      assert.deepEqual(names(await list(svcs('rv'))), ['a', 'b']);
      // kube: ValidateListOptions — resourceVersionMatch is forbidden unless resourceVersion is provided.
      for (const m of ['Exact', 'NotOlderThan']) {
        const r = await send('GET', `${svcs('rv')}?resourceVersionMatch=${m}`, 422);
        const s = r.json<Status>();
        assert.equal(s.reason, 'Invalid');
        assert.match(s.message, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
      }
    });

    it('GET with a resourceVersion: 0 and N answer no older than N; one the server never reaches is a 504', async () => {
      const c = await create(svcs('rv'), service('c'));
      const n = c.metadata.resourceVersion!;
      for (const q of ['resourceVersion=0', `resourceVersion=${n}`]) {
        const got = (await send('GET', `${svcs('rv')}/c?${q}`, 200)).json<Obj>();
        assert.ok(Number(got.metadata.resourceVersion) >= Number(n), q);
      }
      // A revision reached during the wait: the answer comes then, no older than it.
      const next = Number(n) + 1;
      const waiting = send('GET', `${svcs('rv')}/c?resourceVersion=${next}`, 200);
      await new Promise((r) => setTimeout(r, 200));
      await create(svcs('rv'), service('d'));
      assert.ok(Number((await waiting).json<Obj>().metadata.resourceVersion) >= Number(n));
      // kube's cacher waits (3 s) for the revision, then answers StatusReasonTimeout with Retry-After 1.
      const far = Number(n) + 1_000_000;
      const s = (await send('GET', `${svcs('rv')}/c?resourceVersion=${far}`, 504)).json<Status>();
      assert.equal(s.reason, 'Timeout');
      assert.match(s.message, new RegExp(`^Too large resource version: ${far}, current: \\d+$`));
      assert.equal(s.details?.retryAfterSeconds, 1);
      const bad = (await send('GET', `${svcs('rv')}/c?resourceVersion=abc`, 400)).json<Status>();
      assert.match(bad.message, /invalid resourceVersion: "abc"/);
    });
  });

  // -------------------------------------------------------------------------------------- writes

  describe('writes', () => {
    const base = svcs('writes');

    it('POST 201; PUT 200 with compare-and-swap; a stale resourceVersion is a 409; no resourceVersion is unconditional', async () => {
      const o = await create(base, service('cas'));
      const v1 = o.metadata.resourceVersion!;
      const put1 = await send('PUT', `${base}/cas`, 200, {
        body: { ...o, metadata: { ...o.metadata, labels: { step: '1' } } },
      });
      const v2 = put1.json<Obj>().metadata.resourceVersion!;
      assert.ok(Number(v2) > Number(v1));
      const stale = await send('PUT', `${base}/cas`, 409, {
        body: { ...o, metadata: { ...o.metadata, labels: { step: 'stale' } } },
      });
      const s = stale.json<Status>();
      assert.equal(s.reason, 'Conflict');
      assert.equal(s.code, 409);
      assert.equal(
        s.message,
        'Operation cannot be fulfilled on services "cas": the object has been modified; please apply your changes to the latest version and try again',
      );
      assert.equal(s.details?.name, 'cas');
      assert.equal(s.details?.kind, 'services');
      const { resourceVersion: _drop, ...noRV } = o.metadata;
      const blind = await send('PUT', `${base}/cas`, 200, {
        body: { ...o, metadata: { ...noRV, labels: { step: 'blind' } } },
      });
      assert.equal(blind.json<Obj>().metadata.labels?.['step'], 'blind');
      assert.equal((await get(`${base}/cas`)).metadata.labels?.['step'], 'blind');
    });

    it('PUT creates a missing Service (kube svcStrategy.AllowCreateOnUpdate), not a missing Deployment', async () => {
      const made = await send('PUT', `${base}/put-made`, 201, { body: service('put-made') });
      assert.match(made.json<Obj>().metadata.uid!, UUID);
      await get(`${base}/put-made`);
      const dep = await send('PUT', '/apis/apps/v1/namespaces/writes/deployments/nope', 404, {
        body: deployment('nope'),
      });
      assert.equal(dep.json<Status>().message, 'deployments.apps "nope" not found');
    });

    it('PATCH with json-patch and merge-patch', async () => {
      await create(base, service('jp', { labels: { keep: 'me' } }));
      const jp = await patch(`${base}/jp`, 'json-patch+json', [
        { op: 'add', path: '/metadata/labels/added', value: 'yes' },
        { op: 'replace', path: '/spec/ports/0/port', value: 8080 },
      ]);
      assert.deepEqual(jp.metadata.labels, { keep: 'me', added: 'yes' });
      assert.equal(at(jp, 'spec.ports.0.port'), 8080);
      const failed = await send('PATCH', `${base}/jp`, 422, {
        body: [{ op: 'test', path: '/metadata/labels/keep', value: 'other' }],
        contentType: 'application/json-patch+json',
      });
      assert.equal(failed.json<Status>().code, 422);
      const mp = await merge(`${base}/jp`, { metadata: { labels: { keep: null, merged: 'yes' } } });
      assert.deepEqual(mp.metadata.labels, { added: 'yes', merged: 'yes' });
    });

    it('PATCH with strategic merge: ports merge by port, $patch: delete, $setElementOrder', async () => {
      await create(
        base,
        service('smp', {
          ports: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'metrics', port: 9090 },
          ],
        }),
      );
      const path = `${base}/smp`;
      const portsOf = (o: Obj): unknown[] =>
        (at(o, 'spec.ports') as Record<string, unknown>[]).map((p) => [
          p['port'],
          p['name'],
          p['targetPort'],
        ]);
      const smp = 'strategic-merge-patch+json';
      // A new port is added; the others stay (a merge patch would have replaced the list).
      const added = await patch(path, smp, { spec: { ports: [{ name: 'https', port: 443 }] } });
      assert.deepEqual(
        portsOf(added).sort((a, b) => String(a).localeCompare(String(b))),
        [
          [443, 'https', 443],
          [80, 'http', 8080],
          [9090, 'metrics', 9090],
        ].sort((a, b) => String(a).localeCompare(String(b))),
      );
      // An entry is merged into the one with the same port.
      const merged = await patch(path, smp, { spec: { ports: [{ port: 80, targetPort: 8081 }] } });
      assert.ok(portsOf(merged).some((p) => JSON.stringify(p) === JSON.stringify([80, 'http', 8081])));
      assert.equal(portsOf(merged).length, 3);
      const deleted = await patch(path, smp, { spec: { ports: [{ port: 9090, $patch: 'delete' }] } });
      assert.deepEqual(
        portsOf(deleted)
          .map((p) => (p as unknown[])[0])
          .sort(),
        [443, 80],
      );
      const ordered = await patch(path, smp, {
        spec: {
          '$setElementOrder/ports': [{ port: 443 }, { port: 80 }],
          ports: [{ port: 443, name: 'tls' }],
        },
      });
      assert.deepEqual(portsOf(ordered), [
        [443, 'tls', 443],
        [80, 'http', 8081],
      ]);
    });

    it('server-side apply: creates with 201, records managedFields, conflicts with another manager, force wins', async () => {
      const yaml = (owner: string, port: number): string =>
        `apiVersion: v1\nkind: Service\nmetadata:\n  name: ssa\n  labels:\n    owner: ${owner}\nspec:\n  ports:\n  - port: ${port}\n    protocol: TCP\n`;
      const apply = (manager: string, body: string, code: number, force = false): Promise<Reply> =>
        send('PATCH', `${base}/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, code, {
          rawBody: body,
          contentType: 'application/apply-patch+yaml',
        });
      const created = (await apply('mgr-a', yaml('a', 80), 201)).json<Obj>();
      assert.equal(created.metadata.labels?.['owner'], 'a');
      const a = created.metadata.managedFields?.find((m) => m.manager === 'mgr-a');
      assert.ok(a, JSON.stringify(created.metadata.managedFields));
      assert.equal(a.operation, 'Apply');
      assert.equal(a.fieldsType, 'FieldsV1');
      assert.ok(at(a.fieldsV1, 'f:metadata.f:labels.f:owner') !== undefined, JSON.stringify(a.fieldsV1));
      // Re-applying the same configuration is a no-op 200.
      const again = (await apply('mgr-a', yaml('a', 80), 200)).json<Obj>();
      assert.equal(again.metadata.resourceVersion, created.metadata.resourceVersion);

      const conflict = (await apply('mgr-b', yaml('b', 80), 409)).json<Status>();
      assert.equal(conflict.reason, 'Conflict');
      assert.match(
        conflict.message,
        /^Apply failed with 1 conflict: conflict with "mgr-a": \.metadata\.labels\.owner/,
      );
      const causes = conflict.details?.causes ?? [];
      assert.ok(causes.length >= 1);
      assert.ok(
        causes.every((c) => c.reason === 'FieldManagerConflict'),
        JSON.stringify(causes),
      );
      assert.ok(
        causes.some((c) => c.field === '.metadata.labels.owner'),
        JSON.stringify(causes),
      );
      assert.equal((await get(`${base}/ssa`)).metadata.labels?.['owner'], 'a');

      const forced = (await apply('mgr-b', yaml('b', 80), 200, true)).json<Obj>();
      assert.equal(forced.metadata.labels?.['owner'], 'b');
      const mf = forced.metadata.managedFields ?? [];
      assert.ok(
        at(mf.find((m) => m.manager === 'mgr-b')?.fieldsV1, 'f:metadata.f:labels.f:owner') !== undefined,
      );
      assert.equal(
        at(mf.find((m) => m.manager === 'mgr-a')?.fieldsV1, 'f:metadata.f:labels.f:owner'),
        undefined,
      );
      // Apply without a fieldManager is refused (kube: ValidatePatchOptions → 422 for PatchOptions).
      const noManager = await send('PATCH', `${base}/ssa`, 422, {
        rawBody: yaml('c', 80),
        contentType: 'application/apply-patch+yaml',
      });
      assert.match(noManager.json<Status>().message, /fieldManager: Required value/);
    });

    it('a PATCH that changes nothing keeps the resourceVersion', async () => {
      const o = await create(base, service('noop', { labels: { same: 'x' } }));
      const rv = o.metadata.resourceVersion;
      assert.equal(
        (await merge(`${base}/noop`, { metadata: { labels: { same: 'x' } } })).metadata.resourceVersion,
        rv,
      );
      const smp = await patch(`${base}/noop`, 'strategic-merge-patch+json', {
        spec: { ports: [{ port: 80 }] },
      });
      assert.equal(smp.metadata.resourceVersion, rv);
      assert.equal((await get(`${base}/noop`)).metadata.resourceVersion, rv);
    });

    it('dryRun=All on create, update, patch and delete persists nothing', async () => {
      const dry = await send('POST', `${base}?dryRun=All`, 201, { body: service('dry') });
      assert.equal(dry.json<Obj>().metadata.name, 'dry');
      await send('GET', `${base}/dry`, 404);

      const o = await create(base, service('dry', { labels: { v: '1' } }));
      const put = await send('PUT', `${base}/dry?dryRun=All`, 200, {
        body: { ...o, metadata: { ...o.metadata, labels: { v: 'put' } } },
      });
      assert.equal(put.json<Obj>().metadata.labels?.['v'], 'put');
      const p = await send('PATCH', `${base}/dry?dryRun=All`, 200, {
        body: { metadata: { labels: { v: 'patch' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(p.json<Obj>().metadata.labels?.['v'], 'patch');
      await send('DELETE', `${base}/dry?dryRun=All`, 200);
      const after = await get(`${base}/dry`);
      assert.equal(after.metadata.labels?.['v'], '1');
      assert.equal(after.metadata.resourceVersion, o.metadata.resourceVersion);
      assert.equal(after.metadata.deletionTimestamp, undefined);
      // An unknown dryRun value is refused (kube: ValidateDeleteOptions → 422 for DeleteOptions).
      const bad = await send('DELETE', `${base}/dry?dryRun=Some`, 422);
      assert.equal(bad.json<Status>().reason, 'Invalid');
      await get(`${base}/dry`);
    });

    it('/status writes change only status; the main resource ignores status', async () => {
      const o = await create(
        base,
        service('stat', { type: 'LoadBalancer', ports: [{ port: 80, nodePort: 30081 }] }),
      );
      const ingress = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } };
      // PUT /status with a changed spec: the spec change is dropped.
      const put = await send('PUT', `${base}/stat/status`, 200, {
        body: {
          ...o,
          spec: { ...(o['spec'] as object), ports: [{ port: 81, nodePort: 30082 }] },
          status: ingress,
        },
      });
      const afterPut = put.json<Obj>();
      assert.deepEqual(at(afterPut, 'status'), ingress);
      assert.equal(at(afterPut, 'spec.ports.0.port'), 80);
      // PATCH /status likewise.
      const p = await patch(`${base}/stat/status`, 'merge-patch+json', {
        spec: { sessionAffinity: 'ClientIP' },
        status: { loadBalancer: { ingress: [{ ip: '192.0.2.11' }] } },
      });
      assert.equal(at(p, 'status.loadBalancer.ingress.0.ip'), '192.0.2.11');
      assert.equal(at(p, 'spec.sessionAffinity'), 'None');
      // The main resource ignores status changes (and a status-only change writes nothing).
      const main = await merge(`${base}/stat`, {
        status: { loadBalancer: { ingress: [{ ip: '192.0.2.99' }] } },
      });
      assert.equal(at(main, 'status.loadBalancer.ingress.0.ip'), '192.0.2.11');
      assert.equal(main.metadata.resourceVersion, p.metadata.resourceVersion);
      const cur = await get(`${base}/stat`);
      const mainPut = await send('PUT', `${base}/stat`, 200, {
        body: { ...cur, metadata: { ...cur.metadata, labels: { x: 'y' } }, status: { loadBalancer: {} } },
      });
      assert.equal(at(mainPut.json<Obj>(), 'status.loadBalancer.ingress.0.ip'), '192.0.2.11');
      assert.equal(mainPut.json<Obj>().metadata.labels?.['x'], 'y');
    });

    it('fieldValidation: Strict refuses, Warn warns, Ignore drops unknown fields', async () => {
      const withFoo = (name: string): Obj => {
        const s = service(name);
        (s['spec'] as Record<string, unknown>)['foo'] = 'bar';
        return s;
      };
      const strict = await send('POST', `${base}?fieldValidation=Strict`, 400, { body: withFoo('fv') });
      const s = strict.json<Status>();
      assert.equal(s.reason, 'BadRequest');
      // kube: handlers.transformDecodeError wraps the strict decoding error.
      assert.equal(
        s.message,
        'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.foo"',
      );
      await send('GET', `${base}/fv`, 404);

      const o = await create(base, service('fv'));
      const warn = await send('PUT', `${base}/fv?fieldValidation=Warn`, 200, {
        body: { ...withFoo('fv'), metadata: o.metadata },
      });
      assert.equal(warn.headers['warning'], '299 - "unknown field \\"spec.foo\\""');
      assert.equal(at(warn.json<Obj>(), 'spec.foo'), undefined);
      // Warn is the server's default.
      const dflt = await send('POST', base, 201, { body: withFoo('fv-default') });
      assert.equal(dflt.headers['warning'], '299 - "unknown field \\"spec.foo\\""');

      const cur = await get(`${base}/fv`);
      const ignore = await send('PUT', `${base}/fv?fieldValidation=Ignore`, 200, {
        body: { ...withFoo('fv'), metadata: cur.metadata },
      });
      assert.equal(ignore.headers['warning'], undefined);
      assert.equal(at(ignore.json<Obj>(), 'spec.foo'), undefined);
      assert.equal(at(await get(`${base}/fv`), 'spec.foo'), undefined);
    });

    it('accepts a YAML body and answers in YAML when asked', async () => {
      const body =
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: from-yaml\n  labels:\n    fmt: yaml\nspec:\n  ports:\n  - port: 80\n';
      const r = await send('POST', base, 201, { rawBody: body, contentType: 'application/yaml' });
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.equal(r.json<Obj>().metadata.labels?.['fmt'], 'yaml');
      const y = await send('GET', `${base}/from-yaml`, 200, { accept: 'application/yaml' });
      assert.match(String(y.headers['content-type']), /^application\/yaml/);
      const parsed = parseYaml(y.text) as Obj;
      assert.equal(parsed.kind, 'Service');
      assert.equal(parsed.metadata.name, 'from-yaml');
      const ly = await send('GET', `${base}?labelSelector=fmt%3Dyaml`, 200, { accept: 'application/yaml' });
      const pl = parseYaml(ly.text) as List;
      assert.equal(pl.kind, 'ServiceList');
      assert.deepEqual(names(pl), ['from-yaml']);
    });
  });

  // -------------------------------------------------------------------------------------- delete

  describe('delete', () => {
    const base = svcs('del');

    it('answers a Status for services and the object for pods', async () => {
      const o = await create(base, service('gone'));
      const r = (await send('DELETE', `${base}/gone`, 200)).json<Status>();
      assert.equal(r.kind, 'Status');
      assert.equal(r.status, 'Success');
      assert.deepEqual(r.details, { name: 'gone', kind: 'services', uid: o.metadata.uid });
      await send('GET', `${base}/gone`, 404);
      await send('DELETE', `${base}/gone`, 404);

      // kube: pod storage has ReturnDeletedObject; an unscheduled pod goes at once.
      const p = await create(pods('del'), pod('gone'));
      const pr = (await send('DELETE', `${pods('del')}/gone`, 200)).json<Obj>();
      assert.equal(pr.kind, 'Pod');
      assert.equal(pr.metadata.uid, p.metadata.uid);
      await send('GET', `${pods('del')}/gone`, 404);
    });

    it('finalizers hold an object with a deletionTimestamp until the last one is removed', async () => {
      await create(base, service('held', { finalizers: ['example.com/a', 'example.com/b'] }));
      const r = (await send('DELETE', `${base}/held`, 200)).json<Obj>();
      assert.equal(r.kind, 'Service');
      assert.match(r.metadata.deletionTimestamp!, RFC3339_SECONDS);
      const held = await get(`${base}/held`);
      assert.equal(held.metadata.deletionTimestamp, r.metadata.deletionTimestamp);
      // Adding a finalizer to an object being deleted is forbidden; removing one is fine.
      const one = await send('PUT', `${base}/held`, 200, {
        body: { ...held, metadata: { ...held.metadata, finalizers: ['example.com/b'] } },
      });
      assert.deepEqual(one.json<Obj>().metadata.finalizers, ['example.com/b']);
      await get(`${base}/held`);
      const last = one.json<Obj>();
      await send('PUT', `${base}/held`, 200, {
        body: { ...last, metadata: { ...last.metadata, finalizers: [] } },
      });
      await send('GET', `${base}/held`, 404);
    });

    it('preconditions: a uid or resourceVersion mismatch is a 409', async () => {
      const o = await create(base, service('pre'));
      const del = (body: unknown, code: number): Promise<Reply> =>
        send('DELETE', `${base}/pre`, code, { body });
      const uid = (
        await del({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } }, 409)
      ).json<Status>();
      assert.equal(uid.reason, 'Conflict');
      assert.equal(
        uid.message,
        `Operation cannot be fulfilled on services "pre": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${o.metadata.uid!}`,
      );
      const rv = (await del({ preconditions: { resourceVersion: '1' } }, 409)).json<Status>();
      assert.equal(rv.reason, 'Conflict');
      assert.match(
        rv.message,
        /Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+/,
      );
      await get(`${base}/pre`);
      await del({ preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } }, 200);
      await send('GET', `${base}/pre`, 404);
    });

    it('propagationPolicy Foreground adds foregroundDeletion, Orphan adds orphan', async () => {
      await create(base, service('fg'));
      await create(base, service('orph'));
      const fg = (
        await send('DELETE', `${base}/fg`, 200, {
          body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' },
        })
      ).json<Obj>();
      assert.deepEqual(fg.metadata.finalizers, ['foregroundDeletion']);
      assert.ok(fg.metadata.deletionTimestamp);
      const or = (await send('DELETE', `${base}/orph?propagationPolicy=Orphan`, 200)).json<Obj>();
      assert.deepEqual(or.metadata.finalizers, ['orphan']);
      assert.ok(or.metadata.deletionTimestamp);
      // svcplane up runs the garbage collector: with no dependents to wait for or to orphan, it removes
      // each finalizer, and the last finalizer gone lets the object go.
      for (const n of ['fg', 'orph']) {
        await until(`${n} to go`, 10_000, async () =>
          (await call(srv, 'GET', `${base}/${n}`)).status === 404 ? true : undefined,
        );
      }
      await send('DELETE', `${base}/x?propagationPolicy=Sideways`, 422);
    });

    it('an explicit propagationPolicy replaces the GC finalizers; without one they stay', async () => {
      await create(base, service('gcf', { finalizers: ['orphan', 'example.com/keep'] }));
      const bg = (await send('DELETE', `${base}/gcf?propagationPolicy=Background`, 200)).json<Obj>();
      assert.deepEqual(bg.metadata.finalizers, ['example.com/keep']);
      const fg = (await send('DELETE', `${base}/gcf?propagationPolicy=Foreground`, 200)).json<Obj>();
      assert.deepEqual(fg.metadata.finalizers, ['example.com/keep', 'foregroundDeletion']);
      const none = (await send('DELETE', `${base}/gcf`, 200)).json<Obj>();
      assert.deepEqual(none.metadata.finalizers?.includes('example.com/keep'), true);
      await merge(`${base}/gcf`, { metadata: { finalizers: null } });
      await until('gcf to go', 10_000, async () =>
        (await call(srv, 'GET', `${base}/gcf`)).status === 404 ? true : undefined,
      );
    });

    it('deletecollection with a label selector deletes exactly the matching objects', async () => {
      for (const [n, del] of [
        ['dc-1', 'yes'],
        ['dc-2', 'yes'],
        ['dc-3', 'no'],
        ['dc-4', undefined],
      ] as const) {
        await create(pods('del'), pod(n, del === undefined ? {} : { labels: { del } }));
      }
      const r = (await send('DELETE', `${pods('del')}?labelSelector=del%3Dyes`, 200)).json<List>();
      assert.equal(r.kind, 'PodList');
      assert.deepEqual(names(r), ['dc-1', 'dc-2']);
      assert.deepEqual(
        names(await list(pods('del'))).filter((n) => n.startsWith('dc-')),
        ['dc-3', 'dc-4'],
      );
    });

    it('a deleted namespace is Terminating, refuses new content, empties, then disappears', async () => {
      await ns('doomed');
      await create(svcs('doomed'), service('plain'));
      await create(pods('doomed'), pod('worker'));
      await create(svcs('doomed'), service('blocker', { finalizers: ['example.com/block'] }));
      const r = (await send('DELETE', '/api/v1/namespaces/doomed', 200)).json<Obj>();
      assert.equal(r.kind, 'Namespace');
      assert.equal(at(r, 'status.phase'), 'Terminating');
      assert.ok(r.metadata.deletionTimestamp);
      assert.equal(at(await get('/api/v1/namespaces/doomed'), 'status.phase'), 'Terminating');
      await eventually('the namespace contents to be deleted', async () => {
        const s = await list(svcs('doomed'));
        const p = await list(pods('doomed'));
        return (
          p.items.length === 0 && s.items.length === 1 && s.items[0]!.metadata.deletionTimestamp !== undefined
        );
      });
      // kube: the NamespaceLifecycle admission plugin.
      const refused = (await send('POST', svcs('doomed'), 403, { body: service('late') })).json<Status>();
      assert.equal(refused.reason, 'Forbidden');
      assert.equal(
        refused.message,
        'services "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      );
      assert.equal(refused.details?.kind, 'services');
      assert.equal(refused.details?.name, 'late');
      assert.deepEqual(refused.details?.causes, [
        {
          reason: 'NamespaceTerminating',
          message: 'namespace doomed is being terminated',
          field: 'metadata.namespace',
        },
      ]);
      assert.equal(at(await get('/api/v1/namespaces/doomed'), 'status.phase'), 'Terminating');
      await merge(`${svcs('doomed')}/blocker`, { metadata: { finalizers: null } });
      await eventually('the namespace to disappear', async () => {
        const g = await call(srv, 'GET', '/api/v1/namespaces/doomed');
        return g.status === 404;
      });
      await send('POST', svcs('doomed'), 404, { body: service('late') });
    });

    it('the default and kube-system namespaces cannot be deleted', async () => {
      for (const n of ['default', 'kube-system']) {
        const s = (await send('DELETE', `/api/v1/namespaces/${n}`, 403)).json<Status>();
        assert.equal(s.reason, 'Forbidden');
        assert.equal(s.message, `namespaces "${n}" is forbidden: this namespace may not be deleted`);
        assert.equal(at(await get(`/api/v1/namespaces/${n}`), 'status.phase'), 'Active');
      }
    });
  });

  // -------------------------------------------------------------------------------------- tables

  describe('tables', () => {
    before(async () => {
      await create(svcs('tbl'), service('web', { clusterIP: '10.96.2.1', selector: { app: 'web' } }));
      await create(
        svcs('tbl'),
        service('api', { clusterIP: 'None', ports: [{ port: 8080, protocol: 'UDP' }] }),
      );
    });

    it('lists as a Table with the service columns and PartialObjectMetadata rows', async () => {
      const t = (await send('GET', svcs('tbl'), 200, { accept: TABLE })).json<{
        kind: string;
        apiVersion: string;
        metadata: { resourceVersion?: string };
        columnDefinitions: { name: string; type: string; priority?: number }[];
        rows: { cells: unknown[]; object: Obj }[];
      }>();
      assert.equal(t.kind, 'Table');
      assert.equal(t.apiVersion, 'meta.k8s.io/v1');
      assert.match(t.metadata.resourceVersion ?? '', /^\d+$/);
      assert.deepEqual(
        t.columnDefinitions.map((c) => c.name),
        ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector'],
      );
      assert.equal(t.columnDefinitions.find((c) => c.name === 'Selector')?.priority, 1);
      const byName = new Map(t.rows.map((r) => [r.cells[0], r]));
      assert.deepEqual(byName.get('web')?.cells.slice(0, 5), [
        'web',
        'ClusterIP',
        '10.96.2.1',
        '<none>',
        '80/TCP',
      ]);
      assert.equal(byName.get('web')?.cells[6], 'app=web');
      assert.deepEqual(byName.get('api')?.cells.slice(0, 5), [
        'api',
        'ClusterIP',
        'None',
        '<none>',
        '8080/UDP',
      ]);
      for (const r of t.rows) {
        assert.equal(r.object.kind, 'PartialObjectMetadata');
        assert.equal(r.object.apiVersion, 'meta.k8s.io/v1');
        assert.equal(r.object.metadata.name, r.cells[0]);
        assert.equal(r.object.metadata.namespace, 'tbl');
        assert.equal(r.object['spec'], undefined);
      }
    });

    it('gets one object as a Table, and includeObject=Object carries the whole object', async () => {
      const t = (await send('GET', `${svcs('tbl')}/web`, 200, { accept: TABLE })).json<{
        kind: string;
        rows: { cells: unknown[]; object: Obj }[];
      }>();
      assert.equal(t.kind, 'Table');
      assert.equal(t.rows.length, 1);
      assert.equal(t.rows[0]!.object.kind, 'PartialObjectMetadata');
      assert.equal(t.rows[0]!.object.metadata.name, 'web');
      const full = (
        await send('GET', `${svcs('tbl')}/web?includeObject=Object`, 200, { accept: TABLE })
      ).json<{
        rows: { object: Obj }[];
      }>();
      assert.equal(full.rows[0]!.object.kind, 'Service');
      assert.equal(at(full.rows[0]!.object, 'spec.clusterIP'), '10.96.2.1');
      const none = (await send('GET', `${svcs('tbl')}?includeObject=None`, 200, { accept: TABLE })).json<{
        rows: { object?: Obj }[];
      }>();
      assert.ok(none.rows.every((r) => r.object == null));
    });
  });

  // ----------------------------------------------------------------------------------- discovery

  describe('discovery', () => {
    // client-go discovery: AcceptV2 + "," + AcceptV2Beta1 + "," + AcceptV1 (1.30+), AcceptV2Beta1 + "," + AcceptV1 (1.27).
    // kube-apiserver 1.33 (the version this server reports) still serves v2beta1 to older clients.
    const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const V2B1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

    it('serves aggregated discovery by Accept, and the legacy documents otherwise', async () => {
      for (const path of ['/api', '/apis']) {
        const v2 = await send('GET', path, 200, { accept: `${V2},${V2B1},application/json` });
        assert.equal(v2.headers['content-type'], V2);
        const d2 = v2.json<{ kind: string; apiVersion: string; items: { metadata: { name: string } }[] }>();
        assert.equal(d2.kind, 'APIGroupDiscoveryList');
        assert.equal(d2.apiVersion, 'apidiscovery.k8s.io/v2');
        const v2b1 = await send('GET', path, 200, { accept: `${V2B1},application/json` });
        assert.equal(v2b1.headers['content-type'], V2B1);
        assert.equal(v2b1.json<{ apiVersion: string }>().apiVersion, 'apidiscovery.k8s.io/v2beta1');
        const plain = await send('GET', path, 200, { accept: 'application/json, */*' });
        assert.match(String(plain.headers['content-type']), /^application\/json$/);
        assert.equal(plain.json<{ kind: string }>().kind, path === '/api' ? 'APIVersions' : 'APIGroupList');
      }
      const apis = (await send('GET', '/apis', 200, { accept: V2 })).json<{
        items: {
          metadata: { name: string };
          versions: { version: string; resources: { resource: string }[] }[];
        }[];
      }>();
      const sg = apis.items.find((g) => g.metadata.name === 'superedge.io');
      assert.ok(sg?.versions[0]?.resources.some((r) => r.resource === 'servicegrids'));
      const core = (await send('GET', '/api', 200, { accept: V2 })).json<{
        items: {
          metadata: { name?: string };
          versions: { version: string; resources: { resource: string }[] }[];
        }[];
      }>();
      assert.equal(core.items.length, 1);
      assert.ok(core.items[0]!.versions[0]!.resources.some((r) => r.resource === 'services'));
      const versions = (await send('GET', '/api', 200)).json<{ versions: string[] }>();
      assert.deepEqual(versions.versions, ['v1']);
      const groups = (await send('GET', '/apis', 200)).json<{ groups: { name: string }[] }>();
      for (const g of ['apps', 'superedge.io', 'events.k8s.io', 'discovery.k8s.io', 'coordination.k8s.io']) {
        assert.ok(
          groups.groups.some((x) => x.name === g),
          g,
        );
      }
    });

    it('APIResourceLists carry verbs, shortNames, singularName and categories', async () => {
      type Res = {
        name: string;
        singularName: string;
        namespaced: boolean;
        kind: string;
        verbs: string[];
        shortNames?: string[];
        categories?: string[];
      };
      const core = (await send('GET', '/api/v1', 200)).json<{
        kind: string;
        groupVersion: string;
        resources: Res[];
      }>();
      assert.equal(core.kind, 'APIResourceList');
      assert.equal(core.groupVersion, 'v1');
      const find = (rs: Res[], n: string): Res => {
        const r = rs.find((x) => x.name === n);
        assert.ok(r, n);
        return r;
      };
      const crud = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
      const podsR = find(core.resources, 'pods');
      assert.equal(podsR.singularName, 'pod');
      assert.equal(podsR.kind, 'Pod');
      assert.equal(podsR.namespaced, true);
      assert.deepEqual(podsR.shortNames, ['po']);
      assert.deepEqual(podsR.categories, ['all']);
      assert.deepEqual([...podsR.verbs].sort(), [...crud, 'deletecollection'].sort());
      const svc = find(core.resources, 'services');
      assert.equal(svc.singularName, 'service');
      assert.deepEqual(svc.shortNames, ['svc']);
      assert.deepEqual(svc.categories, ['all']);
      for (const v of crud) assert.ok(svc.verbs.includes(v), v);
      assert.deepEqual([...find(core.resources, 'services/status').verbs].sort(), ['get', 'patch', 'update']);
      assert.equal(find(core.resources, 'namespaces').namespaced, false);
      const apps = (await send('GET', '/apis/apps/v1', 200)).json<{ resources: Res[] }>();
      const dep = find(apps.resources, 'deployments');
      assert.deepEqual(dep.shortNames, ['deploy']);
      assert.deepEqual(dep.categories, ['all']);
      assert.equal(dep.singularName, 'deployment');
      const se = (await send('GET', '/apis/superedge.io/v1', 200)).json<{
        groupVersion: string;
        resources: Res[];
      }>();
      assert.equal(se.groupVersion, 'superedge.io/v1');
      const sg = find(se.resources, 'servicegrids');
      assert.equal(sg.singularName, 'servicegrid');
      assert.equal(sg.kind, 'ServiceGrid');
      assert.deepEqual(sg.shortNames, ['sg']);
      for (const v of crud) assert.ok(sg.verbs.includes(v), v);
      const group = (await send('GET', '/apis/superedge.io', 200)).json<{
        kind: string;
        name: string;
        versions: { groupVersion: string; version: string }[];
        preferredVersion: { groupVersion: string; version: string };
      }>();
      assert.equal(group.kind, 'APIGroup');
      assert.equal(group.name, 'superedge.io');
      assert.deepEqual(group.versions, [{ groupVersion: 'superedge.io/v1', version: 'v1' }]);
      assert.deepEqual(group.preferredVersion, { groupVersion: 'superedge.io/v1', version: 'v1' });
      await send('GET', '/apis/nosuch.example.com', 404);
      await send('GET', '/apis/superedge.io/v9', 404);
    });

    it('/version, /openapi/v3 and /openapi/v2', async () => {
      const v = (await send('GET', '/version', 200)).json<Record<string, string>>();
      assert.equal(v['major'], '1');
      assert.match(v['minor'] ?? '', /^\d+\+?$/);
      assert.match(v['gitVersion'] ?? '', /^v1\.\d+\.\d+/);
      const idx = (await send('GET', '/openapi/v3', 200)).json<{
        paths: Record<string, { serverRelativeURL: string }>;
      }>();
      for (const p of ['api/v1', 'apis/apps/v1', 'apis/superedge.io/v1']) {
        assert.match(
          idx.paths[p]?.serverRelativeURL ?? '',
          new RegExp(`^/openapi/v3/${p.replace('.', '\\.')}\\?hash=`),
          p,
        );
      }
      const doc = (await send('GET', idx.paths['api/v1']!.serverRelativeURL, 200)).json<{
        openapi: string;
      }>();
      assert.match(doc.openapi, /^3\./);
      // kubectl 1.27/1.28 read the protobuf document with this Accept.
      const v2 = await send('GET', '/openapi/v2', 200, {
        accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
      });
      assert.equal(v2.headers['content-type'], 'application/octet-stream');
      assert.ok(Number(v2.headers['content-length']) > 1000);
    });
  });

  // -------------------------------------------------------------------------- metrics and content

  describe('metrics and content types', () => {
    it('/metrics exposes request counts, latencies, stored objects and watchers', async () => {
      const r = await send('GET', '/metrics', 200);
      assert.match(String(r.headers['content-type']), /^text\/plain/);
      const lines = r.text.split('\n');
      const request = lines.filter((l) => l.startsWith('apiserver_request_total{'));
      assert.ok(
        request.some(
          (l) => l.includes('verb="POST"') && l.includes('resource="services"') && l.includes('code="201"'),
        ),
        request.join('\n'),
      );
      assert.ok(request.some((l) => l.includes('verb="LIST"') && l.includes('code="200"')));
      assert.ok(request.some((l) => l.includes('verb="APPLY"') && l.includes('code="409"')));
      assert.ok(lines.some((l) => l.startsWith('apiserver_request_duration_seconds_bucket{')));
      const stored = lines.find((l) => l.startsWith('apiserver_storage_objects{resource="services"}'));
      assert.ok(stored, 'apiserver_storage_objects for services');
      assert.ok(Number(stored.split(' ').pop()) > 0, stored);
      assert.ok(r.text.includes('apiserver_registered_watchers'));
    });

    it('a protobuf-first Accept that allows JSON gets JSON', async () => {
      const r = await send('GET', `${svcs('tbl')}/web`, 200, {
        accept: 'application/vnd.kubernetes.protobuf, application/json',
      });
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.json<Obj>().kind, 'Service');
      const l = await send('GET', svcs('tbl'), 200, { accept: 'application/vnd.kubernetes.protobuf,*/*' });
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.equal(l.json<List>().kind, 'ServiceList');
      await send('GET', svcs('tbl'), 406, { accept: 'application/vnd.kubernetes.protobuf' });
    });

    it('events.k8s.io/v1: eventTime with millisecond precision, then a strategic-merge series update', async () => {
      const base = '/apis/events.k8s.io/v1/namespaces/ev/events';
      const e = await create(base, {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'web.1' },
        eventTime: '2026-11-21T06:34:56.823Z',
        reportingController: 'example.com/e2e',
        reportingInstance: 'e2e-1',
        action: 'Reconcile',
        reason: 'Synced',
        type: 'Normal',
        note: 'synced the service',
        regarding: { apiVersion: 'v1', kind: 'Service', namespace: 'ev', name: 'web' },
      });
      // metav1.MicroTime parses any RFC 3339 time; the instant is kept.
      assert.equal(Date.parse(String(e['eventTime'])), Date.parse('2026-11-21T06:34:56.823Z'));
      const s = await patch(`${base}/web.1`, 'strategic-merge-patch+json', {
        series: { count: 2, lastObservedTime: '2026-11-21T06:35:56.823000Z' },
      });
      assert.equal(at(s, 'series.count'), 2);
      assert.equal(
        Date.parse(String(at(s, 'series.lastObservedTime'))),
        Date.parse('2026-11-21T06:35:56.823Z'),
      );
      const l = await list(`${base}?fieldSelector=${encodeURIComponent('regarding.name=web,reason=Synced')}`);
      assert.deepEqual(names(l), ['web.1']);
    });
  });
});
