// One backend: a server per range, started before the first repetition; each repetition times rounds of
// creates on every range in a rotated order, then the store's history is replayed for the bytes.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ipOffset, ipRange } from '../../src/core/allocator/ip-allocator.js';
import { EtcdStore } from '../../src/storage/etcd/etcd-store.js';
import { startEtcd, type EtcdServer } from '../../src/storage/etcd/testing/etcd-server.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import type { Worker } from '../lib/process.js';
import { cpuSeconds, sleep, startServer, stopServer, type Server } from '../lib/process.js';
import { pctSorted, type BenchContext } from '../run.js';
import {
  NAMESPACE,
  PREFILL_NAMESPACE,
  NODE_PORTS,
  type Sizes,
  type CaseId,
  type Backend,
  type Case,
  CASES,
} from './shape.js';
import { type WorkerRequest, type CreateReply, type DeleteReply, type PostReply } from './worker.js';
import { type Window, upstreamBitmapBytes, replay } from './store-bytes.js';

interface RoundFigures {
  seconds: number;
  latencies: Float64Array;
  serverCpuS: number;
  etcdCpuS: number;
  clientCpuMs: number;
  window: Window;
}

/** Everything one repetition measured for one backend and range; the byte figures after the replay. */
export interface RepFigures {
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

export async function runBackend(
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
