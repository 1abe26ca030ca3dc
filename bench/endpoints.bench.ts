// Endpoints/EndpointSlice controller benchmark (issue 5): `svcplane controller-manager` in its own
// process against `svcplane apiserver` in another, so the controllers' CPU and RSS are theirs alone.
//
//   - preload (straight into the embedded store before the API server starts, see lib/preload.ts):
//     1,000 nodes in 10 zones, 10,000 ClusterIP Services (addresses recorded as the allocator records
//     them) over 50 namespaces and 100,000 Running, Ready pods, 10 per Service, each Service's pods on 10
//     nodes in 10 zones (SVCPLANE_BENCH_ENDPOINTS_NAMESPACES=1 puts them all in one namespace);
//   - cold convergence: from the controller-manager's spawn until a watcher has seen every Service's
//     EndpointSlices (and Endpoints) list its 10 pods as ready;
//   - then 20 pod readiness flips per second for 60 s (Ready True → False on a fresh pod, and back to
//     True on one flipped a few seconds earlier, alternately), each a strategic-merge PATCH of
//     pods/NAME/status as a kubelet sends it: latency from the PATCH response (the write accepted) to a
//     watcher seeing that pod's endpoint condition change in an EndpointSlice (and in the Endpoints);
//     p50/p99/max and flips never seen within the timeout; split at the moment a watch on pods sees
//     the change (the API server's share before it, the controller's after);
//   - controller-manager CPU seconds (/proc/<pid>/stat) for the convergence and for the flip phase, and
//     its peak RSS (VmHWM); the API server's for context, and the requests it served (from its
//     /metrics) with their mean server-side time. SVCPLANE_BENCH_CONTROLLER_NODE_ARGS (and
//     SVCPLANE_BENCH_SERVER_NODE_ARGS) pass node flags, e.g. "--cpu-prof --cpu-prof-dir=DIR".
//
// Goals: flip p99 ≤ 100 ms (EndpointSlices); controller-manager RSS ≤ 1 GiB.
//
// One run (no repetitions: the cold start takes minutes at full size); every figure is that run's.
// The watcher and the flipper are separate processes (this file, forked with
// SVCPLANE_ENDPOINTS_BENCH_ROLE=watcher|flipper), so neither shares an event loop with the other or with
// the orchestrator. Everything shares the machine's CPUs (2 on the reference VM).
import { spawnSync } from 'node:child_process';
import type https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  scratchDir,
  startApiServer,
  startSvcplane,
  stopChild,
  svcplaneRuntime,
  writeKubeconfig,
  type ApiServerProc,
  type Proc,
  type SvcplaneRuntime,
} from './lib/cluster.js';
import { agentFor, epochMs, request, type Conn } from './lib/http.js';
import {
  namespaceOf,
  podKey,
  podName,
  preloadCluster,
  type ClusterShape,
  type PreloadFigures,
} from './lib/preload.js';
import { cpuSeconds, memory, serveWorker, sleep, Worker } from './lib/process.js';
import { Watch, type WatchEventLine } from './lib/watch.js';
import { percentile, type BenchContext, type BenchResult } from './run.js';
import { prng } from '../src/storage/testing/helpers.js'; // seeded, so every run flips the same pods

/** The controllers the benchmark runs; those the controller-manager does not know yet are left out. */
const CONTROLLERS = ['endpoints', 'endpointslice'] as const;

const SELF = fileURLToPath(import.meta.url);
const ROLE_ENV = 'SVCPLANE_ENDPOINTS_BENCH_ROLE';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const NS_PREFIX = 'bench-ep-';

interface Sizes {
  readonly shape: ClusterShape;
  /** Readiness flips per second, and for how long. */
  readonly flipRate: number;
  readonly flipSeconds: number;
  /** A pod flipped to not-ready is flipped back no sooner than this. */
  readonly restoreAfterMs: number;
  /** A flip not seen by the watcher this long after its PATCH was accepted counts as lost. */
  readonly seenTimeoutMs: number;
  readonly convergeTimeoutS: number;
  /**
   * After convergence the flips wait until the controller-manager is quiet (under 0.05 cores for
   * `quietSeconds` in a row), at most `settleMaxSeconds`: work it still does then is its own backlog.
   */
  readonly quietSeconds: number;
  readonly settleMaxSeconds: number;
  /** How long the settled controller-manager's idle CPU is sampled. */
  readonly idleSeconds: number;
}

/**
 * Namespaces the Services are spread over: by default 50 at full size (200 Services and 2,000 pods
 * each, inside upstream's per-namespace scalability thresholds of 5,000 Services and 3,000 pods), 5 in
 * quick mode. SVCPLANE_BENCH_ENDPOINTS_NAMESPACES=N overrides both (N=1: every Service and pod in one
 * namespace, the controllers' worst case, since a pod change is matched against every Service of its
 * namespace and a Service's sync against every pod of it).
 */
const namespaces = (byDefault: number): number => {
  const n = Math.trunc(Number(process.env.SVCPLANE_BENCH_ENDPOINTS_NAMESPACES ?? byDefault));
  return Number.isFinite(n) && n >= 1 ? n : byDefault;
};

const FULL: Sizes = {
  shape: {
    nodes: 1000,
    zones: 10,
    namespaces: namespaces(50),
    services: 10_000,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flipRate: 20,
  flipSeconds: 60,
  restoreAfterMs: 3000,
  seenTimeoutMs: 10_000,
  convergeTimeoutS: 1800,
  quietSeconds: 3,
  settleMaxSeconds: 180,
  idleSeconds: 2,
};
const QUICK: Sizes = {
  shape: {
    nodes: 20,
    zones: 10,
    namespaces: namespaces(5),
    services: 100,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flipRate: 20,
  flipSeconds: 2,
  restoreAfterMs: 500,
  seenTimeoutMs: 5000,
  convergeTimeoutS: 60,
  quietSeconds: 1,
  settleMaxSeconds: 15,
  idleSeconds: 0.5,
};

type Target = 'slices' | 'endpoints';
const TARGETS: readonly Target[] = ['slices', 'endpoints'];
const WATCH_PATHS: Record<Target, string> = {
  slices: '/apis/discovery.k8s.io/v1/endpointslices',
  endpoints: '/api/v1/endpoints',
};

// ------------------------------------------------------------------------------------- the watcher

interface TargetStatus {
  events: number;
  /** Services whose objects list exactly podsPerService ready endpoints. */
  converged: number;
  /** Arrival time of the event that made the last Service converge. */
  convergedAt?: number;
  firstEventAt?: number;
  connects: number;
  relists: number;
  errors: number;
  lastError?: string;
}

interface Flip {
  pod: string;
  ready: boolean;
  sentAt: number;
  acceptedAt: number;
  status: number;
  error?: string;
}

type WatcherRequest =
  | { op: 'start'; conn: Conn; services: number; podsPerService: number }
  | { op: 'status' }
  | { op: 'record' }
  | { op: 'match'; flips: Flip[] }
  | { op: 'stop' };

type WatcherStatus = Record<Target, TargetStatus>;
/** Per flip, per target: when the watcher saw the flipped condition (undefined: not yet). */
type MatchReply = Record<Target | 'pods', Array<number | undefined>>;

/** Ready endpoints per Service and each pod's last seen condition, from one kind of object. */
class ReadyTracker {
  readonly status: TargetStatus = { events: 0, converged: 0, connects: 0, relists: 0, errors: 0 };
  /** object key → its Service and its endpoints (pod key → ready). */
  private readonly objects = new Map<string, { svc: string; endpoints: Map<string, boolean> }>();
  private readonly readyPerService = new Map<string, number>();
  private readonly podReady = new Map<string, boolean>();
  /** pod key → [time, ready] of every change seen while recording. */
  readonly transitions = new Map<string, Array<[number, boolean]>>();
  recording = false;

  constructor(
    private readonly target: Target,
    private readonly services: number,
    private readonly expected: number,
  ) {}

  private endpointsOf(obj: Record<string, unknown>, ns: string): Map<string, boolean> {
    const out = new Map<string, boolean>();
    type Ref = { targetRef?: { name?: string; namespace?: string } };
    const add = (ref: Ref['targetRef'], ready: boolean): void => {
      if (ref?.name !== undefined) out.set(`${ref.namespace ?? ns}/${ref.name}`, ready);
    };
    if (this.target === 'slices') {
      for (const ep of (obj['endpoints'] as Array<Ref & { conditions?: { ready?: boolean } }> | null) ?? [])
        add(ep.targetRef, ep.conditions?.ready === true);
    } else {
      for (const ss of (obj['subsets'] as Array<{ addresses?: Ref[]; notReadyAddresses?: Ref[] }> | null) ??
        []) {
        for (const a of ss.addresses ?? []) add(a.targetRef, true);
        for (const a of ss.notReadyAddresses ?? []) add(a.targetRef, false);
      }
    }
    return out;
  }

  private addReady(svc: string, delta: number): void {
    if (delta === 0) return;
    const before = this.readyPerService.get(svc) ?? 0;
    const after = before + delta;
    this.readyPerService.set(svc, after);
    if (before === this.expected) this.status.converged--;
    if (after === this.expected) this.status.converged++;
  }

  onEvent(ev: WatchEventLine, t: number): void {
    const meta = ev.object.metadata ?? {};
    const ns = meta.namespace ?? '';
    if (!ns.startsWith(NS_PREFIX)) return;
    this.status.events++;
    this.status.firstEventAt ??= t;
    const key = `${ns}/${meta.name ?? ''}`;
    const labels = (meta as { labels?: Record<string, string> }).labels ?? {};
    const svc = this.target === 'slices' ? `${ns}/${labels[SERVICE_NAME_LABEL] ?? ''}` : key;
    const old = this.objects.get(key);
    const endpoints = ev.type === 'DELETED' ? new Map<string, boolean>() : this.endpointsOf(ev.object, ns);
    const count = (m: Map<string, boolean> | undefined): number => {
      let n = 0;
      for (const r of m?.values() ?? []) if (r) n++;
      return n;
    };
    if (old !== undefined) this.addReady(old.svc, -count(old.endpoints));
    this.addReady(svc, count(endpoints));
    if (ev.type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, { svc, endpoints });
    for (const [pod, ready] of endpoints) {
      if (this.podReady.get(pod) === ready) continue;
      this.podReady.set(pod, ready);
      if (this.recording) {
        let list = this.transitions.get(pod);
        if (list === undefined) this.transitions.set(pod, (list = []));
        list.push([t, ready]);
      }
    }
    if (this.status.converged === this.services && this.status.convergedAt === undefined)
      this.status.convergedAt = t;
  }

  /** When the watcher first saw `flip`'s condition at or after the flip was sent. */
  seen(flip: Flip): number | undefined {
    for (const [t, ready] of this.transitions.get(flip.pod) ?? [])
      if (ready === flip.ready && t >= flip.sentAt) return t;
    return undefined;
  }
}

/** Each bench pod's Ready condition as a watch on pods shows its changes (from the flips on). */
class PodTracker {
  readonly transitions = new Map<string, Array<[number, boolean]>>();
  errors = 0;

  onEvent(ev: WatchEventLine, t: number): void {
    const meta = ev.object.metadata ?? {};
    if (ev.type === 'DELETED' || !(meta.namespace ?? '').startsWith(NS_PREFIX)) return;
    const conditions =
      (ev.object['status'] as { conditions?: Array<{ type?: string; status?: string }> } | undefined)
        ?.conditions ?? [];
    const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    const pod = `${meta.namespace}/${meta.name}`;
    let list = this.transitions.get(pod);
    if (list === undefined) this.transitions.set(pod, (list = []));
    if (list[list.length - 1]?.[1] !== ready) list.push([t, ready]);
  }

  seen(flip: Flip): number | undefined {
    for (const [t, ready] of this.transitions.get(flip.pod) ?? [])
      if (ready === flip.ready && t >= flip.sentAt) return t;
    return undefined;
  }
}

function watcherMain(): void {
  let trackers: Record<Target, ReadyTracker> | undefined;
  let watches: Watch[] = [];
  let conn: Conn | undefined;
  const pods = new PodTracker();
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        const t = {
          slices: new ReadyTracker('slices', msg.services, msg.podsPerService),
          endpoints: new ReadyTracker('endpoints', msg.services, msg.podsPerService),
        };
        trackers = t;
        conn = msg.conn;
        watches = TARGETS.map(
          (target) =>
            new Watch(
              msg.conn,
              WATCH_PATHS[target],
              (ev, at) => t[target].onEvent(ev, at),
              {},
              (err) => {
                t[target].status.errors++;
                t[target].status.lastError = err.message.slice(0, 300);
              },
            ),
        );
        await Promise.all(watches.map((w) => w.connected()));
        return null;
      }
      case 'status': {
        if (trackers === undefined) throw new Error('not started');
        const out = {} as WatcherStatus;
        TARGETS.forEach((target, i) => {
          const s = trackers![target].status;
          s.connects = watches[i]!.stats.connects;
          s.relists = watches[i]!.stats.relists;
          out[target] = { ...s };
        });
        return out;
      }
      case 'record': {
        for (const target of TARGETS) trackers![target].recording = true;
        // Pod changes from now on (no initial state): when a flip became visible to watchers.
        const c = conn!;
        const agent = agentFor(c, 1);
        const res = await request(agent, c, 'GET', '/api/v1/pods?limit=1', { keepText: true });
        agent.destroy();
        const rv = (JSON.parse(res.text ?? '{}') as { metadata?: { resourceVersion?: string } }).metadata
          ?.resourceVersion;
        if (res.status !== 200 || rv === undefined) throw new Error(`GET pods: ${res.status}`);
        const w = new Watch(
          c,
          '/api/v1/pods',
          (ev, at) => pods.onEvent(ev, at),
          {},
          () => pods.errors++,
          rv,
        );
        watches.push(w);
        await w.connected();
        return null;
      }
      case 'match': {
        const out = {} as MatchReply;
        for (const target of TARGETS) out[target] = msg.flips.map((f) => trackers![target].seen(f));
        out.pods = msg.flips.map((f) => pods.seen(f));
        return out;
      }
      case 'stop':
        for (const w of watches) w.stop();
        watches = [];
        return null;
    }
  });
}

// ------------------------------------------------------------------------------------- the flipper

interface FlipRequest {
  op: 'flips';
  conn: Conn;
  shape: ClusterShape;
  rate: number;
  durationMs: number;
  restoreAfterMs: number;
  seed: number;
}

/** The Ready (and ContainersReady) conditions as a kubelet patches them. */
function statusPatch(ready: boolean): string {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = ready ? 'True' : 'False';
  return JSON.stringify({
    status: {
      conditions: [
        { type: 'ContainersReady', status, lastTransitionTime: now, lastProbeTime: null },
        { type: 'Ready', status, lastTransitionTime: now, lastProbeTime: null },
      ],
    },
  });
}

async function flipsMain(msg: FlipRequest): Promise<Flip[]> {
  const { conn, shape } = msg;
  const agent: https.Agent = agentFor(conn, 16);
  try {
    // Opens the connections (TLS handshakes) before the first timed request.
    await Promise.all(Array.from({ length: 4 }, () => request(agent, conn, 'GET', '/version')));
    const random = prng(msg.seed);
    const pods = shape.services * shape.podsPerService;
    const used = new Set<number>();
    /** Pods flipped to not-ready whose PATCH was accepted, oldest first. */
    const down: Array<{ j: number; at: number }> = [];
    const flips: Flip[] = [];
    const inflight: Array<Promise<void>> = [];
    const send = (j: number, ready: boolean): void => {
      const s = Math.floor(j / shape.podsPerService);
      const r = j % shape.podsPerService;
      const ns = namespaceOf(shape, s);
      const flip: Flip = { pod: podKey(shape, s, r), ready, sentAt: epochMs(), acceptedAt: 0, status: 0 };
      flips.push(flip);
      inflight.push(
        request(agent, conn, 'PATCH', `/api/v1/namespaces/${ns}/pods/${podName(s, r)}/status`, {
          body: statusPatch(ready),
          contentType: 'application/strategic-merge-patch+json',
          keepText: true,
        }).then(
          (res) => {
            flip.acceptedAt = epochMs();
            flip.status = res.status;
            if (res.status !== 200) flip.error = (res.text ?? '').slice(0, 300);
            else if (!ready) down.push({ j, at: flip.acceptedAt });
          },
          (err: unknown) => {
            flip.acceptedAt = epochMs();
            flip.error = String(err);
          },
        ),
      );
    };
    const interval = 1000 / msg.rate;
    const total = Math.round((msg.durationMs / 1000) * msg.rate);
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = t0 + i * interval - performance.now();
      if (wait > 0) await sleep(wait);
      const oldest = down[0];
      if (i % 2 === 1 && oldest !== undefined && epochMs() - oldest.at >= msg.restoreAfterMs) {
        down.shift();
        send(oldest.j, true);
        continue;
      }
      if (used.size >= pods) break;
      let j = Math.floor(random() * pods);
      while (used.has(j)) j = (j + 1) % pods;
      used.add(j);
      send(j, false);
    }
    await Promise.all(inflight);
    return flips;
  } finally {
    agent.destroy();
  }
}

function flipperMain(): void {
  serveWorker<FlipRequest>((msg) => flipsMain(msg));
}

const role = process.env[ROLE_ENV];
if (role === 'watcher') watcherMain();
else if (role === 'flipper') flipperMain();

// ------------------------------------------------------------------------------------ orchestrator

/** CPU and memory of the processes under test, sampled every second for the timeline. */
interface Sample {
  t: number;
  cmCpuS?: number;
  cmRssMiB?: number;
  apiCpuS: number;
  apiRssMiB: number;
}

interface LatencyFigures {
  flips: number;
  seen: number;
  lost: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latencyFigures(flips: Flip[], seen: Array<number | undefined>, timeoutMs: number): LatencyFigures {
  const lat: number[] = [];
  let lost = 0;
  flips.forEach((f, i) => {
    const t = seen[i];
    if (t === undefined || t - f.acceptedAt > timeoutMs) lost++;
    else lat.push(t - f.acceptedAt);
  });
  return {
    flips: flips.length,
    seen: lat.length,
    lost,
    p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
    p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
    maxMs: lat.length === 0 ? NaN : Math.max(...lat),
  };
}

/** The controllers this runtime's controller-manager knows, from its --help. */
function knownControllers(runtime: SvcplaneRuntime): string[] {
  const r = spawnSync(process.execPath, [...runtime.argv, 'controller-manager', '--help'], {
    encoding: 'utf8',
  });
  const m = /known: ([\w, -]+)/.exec(r.stdout ?? '');
  if (r.status !== 0 || m === null) throw new Error(`controller-manager --help: ${r.status} ${r.stderr}`);
  return m[1]!.split(',').map((s) => s.trim());
}

/** Requests the API server counted, by "VERB resource[/subresource]": how many and their total seconds. */
type ApiRequests = Record<string, { count: number; sumS: number }>;

/** apiserver_request_duration_seconds from the API server's /metrics, for the resources named. */
async function apiRequests(conn: Conn, resources: readonly string[]): Promise<ApiRequests> {
  const agent = agentFor(conn, 1);
  try {
    const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
    if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
    const out: ApiRequests = {};
    for (const line of (res.text ?? '').split('\n')) {
      const m = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
      if (m === null) continue;
      const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (!resources.includes(labels['resource'] ?? '')) continue;
      const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
      const e = (out[key] ??= { count: 0, sumS: 0 });
      if (m[1] === 'sum') e.sumS += Number(m[3]);
      else e.count += Number(m[3]);
    }
    return out;
  } finally {
    agent.destroy();
  }
}

/** What the API server served between two scrapes: requests and mean server-side latency per verb. */
function apiDelta(
  before: ApiRequests,
  after: ApiRequests,
): Record<string, { requests: number; meanMs: number }> {
  const out: Record<string, { requests: number; meanMs: number }> = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { count: 0, sumS: 0 };
    const n = a.count - b.count;
    if (n > 0) out[k] = { requests: n, meanMs: ((a.sumS - b.sumS) / n) * 1000 };
  }
  return out;
}

const API_RESOURCES = ['endpoints', 'endpointslices', 'pods', 'services', 'nodes'];

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const shape = z.shape;
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1) {
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
        'compete for the CPUs, so times and latencies are pessimistic',
    );
  }
  const runtime = svcplaneRuntime();
  const known = knownControllers(runtime);
  const controllers = CONTROLLERS.filter((c) => known.includes(c));
  const missing = CONTROLLERS.filter((c) => !known.includes(c));
  ctx.log(`svcplane from ${runtime.kind} (${runtime.why}); controllers: ${controllers.join(',')}`);
  if (missing.length > 0)
    ctx.log(`note: the controller-manager does not know ${missing.join(', ')} yet: not measured`);
  if (controllers.length === 0) throw new Error('no controller to measure');
  const measured: Target[] = [
    ...(controllers.includes('endpointslice') ? (['slices'] as const) : []),
    ...(controllers.includes('endpoints') ? (['endpoints'] as const) : []),
  ];

  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-endpoints-')));
  const dataDir = path.join(root, 'data');
  mkdirSync(dataDir, { recursive: true });
  const workers: Array<Worker<unknown>> = [];
  let api: ApiServerProc | undefined;
  let cm: Proc | undefined;
  const samples: Sample[] = [];
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    // ---- preload
    const pods = shape.services * shape.podsPerService;
    ctx.log(
      `preload: ${shape.nodes} nodes in ${shape.zones} zones, ${shape.services} services in ` +
        `${shape.namespaces} namespace(s), ${pods} pods`,
    );
    const preload: PreloadFigures = await preloadCluster(dataDir, shape, ctx.log);
    ctx.log(
      `preload: ${preload.objects} keys in ${preload.seconds.toFixed(1)} s ` +
        `(${Math.round(preload.avgPodBytes)} bytes per pod)`,
    );

    // ---- API server
    const tApi = performance.now();
    api = await startApiServer(runtime, dataDir, ['--service-cluster-ip-range', shape.serviceCidr], {
      timeoutMs: 300_000,
      nodeArgs: nodeArgs('SVCPLANE_BENCH_SERVER_NODE_ARGS'),
    });
    const apiStartS = (performance.now() - tApi) / 1000;
    const apiRssStartMiB = memory(api.pid).rssMiB;
    ctx.log(
      `apiserver ready in ${apiStartS.toFixed(1)} s (pid ${api.pid}, RSS ${apiRssStartMiB.toFixed(0)} MiB)`,
    );
    const kubeconfig = path.join(root, 'kubeconfig');
    writeKubeconfig(kubeconfig, api);

    // ---- watcher, before the controllers start
    const watcher = new Worker<WatcherRequest>(SELF, { [ROLE_ENV]: 'watcher' }, 'watcher');
    workers.push(watcher as Worker<unknown>);
    await watcher.call({
      op: 'start',
      conn: api.conn,
      services: shape.services,
      podsPerService: shape.podsPerService,
    });
    const apiPid = api.pid;
    /** Set once the controller-manager runs. */
    const cmRef: { pid?: number } = {};
    const t0 = epochMs();
    const sample = (): Sample => {
      const s: Sample = {
        t: (epochMs() - t0) / 1000,
        apiCpuS: cpuSeconds(apiPid),
        apiRssMiB: memory(apiPid).rssMiB,
      };
      if (cmRef.pid !== undefined) {
        try {
          s.cmCpuS = cpuSeconds(cmRef.pid);
          s.cmRssMiB = memory(cmRef.pid).rssMiB;
        } catch {
          /* exited */
        }
      }
      return s;
    };
    sampler = setInterval(() => samples.push(sample()), 1000);

    // ---- cold convergence
    const api0 = await apiRequests(api.conn, API_RESOURCES);
    const cmSpawnAt = epochMs();
    cm = await startSvcplane(
      'controller-manager',
      runtime,
      ['controller-manager', '--kubeconfig', kubeconfig, '--controllers', controllers.join(',')],
      /controller-manager running/,
      { timeoutMs: 600_000, nodeArgs: nodeArgs('SVCPLANE_BENCH_CONTROLLER_NODE_ARGS') },
    );
    cmRef.pid = cm.pid;
    const cmReadyS = (epochMs() - cmSpawnAt) / 1000;
    const cmCpuAtReady = cpuSeconds(cm.pid);
    ctx.log(
      `controller-manager running (informers synced) after ${cmReadyS.toFixed(1)} s, ${cmCpuAtReady.toFixed(1)} CPU-s`,
    );
    let status: WatcherStatus;
    let lastLog = performance.now();
    for (;;) {
      status = await watcher.call<WatcherStatus>({ op: 'status' });
      if (measured.every((t) => status[t].convergedAt !== undefined)) break;
      if (cm.child.exitCode !== null)
        throw new Error(`controller-manager exited: ${cm.stderrTail().slice(-2000)}`);
      const elapsed = (epochMs() - cmSpawnAt) / 1000;
      if (elapsed > z.convergeTimeoutS) {
        throw new Error(
          `not converged after ${z.convergeTimeoutS} s: ` +
            measured.map((t) => `${t} ${status[t].converged}/${shape.services}`).join(', '),
        );
      }
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        ctx.log(
          `  ${elapsed.toFixed(0)} s: converged ` +
            measured.map((t) => `${t} ${status[t].converged}/${shape.services}`).join(', ') +
            `; controller-manager ${cpuSeconds(cm.pid).toFixed(1)} CPU-s, ${memory(cm.pid).rssMiB.toFixed(0)} MiB`,
        );
      }
      await sleep(100);
    }
    const cmCpuAtConverged = cpuSeconds(cm.pid);
    const convergedAt = Math.max(...measured.map((t) => status[t].convergedAt!));
    const api1 = await apiRequests(api.conn, API_RESOURCES);
    const convergence = {
      /** Requests the controllers made meanwhile (watches excluded), with the server's mean latency. */
      apiserverRequests: apiDelta(api0, api1),
      controllerReadyS: cmReadyS,
      seconds: (convergedAt - cmSpawnAt) / 1000,
      perTargetS: Object.fromEntries(measured.map((t) => [t, (status[t].convergedAt! - cmSpawnAt) / 1000])),
      firstWriteS: Object.fromEntries(
        measured.map((t) => [t, ((status[t].firstEventAt ?? NaN) - cmSpawnAt) / 1000]),
      ),
      watchEvents: Object.fromEntries(measured.map((t) => [t, status[t].events])),
      controllerCpuS: cmCpuAtConverged,
      controllerCpuToReadyS: cmCpuAtReady,
      controllerRssMiB: memory(cm.pid).rssMiB,
      controllerHwmMiB: memory(cm.pid).hwmMiB,
    };
    ctx.log(
      `converged in ${convergence.seconds.toFixed(1)} s (` +
        measured.map((t) => `${t} ${convergence.perTargetS[t]!.toFixed(1)} s`).join(', ') +
        `); controller-manager ${cmCpuAtConverged.toFixed(1)} CPU-s, peak RSS ${convergence.controllerHwmMiB.toFixed(0)} MiB`,
    );

    const fmtRequests = (r: Record<string, { requests: number; meanMs: number }>): string =>
      Object.entries(r)
        .sort((a, b) => b[1].requests - a[1].requests)
        .map(([k, v]) => `${k} ${v.requests} (${v.meanMs.toFixed(1)} ms)`)
        .join(', ');
    ctx.log(`apiserver served meanwhile (mean server time): ${fmtRequests(convergence.apiserverRequests)}`);

    // ---- settle: until the controllers have nothing left to do
    const settle0 = performance.now();
    const settleCpu0 = cpuSeconds(cm.pid);
    let quietFor = 0;
    let idleCores = NaN;
    for (let last = settleCpu0; performance.now() - settle0 < z.settleMaxSeconds * 1000;) {
      await sleep(1000);
      const now = cpuSeconds(cm.pid);
      quietFor = now - last < 0.05 ? quietFor + 1 : 0;
      last = now;
      if (quietFor >= z.quietSeconds) break;
    }
    const settleS = (performance.now() - settle0) / 1000;
    const settle = {
      seconds: settleS,
      /** Until the first of the quiet seconds (the whole settle time when never quiet). */
      busyS: quietFor >= z.quietSeconds ? Math.max(0, settleS - z.quietSeconds) : settleS,
      quiet: quietFor >= z.quietSeconds,
      controllerCpuS: cpuSeconds(cm.pid) - settleCpu0,
    };
    {
      const c0 = cpuSeconds(cm.pid);
      await sleep(z.idleSeconds * 1000);
      idleCores = (cpuSeconds(cm.pid) - c0) / z.idleSeconds;
    }
    ctx.log(
      `settle: ${settle.quiet ? 'quiet' : 'still busy'} after ${settle.busyS.toFixed(0)} s ` +
        `(${settle.controllerCpuS.toFixed(1)} CPU-s); then ${idleCores.toFixed(2)} cores idle`,
    );
    const eventsBeforeFlips = await watcher.call<WatcherStatus>({ op: 'status' });

    // ---- readiness flips
    const flipper = new Worker<FlipRequest>(SELF, { [ROLE_ENV]: 'flipper' }, 'flipper');
    workers.push(flipper as Worker<unknown>);
    await watcher.call({ op: 'record' });
    const fCpu0 = cpuSeconds(cm.pid);
    const fApiCpu0 = cpuSeconds(api.pid);
    const fT0 = performance.now();
    ctx.log(`flips: ${z.flipRate}/s for ${z.flipSeconds} s`);
    const flips = await flipper.call<Flip[]>({
      op: 'flips',
      conn: api.conn,
      shape,
      rate: z.flipRate,
      durationMs: z.flipSeconds * 1000,
      restoreAfterMs: z.restoreAfterMs,
      seed: 5,
    });
    const failed = flips.filter((f) => f.status !== 200);
    if (failed.length > 0)
      throw new Error(
        `${failed.length} of ${flips.length} status PATCHes failed: ${failed[0]!.status} ${failed[0]!.error}`,
      );
    const lastAccepted = Math.max(...flips.map((f) => f.acceptedAt));
    let seen: MatchReply;
    for (;;) {
      seen = await watcher.call<MatchReply>({ op: 'match', flips });
      const all = measured.every((t) => seen[t].every((x) => x !== undefined));
      if (all || epochMs() - lastAccepted > z.seenTimeoutMs) break;
      await sleep(100);
    }
    const lastSeen = Math.max(
      lastAccepted,
      ...measured.flatMap((t) => seen[t].filter((x): x is number => x !== undefined)),
    );
    const flipWindowS = (performance.now() - fT0) / 1000;
    const flipCpuS = cpuSeconds(cm.pid) - fCpu0;
    const flipApiCpuS = cpuSeconds(api.pid) - fApiCpu0;
    const eventsAfterFlips = await watcher.call<WatcherStatus>({ op: 'status' });
    const api2 = await apiRequests(api.conn, API_RESOURCES);
    const patchMs = flips.map((f) => f.acceptedAt - f.sentAt);
    const latency = Object.fromEntries(
      measured.map((t) => [t, latencyFigures(flips, seen[t], z.seenTimeoutMs)]),
    ) as Partial<Record<Target, LatencyFigures>>;
    // Where the time goes: accepted → the pod change reaches watchers (the API server's share), then
    // pod change → slice change at the watcher (the controller's read, plan and write, and fan-out).
    const podWatch = latencyFigures(flips, seen.pods, z.seenTimeoutMs);
    const afterPodEvent = Object.fromEntries(
      measured.map((t) => {
        const d = flips.flatMap((_, i) => {
          const a = seen.pods[i];
          const b = seen[t][i];
          return a === undefined || b === undefined ? [] : [b - a];
        });
        return [
          t,
          d.length === 0
            ? { n: 0, p50Ms: NaN, p99Ms: NaN, maxMs: NaN }
            : { n: d.length, p50Ms: percentile(d, 50), p99Ms: percentile(d, 99), maxMs: Math.max(...d) },
        ];
      }),
    ) as Partial<Record<Target, { n: number; p50Ms: number; p99Ms: number; maxMs: number }>>;
    const flipFigures = {
      flips: flips.length,
      toNotReady: flips.filter((f) => !f.ready).length,
      toReady: flips.filter((f) => f.ready).length,
      ratePerSec: flips.length / z.flipSeconds,
      patchP50Ms: percentile(patchMs, 50),
      patchP99Ms: percentile(patchMs, 99),
      latency,
      podWatch,
      afterPodEvent,
      watchEvents: Object.fromEntries(
        measured.map((t) => [t, eventsAfterFlips[t].events - eventsBeforeFlips[t].events]),
      ),
      windowS: flipWindowS,
      /**
       * Per flip: [sent, accepted, pod change seen, seen in slices, seen in Endpoints], in ms after the
       * first send (null: not seen).
       */
      series: flips.map((f, i) => {
        const rel = (at: number | undefined): number | null =>
          at === undefined ? null : Math.round(at - flips[0]!.sentAt);
        return [
          rel(f.sentAt),
          rel(f.acceptedAt),
          rel(seen.pods[i]),
          ...TARGETS.map((t) => rel(measured.includes(t) ? seen[t][i] : undefined)),
        ];
      }),
      lastSeenAfterLastAcceptedMs: lastSeen - lastAccepted,
      controllerCpuS: flipCpuS,
      controllerCores: flipCpuS / flipWindowS,
      apiserverCpuS: flipApiCpuS,
      apiserverRequests: apiDelta(api1, api2),
    };
    ctx.log(
      `flips → pod watch: p50 ${podWatch.p50Ms.toFixed(1)} ms, p99 ${podWatch.p99Ms.toFixed(1)} ms, ` +
        `max ${podWatch.maxMs.toFixed(1)} ms`,
    );
    for (const t of measured) {
      const l = latency[t]!;
      const a = afterPodEvent[t]!;
      ctx.log(
        `pod change → ${t} change at the watcher: p50 ${a.p50Ms.toFixed(1)} ms, p99 ${a.p99Ms.toFixed(1)} ms, ` +
          `max ${a.maxMs.toFixed(1)} ms`,
      );
      ctx.log(
        `flips → ${t}: p50 ${l.p50Ms.toFixed(1)} ms, p99 ${l.p99Ms.toFixed(1)} ms, max ${l.maxMs.toFixed(1)} ms, ` +
          `${l.lost} of ${l.flips} lost`,
      );
    }
    const watchHealth = Object.fromEntries(
      TARGETS.map((t) => [
        t,
        {
          connects: eventsAfterFlips[t].connects,
          relists: eventsAfterFlips[t].relists,
          errors: eventsAfterFlips[t].errors,
          ...(eventsAfterFlips[t].lastError === undefined
            ? {}
            : { lastError: eventsAfterFlips[t].lastError }),
        },
      ]),
    );

    // ---- memory
    const cmMem = memory(cm.pid);
    const apiMem = memory(api.pid);
    samples.push(sample());
    const memoryFigures = {
      controllerPeakRssMiB: cmMem.hwmMiB,
      controllerRssEndMiB: cmMem.rssMiB,
      apiserverPeakRssMiB: apiMem.hwmMiB,
      apiserverRssEndMiB: apiMem.rssMiB,
      apiserverRssAtStartMiB: apiRssStartMiB,
    };
    return summarize(z, {
      runtime,
      controllers,
      missing,
      measured,
      preload,
      apiStartS,
      convergence,
      settle,
      idleCores,
      flips: flipFigures,
      memory: memoryFigures,
      watchHealth,
      samples,
      loadAtStart,
    });
  } catch (err) {
    if (cm !== undefined) ctx.log(`controller-manager stderr tail: ${cm.stderrTail().slice(-2000)}`);
    if (api !== undefined) ctx.log(`apiserver stderr tail: ${api.stderrTail().slice(-2000)}`);
    throw err;
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    for (const w of workers) w.stop();
    if (cm !== undefined) await stopChild(cm.child);
    if (api !== undefined) await stopChild(api.child);
    rmSync(root, { recursive: true, force: true });
  }
}

const nodeArgs = (env: string): string[] => (process.env[env] ?? '').split(' ').filter((a) => a !== '');

interface Measured {
  runtime: SvcplaneRuntime;
  controllers: string[];
  missing: string[];
  measured: Target[];
  preload: PreloadFigures;
  apiStartS: number;
  convergence: {
    controllerReadyS: number;
    seconds: number;
    perTargetS: Record<string, number>;
    firstWriteS: Record<string, number>;
    watchEvents: Record<string, number>;
    controllerCpuS: number;
    controllerCpuToReadyS: number;
    controllerRssMiB: number;
    controllerHwmMiB: number;
    apiserverRequests: Record<string, { requests: number; meanMs: number }>;
  };
  settle: { seconds: number; busyS: number; quiet: boolean; controllerCpuS: number };
  idleCores: number;
  flips: {
    flips: number;
    toNotReady: number;
    toReady: number;
    ratePerSec: number;
    patchP50Ms: number;
    patchP99Ms: number;
    latency: Partial<Record<Target, LatencyFigures>>;
    podWatch: LatencyFigures;
    afterPodEvent: Partial<Record<Target, { n: number; p50Ms: number; p99Ms: number; maxMs: number }>>;
    watchEvents: Record<string, number>;
    windowS: number;
    series: Array<Array<number | null>>;
    lastSeenAfterLastAcceptedMs: number;
    controllerCpuS: number;
    controllerCores: number;
    apiserverCpuS: number;
    apiserverRequests: Record<string, { requests: number; meanMs: number }>;
  };
  memory: {
    controllerPeakRssMiB: number;
    controllerRssEndMiB: number;
    apiserverPeakRssMiB: number;
    apiserverRssEndMiB: number;
    apiserverRssAtStartMiB: number;
  };
  watchHealth: Record<string, unknown>;
  samples: Sample[];
  loadAtStart: number[];
}

function summarize(z: Sizes, m: Measured): BenchResult {
  const shape = z.shape;
  const round = (x: number | undefined): number | string =>
    x === undefined || Number.isNaN(x) ? '' : Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100;
  const yn = (b: boolean): string => (b ? 'yes' : 'no');
  const GiB = 1024;
  const slices = m.flips.latency.slices;
  const goals = {
    ...(slices === undefined ? {} : { sliceFlipP99AtMost100Ms: slices.p99Ms <= 100 }),
    controllerRssAtMost1GiB: m.memory.controllerPeakRssMiB <= GiB,
  };
  const label: Record<Target, string> = { slices: 'EndpointSlices', endpoints: 'Endpoints' };
  const table: Array<Record<string, string | number>> = [
    {
      metric: `cold convergence, ${shape.services} services × ${shape.podsPerService} pods (s)`,
      value: round(m.convergence.seconds),
      goal: '',
      met: '',
    },
    ...m.measured.map((t) => ({
      metric: `  ${label[t]} all converged (s)`,
      value: round(m.convergence.perTargetS[t]),
      goal: '',
      met: '',
    })),
    {
      metric: '  controller-manager informers synced (s)',
      value: round(m.convergence.controllerReadyS),
      goal: '',
      met: '',
    },
    {
      metric: 'controller CPU during convergence (s)',
      value: round(m.convergence.controllerCpuS),
      goal: '',
      met: '',
    },
    {
      metric: 'controller busy after convergence (s, CPU-s)',
      value: `${round(m.settle.busyS)}${m.settle.quiet ? '' : '+'}, ${round(m.settle.controllerCpuS)}`,
      goal: '',
      met: '',
    },
    ...m.measured.flatMap((t) => {
      const l = m.flips.latency[t]!;
      const g = t === 'slices';
      return [
        {
          metric: `flip → ${label[t]} watch p50 (ms)`,
          value: round(l.p50Ms),
          goal: '',
          met: '',
        },
        {
          metric: `flip → ${label[t]} watch p99 (ms)`,
          value: round(l.p99Ms),
          goal: g ? '≤ 100' : '',
          met: g ? yn(l.p99Ms <= 100) : '',
        },
        { metric: `flip → ${label[t]} watch max (ms)`, value: round(l.maxMs), goal: '', met: '' },
        {
          metric: `flips lost (${label[t]})`,
          value: `${l.lost} of ${l.flips}`,
          goal: '0',
          met: yn(l.lost === 0),
        },
      ];
    }),
    {
      metric: 'flip → pod watch p50 / p99 (ms)',
      value: `${round(m.flips.podWatch.p50Ms)} / ${round(m.flips.podWatch.p99Ms)}`,
      goal: '',
      met: '',
    },
    ...m.measured.map((t) => ({
      metric: `pod watch → ${label[t]} watch p50 / p99 (ms)`,
      value: `${round(m.flips.afterPodEvent[t]!.p50Ms)} / ${round(m.flips.afterPodEvent[t]!.p99Ms)}`,
      goal: '',
      met: '',
    })),
    {
      metric: 'status PATCH p50 / p99 (ms)',
      value: `${round(m.flips.patchP50Ms)} / ${round(m.flips.patchP99Ms)}`,
      goal: '',
      met: '',
    },
    {
      metric: `controller CPU during ${z.flipSeconds} s of flips (s)`,
      value: round(m.flips.controllerCpuS),
      goal: '',
      met: '',
    },
    { metric: 'controller cores during flips', value: round(m.flips.controllerCores), goal: '', met: '' },
    { metric: 'controller cores idle (once settled)', value: round(m.idleCores), goal: '', met: '' },
    {
      metric: 'controller-manager peak RSS (MiB)',
      value: round(m.memory.controllerPeakRssMiB),
      goal: '≤ 1024',
      met: yn(goals.controllerRssAtMost1GiB),
    },
    {
      metric: 'apiserver peak RSS (MiB, context)',
      value: round(m.memory.apiserverPeakRssMiB),
      goal: '',
      met: '',
    },
  ];
  const loadEnd = loadavg();
  return {
    table,
    data: {
      sizes: z,
      setup: {
        svcplane: `${m.runtime.kind}: ${m.runtime.why}`,
        controllers: m.controllers,
        controllersNotAvailable: m.missing,
        processes:
          '`svcplane apiserver` (embedded sqlite, synchronous=FULL) and `svcplane controller-manager ' +
          '--kubeconfig` (token auth, default worker counts) as separate child processes on 127.0.0.1; a ' +
          'watcher process (watches on endpointslices and endpoints, all namespaces) and a flipper process',
        preload:
          'written straight into the store before the apiserver starts: namespaces, nodes (zone label, ' +
          'allocatable cpu), ClusterIP Services with their /allocations/serviceips records, Running pods ' +
          'with Ready=True; every object defaulted and passing create (and status) validation, with ' +
          'uid/creationTimestamp/generation as the registry sets them, but without managedFields',
        shape:
          `${shape.nodes} nodes in ${shape.zones} zones; ${shape.services} services over ` +
          `${shape.namespaces} namespace(s), one named port (http → containerPort 8080); ` +
          `${shape.podsPerService} pods per service on ${shape.podsPerService} nodes in distinct zones`,
        convergence:
          'from the controller-manager spawn to the arrival at the watcher of the event that made the ' +
          'last service list podsPerService ready endpoints (in its EndpointSlices; in its Endpoints)',
        flips:
          `${z.flipRate}/s for ${z.flipSeconds} s, alternately Ready True→False on a pod never flipped ` +
          `before and False→True on the oldest pod flipped down at least ${z.restoreAfterMs} ms earlier; ` +
          'each a strategic-merge PATCH of pods/NAME/status (ContainersReady and Ready conditions) on a ' +
          'keep-alive connection; latency = arrival at the watcher of the slice (Endpoints) event whose ' +
          "endpoint for that pod has the new ready value − arrival of the PATCH's 200 response; lost = not " +
          `seen within ${z.seenTimeoutMs} ms`,
        cpu: 'utime + stime of the controller-manager process (/proc/<pid>/stat), all threads',
        rss: 'VmHWM (peak) and VmRSS of /proc/<pid>/status',
        sharedCpu: 'apiserver, controller-manager, watcher and flipper share the machine and its CPUs',
        loadAverage: { start: m.loadAtStart, end: loadEnd },
      },
      preload: m.preload,
      apiserverStartS: m.apiStartS,
      convergence: m.convergence,
      settleAfterConvergence: m.settle,
      idleControllerCores: m.idleCores,
      flips: m.flips,
      memory: m.memory,
      watchHealth: m.watchHealth,
      goals,
      timeline: m.samples.map((s) => ({
        t: Math.round(s.t * 10) / 10,
        cmCpuS: s.cmCpuS === undefined ? null : Math.round(s.cmCpuS * 100) / 100,
        cmRssMiB: s.cmRssMiB === undefined ? null : Math.round(s.cmRssMiB),
        apiCpuS: Math.round(s.apiCpuS * 100) / 100,
        apiRssMiB: Math.round(s.apiRssMiB),
      })),
    },
  };
}
