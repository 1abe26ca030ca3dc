// ClusterIP/NodePort allocation benchmark (issue 4): Service creates over HTTPS against `svcplane up`
// on each backend (sqlite; etcd on a real local etcd) and each service-cluster-ip-range size, to show
// that one store key per allocated value costs the same whatever the range (upstream's RangeAllocation
// rewrites a bitmap of the whole range on every allocation).
//
// For backend ∈ {sqlite, etcd} × range ∈ {/24, /16, /12, /12 holding 10,000 Services already}:
//   - type NodePort Service creates (one ClusterIP and one NodePort each, node ports 30000-32767) with
//     32 concurrent HTTPS clients on keep-alive connections, in rounds: create 200 (timed), delete
//     them (untimed), repeat; a /24 holds only 254 addresses, so every range gets this same round;
//   - client-observed latency of every create (p50, p99);
//   - bytes written to the store per create: the store's history between two marker writes around
//     each timed create phase is replayed (sqlite: the file, opened after the server stopped; etcd:
//     a watch from the first marker's revision), summing key + value bytes of every PUT; set against
//     what upstream's single-bitmap RangeAllocation would write (the Service + the whole IP bitmap +
//     the whole port bitmap, per create);
//   - server CPU per create (and etcd's, on etcd).
//
// One server per range, all started before the first repetition and kept to the end, so every
// repetition measures all four back to back (in a rotated order) and the /12 ÷ /24 ratio is paired
// within it. Any failed create fails the benchmark. The same file is the client worker: forked with
// SVCPLANE_ALLOCATION_BENCH_WORKER=1 it serves the requests the orchestrator sends it.
import type https from 'node:https';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ipOffset, ipRange } from '../src/core/allocator/ip-allocator.js';
import { EtcdStore } from '../src/storage/etcd/etcd-store.js';
import { startEtcd, type EtcdServer } from '../src/storage/etcd/testing/etcd-server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { agentFor, epochMs, request, type Conn } from './lib/http.js';
import {
  cpuSeconds,
  serveWorker,
  sleep,
  startServer,
  stopServer,
  Worker,
  type Server,
} from './lib/process.js';
import { median, pctSorted, type BenchContext, type BenchResult } from './run.js';

const SELF = fileURLToPath(import.meta.url);
const WORKER_ENV = 'SVCPLANE_ALLOCATION_BENCH_WORKER';
const NAMESPACE = 'bench-alloc';
const PREFILL_NAMESPACE = 'bench-prefill';
const NODE_PORTS = { base: 30000, size: 2768 }; // 30000-32767, the default

interface Sizes {
  reps: number;
  /** Timed rounds per case per repetition. */
  rounds: number;
  /** Services created (timed) then deleted (untimed) per round; at most 253 (a /24 less `kubernetes`). */
  roundSize: number;
  clients: number;
  /** Untimed rounds per case before the first repetition, to warm each server's JIT. */
  warmupRounds: number;
  /** ClusterIP Services stored in the prefilled /12 before it is measured. */
  prefill: number;
  prefillClients: number;
}

const FULL: Sizes = {
  reps: 5,
  rounds: 10,
  roundSize: 200,
  clients: 32,
  warmupRounds: 2,
  prefill: 10_000,
  prefillClients: 64,
};
/** Every case, figure and check of FULL on a few dozen Services (the figures mean nothing), in seconds. */
const QUICK: Sizes = {
  reps: 1,
  rounds: 1,
  roundSize: 20,
  clients: 4,
  warmupRounds: 0,
  prefill: 50,
  prefillClients: 8,
};

type CaseId = 'ip24' | 'ip16' | 'ip12' | 'ip12Prefilled';
type Backend = 'sqlite' | 'etcd';

interface Case {
  readonly id: CaseId;
  readonly label: string;
  readonly cidr: string;
  readonly prefill: boolean;
}

const CASES: readonly Case[] = [
  { id: 'ip24', label: '/24', cidr: '10.0.0.0/24', prefill: false },
  { id: 'ip16', label: '/16', cidr: '10.0.0.0/16', prefill: false },
  { id: 'ip12', label: '/12', cidr: '10.96.0.0/12', prefill: false },
  { id: 'ip12Prefilled', label: '/12 prefilled', cidr: '10.96.0.0/12', prefill: true },
];

// ------------------------------------------------------------------------------------------ worker

type ServiceType = 'NodePort' | 'ClusterIP';

type WorkerRequest =
  | { op: 'begin'; conn: Conn; clients: number }
  | {
      op: 'create';
      namespace: string;
      prefix: string;
      from: number;
      to: number;
      type: ServiceType;
      clients: number;
    }
  | { op: 'delete'; namespace: string; prefix: string; from: number; to: number; clients: number }
  | { op: 'post'; path: string; body: string }
  | { op: 'end' };

interface CreateReply {
  t0: number;
  t1: number;
  latencies: Float64Array;
  errors: number;
  firstError?: string;
  /** spec.clusterIP and spec.ports[0].nodePort of each created Service ('' and 0 when missing). */
  clusterIPs: string[];
  nodePorts: number[];
  clientCpuMs: number;
}
interface DeleteReply {
  errors: number;
  firstError?: string;
}
interface PostReply {
  status: number;
  text: string;
}

function serviceBody(namespace: string, name: string, i: number, type: ServiceType): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: `app-${i % 50}`, tier: 'frontend' } },
    spec: {
      type,
      selector: { app: `app-${i % 50}` },
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  });
}

/** `clients` loops share indices from..to-1 and call `op` for each, on one keep-alive connection each. */
async function inParallel(
  from: number,
  to: number,
  clients: number,
  op: (i: number) => Promise<void>,
): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < to; i = next++) await op(i);
    }),
  );
}

async function workerMain(): Promise<void> {
  let session: { conn: Conn; agent: https.Agent } | undefined;
  const current = (): { conn: Conn; agent: https.Agent } => {
    if (session === undefined) throw new Error('no session: begin first');
    return session;
  };
  const handle = async (msg: WorkerRequest): Promise<unknown> => {
    switch (msg.op) {
      case 'begin': {
        session?.agent.destroy();
        const agent = agentFor(msg.conn, msg.clients);
        session = { conn: msg.conn, agent };
        // Opens every connection (TLS handshake) now, so no timed request pays for one.
        const got = await Promise.all(
          Array.from({ length: msg.clients }, () => request(agent, msg.conn, 'GET', '/version')),
        );
        if (got.some((r) => r.status !== 200)) throw new Error(`GET /version: ${got.map((r) => r.status)}`);
        return got.length;
      }
      case 'create': {
        const { conn, agent } = current();
        const n = msg.to - msg.from;
        const latencies = new Float64Array(n);
        const clusterIPs: string[] = new Array<string>(n).fill('');
        const nodePorts: number[] = new Array<number>(n).fill(0);
        let errors = 0;
        let firstError: string | undefined;
        const p = `/api/v1/namespaces/${msg.namespace}/services`;
        const cpu0 = process.cpuUsage();
        const t0 = epochMs();
        await inParallel(msg.from, msg.to, msg.clients, async (i) => {
          const k = i - msg.from;
          const body = serviceBody(msg.namespace, `${msg.prefix}${i}`, i, msg.type);
          const s = performance.now();
          try {
            const res = await request(agent, conn, 'POST', p, { body, keepText: true });
            latencies[k] = performance.now() - s;
            if (res.status !== 201) {
              errors++;
              firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
              return;
            }
            const spec = (
              JSON.parse(res.text ?? '{}') as {
                spec?: { clusterIP?: string; ports?: Array<{ nodePort?: number }> };
              }
            ).spec;
            clusterIPs[k] = spec?.clusterIP ?? '';
            nodePorts[k] = spec?.ports?.[0]?.nodePort ?? 0;
          } catch (err) {
            latencies[k] = performance.now() - s;
            errors++;
            firstError ??= String(err);
          }
        });
        const t1 = epochMs();
        const cpu = process.cpuUsage(cpu0);
        return {
          t0,
          t1,
          latencies,
          errors,
          ...(firstError === undefined ? {} : { firstError }),
          clusterIPs,
          nodePorts,
          clientCpuMs: (cpu.user + cpu.system) / 1000,
        } satisfies CreateReply;
      }
      case 'delete': {
        const { conn, agent } = current();
        let errors = 0;
        let firstError: string | undefined;
        await inParallel(msg.from, msg.to, msg.clients, async (i) => {
          const p = `/api/v1/namespaces/${msg.namespace}/services/${msg.prefix}${i}`;
          try {
            const res = await request(agent, conn, 'DELETE', p, { keepText: true });
            if (res.status !== 200 && res.status !== 202) {
              errors++;
              firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
            }
          } catch (err) {
            errors++;
            firstError ??= String(err);
          }
        });
        return { errors, ...(firstError === undefined ? {} : { firstError }) } satisfies DeleteReply;
      }
      case 'post': {
        const { conn, agent } = current();
        const res = await request(agent, conn, 'POST', msg.path, { body: msg.body, keepText: true });
        return { status: res.status, text: res.text ?? '' } satisfies PostReply;
      }
      case 'end':
        session?.agent.destroy();
        session = undefined;
        return null;
    }
  };
  serveWorker(handle);
}

if (process.env[WORKER_ENV] === '1') void workerMain();

// ------------------------------------------------------------------------------------ orchestrator

/** Revisions (exclusive) around one timed create phase, and what the store's history holds between. */
interface Window {
  readonly start: number;
  readonly end: number;
  puts: number;
  deletes: number;
  bytes: { service: number; clusterIP: number; nodePort: number; other: number };
}

interface RoundFigures {
  seconds: number;
  latencies: Float64Array;
  serverCpuS: number;
  etcdCpuS: number;
  clientCpuMs: number;
  window: Window;
}

/** Everything one repetition measured for one backend and range; the byte figures after the replay. */
interface RepFigures {
  rep: number;
  /** Position of this case within the repetition (the order rotates). */
  position: number;
  creates: number;
  createsPerSec: number;
  createP50Ms: number;
  createP99Ms: number;
  createMaxMs: number;
  serverCpuUsPerCreate: number;
  serverCores: number;
  etcdCpuUsPerCreate?: number;
  clientCores: number;
  loadAvg1m: number;
  putsPerCreate: number;
  bytesPerCreate: number;
  serviceBytesPerCreate: number;
  clusterIPRecordBytesPerCreate: number;
  nodePortRecordBytesPerCreate: number;
  otherBytesPerCreate: number;
  upstreamBytesPerCreate: number;
  roundSeconds: number[];
}

interface Subject {
  readonly c: Case;
  readonly dataDir: string;
  readonly etcdPrefix: string;
  server: Server;
  readonly windows: Window[];
  readonly rounds: RoundFigures[][];
  readonly reps: RepFigures[];
  marks: number;
}

/** Upstream's RangeAllocation bitmaps: one bit per usable value, rewritten whole by every allocation. */
function upstreamBitmapBytes(cidr: string): { ip: number; port: number; keys: number } {
  return {
    ip: Math.ceil(ipRange(cidr).max / 8),
    port: Math.ceil(NODE_PORTS.size / 8),
    keys: '/ranges/serviceips'.length + '/ranges/servicenodeports'.length,
  };
}

/** The pid of the process whose command line contains `arg` (the etcd started for this run). */
function pidWithArg(arg: string): number | undefined {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(arg)) return Number(d);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

function category(key: string): keyof Window['bytes'] {
  if (key.startsWith('/services/')) return 'service';
  if (key.startsWith('/allocations/serviceips/')) return 'clusterIP';
  if (key.startsWith('/allocations/servicenodeports/')) return 'nodePort';
  return 'other';
}

/**
 * Replays the store's history once over every window (sorted, disjoint) and tallies the writes in
 * each: PUTs (creates and updates) with their key + value bytes, and DELETEs.
 */
async function replay(store: Store, windows: Window[]): Promise<void> {
  if (windows.length === 0) return;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 120_000);
  let w = 0;
  const last = windows[windows.length - 1]!.end;
  let seen = windows[0]!.start;
  try {
    outer: for await (const batch of store.watch('/', windows[0]!.start, ac.signal)) {
      for (const ev of batch) {
        seen = ev.revision;
        while (w < windows.length && ev.revision >= windows[w]!.end) w++;
        if (w === windows.length) break outer;
        const win = windows[w]!;
        if (ev.revision <= win.start) continue;
        if (ev.type === 'DELETE') {
          win.deletes++;
          continue;
        }
        win.puts++;
        win.bytes[category(ev.key)] += Buffer.byteLength(ev.key) + ev.value.length;
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (seen < last) throw new Error(`replay: history ended at revision ${seen}, before ${last}`);
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  if (z.roundSize > 253) throw new Error('a round must fit a /24 (253 addresses besides `kubernetes`)');
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1) {
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
        'compete for the CPUs, so rates and latencies are pessimistic; CPU-µs per create is less affected',
    );
  }
  const root = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-allocation-'));
  const results = {} as Record<Backend, Record<CaseId, RepFigures[]>>;
  const tRun = performance.now();
  const measure = async (backend: Backend): Promise<void> => {
    const worker = new Worker<WorkerRequest>(SELF, { [WORKER_ENV]: '1' }, `${backend} client`);
    try {
      results[backend] = await runBackend(ctx, z, backend, worker, path.join(root, backend));
    } finally {
      worker.stop();
    }
  };
  try {
    // One backend after the other, so that neither takes CPU from the other's figures. The quick mode,
    // whose figures mean nothing, runs them side by side: its rounds wait on latency, not on the CPUs.
    if (ctx.quick) await Promise.all([measure('sqlite'), measure('etcd')]);
    else for (const backend of ['sqlite', 'etcd'] as const) await measure(backend);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  ctx.log(`whole run: ${((performance.now() - tRun) / 1000).toFixed(0)} s`);
  return summarize(z, results, loadAtStart);
}

async function runBackend(
  ctx: BenchContext,
  z: Sizes,
  backend: Backend,
  worker: Worker<WorkerRequest>,
  dir: string,
): Promise<Record<CaseId, RepFigures[]>> {
  mkdirSync(dir, { recursive: true });
  let etcd: EtcdServer | undefined;
  let etcdPid: number | undefined;
  const subjects: Subject[] = [];
  try {
    if (backend === 'etcd') {
      etcd = await startEtcd({ extraArgs: ['--quota-backend-bytes=8589934592'] });
      etcdPid = pidWithArg(`--data-dir=${etcd.dataDir}`);
      if (etcdPid === undefined) throw new Error('etcd: cannot find its pid in /proc');
    }
    const t0 = performance.now();
    // Started together: startup is not measured, and from the compiled dist/ each takes a second or two.
    const started = await Promise.allSettled(
      CASES.map(async (c): Promise<Subject> => {
        const dataDir = path.join(dir, c.id);
        const etcdPrefix = `/svcplane-bench-${c.id}`;
        const server = await startServer(dataDir, [
          ...(etcd === undefined
            ? []
            : ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoint, '--etcd-prefix', etcdPrefix]),
          '--service-cluster-ip-range',
          c.cidr,
          '--service-node-port-range',
          `${NODE_PORTS.base}-${NODE_PORTS.base + NODE_PORTS.size - 1}`,
        ]);
        return { c, dataDir, etcdPrefix, server, windows: [], rounds: [], reps: [], marks: 0 };
      }),
    );
    // Those that did start are stopped below (finally), even when another failed to.
    for (const r of started) if (r.status === 'fulfilled') subjects.push(r.value);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    ctx.log(
      `${backend}: ${subjects.length} servers up in ${Math.round(performance.now() - t0)} ms ` +
        `(pids ${subjects.map((s) => s.server.pid).join(', ')}${etcdPid === undefined ? '' : `; etcd ${etcdPid}`})`,
    );

    const post = async (p: string, body: unknown): Promise<PostReply> =>
      worker.call<PostReply>({ op: 'post', path: p, body: JSON.stringify(body) });
    for (const s of subjects) {
      await worker.call({ op: 'begin', conn: s.server.conn, clients: z.clients });
      for (const ns of [NAMESPACE, PREFILL_NAMESPACE]) {
        const r = await post('/api/v1/namespaces', { metadata: { name: ns } });
        if (r.status !== 201)
          throw new Error(`${backend} ${s.c.label}: namespace ${ns}: ${r.status} ${r.text}`);
      }
      await worker.call({ op: 'end' });
    }

    // ---- prefill (untimed): ClusterIP Services, so the node port range stays as in the other cases
    for (const s of subjects.filter((x) => x.c.prefill)) {
      await worker.call({ op: 'begin', conn: s.server.conn, clients: z.prefillClients });
      const tp = performance.now();
      const r = await worker.call<CreateReply>({
        op: 'create',
        namespace: PREFILL_NAMESPACE,
        prefix: 'fill-',
        from: 0,
        to: z.prefill,
        type: 'ClusterIP',
        clients: z.prefillClients,
      });
      await worker.call({ op: 'end' });
      if (r.errors > 0) throw new Error(`${backend} prefill: ${r.errors} creates failed: ${r.firstError}`);
      checkAllocations(s.c, r, false);
      ctx.log(
        `${backend} ${s.c.label}: prefilled ${z.prefill} ClusterIP services in ` +
          `${((performance.now() - tp) / 1000).toFixed(1)} s`,
      );
    }

    /** One block: `rounds` rounds on one server, on fresh keep-alive connections. */
    const block = async (s: Subject, rounds: number, timed: boolean): Promise<RoundFigures[]> => {
      await worker.call({ op: 'begin', conn: s.server.conn, clients: z.clients });
      const out: RoundFigures[] = [];
      const marker = async (): Promise<number> => {
        const name = `mark-${s.marks++}`;
        const r = await post(`/api/v1/namespaces/${NAMESPACE}/endpoints`, { metadata: { name } });
        const rv = Number(
          (JSON.parse(r.text) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion,
        );
        if (r.status !== 201 || !Number.isInteger(rv)) throw new Error(`marker: ${r.status} ${r.text}`);
        return rv;
      };
      try {
        for (let k = 0; k < rounds; k++) {
          const start = timed ? await marker() : 0;
          const cpu0 = cpuSeconds(s.server.pid);
          const ecpu0 = etcdPid === undefined ? 0 : cpuSeconds(etcdPid);
          const r = await worker.call<CreateReply>({
            op: 'create',
            namespace: NAMESPACE,
            prefix: 'svc-',
            from: 0,
            to: z.roundSize,
            type: 'NodePort',
            clients: z.clients,
          });
          const serverCpuS = cpuSeconds(s.server.pid) - cpu0;
          const etcdCpuS = etcdPid === undefined ? 0 : cpuSeconds(etcdPid) - ecpu0;
          if (r.errors > 0) {
            throw new Error(
              `${backend} ${s.c.label}: ${r.errors} of ${z.roundSize} creates failed: ${r.firstError}`,
            );
          }
          checkAllocations(s.c, r, true);
          const end = timed ? await marker() : 0;
          const d = await worker.call<DeleteReply>({
            op: 'delete',
            namespace: NAMESPACE,
            prefix: 'svc-',
            from: 0,
            to: z.roundSize,
            clients: z.clients,
          });
          if (d.errors > 0)
            throw new Error(`${backend} ${s.c.label}: ${d.errors} deletes failed: ${d.firstError}`);
          // Lets each allocator's watch catch up with the releases before the next round picks.
          await sleep(100);
          const window: Window = {
            start,
            end,
            puts: 0,
            deletes: 0,
            bytes: { service: 0, clusterIP: 0, nodePort: 0, other: 0 },
          };
          if (timed) s.windows.push(window);
          out.push({
            seconds: (r.t1 - r.t0) / 1000,
            latencies: r.latencies,
            serverCpuS,
            etcdCpuS,
            clientCpuMs: r.clientCpuMs,
            window,
          });
        }
      } finally {
        await worker.call({ op: 'end' });
      }
      return out;
    };

    // ---- warm-up (untimed), then the repetitions: every case once per repetition, order rotated
    const tw = performance.now();
    for (const s of subjects) await block(s, z.warmupRounds, false);
    ctx.log(
      `${backend}: warm-up (${z.warmupRounds} rounds each) in ${Math.round(performance.now() - tw)} ms`,
    );
    for (let rep = 0; rep < z.reps; rep++) {
      for (let k = 0; k < subjects.length; k++) {
        const s = subjects[(k + rep) % subjects.length]!;
        const rounds = await block(s, z.rounds, true);
        s.rounds.push(rounds);
        const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
        const creates = rounds.length * z.roundSize;
        const lat = new Float64Array(creates);
        rounds.forEach((r, i) => lat.set(r.latencies, i * z.roundSize));
        lat.sort();
        const serverCpuS = rounds.reduce((n, r) => n + r.serverCpuS, 0);
        const etcdCpuS = rounds.reduce((n, r) => n + r.etcdCpuS, 0);
        const f: RepFigures = {
          rep,
          position: k,
          creates,
          createsPerSec: creates / seconds,
          createP50Ms: pctSorted(lat, 50),
          createP99Ms: pctSorted(lat, 99),
          createMaxMs: lat[lat.length - 1]!,
          serverCpuUsPerCreate: (serverCpuS * 1e6) / creates,
          serverCores: serverCpuS / seconds,
          ...(etcdPid === undefined ? {} : { etcdCpuUsPerCreate: (etcdCpuS * 1e6) / creates }),
          clientCores: rounds.reduce((n, r) => n + r.clientCpuMs, 0) / 1000 / seconds,
          loadAvg1m: loadavg()[0]!,
          // Filled in after the replay.
          putsPerCreate: NaN,
          bytesPerCreate: NaN,
          serviceBytesPerCreate: NaN,
          clusterIPRecordBytesPerCreate: NaN,
          nodePortRecordBytesPerCreate: NaN,
          otherBytesPerCreate: NaN,
          upstreamBytesPerCreate: NaN,
          roundSeconds: rounds.map((r) => r.seconds),
        };
        s.reps.push(f);
        ctx.log(
          `${backend} ${s.c.label.padEnd(13)} rep ${rep + 1}/${z.reps}: ${Math.round(f.createsPerSec)}/s, ` +
            `p50 ${f.createP50Ms.toFixed(1)} ms, p99 ${f.createP99Ms.toFixed(1)} ms; server ` +
            `${f.serverCores.toFixed(2)} cores (${Math.round(f.serverCpuUsPerCreate)} CPU-µs/create)` +
            (f.etcdCpuUsPerCreate === undefined
              ? ''
              : `, etcd ${Math.round(f.etcdCpuUsPerCreate)} CPU-µs/create`) +
            `; load average ${f.loadAvg1m.toFixed(1)}`,
        );
      }
    }

    // ---- bytes written: replay each store's history over the timed windows
    for (const s of subjects) {
      await stopServer(s.server);
      const store: Store =
        etcd === undefined
          ? SqliteStore.open({ dataDir: s.dataDir })
          : await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: s.etcdPrefix });
      try {
        await replay(store, s.windows);
      } finally {
        await store.close();
      }
      const up = upstreamBitmapBytes(s.c.cidr);
      s.reps.forEach((f, rep) => {
        const ws = s.rounds[rep]!.map((r) => r.window);
        const sum = (g: (w: Window) => number): number => ws.reduce((n, w) => n + g(w), 0) / f.creates;
        f.putsPerCreate = sum((w) => w.puts);
        f.bytesPerCreate = sum((w) => w.bytes.service + w.bytes.clusterIP + w.bytes.nodePort + w.bytes.other);
        f.serviceBytesPerCreate = sum((w) => w.bytes.service);
        f.clusterIPRecordBytesPerCreate = sum((w) => w.bytes.clusterIP);
        f.nodePortRecordBytesPerCreate = sum((w) => w.bytes.nodePort);
        f.otherBytesPerCreate = sum((w) => w.bytes.other);
        f.upstreamBytesPerCreate = f.serviceBytesPerCreate + up.ip + up.port + up.keys;
        const creates = ws.reduce((n, w) => n + w.puts, 0);
        if (!(f.serviceBytesPerCreate > 0) || creates < 3 * f.creates) {
          throw new Error(
            `${backend} ${s.c.label} rep ${rep + 1}: replay found ${creates} PUTs for ${f.creates} creates`,
          );
        }
      });
      const last = s.reps[s.reps.length - 1]!;
      ctx.log(
        `${backend} ${s.c.label.padEnd(13)} bytes written per create: ${last.bytesPerCreate.toFixed(0)} ` +
          `(${last.putsPerCreate.toFixed(2)} PUTs: Service ${last.serviceBytesPerCreate.toFixed(0)}, ` +
          `ClusterIP record ${last.clusterIPRecordBytesPerCreate.toFixed(0)}, ` +
          `NodePort record ${last.nodePortRecordBytesPerCreate.toFixed(0)}, other ${last.otherBytesPerCreate.toFixed(1)}); ` +
          `upstream's bitmaps would write ${last.upstreamBytesPerCreate.toFixed(0)}`,
      );
    }
    return Object.fromEntries(subjects.map((s) => [s.c.id, s.reps])) as Record<CaseId, RepFigures[]>;
  } catch (err) {
    for (const s of subjects)
      ctx.log(`${s.c.label} server stderr tail: ${s.server.stderrTail().slice(-1500)}`);
    throw err;
  } finally {
    for (const s of subjects) await stopServer(s.server);
    await etcd?.stop();
  }
}

/** Every create got one ClusterIP of the range (and one NodePort of the range), none twice. */
function checkAllocations(c: Case, r: CreateReply, nodePorts: boolean): void {
  const range = ipRange(c.cidr);
  const bad = r.clusterIPs.find((ip) => ipOffset(range, ip) === undefined);
  if (bad !== undefined) throw new Error(`${c.label}: clusterIP ${JSON.stringify(bad)} is not in ${c.cidr}`);
  if (new Set(r.clusterIPs).size !== r.clusterIPs.length) throw new Error(`${c.label}: a clusterIP twice`);
  if (!nodePorts) return;
  const badPort = r.nodePorts.find((p) => !(p >= NODE_PORTS.base && p < NODE_PORTS.base + NODE_PORTS.size));
  if (badPort !== undefined) throw new Error(`${c.label}: nodePort ${badPort} is not in the range`);
  if (new Set(r.nodePorts).size !== r.nodePorts.length) throw new Error(`${c.label}: a nodePort twice`);
}

type Medians = Record<
  Backend,
  Record<CaseId, Omit<RepFigures, 'rep' | 'position' | 'roundSeconds' | 'creates' | 'loadAvg1m'>>
>;

function summarize(
  z: Sizes,
  results: Record<Backend, Record<CaseId, RepFigures[]>>,
  loadAtStart: number[],
): BenchResult {
  const backends = ['sqlite', 'etcd'] as const;
  const metricKeys = [
    'createsPerSec',
    'createP50Ms',
    'createP99Ms',
    'createMaxMs',
    'serverCpuUsPerCreate',
    'serverCores',
    'etcdCpuUsPerCreate',
    'clientCores',
    'putsPerCreate',
    'bytesPerCreate',
    'serviceBytesPerCreate',
    'clusterIPRecordBytesPerCreate',
    'nodePortRecordBytesPerCreate',
    'otherBytesPerCreate',
    'upstreamBytesPerCreate',
  ] as const;
  const medians = Object.fromEntries(
    backends.map((b) => [
      b,
      Object.fromEntries(
        CASES.map((c) => {
          const reps = results[b][c.id];
          const m: Record<string, number> = {};
          for (const k of metricKeys) {
            const xs = reps.map((r) => r[k]).filter((x): x is number => x !== undefined);
            if (xs.length > 0) m[k] = median(xs);
          }
          return [c.id, m];
        }),
      ),
    ]),
  ) as unknown as Medians;
  /** Paired within a repetition: case ÷ /24 creates/s of the same repetition, median over repetitions. */
  const paired = (b: Backend, id: CaseId): number =>
    median(results[b][id].map((r, rep) => r.createsPerSec / results[b].ip24[rep]!.createsPerSec));
  const ratios = Object.fromEntries(
    backends.map((b) => [
      b,
      {
        ip16OverIp24Throughput: paired(b, 'ip16'),
        ip12OverIp24Throughput: paired(b, 'ip12'),
        ip12PrefilledOverIp24Throughput: paired(b, 'ip12Prefilled'),
      },
    ]),
  ) as unknown as Record<Backend, Record<string, number>>;
  const p99Met = (b: Backend): boolean => CASES.every((c) => medians[b][c.id].createP99Ms <= 50);
  const goals = {
    sqlite: {
      ip12OverIp24AtLeast0_9: ratios.sqlite.ip12OverIp24Throughput! >= 0.9,
      ip12PrefilledOverIp24AtLeast0_9: ratios.sqlite.ip12PrefilledOverIp24Throughput! >= 0.9,
      createsAtLeast2000PerSec: CASES.every((c) => medians.sqlite[c.id].createsPerSec >= 2000),
      p99AtMost50Ms: p99Met('sqlite'),
    },
    etcd: {
      ip12OverIp24AtLeast0_9: ratios.etcd.ip12OverIp24Throughput! >= 0.9,
      ip12PrefilledOverIp24AtLeast0_9: ratios.etcd.ip12PrefilledOverIp24Throughput! >= 0.9,
      p99AtMost50Ms: p99Met('etcd'),
    },
  };
  const round = (x: number | undefined): number | string =>
    x === undefined ? '' : Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100;
  const yn = (b: boolean): string => (b ? 'yes' : 'no');
  const table: Array<Record<string, string | number>> = [];
  for (const b of backends) {
    for (const c of CASES) {
      const m = medians[b][c.id];
      table.push({
        backend: b,
        range: c.id === 'ip12Prefilled' ? `${c.cidr} + ${z.prefill}` : c.cidr,
        'creates/s': round(m.createsPerSec),
        'p50 ms': round(m.createP50Ms),
        'p99 ms': round(m.createP99Ms),
        'bytes/create': round(m.bytesPerCreate),
        'upstream bytes/create': round(m.upstreamBytesPerCreate),
        'server CPU-µs/create': round(m.serverCpuUsPerCreate),
        'etcd CPU-µs/create': round(m.etcdCpuUsPerCreate),
        'goals met':
          (b === 'sqlite' ? `≥ 2000/s: ${yn(m.createsPerSec >= 2000)}, ` : '') +
          `p99 ≤ 50 ms: ${yn(m.createP99Ms <= 50)}`,
      });
    }
  }
  for (const b of backends) {
    table.push(
      {
        backend: b,
        range: 'ratio: /12 ÷ /24 creates/s',
        'creates/s': round(ratios[b].ip12OverIp24Throughput),
        'goals met': `≥ 0.9: ${yn(goals[b].ip12OverIp24AtLeast0_9)}`,
      },
      {
        backend: b,
        range: `ratio: /12 + ${z.prefill} ÷ /24 creates/s`,
        'creates/s': round(ratios[b].ip12PrefilledOverIp24Throughput),
        'goals met': `≥ 0.9: ${yn(goals[b].ip12PrefilledOverIp24AtLeast0_9)}`,
      },
    );
  }
  return {
    table,
    data: {
      sizes: z,
      setup: {
        servers:
          'one `svcplane up` (node --import tsx src/cli/svcplane.ts) per range, all four running for the whole ' +
          'backend stage: sqlite each in its own data dir (synchronous=FULL, group commit); etcd all on one ' +
          'local etcd under their own --etcd-prefix; TLS, bearer token, AlwaysAllow',
        ranges: Object.fromEntries(CASES.map((c) => [c.id, c.cidr])),
        nodePortRange: `${NODE_PORTS.base}-${NODE_PORTS.base + NODE_PORTS.size - 1}`,
        workload:
          `rounds of ${z.roundSize} type NodePort Service creates (timed; one ClusterIP + one NodePort each) ` +
          `by ${z.clients} concurrent HTTPS clients on keep-alive connections opened before the round, then ` +
          `their deletes (untimed); ${z.rounds} rounds per case per repetition, ${z.reps} repetitions, ` +
          `${z.warmupRounds} untimed warm-up rounds per case first; case order rotated every repetition`,
        prefill: `ip12Prefilled: ${z.prefill} ClusterIP Services created (untimed) before the warm-up`,
        bytesPerCreate:
          'key + value bytes of every PUT the store holds strictly between two marker writes (an Endpoints ' +
          'create) around each timed create phase, divided by the creates; keys as the svcplane store names ' +
          'them (etcd adds its --etcd-prefix to each); "other" is what else the server wrote meanwhile ' +
          '(the kubernetes Service endpoint lease)',
        upstreamBytesPerCreate:
          "analytic, what kube-apiserver's legacy single-bitmap RangeAllocation layout writes per create: " +
          'the Service (as measured here) + the whole ClusterIP bitmap (usable addresses / 8 bytes) + the ' +
          'whole NodePort bitmap (2,768 bits) + the two range keys; RangeAllocation metadata not counted',
        upstreamBitmapBytes: Object.fromEntries(CASES.map((c) => [c.id, upstreamBitmapBytes(c.cidr)])),
        sharedCpu:
          'client worker, servers (and etcd) share the machine and its CPUs; every figure includes that',
        loadAverage: { start: loadAtStart, end: loadavg() },
      },
      medians,
      ratios,
      goals,
      repetitions: results,
    },
  };
}
