// Simulated nodes benchmark (issue 13): 1,000 simulated kubelets in one `svcplane node` process against
// `svcplane up`, then 100 Deployments of 100 replicas (10,000 pods). Goals: the scheduler binds ≥ 500
// pods/s; all 10,000 pods Running and Ready ≤ 60 s after the first Deployment POST.
//
// The steps (full size; --quick: 20 nodes, 5 Deployments × 10 replicas, short windows, same checks):
//   1. `svcplane up` (embedded sqlite, every default controller on its worker thread) and a watcher
//      process (this file forked with SVCPLANE_NODES_BENCH_ROLE=watcher) watching the benchmark's pods,
//      its Deployments and the Leases in kube-node-lease, each event stamped with its arrival time;
//   2. `svcplane node --count N --cluster-cidr 10.128.0.0/9` (its own process) until it prints that its
//      nodes run: registration time;
//   3. idle window (nodes only): Lease writes/s (PUT leases in the API server's apiserver_request_total,
//      and Lease MODIFIED events at the watcher), CPU of the node process, the controllers and the API
//      server;
//   4. rollout: the Deployments POSTed (16 at a time); from the first POST the watcher records, per pod,
//      when it appeared, when it got spec.nodeName (the binding) and when it turned Ready. Scheduler
//      throughput = binds per second: the median of the 1-s bins between the first and the last binding
//      ("busy window"), and overall (all binds ÷ first POST → last binding). Also: time until every pod
//      is Ready and until every Deployment reports readyReplicas = replicas;
//   5. steady window with every pod running: Lease writes/s and CPU again;
//   6. checks (a LIST each): exactly N nodes, all Ready, every Lease renewed within its duration; exactly
//      D × R pods, each Running and Ready, bound to one of the nodes, with a pod IP inside that node's
//      podCIDR, no IP twice; the pods spread over the nodes (≥ 90 % of the nodes that could run one do,
//      none runs more than twice its even share + 1, nor over its 110-pod limit); the watcher saw every
//      pod bound exactly once (never re-bound elsewhere) and no pod deleted.
//
// CPU: the node process's utime + stime; in `up`, the main thread is the API server's and every other
// thread the controllers' (the worker thread, plus V8's and libuv's helpers, which also collect the API
// server's garbage), as the grids benchmark reports it. RSS: VmRSS/VmHWM of the node process and of up.
// The machine is shared: the load average and the machine's busy CPU are reported alongside. Also per
// phase: the requests up served for pods, nodes and leases, and, for the rollout, each controller's
// reconciles and their mean time (its workqueue_* metrics on up's /metrics).
//
// Knobs: SVCPLANE_BENCH_SERVER_NODE_ARGS (up) and SVCPLANE_BENCH_NODE_NODE_ARGS (the node process) node
// flags, e.g. "--cpu-prof --cpu-prof-dir=DIR"; SVCPLANE_BENCH_NODES_COUNT / _DEPLOYMENTS / _REPLICAS
// override the full sizes.
import { execFileSync } from 'node:child_process';
import type https from 'node:https';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { scratchDir, startSvcplane, stopChild, svcplaneRuntime, track, type Proc } from './lib/cluster.js';
import { agentFor, epochMs, request, type Conn } from './lib/http.js';
import {
  cpuSeconds,
  memory,
  serveWorker,
  sleep,
  startServer,
  stopServer,
  Worker,
  type Server,
} from './lib/process.js';
import { Watch } from './lib/watch.js';
import { median, percentile, type BenchContext, type BenchResult } from './run.js';

const SELF = fileURLToPath(import.meta.url);
const ROLE_ENV = 'SVCPLANE_NODES_BENCH_ROLE';
const NAMESPACE = 'bench-nodes';
const BENCH_LABEL = 'svcplane-bench';
const CLUSTER_CIDR = '10.128.0.0/9';
const NODE_PREFIX = 'simnode';
const MAX_PODS = 110;

interface Sizes {
  readonly nodes: number;
  readonly deployments: number;
  readonly replicas: number;
  readonly concurrency: number;
  /** Lease-write and CPU windows (s): before the rollout (nodes only) and after it (every pod running). */
  readonly idleWindowS: number;
  readonly steadyWindowS: number;
  /** Wait after registration before the idle window, so every node's first renewal is due. */
  readonly warmupS: number;
  readonly rolloutTimeoutS: number;
  readonly pollMs: number;
}

const envInt = (k: string, d: number): number => {
  const v = Number(process.env[k]);
  return Number.isInteger(v) && v > 0 ? v : d;
};

const FULL: Sizes = {
  nodes: envInt('SVCPLANE_BENCH_NODES_COUNT', 1000),
  deployments: envInt('SVCPLANE_BENCH_NODES_DEPLOYMENTS', 100),
  replicas: envInt('SVCPLANE_BENCH_NODES_REPLICAS', 100),
  concurrency: 16,
  idleWindowS: 20,
  steadyWindowS: 20,
  warmupS: 10,
  rolloutTimeoutS: 600,
  pollMs: 200,
};
const QUICK: Sizes = {
  nodes: 20,
  deployments: 5,
  replicas: 10,
  concurrency: 5,
  idleWindowS: 1.5,
  steadyWindowS: 1.5,
  warmupS: 0.5,
  rolloutTimeoutS: 60,
  pollMs: 50,
};

const deploymentName = (d: number): string => `web-${String(d).padStart(3, '0')}`;

function deploymentBody(d: number, replicas: number): string {
  const name = deploymentName(d);
  const labels = { app: name, [BENCH_LABEL]: 'nodes' };
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NAMESPACE, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.9', ports: [{ containerPort: 80 }] }],
        },
      },
    },
  });
}

// --------------------------------------------------------------------------------------------- watcher

interface PodRecord {
  addedAt: number;
  boundAt?: number;
  node?: string;
  readyAt?: number;
  rebinds: number;
}

type WatcherRequest =
  | { op: 'start'; conn: Conn; deployments: number; replicas: number }
  | { op: 'status' }
  | { op: 'report' }
  | { op: 'stop' };

interface WatcherStatus {
  pods: number;
  bound: number;
  ready: number;
  deploymentsReady: number;
  deleted: number;
  rebinds: number;
  leaseWrites: number;
  errors: number;
  lastError?: string;
  relists: number;
}

interface WatcherReport extends WatcherStatus {
  addedAt: number[];
  boundAt: number[];
  readyAt: number[];
  /** Per pod (bound ones): binding time − creation time (ms, both at the watcher). */
  bindLatencyMs: number[];
  lastDeploymentReadyAt: number | null;
  leaseWriteTimes: number[];
}

const isReady = (obj: Record<string, unknown>): boolean => {
  const conds = (obj['status'] as { conditions?: Array<{ type?: string; status?: string }> } | undefined)
    ?.conditions;
  return conds?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
};

function watcherMain(): void {
  let watches: Watch[] = [];
  const pods = new Map<string, PodRecord>();
  const deploymentsReady = new Map<string, number>();
  const leaseWriteTimes: number[] = [];
  let replicas = 0;
  let deleted = 0;
  let errors = 0;
  let lastError: string | undefined;
  const onError = (err: Error): void => {
    errors++;
    lastError = err.message.slice(0, 300);
  };
  const status = (): WatcherStatus => {
    let bound = 0;
    let ready = 0;
    let rebinds = 0;
    for (const p of pods.values()) {
      if (p.boundAt !== undefined) bound++;
      if (p.readyAt !== undefined) ready++;
      rebinds += p.rebinds;
    }
    let dReady = 0;
    for (const r of deploymentsReady.values()) if (r >= replicas) dReady++;
    return {
      pods: pods.size,
      bound,
      ready,
      deploymentsReady: dReady,
      deleted,
      rebinds,
      leaseWrites: leaseWriteTimes.length,
      errors,
      relists: watches.reduce((n, w) => n + w.stats.relists, 0),
      ...(lastError === undefined ? {} : { lastError }),
    };
  };
  let lastDeploymentReadyAt: number | null = null;
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        replicas = msg.replicas;
        const wantDeployments = msg.deployments;
        watches = [
          new Watch(
            msg.conn,
            `/api/v1/namespaces/${NAMESPACE}/pods`,
            (ev, t) => {
              const name = ev.object.metadata?.name ?? '';
              if (ev.type === 'DELETED') {
                deleted++;
                return;
              }
              let p = pods.get(name);
              if (p === undefined) pods.set(name, (p = { addedAt: t, rebinds: 0 }));
              const node = (ev.object['spec'] as { nodeName?: string } | undefined)?.nodeName;
              if (node !== undefined && node !== '') {
                if (p.node === undefined) {
                  p.node = node;
                  p.boundAt = t;
                } else if (p.node !== node) p.rebinds++;
              }
              if (p.readyAt === undefined && isReady(ev.object)) p.readyAt = t;
            },
            { labelSelector: `${BENCH_LABEL}=nodes` },
            onError,
          ),
          new Watch(
            msg.conn,
            `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
            (ev, t) => {
              const name = ev.object.metadata?.name ?? '';
              const r = (ev.object['status'] as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
              deploymentsReady.set(name, r);
              if (lastDeploymentReadyAt === null && status().deploymentsReady === wantDeployments)
                lastDeploymentReadyAt = t;
            },
            {},
            onError,
          ),
          new Watch(
            msg.conn,
            '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
            (ev, t) => {
              if (ev.type === 'MODIFIED') leaseWriteTimes.push(t);
            },
            {},
            onError,
          ),
        ];
        await Promise.all(watches.map((w) => w.connected()));
        return process.pid;
      }
      case 'status':
        return status();
      case 'report': {
        const recs = [...pods.values()];
        const out: WatcherReport = {
          ...status(),
          addedAt: recs.map((p) => p.addedAt),
          boundAt: recs.flatMap((p) => (p.boundAt === undefined ? [] : [p.boundAt])),
          readyAt: recs.flatMap((p) => (p.readyAt === undefined ? [] : [p.readyAt])),
          bindLatencyMs: recs.flatMap((p) => (p.boundAt === undefined ? [] : [p.boundAt - p.addedAt])),
          lastDeploymentReadyAt,
          leaseWriteTimes: [...leaseWriteTimes],
        };
        return out;
      }
      case 'stop':
        for (const w of watches) w.stop();
        watches = [];
        return null;
    }
  });
}

if (process.env[ROLE_ENV] === 'watcher') watcherMain();

// ------------------------------------------------------------------------------------- measurements

let ticksPerSec = 100;
try {
  ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* Linux default */
}

function threadCpuSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSec;
}

function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / ticksPerSec;
}

interface Cpu {
  nodeS: number;
  controllersS: number;
  apiserverS: number;
  watcherS: number;
  machineS: number;
}

interface Procs {
  up: Server;
  node?: Proc;
  watcherPid?: number;
}

function cpu(p: Procs): Cpu {
  const apiserverS = threadCpuSeconds(p.up.pid, p.up.pid);
  const total = cpuSeconds(p.up.pid);
  return {
    nodeS: p.node === undefined ? 0 : cpuSeconds(p.node.pid),
    controllersS: total - apiserverS,
    apiserverS,
    watcherS: p.watcherPid === undefined ? 0 : cpuSeconds(p.watcherPid),
    machineS: machineBusySeconds(),
  };
}

const cpuDelta = (a: Cpu, b: Cpu): Cpu => ({
  nodeS: b.nodeS - a.nodeS,
  controllersS: b.controllersS - a.controllersS,
  apiserverS: b.apiserverS - a.apiserverS,
  watcherS: b.watcherS - a.watcherS,
  machineS: b.machineS - a.machineS,
});

const perSecond = (c: Cpu, s: number): Cpu => ({
  nodeS: c.nodeS / s,
  controllersS: c.controllersS / s,
  apiserverS: c.apiserverS / s,
  watcherS: c.watcherS / s,
  machineS: c.machineS / s,
});

interface Mem {
  nodeRssMiB: number;
  nodePeakMiB: number;
  upRssMiB: number;
  upPeakMiB: number;
}

function mem(p: Procs): Mem {
  const n = p.node === undefined ? { rssMiB: 0, hwmMiB: 0 } : memory(p.node.pid);
  const u = memory(p.up.pid);
  return { nodeRssMiB: n.rssMiB, nodePeakMiB: n.hwmMiB, upRssMiB: u.rssMiB, upPeakMiB: u.hwmMiB };
}

/**
 * From up's /metrics: apiserver_request_total for leases, nodes and pods, by "VERB resource[/sub]"; and
 * each controller's workqueue as "wq:NAME adds|reconciles|workS" (its worker's workqueue_* metrics).
 */
async function requestTotals(agent: https.Agent, conn: Conn): Promise<Record<string, number>> {
  const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  const out: Record<string, number> = {};
  for (const line of (res.text ?? '').split('\n')) {
    const q =
      /^(workqueue_adds_total|workqueue_work_duration_seconds_count|workqueue_work_duration_seconds_sum)\{name="([^"]+)"\} (\S+)$/.exec(
        line,
      );
    if (q !== null) {
      const what =
        q[1] === 'workqueue_adds_total'
          ? 'adds'
          : q[1] === 'workqueue_work_duration_seconds_count'
            ? 'reconciles'
            : 'workS';
      out[`wq:${q[2]} ${what}`] = Number(q[3]);
      continue;
    }
    const m = /^apiserver_request_total\{([^}]*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const l = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (!['leases', 'nodes', 'pods'].includes(l['resource'] ?? '')) continue;
    const key = `${l['verb']} ${l['resource']}${l['subresource'] ? `/${l['subresource']}` : ''}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

const totalsDelta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(b)
      .map(([k, v]): [string, number] => [k, v - (a[k] ?? 0)])
      .filter(([, v]) => v > 0),
  );

async function getJson<T>(agent: https.Agent, conn: Conn, p: string): Promise<T> {
  const res = await request(agent, conn, 'GET', p, { keepText: true });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
  return JSON.parse(res.text ?? 'null') as T;
}

function ipv4(s: string): number | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (m === null) return undefined;
  return ((Number(m[1]) << 24) >>> 0) + (Number(m[2]) << 16) + (Number(m[3]) << 8) + Number(m[4]);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const a = ipv4(ip);
  const b = ipv4(base ?? '');
  const n = Number(bits);
  if (a === undefined || b === undefined || !(n >= 0 && n <= 32)) return false;
  const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

interface Window {
  seconds: number;
  leasePutsPerSec: number;
  leaseEventsPerSec: number;
  requests: Record<string, number>;
  cpuCoresUsed: Cpu;
  memory: Mem;
}

async function measureWindow(
  seconds: number,
  procs: Procs,
  agent: https.Agent,
  conn: Conn,
  watcher: Worker<WatcherRequest>,
): Promise<Window> {
  const r0 = await requestTotals(agent, conn);
  const l0 = (await watcher.call<WatcherStatus>({ op: 'status' })).leaseWrites;
  const c0 = cpu(procs);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const c1 = cpu(procs);
  const s = (performance.now() - t0) / 1000;
  const l1 = (await watcher.call<WatcherStatus>({ op: 'status' })).leaseWrites;
  const r1 = await requestTotals(agent, conn);
  const requests = totalsDelta(r0, r1);
  return {
    seconds: s,
    leasePutsPerSec: (requests['PUT leases'] ?? 0) / s,
    leaseEventsPerSec: (l1 - l0) / s,
    requests,
    cpuCoresUsed: perSecond(cpuDelta(c0, c1), s),
    memory: mem(procs),
  };
}

/** How many nodes run 0, 1, 2 … pods. */
function histogram(counts: number[], nodes: number): Record<number, number> {
  const h: Record<number, number> = {};
  if (nodes > counts.length) h[0] = nodes - counts.length;
  for (const c of counts) h[c] = (h[c] ?? 0) + 1;
  return h;
}

/** Binds per 1-s bin from the first to the last binding (the last, partial bin left out). */
function bindBins(boundAt: number[]): number[] {
  if (boundAt.length === 0) return [];
  const s = [...boundAt].sort((a, b) => a - b);
  const first = s[0]!;
  const full = Math.floor((s[s.length - 1]! - first) / 1000);
  const bins = new Array<number>(Math.max(full, 0)).fill(0);
  for (const t of s) {
    const i = Math.floor((t - first) / 1000);
    if (i < full) bins[i]!++;
  }
  return bins;
}

// ------------------------------------------------------------------------------------------------ run

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const total = z.deployments * z.replicas;
  const runtime = svcplaneRuntime();
  const loadAtStart = loadavg();
  ctx.log(
    `${z.nodes} nodes, ${z.deployments} Deployments × ${z.replicas} replicas = ${total} pods; svcplane from ${runtime.kind} (${runtime.why}); load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-nodes-')));
  const dataDir = path.join(root, 'up');
  mkdirSync(dataDir, { recursive: true });
  const up = await startServer(dataDir);
  track(up.child);
  const procs: Procs = { up };
  const agent = agentFor(up.conn, z.concurrency);
  let watcher: Worker<WatcherRequest> | undefined;
  const alive = (): void => {
    if (up.child.exitCode !== null || up.child.signalCode !== null)
      throw new Error(`svcplane up exited: ${up.stderrTail().slice(-3000)}`);
    const n = procs.node?.child;
    if (n !== undefined && (n.exitCode !== null || n.signalCode !== null))
      throw new Error(`svcplane node exited: ${procs.node!.stderrTail().slice(-3000)}`);
  };
  try {
    for (const deadline = performance.now() + 120_000; ;) {
      const res = await request(agent, up.conn, 'GET', '/readyz');
      if (res.status === 200) break;
      if (performance.now() > deadline) throw new Error(`svcplane up: /readyz still ${res.status}`);
      await sleep(50);
    }
    ctx.log(`svcplane up ready at ${up.url}`);

    watcher = new Worker<WatcherRequest>(SELF, { [ROLE_ENV]: 'watcher' }, 'watcher');
    procs.watcherPid = await watcher.call<number>({
      op: 'start',
      conn: up.conn,
      deployments: z.deployments,
      replicas: z.replicas,
    });

    // ---- nodes
    const cpuBeforeNodes = cpu(procs);
    const tNodes = performance.now();
    procs.node = await startSvcplane(
      'svcplane node',
      runtime,
      [
        'node',
        '--kubeconfig',
        path.join(dataDir, 'kubeconfig'),
        '--name',
        NODE_PREFIX,
        '--count',
        String(z.nodes),
        '--cluster-cidr',
        CLUSTER_CIDR,
        '--max-pods',
        String(MAX_PODS),
      ],
      /svcplane: .*running, pod CIDRs/,
      {
        timeoutMs: 300_000,
        nodeArgs: (process.env.SVCPLANE_BENCH_NODE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
      },
    );
    const registerS = (performance.now() - tNodes) / 1000;
    const registerCpu = cpuDelta(cpuBeforeNodes, cpu(procs));
    ctx.log(`${z.nodes} nodes registered and running in ${registerS.toFixed(2)} s (process start included)`);
    await sleep(z.warmupS * 1000);
    alive();
    const idle = await measureWindow(z.idleWindowS, procs, agent, up.conn, watcher);
    ctx.log(
      `idle (nodes only, ${idle.seconds.toFixed(1)} s): ${idle.leasePutsPerSec.toFixed(1)} Lease PUTs/s, node process ${idle.cpuCoresUsed.nodeS.toFixed(3)} cores`,
    );

    // ---- rollout
    const ns = await request(agent, up.conn, 'POST', '/api/v1/namespaces', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
      keepText: true,
    });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
    const req0 = await requestTotals(agent, up.conn);
    const cpu0 = cpu(procs);
    const t0 = epochMs();
    const p0 = performance.now();
    let next = 0;
    const failed: string[] = [];
    await Promise.all(
      Array.from({ length: Math.min(z.concurrency, z.deployments) }, async () => {
        for (let d = next++; d < z.deployments; d = next++) {
          const res = await request(
            agent,
            up.conn,
            'POST',
            `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
            {
              body: deploymentBody(d, z.replicas),
              keepText: true,
            },
          );
          if (res.status !== 201)
            failed.push(`${deploymentName(d)}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
        }
      }),
    );
    if (failed.length > 0)
      throw new Error(`${failed.length} Deployment POSTs failed; the first: ${failed[0]}`);
    const postS = (performance.now() - p0) / 1000;
    ctx.log(`${z.deployments} Deployments POSTed in ${postS.toFixed(2)} s`);
    let st: WatcherStatus;
    let lastLog = performance.now();
    let peakDuring: Mem = mem(procs);
    for (;;) {
      st = await watcher.call<WatcherStatus>({ op: 'status' });
      if (st.ready >= total && st.deploymentsReady >= z.deployments) break;
      alive();
      const m = mem(procs);
      peakDuring = {
        nodeRssMiB: Math.max(peakDuring.nodeRssMiB, m.nodeRssMiB),
        nodePeakMiB: m.nodePeakMiB,
        upRssMiB: Math.max(peakDuring.upRssMiB, m.upRssMiB),
        upPeakMiB: m.upPeakMiB,
      };
      if ((epochMs() - t0) / 1000 > z.rolloutTimeoutS)
        throw new Error(`rollout not done after ${z.rolloutTimeoutS} s: ${JSON.stringify(st)}`);
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        ctx.log(
          `  ${((epochMs() - t0) / 1000).toFixed(1)} s: ${st.pods} pods, ${st.bound} bound, ${st.ready} Ready, ${st.deploymentsReady} Deployments ready`,
        );
      }
      await sleep(z.pollMs);
    }
    const cpu1 = cpu(procs);
    const req1 = await requestTotals(agent, up.conn);
    const rep = await watcher.call<WatcherReport>({ op: 'report' });
    const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
    const added = sorted(rep.addedAt);
    const bound = sorted(rep.boundAt);
    const ready = sorted(rep.readyAt);
    const firstBind = bound[0]!;
    const lastBind = bound[bound.length - 1]!;
    const lastReady = ready[ready.length - 1]!;
    const bins = bindBins(bound);
    const busyS = (lastBind - firstBind) / 1000;
    const bindOverallPerSec = bound.length / ((lastBind - t0) / 1000);
    const bindBusyPerSec = busyS > 0 ? bound.length / busyS : bound.length;
    const bindMedianPerSec = bins.length > 0 ? median(bins) : bindBusyPerSec;
    const createdPerSec = added.length / ((added[added.length - 1]! - t0) / 1000);
    const allReadyS = (lastReady - t0) / 1000;
    const rolloutS = (Math.max(lastReady, rep.lastDeploymentReadyAt ?? 0) - t0) / 1000;
    const rolloutCpu = cpuDelta(cpu0, cpu1);
    const rolloutDelta = totalsDelta(req0, req1);
    const rolloutRequests = Object.fromEntries(
      Object.entries(rolloutDelta).filter(([k]) => !k.startsWith('wq:')),
    );
    /** Per controller during the rollout: keys queued, reconciles and their mean time (ms, awaits included). */
    const queues: Record<string, { adds: number; reconciles: number; meanMs: number; workS: number }> = {};
    for (const [k, v] of Object.entries(rolloutDelta)) {
      const m = /^wq:(\S+) (adds|reconciles|workS)$/.exec(k);
      if (m === null) continue;
      const e = (queues[m[1]!] ??= { adds: 0, reconciles: 0, meanMs: 0, workS: 0 });
      e[m[2] as 'adds' | 'reconciles' | 'workS'] = v;
    }
    for (const e of Object.values(queues))
      e.meanMs = e.reconciles === 0 ? 0 : (e.workS / e.reconciles) * 1000;
    const fmtQueue = (name: string): string => {
      const e = queues[name];
      return e === undefined ? 'n/a' : `${e.reconciles} (${e.meanMs.toFixed(1)} ms mean)`;
    };
    const leaseDuring = rep.leaseWriteTimes.filter((t) => t >= t0 && t <= lastReady).length / allReadyS;
    ctx.log(
      `all ${total} pods Ready ${allReadyS.toFixed(2)} s after the first POST; binds/s median ${bindMedianPerSec.toFixed(0)} (busy window ${busyS.toFixed(2)} s), overall ${bindOverallPerSec.toFixed(0)}`,
    );

    // ---- steady state with every pod running
    const steady = await measureWindow(z.steadyWindowS, procs, agent, up.conn, watcher);
    ctx.log(
      `steady (${total} pods, ${steady.seconds.toFixed(1)} s): ${steady.leasePutsPerSec.toFixed(1)} Lease PUTs/s, node process ${steady.cpuCoresUsed.nodeS.toFixed(3)} cores`,
    );

    // ---- checks
    alive();
    const problems: string[] = [];
    const nodeList = await getJson<{
      items: Array<{
        metadata: { name: string };
        spec: { podCIDRs?: string[]; podCIDR?: string };
        status?: { conditions?: Array<{ type: string; status: string }> };
      }>;
    }>(agent, up.conn, '/api/v1/nodes');
    const nodes = nodeList.items.filter((n) => n.metadata.name.startsWith(`${NODE_PREFIX}-`));
    if (nodes.length !== z.nodes) problems.push(`${nodes.length} nodes, want ${z.nodes}`);
    const cidrOf = new Map(nodes.map((n) => [n.metadata.name, n.spec.podCIDRs ?? [n.spec.podCIDR ?? '']]));
    const notReadyNodes = nodes.filter(
      (n) => !(n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    if (notReadyNodes.length > 0)
      problems.push(`${notReadyNodes.length} nodes not Ready, e.g. ${notReadyNodes[0]!.metadata.name}`);
    const leases = await getJson<{
      items: Array<{
        metadata: { name: string };
        spec: { renewTime?: string; leaseDurationSeconds?: number };
      }>;
    }>(agent, up.conn, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases');
    const now = Date.now();
    let oldestLeaseS = 0;
    let leasesSeen = 0;
    for (const l of leases.items) {
      if (!cidrOf.has(l.metadata.name)) continue;
      leasesSeen++;
      const age = (now - Date.parse(l.spec.renewTime ?? '')) / 1000;
      oldestLeaseS = Math.max(oldestLeaseS, Number.isFinite(age) ? age : Infinity);
      if (!(age <= (l.spec.leaseDurationSeconds ?? 40)))
        problems.push(`Lease ${l.metadata.name} renewed ${age.toFixed(1)} s ago`);
    }
    if (leasesSeen !== z.nodes) problems.push(`${leasesSeen} Leases, want ${z.nodes}`);

    const podList = await getJson<{
      items: Array<{
        metadata: { name: string };
        spec: { nodeName?: string };
        status?: {
          phase?: string;
          podIP?: string;
          podIPs?: Array<{ ip: string }>;
          conditions?: Array<{ type: string; status: string }>;
        };
      }>;
    }>(agent, up.conn, `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${BENCH_LABEL}%3Dnodes`);
    const perNode = new Map<string, number>();
    const ips = new Set<string>();
    let podProblems = 0;
    const podProblem = (s: string): void => {
      if (podProblems++ < 5) problems.push(s);
    };
    for (const p of podList.items) {
      const n = p.spec.nodeName ?? '';
      const cidrs = cidrOf.get(n);
      if (cidrs === undefined) {
        podProblem(`pod ${p.metadata.name} on ${JSON.stringify(n)}, not one of the nodes`);
        continue;
      }
      perNode.set(n, (perNode.get(n) ?? 0) + 1);
      if (p.status?.phase !== 'Running') podProblem(`pod ${p.metadata.name}: phase ${p.status?.phase}`);
      if (!(p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))
        podProblem(`pod ${p.metadata.name}: not Ready`);
      const ip = p.status?.podIP ?? '';
      if (!cidrs.some((c) => inCidr(ip, c)))
        podProblem(`pod ${p.metadata.name}: IP ${ip} not in ${n}'s ${cidrs.join(',')}`);
      if (ips.has(ip)) podProblem(`pod ${p.metadata.name}: IP ${ip} given twice`);
      ips.add(ip);
    }
    if (podProblems > 5) problems.push(`… ${podProblems - 5} more pod problems`);
    if (podList.items.length !== total) problems.push(`${podList.items.length} pods, want ${total}`);
    const counts = [...perNode.values()];
    const spread = {
      nodesUsed: perNode.size,
      minPerNode: perNode.size < z.nodes ? 0 : Math.min(...counts),
      maxPerNode: Math.max(...counts),
      histogram: histogram(counts, z.nodes),
    };
    // Spread (the scheduler breaks score ties at random, so not perfectly even): at least 90 % of the
    // nodes that could run a pod run one, and none runs more than twice its even share + 1.
    const evenShare = Math.ceil(total / z.nodes);
    if (spread.nodesUsed < Math.ceil(0.9 * Math.min(z.nodes, total)))
      problems.push(
        `pods on only ${spread.nodesUsed} of ${z.nodes} nodes: ${JSON.stringify(Object.fromEntries(perNode))}`,
      );
    if (spread.maxPerNode > 2 * evenShare + 1)
      problems.push(`a node runs ${spread.maxPerNode} pods (even share ${evenShare})`);
    if (spread.maxPerNode > MAX_PODS) problems.push(`a node runs ${spread.maxPerNode} pods`);
    if (rep.pods !== total) problems.push(`watcher saw ${rep.pods} pods, want ${total}`);
    if (rep.bound !== total) problems.push(`watcher saw ${rep.bound} bound, want ${total}`);
    if (rep.rebinds !== 0) problems.push(`${rep.rebinds} pods changed node`);
    if (rep.deleted !== 0) problems.push(`${rep.deleted} pods deleted`);
    if (problems.length > 0) throw new Error(`checks failed:\n  ${problems.join('\n  ')}`);
    ctx.log(
      `checks passed: ${nodes.length} nodes Ready (oldest Lease ${oldestLeaseS.toFixed(1)} s), ${total} pods Running+Ready in their node's podCIDR, ${spread.nodesUsed} nodes used, ${spread.minPerNode}–${spread.maxPerNode} per node`,
    );
    const loadAtEnd = loadavg();
    const peak = mem(procs);

    const goals = {
      schedulerAtLeast500PodsPerSec: bindMedianPerSec >= 500,
      allReadyWithin60s: allReadyS <= 60,
    };
    const r = (x: number, d = 2): number => Number(x.toFixed(d));
    const cpuRow = (c: Cpu): Record<string, number> => ({
      nodeS: r(c.nodeS, 3),
      controllersS: r(c.controllersS, 3),
      apiserverS: r(c.apiserverS, 3),
      watcherS: r(c.watcherS, 3),
      machineS: r(c.machineS, 3),
    });
    const table = [
      { metric: 'nodes registered + running (s, node process start included)', value: r(registerS) },
      { metric: 'Deployment POSTs (s)', value: r(postS) },
      { metric: 'pods created/s (first POST → last pod seen)', value: r(createdPerSec, 0) },
      {
        metric: 'scheduler binds/s: median 1-s bin over busy window (goal ≥ 500)',
        value: `${r(bindMedianPerSec, 0)} (${goals.schedulerAtLeast500PodsPerSec ? 'met' : 'not met'})`,
      },
      {
        metric: 'scheduler binds/s: busy window / overall from first POST',
        value: `${r(bindBusyPerSec, 0)} / ${r(bindOverallPerSec, 0)}`,
      },
      {
        metric: 'bind latency after pod creation p50 / p99 (ms)',
        value: `${r(percentile(rep.bindLatencyMs, 50), 0)} / ${r(percentile(rep.bindLatencyMs, 99), 0)}`,
      },
      {
        metric: `all ${total} pods Ready after first POST (s, goal ≤ 60)`,
        value: `${r(allReadyS)} (${goals.allReadyWithin60s ? 'met' : 'not met'})`,
      },
      { metric: 'all Deployments readyReplicas = replicas (s)', value: r(rolloutS) },
      {
        metric: 'Lease PUTs/s: idle / during rollout (events) / steady with pods',
        value: `${r(idle.leasePutsPerSec, 1)} / ${r(leaseDuring, 1)} / ${r(steady.leasePutsPerSec, 1)}`,
      },
      {
        metric: 'rollout reconciles: replicaset / scheduler',
        value: `${fmtQueue('replicaset')} / ${fmtQueue('scheduler')}`,
      },
      {
        metric: 'rollout CPU-s: node / controllers / API server',
        value: `${r(rolloutCpu.nodeS)} / ${r(rolloutCpu.controllersS)} / ${r(rolloutCpu.apiserverS)}`,
      },
      {
        metric: 'idle cores: node / controllers / API server',
        value: `${r(idle.cpuCoresUsed.nodeS, 3)} / ${r(idle.cpuCoresUsed.controllersS, 3)} / ${r(idle.cpuCoresUsed.apiserverS, 3)}`,
      },
      {
        metric: 'steady cores: node / controllers / API server',
        value: `${r(steady.cpuCoresUsed.nodeS, 3)} / ${r(steady.cpuCoresUsed.controllersS, 3)} / ${r(steady.cpuCoresUsed.apiserverS, 3)}`,
      },
      {
        metric: 'RSS node process: idle / peak (MiB)',
        value: `${r(idle.memory.nodeRssMiB, 0)} / ${r(peak.nodePeakMiB, 0)}`,
      },
      {
        metric: 'RSS up (API server + controllers): idle / peak (MiB)',
        value: `${r(idle.memory.upRssMiB, 0)} / ${r(peak.upPeakMiB, 0)}`,
      },
      { metric: 'load average start / end (1 min)', value: `${r(loadAtStart[0]!)} / ${r(loadAtEnd[0]!)}` },
    ];
    return {
      table,
      data: {
        sizes: z,
        setup: {
          runtime: runtime.kind,
          server: 'svcplane up (embedded sqlite, every default controller on its worker thread)',
          node: `svcplane node --count ${z.nodes} --cluster-cidr ${CLUSTER_CIDR} --max-pods ${MAX_PODS}`,
          cpuSplit:
            "up's main thread is the API server's; every other thread (the controllers' worker, V8 and libuv helpers) counts as the controllers'",
        },
        loadAverage: { start: loadAtStart, end: loadAtEnd },
        registration: { seconds: registerS, cpu: cpuRow(registerCpu) },
        idle,
        rollout: {
          postSeconds: postS,
          podsCreatedPerSec: createdPerSec,
          firstPodS: (added[0]! - t0) / 1000,
          lastPodS: (added[added.length - 1]! - t0) / 1000,
          firstBindS: (firstBind - t0) / 1000,
          lastBindS: (lastBind - t0) / 1000,
          bindsPerSec: {
            medianBusy: bindMedianPerSec,
            busyWindow: bindBusyPerSec,
            overall: bindOverallPerSec,
            maxBin: bins.length > 0 ? Math.max(...bins) : null,
            bins,
          },
          bindLatencyMs: {
            p50: percentile(rep.bindLatencyMs, 50),
            p99: percentile(rep.bindLatencyMs, 99),
            max: Math.max(...rep.bindLatencyMs),
          },
          allReadyS,
          readyP50S: (ready[Math.floor(ready.length / 2)]! - t0) / 1000,
          deploymentsReadyS: rolloutS,
          leaseEventsPerSec: leaseDuring,
          cpu: cpuRow(rolloutCpu),
          requests: rolloutRequests,
          queues,
          peakMemory: peakDuring,
        },
        steady,
        checks: {
          nodes: nodes.length,
          nodesReady: nodes.length - notReadyNodes.length,
          oldestLeaseS,
          pods: podList.items.length,
          podsReady: podList.items.length,
          spread,
          watcher: {
            pods: rep.pods,
            bound: rep.bound,
            rebinds: rep.rebinds,
            deleted: rep.deleted,
            errors: rep.errors,
            relists: rep.relists,
          },
        },
        memory: peak,
        goals,
      },
    };
  } finally {
    if (watcher !== undefined) {
      await watcher.call({ op: 'stop' }).catch(() => {});
      watcher.stop();
    }
    agent.destroy();
    if (procs.node !== undefined) await stopChild(procs.node.child);
    await stopServer(up);
  }
}
