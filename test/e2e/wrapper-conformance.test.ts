// The conformance of what `svcplane wrapper` serves, through three real clients: an informer of
// @kubernetes/client-node (EndpointSlices and Endpoints), `kubectl get endpointslices -A --watch`, and
// the Python client's watch.Watch().stream(list_endpoint_slice_for_all_namespaces). Each keeps a cache
// of its own. 1,000 seeded random changes go to the upstream (`svcplane up`): node relabels, node
// deletions, readiness flips, endpoints moving between nodes, Service topology rules added, changed and
// removed (SuperEdge, spec.topologyKeys with and without "*", OpenYurt, svcplane's annotation, none, two
// at once), Services deleted and recreated, slices deleted and recreated, and one Service growing past
// 100 endpoints into several slices and shrinking back. The upstream restarts twice during the run and
// the wrapper once (with changes made while it is down). At quiescence every client's cache must equal
// the served view computed here independently: the upstream's objects, read through the upstream's own
// kubeconfig, run through the engine from scratch (decide over all of a Service's slices, not the
// wrapper's incremental index), then through served.ts.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import {
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  makeInformer,
  type Informer,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { KObject } from '../../src/api/object.js';
import { decide, keptEndpoints } from '../../src/core/topology/decide.js';
import { endpointsFromEndpoints, endpointsFromSlices } from '../../src/core/topology/endpoints.js';
import type { TopologyView } from '../../src/core/topology/view.js';
import { topologyService } from '../../src/core/topology/rules.js';
import { servedEndpoints, servedSlice } from '../../src/core/topology/served.js';
import { KUBECTL } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { findPython, jsonObjects, startWrapper, type TestWrapper } from './testing/wrapper.js';

const NS = 'wc';
const NODE = 'e1';
const CHANGES = 1000;
const SEED = Number(process.env.WRAPPER_CONFORMANCE_SEED ?? 20251125);
const PY_SCRIPT = path.resolve('test/e2e/fixtures/python/slice_cache.py');
const SERVICE_NAME = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const UNIT = 'unit';
const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';
const POOL = 'apps.openyurt.io/nodepool';

// ---------------------------------------------------------------------------------------------------
// The projection every cache is compared in: per object, its endpoints as `address|ready|serving|
// terminating|node|hinted zones`, sorted. Raw JSON and client-node's typed objects share the field names.

interface SliceLike {
  metadata?: { name?: string; namespace?: string };
  endpoints?:
    | {
        addresses?: string[];
        conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
        nodeName?: string;
        hints?: { forZones?: { name?: string }[] };
      }[]
    | null;
}
interface EndpointsLike {
  metadata?: { name?: string; namespace?: string };
  subsets?: { addresses?: Address[]; notReadyAddresses?: Address[] }[] | null;
}
interface Address {
  ip: string;
  nodeName?: string;
}

type View = Map<string, string>;
type Cached = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
const flag = (b: boolean | undefined): string => (b === undefined ? '' : String(b));
const keyOf = (o: { metadata?: { name?: string; namespace?: string } }): string =>
  `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

function projectSlice(s: SliceLike): string {
  return JSON.stringify(
    (s.endpoints ?? [])
      .map((e) =>
        [
          e.addresses?.[0] ?? '',
          flag(e.conditions?.ready),
          flag(e.conditions?.serving),
          flag(e.conditions?.terminating),
          e.nodeName ?? '',
          (e.hints?.forZones ?? []).map((z) => z.name ?? '').join(','),
        ].join('|'),
      )
      .sort(),
  );
}

function projectEndpoints(ep: EndpointsLike): string {
  const out: string[] = [];
  for (const s of ep.subsets ?? []) {
    for (const a of s.addresses ?? []) out.push(`${a.ip}|true|${a.nodeName ?? ''}`);
    for (const a of s.notReadyAddresses ?? []) out.push(`${a.ip}|false|${a.nodeName ?? ''}`);
  }
  return JSON.stringify(out.sort());
}

/** Services and Nodes pass through: what a client sees of them must be what the upstream holds. */
interface ServiceLike {
  metadata?: { annotations?: Record<string, string> };
  spec?: { clusterIP?: string; ports?: { port?: number }[] };
}
const sorted = (r: Record<string, string> | undefined): [string, string][] =>
  Object.entries(r ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const projectService = (s: ServiceLike): string =>
  JSON.stringify([sorted(s.metadata?.annotations), s.spec?.clusterIP, s.spec?.ports?.map((p) => p.port)]);
const projectNode = (n: { metadata?: { labels?: Record<string, string> } }): string =>
  JSON.stringify(sorted(n.metadata?.labels));

/** The keys whose values differ, with both sides; empty when equal. */
function diff(want: View, got: View): string[] {
  const out: string[] = [];
  for (const k of new Set([...want.keys(), ...got.keys()]))
    if (want.get(k) !== got.get(k)) out.push(`${k}: want ${want.get(k)} got ${got.get(k)}`);
  return out.sort();
}

// ---------------------------------------------------------------------------------------------------
// The expected served views, from the upstream's objects and the engine run from scratch.

async function listAll<T>(srv: TestServer, p: string): Promise<T[]> {
  const r = await call(srv, 'GET', p);
  assert.equal(r.status, 200, `GET ${p}: ${r.text}`);
  return r.json<{ items: T[] }>().items;
}

/** The Service as the wrapper feeds it to the engine: traffic policies are kube-proxy's business. */
function withoutPolicies(svc: KObject): KObject {
  const spec = { ...((svc as { spec?: Record<string, unknown> }).spec ?? {}) };
  delete spec['internalTrafficPolicy'];
  delete spec['externalTrafficPolicy'];
  return { ...svc, spec } as KObject;
}

async function expectedViews(
  srv: TestServer,
): Promise<{ slices: View; endpoints: View; services: View; nodes: View; filtered: number }> {
  const [services, slices, endpoints, nodes] = await Promise.all([
    listAll<KObject>(srv, '/api/v1/services'),
    listAll<KObject>(srv, '/apis/discovery.k8s.io/v1/endpointslices'),
    listAll<KObject>(srv, '/api/v1/endpoints'),
    listAll<KObject>(srv, '/api/v1/nodes'),
  ]);
  const labels = new Map(nodes.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));
  const slicesOf = (key: string): KObject[] =>
    slices.filter((s) => `${s.metadata.namespace}/${s.metadata.labels?.[SERVICE_NAME]}` === key);
  const endpointsByKey = new Map(endpoints.map((e) => [keyOf(e), e]));
  const views = new Map<string, TopologyView>();
  for (const svc of services) {
    const key = keyOf(svc);
    const own = slicesOf(key);
    const legacy = endpointsByKey.get(key);
    const d = decide({
      service: topologyService(withoutPolicies(svc)),
      endpoints:
        own.length > 0
          ? endpointsFromSlices(own)
          : legacy !== undefined
            ? endpointsFromEndpoints(legacy)
            : [],
      nodeLabels: (n) => labels.get(n),
      node: NODE,
    });
    views.set(key, {
      key,
      internal: keptEndpoints(d.internal),
      internalRule: d.internal.rule,
      ...(d.external !== undefined
        ? { external: keptEndpoints(d.external), externalRule: d.external.rule }
        : {}),
    });
  }
  const sliceView: View = new Map();
  let filtered = 0;
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME];
    const view = svc === undefined ? undefined : views.get(`${s.metadata.namespace}/${svc}`);
    const served = projectSlice(servedSlice(s, view) as SliceLike);
    if (served !== projectSlice(s as SliceLike)) filtered++;
    sliceView.set(keyOf(s), served);
  }
  const endpointsView: View = new Map();
  for (const e of endpoints)
    endpointsView.set(keyOf(e), projectEndpoints(servedEndpoints(e, views.get(keyOf(e))) as EndpointsLike));
  return {
    slices: sliceView,
    endpoints: endpointsView,
    services: new Map(services.map((o) => [keyOf(o), projectService(o as ServiceLike)])),
    nodes: new Map(nodes.map((o) => [keyOf(o), projectNode(o)])),
    filtered,
  };
}

// ---------------------------------------------------------------------------------------------------
// The three clients.

/** client-node informers, restarted after an error as an application runs them (1.4.0 stops on one). */
class NodeInformers {
  private readonly informers: Cached[] = [];
  private stopped = false;
  lists = 0;
  errors = 0;
  readonly slices: Cached;
  readonly endpoints: Cached;
  readonly services: Cached;
  readonly nodes: Cached;

  constructor(kubeconfig: string) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    this.slices = this.add(
      makeInformer(kc, '/apis/discovery.k8s.io/v1/endpointslices', () => {
        this.lists++;
        return discovery.listEndpointSliceForAllNamespaces();
      }),
    );
    this.endpoints = this.add(
      makeInformer(kc, '/api/v1/endpoints', () => {
        this.lists++;
        return core.listEndpointsForAllNamespaces();
      }),
    );
    this.services = this.add(
      makeInformer(kc, '/api/v1/services', () => {
        this.lists++;
        return core.listServiceForAllNamespaces();
      }),
    );
    this.nodes = this.add(
      makeInformer(kc, '/api/v1/nodes', () => {
        this.lists++;
        return core.listNode();
      }),
    );
  }

  private add(inf: Cached): Cached {
    inf.on('error', () => {
      this.errors++;
      if (!this.stopped) setTimeout(() => void (this.stopped ? undefined : inf.start()), 250);
    });
    this.informers.push(inf);
    return inf;
  }

  async start(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.start()));
  }

  sliceView(): View {
    return new Map(this.slices.list().map((o) => [keyOf(o), projectSlice(o as SliceLike)]));
  }

  endpointsView(): View {
    return new Map(this.endpoints.list().map((o) => [keyOf(o), projectEndpoints(o as EndpointsLike)]));
  }

  servicesView(): View {
    return new Map(this.services.list().map((o) => [keyOf(o), projectService(o as ServiceLike)]));
  }

  nodesView(): View {
    return new Map(this.nodes.list().map((o) => [keyOf(o), projectNode(o)]));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}

/**
 * `kubectl get endpointslices -A --watch --output-watch-events -o json`, folded into a cache. kubectl
 * exits when its watch ends (the wrapper restarting); it is then run again, which lists afresh.
 */
class KubectlWatch {
  private proc: ChildProcess | undefined;
  private stopped = false;
  private cache: View = new Map();
  runs = 0;
  stderr = '';

  constructor(
    private readonly kubeconfig: string,
    private readonly home: string,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.runs++;
    const cache: View = new Map();
    this.cache = cache;
    const proc = spawn(
      KUBECTL,
      [
        `--cache-dir=${path.join(this.home, 'cache')}`,
        'get',
        'endpointslices',
        '-A',
        '--watch',
        '--output-watch-events',
        '-o',
        'json',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env['PATH'] ?? '', HOME: this.home, KUBECONFIG: this.kubeconfig },
      },
    );
    this.proc = proc;
    const feed = jsonObjects((v) => {
      const ev = v as { type: string; object: SliceLike };
      if (ev.type === 'DELETED') cache.delete(keyOf(ev.object));
      else if (ev.type === 'ADDED' || ev.type === 'MODIFIED')
        cache.set(keyOf(ev.object), projectSlice(ev.object));
    });
    proc.stdout!.setEncoding('utf8').on('data', feed);
    proc.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    proc.once('exit', () => {
      if (!this.stopped) setTimeout(() => this.start(), 300);
    });
  }

  view(): View {
    return new Map(this.cache);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const p = this.proc;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
  }
}

/** The Python client's cache (fixtures/python/slice_cache.py), dumped on request. */
class PythonWatch {
  private readonly proc: ChildProcess;
  private readonly waiting: ((d: { lists: number; cache: Record<string, string[]> }) => void)[] = [];
  lists = 0;
  errors = 0;
  stderr = '';

  constructor(kubeconfig: string) {
    this.proc = spawn(findPython(), [PY_SCRIPT, kubeconfig], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface(this.proc.stdout!).on('line', (l) => {
      const m = JSON.parse(l) as { type: string; lists: number; cache: Record<string, string[]> };
      if (m.type === 'DUMP') this.waiting.shift()?.(m);
      else if (m.type === 'LISTED') this.lists = m.lists;
      else if (m.type === 'ERROR') this.errors++;
    });
  }

  async view(): Promise<View> {
    if (this.proc.exitCode !== null) throw new Error(`the python client exited: ${this.stderr}`);
    const d = await new Promise<{ cache: Record<string, string[]> }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no dump from python: ${this.stderr}`)), 10_000);
      this.waiting.push((x) => {
        clearTimeout(timer);
        resolve(x);
      });
      this.proc.stdin!.write('dump\n');
    });
    return new Map(Object.entries(d.cache).map(([k, eps]) => [k, JSON.stringify([...eps].sort())]));
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin!.end();
    this.proc.kill('SIGTERM');
    await exited;
  }
}

// ---------------------------------------------------------------------------------------------------
// The upstream world, modelled here so that each random change is a valid one.

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

type Cond = 'ready' | 'terminating' | 'dead';
interface Ep {
  ip: string;
  node: string | undefined;
  cond: Cond;
  /** A zone hint (served slices of edge-rule Services lose it). */
  hint: string | undefined;
}
interface SliceModel {
  name: string;
  service: string;
  port: number;
  exists: boolean;
  eps: Ep[];
}

/** A Service's topology settings: at most one of each, written together (null removes). */
interface RuleSet {
  superedge?: string[];
  specKeys?: string[];
  openyurt?: string;
  svcplane?: string[];
}
const RULES: RuleSet[] = [
  {},
  { superedge: [UNIT] },
  { superedge: [UNIT, ZONE] },
  { superedge: [ZONE] },
  { specKeys: [HOSTNAME, UNIT, '*'] },
  { specKeys: [ZONE, UNIT] },
  { specKeys: [UNIT, '*'] },
  { specKeys: ['*'] },
  { openyurt: HOSTNAME },
  { openyurt: 'openyurt.io/nodepool' },
  { svcplane: [ZONE, '*'] },
];

const NODES = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
const CONDITIONS: Record<Cond, { ready: boolean; serving: boolean; terminating: boolean }> = {
  ready: { ready: true, serving: true, terminating: false },
  terminating: { ready: false, serving: true, terminating: true },
  dead: { ready: false, serving: false, terminating: false },
};

class World {
  readonly nodes = new Map<string, Record<string, string> | undefined>();
  readonly services = new Map<string, { exists: boolean; rule: RuleSet }>();
  readonly slices = new Map<string, SliceModel>();
  readonly legacy: Ep[] = [];
  private readonly ipCounter = new Map<string, number>();
  readonly counts = new Map<string, number>();

  constructor(
    private readonly rnd: () => number,
    private srv: () => TestServer,
  ) {}

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)]!;
  }

  private labelsFor(name: string): Record<string, string> {
    return {
      [HOSTNAME]: name,
      [UNIT]: this.pick(['u1', 'u2', 'u3']),
      [ZONE]: this.pick(['z1', 'z2']),
      [POOL]: this.pick(['p1', 'p2']),
    };
  }

  private newEp(service: string): Ep {
    const i = this.ipCounter.get(service) ?? 0;
    this.ipCounter.set(service, i + 1);
    const s = [...this.services.keys()].indexOf(service) + 1;
    const r = this.rnd();
    return {
      ip: `10.${s}.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      node: r < 0.85 ? this.pick(NODES) : r < 0.93 ? 'ghost' : undefined,
      cond: this.rnd() < 0.75 ? 'ready' : this.pick(['terminating', 'dead'] as const),
      hint: this.rnd() < 0.3 ? this.pick(['z1', 'z2']) : undefined,
    };
  }

  private async write(method: string, p: string, body?: unknown): Promise<void> {
    const r = await call(this.srv(), method, p, {
      ...(body === undefined ? {} : { rawBody: JSON.stringify(body) }),
      ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    });
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${p}: ${r.status} ${r.text}`);
  }

  private count(op: string): void {
    this.counts.set(op, (this.counts.get(op) ?? 0) + 1);
  }

  // -- objects -------------------------------------------------------------------------------------

  private nodeBody(name: string): unknown {
    return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: this.nodes.get(name) } };
  }

  private ruleMeta(rule: RuleSet): {
    annotations: Record<string, string | null>;
    topologyKeys: string[] | null;
  } {
    return {
      annotations: {
        topologyKeys: rule.superedge === undefined ? null : JSON.stringify(rule.superedge),
        'openyurt.io/topologyKeys': rule.openyurt ?? null,
        'service.svcplane.io/topology-keys':
          rule.svcplane === undefined ? null : JSON.stringify(rule.svcplane),
      },
      topologyKeys: rule.specKeys ?? null,
    };
  }

  private serviceBody(name: string): unknown {
    const { annotations, topologyKeys } = this.ruleMeta(this.services.get(name)!.rule);
    const set = Object.fromEntries(Object.entries(annotations).filter(([, v]) => v !== null));
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS, annotations: set },
      spec: { ports: [{ name: 'http', port: 80 }], ...(topologyKeys === null ? {} : { topologyKeys }) },
    };
  }

  private sliceEndpoints(eps: readonly Ep[]): unknown[] {
    return eps.map((e) => ({
      addresses: [e.ip],
      conditions: CONDITIONS[e.cond],
      ...(e.node === undefined ? {} : { nodeName: e.node }),
      ...(e.hint === undefined ? {} : { hints: { forZones: [{ name: e.hint }] } }),
    }));
  }

  private sliceBody(s: SliceModel): unknown {
    return {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: s.name,
        namespace: NS,
        labels: { [SERVICE_NAME]: s.service, [MANAGED_BY]: 'conformance-test' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: s.port, protocol: 'TCP' }],
      endpoints: this.sliceEndpoints(s.eps),
    };
  }

  private legacySubsets(): unknown[] {
    const addr = (e: Ep): Address => ({ ip: e.ip, ...(e.node === undefined ? {} : { nodeName: e.node }) });
    const ready = this.legacy.filter((e) => e.cond === 'ready').map(addr);
    const notReady = this.legacy.filter((e) => e.cond !== 'ready').map(addr);
    return [
      {
        ...(ready.length > 0 ? { addresses: ready } : {}),
        ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      },
    ];
  }

  // -- setup ---------------------------------------------------------------------------------------

  async setup(): Promise<void> {
    await this.write('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    for (const n of NODES) {
      this.nodes.set(n, this.labelsFor(n));
      await this.write('POST', '/api/v1/nodes', this.nodeBody(n));
    }
    const services: [string, RuleSet][] = [
      ['svc-se', { superedge: [UNIT] }],
      ['svc-se2', { superedge: [UNIT, ZONE] }],
      ['svc-keys', { specKeys: [HOSTNAME, UNIT, '*'] }],
      ['svc-keys-strict', { specKeys: [ZONE, UNIT] }],
      ['svc-yurt', { openyurt: 'openyurt.io/nodepool' }],
      ['svc-plain', {}],
      ['svc-big', { superedge: [UNIT] }],
      ['svc-legacy', { specKeys: [UNIT, '*'] }],
    ];
    for (const [name, rule] of services) {
      this.services.set(name, { exists: true, rule });
      await this.write('POST', `/api/v1/namespaces/${NS}/services`, this.serviceBody(name));
    }
    const slice = async (name: string, service: string, port: number, n: number): Promise<void> => {
      const s: SliceModel = { name, service, port, exists: true, eps: [] };
      for (let i = 0; i < n; i++) s.eps.push(this.newEp(service));
      this.slices.set(name, s);
      await this.write(
        'POST',
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        this.sliceBody(s),
      );
    };
    for (const svc of ['svc-se', 'svc-se2', 'svc-keys', 'svc-keys-strict', 'svc-yurt', 'svc-plain']) {
      await slice(`${svc}-a`, svc, 80, 4 + Math.floor(this.rnd() * 5));
      await slice(`${svc}-b`, svc, 80, 3 + Math.floor(this.rnd() * 4));
    }
    // A second pool (another port set): decided on its own.
    await slice('svc-keys-c', 'svc-keys', 8080, 5);
    // A slice whose Service never exists: passed through.
    await slice('orphan-a', 'svc-orphan', 80, 4);
    await slice('svc-big-1', 'svc-big', 80, 95);
    for (let i = 0; i < 6; i++) this.legacy.push(this.newEp('svc-legacy'));
    await this.write('POST', `/api/v1/namespaces/${NS}/endpoints`, {
      metadata: { name: 'svc-legacy', namespace: NS },
      subsets: this.legacySubsets(),
    });
  }

  // -- changes -------------------------------------------------------------------------------------

  async change(): Promise<void> {
    const r = this.rnd();
    if (r < 0.24) return this.relabelNode();
    if (r < 0.5) return this.flipReadiness();
    if (r < 0.56) return this.moveEndpoint();
    if (r < 0.71) return this.changeRule();
    if (r < 0.8) return this.growOrShrinkBig();
    if (r < 0.86) return this.addOrRemoveEndpoint();
    if (r < 0.9) return this.toggleSlice();
    if (r < 0.91) return this.toggleNode();
    if (r < 0.92) return this.moveSlice();
    if (r < 0.94) return this.toggleService();
    return this.flipLegacy();
  }

  private async relabelNode(): Promise<void> {
    const present = [...this.nodes].filter(([, l]) => l !== undefined);
    if (present.length === 0) return this.toggleNode();
    // This node's own labels change often enough to matter (every view may change).
    const [name, labels] =
      this.rnd() < 0.25 && this.nodes.get(NODE) !== undefined
        ? [NODE, this.nodes.get(NODE)!]
        : this.pick(present);
    const key = this.pick([UNIT, UNIT, ZONE, POOL]);
    const value =
      this.rnd() < 0.1
        ? null
        : key === UNIT
          ? this.pick(['u1', 'u2', 'u3'])
          : key === ZONE
            ? this.pick(['z1', 'z2'])
            : this.pick(['p1', 'p2']);
    if (value === null) delete labels![key];
    else labels![key] = value;
    this.count('node relabel');
    await this.write('PATCH', `/api/v1/nodes/${name}`, { metadata: { labels: { [key]: value } } });
  }

  private liveSlices(): SliceModel[] {
    return [...this.slices.values()].filter((s) => s.exists && s.eps.length > 0);
  }

  private async patchSlice(s: SliceModel): Promise<void> {
    await this.write('PATCH', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${s.name}`, {
      endpoints: this.sliceEndpoints(s.eps),
    });
  }

  private async flipReadiness(): Promise<void> {
    const s = this.pick(this.liveSlices());
    const flips = 1 + Math.floor(this.rnd() * 3);
    for (let i = 0; i < flips; i++) {
      const e = this.pick(s.eps);
      e.cond = this.pick((['ready', 'terminating', 'dead'] as const).filter((c) => c !== e.cond));
    }
    this.count('readiness flip');
    await this.patchSlice(s);
  }

  private async moveEndpoint(): Promise<void> {
    const s = this.pick(this.liveSlices());
    const e = this.pick(s.eps);
    e.node = this.rnd() < 0.9 ? this.pick(NODES) : 'ghost';
    this.count('endpoint move');
    await this.patchSlice(s);
  }

  private async changeRule(): Promise<void> {
    const live = [...this.services].filter(([, s]) => s.exists);
    const [name, svc] = this.pick(live);
    const rule: RuleSet = { ...this.pick(RULES) };
    // Now and then two rules at once: the engine's precedence decides.
    if (this.rnd() < 0.2) {
      const extra = this.pick(RULES);
      if (rule.superedge === undefined && extra.superedge !== undefined) rule.superedge = extra.superedge;
      else if (rule.openyurt === undefined && extra.openyurt !== undefined) rule.openyurt = extra.openyurt;
      else if (rule.svcplane === undefined && extra.svcplane !== undefined) rule.svcplane = extra.svcplane;
    }
    svc.rule = rule;
    const { annotations, topologyKeys } = this.ruleMeta(rule);
    this.count('service rule');
    await this.write('PATCH', `/api/v1/namespaces/${NS}/services/${name}`, {
      metadata: { annotations },
      spec: { topologyKeys },
    });
  }

  private bigSlices(): SliceModel[] {
    return [...this.slices.values()].filter((s) => s.service === 'svc-big' && s.exists);
  }

  private async growOrShrinkBig(): Promise<void> {
    const big = this.bigSlices();
    const total = big.reduce((n, s) => n + s.eps.length, 0);
    if (total > 320 || (total > 110 && this.rnd() < 0.3)) {
      // Shrink: the last slice goes.
      const last = big[big.length - 1]!;
      if (big.length === 1) {
        last.eps.splice(50);
        this.count('big shrink');
        return this.patchSlice(last);
      }
      last.exists = false;
      this.count('big slice delete');
      return this.write('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${last.name}`);
    }
    // Grow by 10-40 endpoints: fill the last slice up to 100, then a new slice.
    let add = 10 + Math.floor(this.rnd() * 31);
    const last = big[big.length - 1]!;
    const room = Math.min(add, 100 - last.eps.length);
    if (room > 0) {
      for (let i = 0; i < room; i++) last.eps.push(this.newEp('svc-big'));
      add -= room;
      this.count('big grow');
      await this.patchSlice(last);
    }
    if (add > 0) {
      const name = `svc-big-${big.length + 1}`;
      const s: SliceModel = { name, service: 'svc-big', port: 80, exists: true, eps: [] };
      for (let i = 0; i < add; i++) s.eps.push(this.newEp('svc-big'));
      this.slices.set(name, s);
      this.count('big split');
      await this.write(
        'POST',
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        this.sliceBody(s),
      );
    }
  }

  private async addOrRemoveEndpoint(): Promise<void> {
    const s = this.pick(this.liveSlices().filter((x) => x.service !== 'svc-big'));
    if (s.eps.length > 2 && this.rnd() < 0.5) s.eps.splice(Math.floor(this.rnd() * s.eps.length), 1);
    else s.eps.push(this.newEp(s.service));
    this.count('endpoint add/remove');
    await this.patchSlice(s);
  }

  private async toggleSlice(): Promise<void> {
    // Mostly recreate a missing slice when there is one, so that most slices exist at any time.
    const candidates = [...this.slices.values()].filter((x) => x.service !== 'svc-big');
    const missing = candidates.filter((x) => !x.exists);
    const s =
      missing.length > 0 && this.rnd() < 0.7
        ? this.pick(missing)
        : this.pick(candidates.filter((x) => x.exists));
    this.count('slice delete/create');
    if (s.exists) {
      s.exists = false;
      return this.write('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${s.name}`);
    }
    s.exists = true;
    s.eps = [];
    for (let i = 0; i < 3 + Math.floor(this.rnd() * 4); i++) s.eps.push(this.newEp(s.service));
    await this.write('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, this.sliceBody(s));
  }

  /** A slice relabelled to another Service: it leaves the old Service's view and joins the new one's. */
  private async moveSlice(): Promise<void> {
    const s = this.pick([...this.slices.values()].filter((x) => x.exists && x.service !== 'svc-big'));
    s.service = this.pick([
      'svc-se',
      'svc-se2',
      'svc-keys',
      'svc-keys-strict',
      'svc-yurt',
      'svc-plain',
      'svc-orphan',
    ]);
    this.count('slice moved to another service');
    await this.write('PATCH', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${s.name}`, {
      metadata: { labels: { [SERVICE_NAME]: s.service } },
    });
  }

  private async toggleNode(): Promise<void> {
    const name = this.pick([NODE, 'e5', 'e6']);
    this.count('node delete/create');
    if (this.nodes.get(name) !== undefined) {
      this.nodes.set(name, undefined);
      return this.write('DELETE', `/api/v1/nodes/${name}`);
    }
    this.nodes.set(name, this.labelsFor(name));
    await this.write('POST', '/api/v1/nodes', this.nodeBody(name));
  }

  private async toggleService(): Promise<void> {
    const name = this.pick(['svc-se2', 'svc-plain', 'svc-yurt']);
    const svc = this.services.get(name)!;
    this.count('service delete/create');
    if (svc.exists) {
      svc.exists = false;
      return this.write('DELETE', `/api/v1/namespaces/${NS}/services/${name}`);
    }
    svc.exists = true;
    svc.rule = { ...this.pick(RULES) };
    await this.write('POST', `/api/v1/namespaces/${NS}/services`, this.serviceBody(name));
  }

  private async flipLegacy(): Promise<void> {
    const e = this.pick(this.legacy);
    e.cond = e.cond === 'ready' ? 'dead' : 'ready';
    if (this.rnd() < 0.3) e.node = this.pick(NODES);
    this.count('endpoints flip');
    await this.write('PATCH', `/api/v1/namespaces/${NS}/endpoints/svc-legacy`, {
      subsets: this.legacySubsets(),
    });
  }
}

// ---------------------------------------------------------------------------------------------------

describe('svcplane wrapper: the served API through three clients', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'svcplane-wrapper-conformance-'));
  const upDir = path.join(tmp, 'up');
  const wrapperDir = path.join(tmp, 'wrapper');
  let srv: TestServer | undefined;
  let wrapper: TestWrapper | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await wrapper?.stop();
    await srv?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('informer, kubectl --watch and python caches equal the engine view after 1,000 changes and restarts', async (t) => {
    const started = Date.now();
    srv = await startUp({ dataDir: upDir });
    const upPort = srv.port;
    const world = new World(prng(SEED), () => srv!);
    await world.setup();

    wrapper = await startWrapper({ upstreamKubeconfig: srv.kubeconfig, hostname: NODE, dataDir: wrapperDir });
    const wrapperPort = wrapper.port;
    const kubeconfig = wrapper.kubeconfig;

    const informers = new NodeInformers(kubeconfig);
    cleanups.push(() => informers.stop());
    await informers.start();
    const kubectl = new KubectlWatch(kubeconfig, path.join(tmp, 'kubectl-home'));
    cleanups.push(() => kubectl.stop());
    kubectl.start();
    const python = new PythonWatch(kubeconfig);
    cleanups.push(() => python.stop());

    /** Polls until every client's cache equals the engine's view; fails with the differences. */
    const converge = async (when: string, timeoutMs: number): Promise<number> => {
      const t0 = Date.now();
      let problems: string[];
      for (;;) {
        const want = await expectedViews(srv!);
        const got: [string, View, View][] = [
          ['client-node informer (endpointslices)', want.slices, informers.sliceView()],
          ['client-node informer (endpoints)', want.endpoints, informers.endpointsView()],
          ['client-node informer (services)', want.services, informers.servicesView()],
          ['client-node informer (nodes)', want.nodes, informers.nodesView()],
          ['kubectl get --watch', want.slices, kubectl.view()],
          ['python watch', want.slices, await python.view()],
        ];
        problems = got.flatMap(([who, w, g]) => {
          const d = diff(w, g);
          return d.length === 0 ? [] : [`${who}: ${d.length} differ:\n    ${d.slice(0, 8).join('\n    ')}`];
        });
        if (problems.length === 0) return Date.now() - t0;
        if (Date.now() - t0 > timeoutMs) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.fail(
        `${when}: the clients' caches did not converge to the engine's view in ${timeoutMs} ms:\n  ${problems.join('\n  ')}\n` +
          `wrapper stderr (tail): ${wrapper!.stderr().slice(-2000)}\nkubectl stderr: ${kubectl.stderr}\npython stderr: ${python.stderr}`,
      );
    };

    const first = await converge('after setup', 20_000);
    t.diagnostic(`setup converged in ${first} ms (${Date.now() - started} ms since start)`);

    const restartUpstream = async (): Promise<void> => {
      assert.equal(await srv!.stop(), 0, srv!.stderr());
      srv = await startUp({ dataDir: upDir, args: ['--secure-port', String(upPort)] });
      assert.equal(srv.port, upPort);
    };
    const changesStarted = Date.now();
    const checkpoints: string[] = [];
    for (let i = 0; i < CHANGES; i++) {
      if (i === 250 || i === 800) await restartUpstream();
      if (i === 500) {
        checkpoints.push(`before the wrapper stops ${await converge('before the wrapper stops', 20_000)} ms`);
        assert.equal(await wrapper.stop(), 0, wrapper.stderr());
      }
      if (i === 600) {
        // 100 changes were made while it was down: its store still serves the old views, then the
        // differences go out.
        wrapper = await startWrapper({
          upstreamKubeconfig: srv.kubeconfig,
          hostname: NODE,
          dataDir: wrapperDir,
          port: wrapperPort,
        });
        assert.equal(wrapper.port, wrapperPort);
        assert.equal(wrapper.kubeconfig, kubeconfig);
        checkpoints.push(
          `after the wrapper restarts ${await converge('after the wrapper restarts', 20_000)} ms`,
        );
      }
      await world.change();
    }
    t.diagnostic(
      `${CHANGES} changes in ${Date.now() - changesStarted} ms (${checkpoints.join(', ')}): ` +
        [...world.counts].map(([k, n]) => `${k} ${n}`).join(', '),
    );

    const last = await converge('after the changes and restarts', 20_000);
    t.diagnostic(
      `quiescent in ${last} ms; informer lists ${informers.lists} errors ${informers.errors}; kubectl runs ${kubectl.runs}; ` +
        `python lists ${python.lists} errors ${python.errors}; total ${Date.now() - started} ms`,
    );
    // The run exercised what it claims to: slices past 100 endpoints, and filtering at the end.
    assert.ok((world.counts.get('big split') ?? 0) > 0, 'svc-big was split past 100 endpoints');
    const end = await expectedViews(srv);
    t.diagnostic(`at the end: ${end.filtered} of ${end.slices.size} slices served filtered`);
    assert.ok(end.filtered > 0, 'some slices are served filtered');
    // Every client noticed the wrapper going away and came back on its own (client-node resumes its
    // watch from its last resourceVersion, which the restarted wrapper still serves; kubectl and the
    // python script list again).
    assert.ok(informers.errors > 0, `the informers saw the wrapper go away (errors: ${informers.errors})`);
    assert.ok(kubectl.runs >= 2, `kubectl was run again after its watch ended (runs: ${kubectl.runs})`);
    assert.ok(python.lists >= 2, `the python client relisted (lists: ${python.lists})`);
  });
});
