// API server benchmark: two servers in the same run, each in its own child process: `svcplane apiserver`
// (durable SQLite store, watch cache, registry, HTTPS handler) and `svcplane up` (the same server with
// its controllers on a worker thread, converging on everything written here), each driven over real
// HTTPS (keep-alive connections, bearer token) by client worker processes, so client and server never
// share an event loop. They do share the machine's CPUs (2 cores on the reference VM): every figure below
// includes that contention. The table gives both and up ÷ apiserver; the goals are up's. Both servers
// are up together; their pod-create repetitions alternate (apiserver, up, apiserver, …) so that drift in
// the machine's load falls on both alike, then each runs the remaining steps in turn.
//
//   - pod creates/s with 32 concurrent clients (one keep-alive connection each), per-request p50/p99;
//   - LIST of 10k services as JSON (goal p50 ≤ 50 ms) and as a Table (kubectl's Accept, information);
//   - LIST of 100k pods across namespaces (all created through the API, 64 in flight): time and bytes;
//   - 1,000 raw watch streams on pods while a writer creates 50 pods/s: write → event latency, measured
//     from a client timestamp annotation set just before each POST, and events lost/duplicated per watcher;
//   - server RSS (/proc/<pid>/status) empty and with 100k pods stored.
//
// Every repeated measurement reports the median over repetitions. The same file is the client worker:
// forked with SVCPLANE_APISERVER_BENCH_WORKER=1 it serves the requests the orchestrator sends it.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startApiServer, svcplaneRuntime } from './lib/cluster.js';
import { agentFor, epochMs, request, type Conn, type HttpResult } from './lib/http.js';
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
import { median, pctSorted, percentile, type BenchContext, type BenchResult } from './run.js';

const SELF = fileURLToPath(import.meta.url);
const WORKER_ENV = 'SVCPLANE_APISERVER_BENCH_WORKER';
/** The annotation carrying the client's send time (epoch ms, sub-ms precision) in each written pod. */
const SENT = 'bench.svcplane.io/sent';
const TABLE_ACCEPT =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

interface Sizes {
  /** Pods created (and not counted) before the measured creates, to warm the server's JIT. */
  warmupPods: number;
  createReps: number;
  createPods: number;
  createClients: number;
  services: number;
  listReps: number;
  tableReps: number;
  /** Pods stored for the big LIST and the RSS figure, spread over namespaces of bigNamespaceSize. */
  bigPods: number;
  bigNamespaceSize: number;
  bigLoadClients: number;
  bigListReps: number;
  watchReps: number;
  watchers: number;
  watchWorkers: number;
  writesPerSec: number;
  watchSeconds: number;
  /** How long the server is left alone before an RSS reading (its GC settles). */
  settleMs: number;
}

const FULL: Sizes = {
  warmupPods: 1000,
  createReps: 3,
  createPods: 10_000,
  createClients: 32,
  services: 10_000,
  listReps: 30,
  tableReps: 10,
  bigPods: 100_000,
  bigNamespaceSize: 1000,
  bigLoadClients: 64,
  bigListReps: 5,
  watchReps: 3,
  watchers: 1000,
  watchWorkers: 2,
  writesPerSec: 50,
  watchSeconds: 20,
  settleMs: 3000,
};
/** Every step, figure and check of FULL at sizes that take seconds (the figures mean nothing). */
const QUICK: Sizes = {
  warmupPods: 50,
  createReps: 1,
  createPods: 200,
  createClients: 16,
  services: 200,
  listReps: 3,
  tableReps: 2,
  bigPods: 800,
  bigNamespaceSize: 400,
  bigLoadClients: 16,
  bigListReps: 2,
  watchReps: 1,
  watchers: 50,
  watchWorkers: 2,
  writesPerSec: 50,
  watchSeconds: 2,
  settleMs: 300,
};

// ----------------------------------------------------------------------------------------- shared

type Kind = 'pod' | 'service' | 'namespace';

interface CreateJob {
  readonly kind: Kind;
  readonly namespace: string;
  /** Objects are named `${prefix}${i}` for from ≤ i < to. */
  readonly prefix: string;
  readonly from: number;
  readonly to: number;
}

function podBody(namespace: string, name: string, i: number, sent: number): string {
  const app = `app-${i % 50}`;
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { app, 'pod-template-hash': '7c9f8d6b5', tier: i % 2 === 0 ? 'frontend' : 'backend' },
      annotations: { [SENT]: sent.toFixed(3), 'kubectl.kubernetes.io/default-container': 'app' },
      ownerReferences: [
        {
          // An owner of a kind the server does not serve: the garbage collector leaves such pods alone
          // (an apps/v1 ReplicaSet that does not exist would have them deleted).
          apiVersion: 'bench.svcplane.io/v1',
          kind: 'BenchReplicaSet',
          name: `${app}-7c9f8d6b5`,
          uid: '6f1c2a8e-3b4d-4c5e-9f60-718293a4b5c6',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      // Neither bound to a node (pod GC would remove pods of nodes that do not exist) nor the default
      // scheduler's (it would report them unschedulable): in `svcplane up` the controllers leave these
      // pods alone, as they leave alone a real workload that is placed and running, and the figures stay
      // the API server's.
      schedulerName: 'bench-scheduler',
      serviceAccountName: 'default',
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/e2e-test-images/agnhost:2.47',
          args: ['netexec', '--http-port=8080'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MODE', value: 'bench' },
          ],
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
    },
  });
}

function serviceBody(namespace: string, name: string, i: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: `app-${i % 50}`, tier: 'frontend' } },
    spec: {
      selector: { app: `app-${i % 50}` },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ],
    },
  });
}

function createRequest(job: CreateJob, i: number): { path: string; body: string } {
  const name = `${job.prefix}${i}`;
  switch (job.kind) {
    case 'pod':
      return {
        path: `/api/v1/namespaces/${job.namespace}/pods`,
        body: podBody(job.namespace, name, i, epochMs()),
      };
    case 'service':
      return {
        path: `/api/v1/namespaces/${job.namespace}/services`,
        body: serviceBody(job.namespace, name, i),
      };
    case 'namespace': // one per job: the prefix is the name
      return { path: '/api/v1/namespaces', body: JSON.stringify({ metadata: { name: job.prefix } }) };
  }
}

// ------------------------------------------------------------------------------------------ worker

type WorkerRequest =
  | { op: 'create'; jobs: CreateJob[]; clients: number }
  | { op: 'list'; path: string; accept: string; reps: number; marker: string }
  | { op: 'get'; path: string }
  | { op: 'write'; namespace: string; prefix: string; count: number; perSec: number }
  | { op: 'watchOpen'; path: string; count: number; prefix: string; maxWrites: number }
  | { op: 'watchFinish'; ok: number[]; graceMs: number };

interface CreateReply {
  t0: number;
  t1: number;
  latencies: Float64Array;
  errors: number;
  firstError?: string;
  clientCpuMs: number;
}
interface ListReply {
  times: number[];
  bytes: number[];
  counts: number[];
  statuses: number[];
}
interface WriteReply {
  ok: number[];
  errors: number;
  firstError?: string;
  latencies: number[];
  spanMs: number;
}
interface WatchOpenReply {
  opened: number;
  failed: number;
  firstError?: string;
}
interface WatchFinishReply {
  latencies: Float64Array;
  events: number;
  lost: number;
  duplicates: number;
  unexpected: number;
  errorEvents: number;
  endedEarly: number;
  complete: number;
  watchers: number;
  waitedMs: number;
  clientCpuMs: number;
}

async function workerCreate(conn: Conn, msg: { jobs: CreateJob[]; clients: number }): Promise<CreateReply> {
  const total = msg.jobs.reduce((n, j) => n + (j.to - j.from), 0);
  const at = (k: number): { job: CreateJob; i: number } => {
    for (const job of msg.jobs) {
      const n = job.to - job.from;
      if (k < n) return { job, i: job.from + k };
      k -= n;
    }
    throw new Error('create: index out of range');
  };
  const agent = agentFor(conn, msg.clients);
  const latencies = new Float64Array(total);
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = epochMs();
  await Promise.all(
    Array.from({ length: msg.clients }, async () => {
      for (let k = next++; k < total; k = next++) {
        const { job, i } = at(k);
        const r = createRequest(job, i);
        const s = performance.now();
        try {
          const res = await request(agent, conn, 'POST', r.path, { body: r.body, keepText: true });
          latencies[k] = performance.now() - s;
          if (res.status !== 201) {
            errors++;
            firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
          }
        } catch (err) {
          latencies[k] = performance.now() - s;
          errors++;
          firstError ??= String(err);
        }
      }
    }),
  );
  const t1 = epochMs();
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    t0,
    t1,
    latencies,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

async function workerList(
  conn: Conn,
  msg: { path: string; accept: string; reps: number; marker: string },
): Promise<ListReply> {
  const agent = agentFor(conn, 1);
  const marker = Buffer.from(msg.marker);
  const out: ListReply = { times: [], bytes: [], counts: [], statuses: [] };
  // One unmeasured request first: the connection's TLS handshake, and the server's sorted key index.
  await request(agent, conn, 'GET', msg.path, { accept: msg.accept });
  for (let k = 0; k < msg.reps; k++) {
    const s = performance.now();
    const r = await request(agent, conn, 'GET', msg.path, { accept: msg.accept, marker });
    out.times.push(performance.now() - s);
    out.bytes.push(r.bytes);
    out.counts.push(r.marks);
    out.statuses.push(r.status);
  }
  agent.destroy();
  return out;
}

/** Creates `count` pods at a steady `perSec`, each stamped with its send time; never waits for replies. */
async function workerWrite(
  conn: Conn,
  msg: { namespace: string; prefix: string; count: number; perSec: number },
): Promise<WriteReply> {
  const agent = agentFor(conn, 8);
  const job: CreateJob = {
    kind: 'pod',
    namespace: msg.namespace,
    prefix: msg.prefix,
    from: 0,
    to: msg.count,
  };
  const ok: number[] = [];
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < msg.count; i++) {
    const due = t0 + (i * 1000) / msg.perSec;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const r = createRequest(job, i); // stamps the send time now
    const s = performance.now();
    pending.push(
      request(agent, conn, 'POST', r.path, { body: r.body, keepText: true }).then(
        (res) => {
          latencies.push(performance.now() - s);
          if (res.status === 201) ok.push(i);
          else {
            errors++;
            firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
          }
        },
        (err: unknown) => {
          errors++;
          firstError ??= String(err);
        },
      ),
    );
  }
  const spanMs = performance.now() - t0;
  await Promise.all(pending);
  agent.destroy();
  return { ok, errors, ...(firstError === undefined ? {} : { firstError }), latencies, spanMs };
}

interface Watch {
  sock: TLSSocket | undefined;
  counts: Uint8Array;
  distinct: number;
  /** The start of an event line whose end has not arrived yet. */
  pending: Buffer;
  ended: boolean;
  /** Response head bytes until the blank line; undefined once the body started. */
  head: Buffer | undefined;
  /** Chunked transfer decoding: data bytes left in the current chunk, CRLF bytes to skip, a partial size line. */
  left: number;
  crlf: number;
  sizeLine: string;
}

const EMPTY = Buffer.alloc(0);
const TYPE_MARK = Buffer.from('{"type":"');
const META_MARK = Buffer.from('"metadata":{');
const NAME_MARK = Buffer.from('"name":"');
const SENT_MARK = Buffer.from(`"${SENT}":"`);

class WatchSet {
  readonly watches: Watch[] = [];
  latencies = new Float64Array(1 << 16);
  n = 0;
  events = 0;
  unexpected = 0;
  errorEvents = 0;
  cpu0 = process.cpuUsage();

  constructor(
    private readonly conn: Conn,
    private readonly prefix: string,
    private readonly maxWrites: number,
  ) {}

  async open(p: string, count: number): Promise<WatchOpenReply> {
    let failed = 0;
    let firstError: string | undefined;
    let next = 0;
    await Promise.all(
      Array.from({ length: 25 }, async () => {
        for (let k = next++; k < count; k = next++) {
          try {
            await this.openOne(p);
          } catch (err) {
            failed++;
            firstError ??= String(err);
          }
        }
      }),
    );
    this.cpu0 = process.cpuUsage();
    return { opened: this.watches.length, failed, ...(firstError === undefined ? {} : { firstError }) };
  }

  /**
   * One watch on its own TLS connection, spoken as raw HTTP/1.1 with a minimal chunked decoder: the
   * watch clients share the CPUs with the server, so they skip node:http's per-event response stream.
   */
  private openOne(p: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: Watch = {
        sock: undefined,
        counts: new Uint8Array(this.maxWrites),
        distinct: 0,
        pending: EMPTY,
        ended: false,
        head: EMPTY,
        left: 0,
        crlf: 0,
        sizeLine: '',
      };
      const timer = setTimeout(() => {
        w.sock?.destroy();
        reject(new Error('watch: no response head within 30 s'));
      }, 30_000);
      const sock = tlsConnect({ host: this.conn.host, port: this.conn.port, ca: this.conn.ca });
      w.sock = sock;
      sock.on('secureConnect', () => {
        sock.write(
          `GET ${p} HTTP/1.1\r\nHost: ${this.conn.host}:${this.conn.port}\r\n` +
            `Authorization: Bearer ${this.conn.token}\r\nAccept: application/json\r\n` +
            'User-Agent: svcplane-bench/1.0\r\n\r\n',
        );
      });
      sock.on('data', (chunk: Buffer) => {
        if (w.head === undefined) {
          this.receive(w, chunk);
          return;
        }
        const head = Buffer.concat([w.head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          w.head = head;
          return;
        }
        clearTimeout(timer);
        const text = head.toString('latin1', 0, end);
        w.head = undefined;
        if (!/^HTTP\/1\.1 200 /.test(text)) {
          sock.destroy();
          reject(new Error(`watch: ${text.split('\r\n')[0]}`));
          return;
        }
        if (!/^transfer-encoding:\s*chunked\s*$/im.test(text)) w.left = Infinity; // delimited by close
        this.watches.push(w);
        resolve();
        if (head.length > end + 4) this.receive(w, head.subarray(end + 4));
      });
      sock.on('close', () => (w.ended = true));
      sock.on('error', (err) => {
        w.ended = true;
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Body bytes: undoes the chunked framing, then splits event lines. */
  private receive(w: Watch, buf: Buffer): void {
    const now = epochMs();
    let i = 0;
    while (i < buf.length) {
      if (w.left > 0) {
        const n = Math.min(w.left, buf.length - i);
        this.lines(w, buf.subarray(i, i + n), now);
        i += n;
        w.left -= n;
        if (w.left === 0) w.crlf = 2;
      } else if (w.crlf > 0) {
        i++;
        w.crlf--;
      } else {
        const nl = buf.indexOf(10, i);
        if (nl < 0) {
          w.sizeLine += buf.toString('latin1', i);
          return;
        }
        const size = parseInt(w.sizeLine + buf.toString('latin1', i, nl), 16);
        w.sizeLine = '';
        i = nl + 1;
        if (!(size > 0)) {
          w.ended = true; // the last chunk: the server ended the watch
          return;
        }
        w.left = size;
      }
    }
  }

  private lines(w: Watch, data: Buffer, now: number): void {
    const buf = w.pending.length > 0 ? Buffer.concat([w.pending, data]) : data;
    let start = 0;
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
      this.line(w, buf, start, nl, now);
      start = nl + 1;
    }
    w.pending = start < buf.length ? Buffer.from(buf.subarray(start)) : EMPTY;
  }

  /**
   * Reads the type, the name and the send stamp of one event line without decoding or parsing it, so
   * the clients (which share the CPUs with the server) stay cheap.
   */
  private line(w: Watch, buf: Buffer, from: number, to: number, now: number): void {
    // Every line is {"type":"<TYPE>","object":{...}}.
    if (buf.indexOf(TYPE_MARK, from) !== from) {
      this.unexpected++;
      return;
    }
    const t = buf[from + TYPE_MARK.length];
    if (t === 0x42 /* BOOKMARK */) return;
    if (t === 0x45 /* ERROR */) {
      this.errorEvents++;
      return;
    }
    // Each create must reach each watcher once, as ADDED; a controller's later write to a pod (none is
    // expected, see podBody) is not a create measured here.
    if (t !== 0x41 /* ADDED */) return;
    this.events++;
    const meta = buf.indexOf(META_MARK, from);
    const nameAt = buf.indexOf(NAME_MARK, meta) + NAME_MARK.length;
    const name = buf.toString('latin1', nameAt, buf.indexOf(0x22, nameAt));
    const sentAt = buf.indexOf(SENT_MARK, from) + SENT_MARK.length;
    const sent = Number(buf.toString('latin1', sentAt, buf.indexOf(0x22, sentAt)));
    const i = name.startsWith(this.prefix) ? Number(name.slice(this.prefix.length)) : NaN;
    if (
      meta < 0 ||
      meta > to ||
      sentAt < SENT_MARK.length ||
      sentAt > to ||
      !Number.isInteger(i) ||
      i < 0 ||
      i >= this.maxWrites ||
      !Number.isFinite(sent)
    ) {
      this.unexpected++;
      return;
    }
    if (w.counts[i]! === 0) w.distinct++;
    if (w.counts[i]! < 255) w.counts[i]!++;
    if (this.n === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.n++] = now - sent;
  }

  async finish(ok: number[], graceMs: number): Promise<WatchFinishReply> {
    const t0 = performance.now();
    const done = (): boolean => this.watches.every((w) => w.distinct >= ok.length || w.ended);
    while (!done() && performance.now() - t0 < graceMs) await new Promise((r) => setTimeout(r, 20));
    const waitedMs = performance.now() - t0;
    const cpu = process.cpuUsage(this.cpu0);
    let lost = 0;
    let duplicates = 0;
    let complete = 0;
    let endedEarly = 0;
    const okSet = new Uint8Array(this.maxWrites);
    for (const i of ok) okSet[i] = 1;
    for (const w of this.watches) {
      if (w.ended) endedEarly++;
      let missing = 0;
      for (const i of ok) {
        const c = w.counts[i]!;
        if (c === 0) missing++;
        else if (c > 1) duplicates += c - 1;
      }
      for (let i = 0; i < this.maxWrites; i++) if (okSet[i] === 0 && w.counts[i]! > 0) this.unexpected++;
      lost += missing;
      if (missing === 0) complete++;
      w.sock?.destroy();
    }
    return {
      latencies: this.latencies.slice(0, this.n),
      events: this.events,
      lost,
      duplicates,
      unexpected: this.unexpected,
      errorEvents: this.errorEvents,
      endedEarly,
      complete,
      watchers: this.watches.length,
      waitedMs,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
    };
  }
}

async function workerMain(): Promise<void> {
  const conn = JSON.parse(process.env.SVCPLANE_BENCH_CONN ?? '{}') as Conn;
  let watches: WatchSet | undefined;
  const handle = async (msg: WorkerRequest): Promise<unknown> => {
    switch (msg.op) {
      case 'create':
        return workerCreate(conn, msg);
      case 'list':
        return workerList(conn, msg);
      case 'get': {
        const agent = agentFor(conn, 1);
        const r = await request(agent, conn, 'GET', msg.path, { keepText: true });
        agent.destroy();
        return r;
      }
      case 'write':
        return workerWrite(conn, msg);
      case 'watchOpen':
        watches = new WatchSet(conn, msg.prefix, msg.maxWrites);
        return watches.open(msg.path, msg.count);
      case 'watchFinish': {
        if (watches === undefined) throw new Error('watchFinish without watchOpen');
        const r = await watches.finish(msg.ok, msg.graceMs);
        watches = undefined;
        return r;
      }
    }
  };
  serveWorker(handle);
}

if (process.env[WORKER_ENV] === '1') void workerMain();

// ------------------------------------------------------------------------------------ orchestrator

/** A client worker process serving the requests below. */
const clientWorker = (conn: Conn, name: string): Worker<WorkerRequest> =>
  new Worker<WorkerRequest>(SELF, { [WORKER_ENV]: '1', SVCPLANE_BENCH_CONN: JSON.stringify(conn) }, name);

/** Splits creates over workers; returns the aggregate rate (first start to last finish) and latencies. */
async function createAcross(
  workers: Worker<WorkerRequest>[],
  jobs: CreateJob[],
  clients: number,
  serverPid: number,
): Promise<{
  perSec: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  seconds: number;
  serverCores: number;
  /** Server CPU (all threads) per object created: robust to other load on the machine. */
  serverCpuUsPerCreate: number;
  clientCores: number;
  loadAvg1m: number;
}> {
  const parts: CreateJob[][] = workers.map(() => []);
  jobs.forEach((j, k) => parts[k % workers.length]!.push(j));
  const active = parts.map((p, k) => ({ jobs: p, w: workers[k]! })).filter((p) => p.jobs.length > 0);
  const per = Math.max(1, Math.round(clients / active.length));
  const cpu0 = cpuSeconds(serverPid);
  const replies = await Promise.all(
    active.map((a) => a.w.call<CreateReply>({ op: 'create', jobs: a.jobs, clients: per })),
  );
  const cpu1 = cpuSeconds(serverPid);
  const total = jobs.reduce((n, j) => n + (j.to - j.from), 0);
  const seconds = (Math.max(...replies.map((r) => r.t1)) - Math.min(...replies.map((r) => r.t0))) / 1000;
  const lat = new Float64Array(total);
  let off = 0;
  for (const r of replies) {
    lat.set(r.latencies, off);
    off += r.latencies.length;
  }
  lat.sort();
  const errors = replies.reduce((n, r) => n + r.errors, 0);
  const firstError = replies.find((r) => r.firstError !== undefined)?.firstError;
  return {
    perSec: total / seconds,
    p50: pctSorted(lat, 50),
    p99: pctSorted(lat, 99),
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    seconds,
    serverCores: (cpu1 - cpu0) / seconds,
    serverCpuUsPerCreate: ((cpu1 - cpu0) * 1e6) / total,
    loadAvg1m: loadavg()[0]!,
    clientCores: replies.reduce((n, r) => n + r.clientCpuMs, 0) / 1000 / seconds,
  };
}

function nsJobs(names: string[]): CreateJob[] {
  return names.map((n) => ({ kind: 'namespace', namespace: '', prefix: n, from: 0, to: 1 }));
}

type Subject = 'apiserver' | 'up';

/** What one server measured: its figures, goals and table rows, and everything for the JSON file. */
interface Measured {
  readonly m: Record<string, number>;
  readonly goals: Record<string, boolean>;
  readonly table: Array<Record<string, string | number>>;
  readonly data: Record<string, unknown>;
}

/**
 * The order in which the two subjects' steps run when they are measured together: each step waits for
 * its turn and passes it on when done. The create repetitions alternate (apiserver, up, apiserver, …),
 * so drift in the machine's load falls on both subjects alike instead of on whichever runs second; the
 * later steps run one subject after the other. A failure releases every waiter with the error.
 */
class Turns {
  private at = 0;
  private failed: unknown;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly order: readonly string[]) {}

  async turn(step: string): Promise<void> {
    if (!this.order.includes(step)) throw new Error(`no turn for ${step}`);
    while (this.failed === undefined && this.order[this.at] !== step) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    if (this.failed !== undefined) throw this.failed;
  }

  done(step: string): void {
    if (this.order[this.at] !== step) throw new Error(`${step} is not the current turn`);
    this.at++;
    this.wakeAll();
  }

  fail(err: unknown): void {
    this.failed ??= err;
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** apiserver's and up's steps, in the order Turns runs them. */
function turnOrder(reps: number): string[] {
  const order = ['apiserver:setup', 'up:setup'];
  for (let rep = 0; rep < reps; rep++) order.push(`apiserver:create${rep}`, `up:create${rep}`);
  order.push('apiserver:rest', 'up:rest');
  return order;
}

/** Every step of the benchmark against one server: `svcplane apiserver` alone, or `svcplane up`. */
async function measure(outer: BenchContext, z: Sizes, subject: Subject, turns?: Turns): Promise<Measured> {
  const begin = (name: string): Promise<void> => turns?.turn(`${subject}:${name}`) ?? Promise.resolve();
  const end = (name: string): void => turns?.done(`${subject}:${name}`);
  const ctx = { ...outer, log: (l: string) => outer.log(`${subject.padEnd(9)} ${l}`) };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-apiserver-'));
  let server: Server | undefined;
  const workers: Worker<WorkerRequest>[] = [];
  try {
    await begin('setup');
    const loadAtStart = loadavg();
    if (loadAtStart[0]! > 1) {
      ctx.log(
        `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
          'compete for the CPUs, so rates and latencies are pessimistic; CPU-µs per request is less affected',
      );
    }
    const tStart = performance.now();
    server = subject === 'up' ? await startServer(dataDir) : await startApiServer(svcplaneRuntime(), dataDir);
    const pid = server.pid;
    ctx.log(`server pid ${pid} at ${server.url} (started in ${Math.round(performance.now() - tStart)} ms)`);
    const main = clientWorker(server.conn, 'client');
    workers.push(main);
    const watchWorkers = Array.from({ length: z.watchWorkers }, (_, k) =>
      clientWorker(server!.conn, `watch${k}`),
    );
    workers.push(...watchWorkers);

    const bigNamespaces = Math.ceil(z.bigPods / z.bigNamespaceSize);
    const namespaces = [
      'bench-warm',
      'bench-watch',
      ...Array.from({ length: z.createReps }, (_, k) => `bench-create-${k}`),
      ...Array.from({ length: bigNamespaces }, (_, k) => `bench-ns-${String(k).padStart(3, '0')}`),
    ];
    const nsRes = await createAcross([main], nsJobs(namespaces), 8, pid);
    if (nsRes.errors > 0) throw new Error(`creating namespaces: ${nsRes.firstError}`);
    await sleep(z.settleMs / 3);
    const memEmpty = memory(pid);
    ctx.log(`server RSS with an empty store: ${memEmpty.rssMiB.toFixed(0)} MiB`);

    // ---- pod creates, 32 clients
    const warm = await createAcross(
      [main],
      [{ kind: 'pod', namespace: 'bench-warm', prefix: 'warm-', from: 0, to: z.warmupPods }],
      z.createClients,
      pid,
    );
    if (warm.errors > 0) throw new Error(`warm-up creates failed: ${warm.firstError}`);
    end('setup');
    let podsStored = z.warmupPods;
    const creates: Array<Awaited<ReturnType<typeof createAcross>>> = [];
    for (let rep = 0; rep < z.createReps; rep++) {
      await begin(`create${rep}`);
      const r = await createAcross(
        [main],
        [
          {
            kind: 'pod',
            namespace: `bench-create-${rep}`,
            prefix: 'web-7c9f8d6b5-',
            from: 0,
            to: z.createPods,
          },
        ],
        z.createClients,
        pid,
      );
      if (r.errors > 0) throw new Error(`pod creates failed (${r.errors}): ${r.firstError}`);
      podsStored += z.createPods;
      creates.push(r);
      ctx.log(
        `creates rep ${rep + 1}/${z.createReps}: ${Math.round(r.perSec)}/s, p50 ${r.p50.toFixed(1)} ms, ` +
          `p99 ${r.p99.toFixed(1)} ms; server ${r.serverCores.toFixed(2)} cores (${Math.round(r.serverCpuUsPerCreate)} CPU-µs/create), ` +
          `client ${r.clientCores.toFixed(2)} cores; load average ${r.loadAvg1m.toFixed(1)}`,
      );
      end(`create${rep}`);
    }

    // ---- 10k services, LIST as JSON and as Table
    await begin('rest');
    const svc = await createAcross(
      [main],
      [{ kind: 'service', namespace: 'default', prefix: 'svc-', from: 0, to: z.services }],
      64,
      pid,
    );
    if (svc.errors > 0) throw new Error(`service creates failed: ${svc.firstError}`);
    ctx.log(`created ${z.services} services at ${Math.round(svc.perSec)}/s`);
    const svcPath = '/api/v1/namespaces/default/services';
    const cpuL0 = cpuSeconds(pid);
    const tL0 = performance.now();
    const listJson = await main.call<ListReply>({
      op: 'list',
      path: svcPath,
      accept: 'application/json',
      reps: z.listReps,
      marker: '"kind":"Service",',
    });
    const listServerCoreMs = ((cpuSeconds(pid) - cpuL0) * 1000) / (z.listReps + 1);
    const listWallMs = (performance.now() - tL0) / (z.listReps + 1);
    const listTable = await main.call<ListReply>({
      op: 'list',
      path: svcPath,
      accept: TABLE_ACCEPT,
      reps: z.tableReps,
      marker: '"cells":[',
    });
    for (const [what, l] of [
      ['JSON', listJson],
      ['Table', listTable],
    ] as const) {
      // default/kubernetes is there too.
      if (l.statuses.some((s) => s !== 200) || l.counts.some((c) => c !== z.services + 1)) {
        throw new Error(`LIST services (${what}): statuses ${l.statuses}, items ${l.counts}`);
      }
    }
    ctx.log(
      `LIST ${z.services} services: JSON p50 ${median(listJson.times).toFixed(1)} ms ` +
        `(${(median(listJson.bytes) / 2 ** 20).toFixed(1)} MiB; server ${listServerCoreMs.toFixed(1)} CPU-ms ` +
        `per list of ${listWallMs.toFixed(1)} ms wall), Table p50 ${median(listTable.times).toFixed(1)} ms`,
    );

    // ---- load to bigPods pods across namespaces, 64 in flight; RSS; LIST all pods
    const bigJobs: CreateJob[] = [];
    for (let k = 0, left = z.bigPods - podsStored; left > 0; k++) {
      const n = Math.min(left, z.bigNamespaceSize);
      bigJobs.push({
        kind: 'pod',
        namespace: `bench-ns-${String(k).padStart(3, '0')}`,
        prefix: 'app-7c9f8d6b5-',
        from: 0,
        to: n,
      });
      left -= n;
    }
    const load = await createAcross([main], bigJobs, z.bigLoadClients, pid);
    if (load.errors > 0) throw new Error(`bulk pod creates failed (${load.errors}): ${load.firstError}`);
    podsStored = z.bigPods;
    ctx.log(
      `loaded to ${z.bigPods} pods: ${z.bigPods - z.warmupPods - z.createReps * z.createPods} creates at ` +
        `${Math.round(load.perSec)}/s (${z.bigLoadClients} in flight), p99 ${load.p99.toFixed(1)} ms`,
    );
    await sleep(z.settleMs);
    const memBig = memory(pid);
    ctx.log(
      `server RSS with ${z.bigPods} pods: ${memBig.rssMiB.toFixed(0)} MiB (peak ${memBig.hwmMiB.toFixed(0)})`,
    );
    const cpuB0 = cpuSeconds(pid);
    const bigList = await main.call<ListReply>({
      op: 'list',
      path: '/api/v1/pods',
      accept: 'application/json',
      reps: z.bigListReps,
      marker: `"${SENT}":`,
    });
    const bigListServerCoreMs = ((cpuSeconds(pid) - cpuB0) * 1000) / (z.bigListReps + 1);
    if (bigList.statuses.some((s) => s !== 200) || bigList.counts.some((c) => c !== z.bigPods)) {
      throw new Error(`LIST pods: statuses ${bigList.statuses}, items ${bigList.counts} (want ${z.bigPods})`);
    }
    const memAfterList = memory(pid);
    ctx.log(
      `LIST ${z.bigPods} pods: p50 ${median(bigList.times).toFixed(0)} ms, ` +
        `${(median(bigList.bytes) / 2 ** 20).toFixed(0)} MiB; server RSS after ${memAfterList.rssMiB.toFixed(0)} MiB, ` +
        `peak ${memAfterList.hwmMiB.toFixed(0)} MiB`,
    );

    // ---- watchers: 50 writes/s to 1,000 watch streams
    const writes = Math.round(z.writesPerSec * z.watchSeconds);
    const watchReps: Array<{
      p50: number;
      p99: number;
      max: number;
      events: number;
      expectedEvents: number;
      lost: number;
      duplicates: number;
      unexpected: number;
      errorEvents: number;
      endedEarly: number;
      writeErrors: number;
      writeP50: number;
      writeP99: number;
      achievedWritesPerSec: number;
      serverCores: number;
      clientCores: number;
      openSeconds: number;
      loadAvg1m: number;
    }> = [];
    for (let rep = 0; rep < z.watchReps; rep++) {
      const prefix = `wr${rep}-`;
      const got = await main.call<HttpResult>({ op: 'get', path: '/api/v1/namespaces/bench-watch/pods' });
      const rv = (JSON.parse(got.text ?? '{}') as { metadata?: { resourceVersion?: string } }).metadata
        ?.resourceVersion;
      if (got.status !== 200 || rv === undefined) throw new Error(`list for watch: ${got.status}`);
      const per = Math.ceil(z.watchers / watchWorkers.length);
      const tOpen = performance.now();
      const opened = await Promise.all(
        watchWorkers.map((w, k) =>
          w.call<WatchOpenReply>({
            op: 'watchOpen',
            path: `/api/v1/pods?watch=true&resourceVersion=${rv}`,
            count: Math.min(per, z.watchers - k * per),
            prefix,
            maxWrites: writes,
          }),
        ),
      );
      const openSeconds = (performance.now() - tOpen) / 1000;
      const failed = opened.reduce((n, o) => n + o.failed, 0);
      if (failed > 0)
        throw new Error(`${failed} watches failed to open: ${opened.find((o) => o.failed)?.firstError}`);
      await sleep(500);
      const cpu0 = cpuSeconds(pid);
      const wr = await main.call<WriteReply>({
        op: 'write',
        namespace: 'bench-watch',
        prefix,
        count: writes,
        perSec: z.writesPerSec,
      });
      const finished = await Promise.all(
        watchWorkers.map((w) => w.call<WatchFinishReply>({ op: 'watchFinish', ok: wr.ok, graceMs: 15_000 })),
      );
      const seconds = wr.spanMs / 1000;
      const serverCores = (cpuSeconds(pid) - cpu0) / seconds;
      const n = finished.reduce((s, f) => s + f.latencies.length, 0);
      const lat = new Float64Array(n);
      let off = 0;
      for (const f of finished) {
        lat.set(f.latencies, off);
        off += f.latencies.length;
      }
      lat.sort();
      const wlat = Float64Array.from(wr.latencies).sort();
      const sum = (f: (x: WatchFinishReply) => number): number => finished.reduce((s, x) => s + f(x), 0);
      const r = {
        p50: pctSorted(lat, 50),
        p99: pctSorted(lat, 99),
        max: lat[lat.length - 1] ?? NaN,
        events: sum((f) => f.events),
        expectedEvents: wr.ok.length * sum((f) => f.watchers),
        lost: sum((f) => f.lost),
        duplicates: sum((f) => f.duplicates),
        unexpected: sum((f) => f.unexpected),
        errorEvents: sum((f) => f.errorEvents),
        endedEarly: sum((f) => f.endedEarly),
        writeErrors: wr.errors,
        writeP50: pctSorted(wlat, 50),
        writeP99: pctSorted(wlat, 99),
        achievedWritesPerSec: writes / seconds,
        serverCores,
        loadAvg1m: loadavg()[0]!,
        clientCores: sum((f) => f.clientCpuMs) / 1000 / seconds,
        openSeconds,
      };
      watchReps.push(r);
      if (wr.errors > 0) ctx.log(`watch writer: ${wr.errors} writes failed: ${wr.firstError}`);
      podsStored += wr.ok.length;
      ctx.log(
        `watch rep ${rep + 1}/${z.watchReps}: ${z.watchers} watchers, ${wr.ok.length} writes at ` +
          `${r.achievedWritesPerSec.toFixed(1)}/s: delivery p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
          `max ${r.max.toFixed(0)} ms; events ${r.events}/${r.expectedEvents}, lost ${r.lost}, dup ${r.duplicates}; ` +
          `server ${serverCores.toFixed(2)} cores, watch clients ${r.clientCores.toFixed(2)} cores`,
      );
    }
    const memEnd = memory(pid);

    // ---- summary
    const medOf = <T>(xs: T[], f: (x: T) => number): number => median(xs.map(f));
    const round = (x: number): number => (Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100);
    const m = {
      createsPerSec: medOf(creates, (c) => c.perSec),
      createP50Ms: medOf(creates, (c) => c.p50),
      createP99Ms: medOf(creates, (c) => c.p99),
      createServerCores: medOf(creates, (c) => c.serverCores),
      createClientCores: medOf(creates, (c) => c.clientCores),
      createServerCpuUsPerPod: medOf(creates, (c) => c.serverCpuUsPerCreate),
      listServicesJsonP50Ms: median(listJson.times),
      listServicesJsonP99Ms: percentile(listJson.times, 99),
      listServicesJsonBytes: median(listJson.bytes),
      listServicesServerCpuMsPerList: listServerCoreMs,
      listServicesTableP50Ms: median(listTable.times),
      listServicesTableP99Ms: percentile(listTable.times, 99),
      listServicesTableBytes: median(listTable.bytes),
      bulkLoadCreatesPerSec: load.perSec,
      listPodsP50Ms: median(bigList.times),
      listPodsMaxMs: Math.max(...bigList.times),
      listPodsBytes: median(bigList.bytes),
      listPodsServerCpuMsPerList: bigListServerCoreMs,
      watchP50Ms: medOf(watchReps, (w) => w.p50),
      watchP99Ms: medOf(watchReps, (w) => w.p99),
      watchLostEvents: watchReps.reduce((n, w) => n + w.lost, 0),
      watchDuplicateEvents: watchReps.reduce((n, w) => n + w.duplicates, 0),
      watchServerCores: medOf(watchReps, (w) => w.serverCores),
      rssEmptyMiB: memEmpty.rssMiB,
      rssBigMiB: memBig.rssMiB,
      rssAfterListsMiB: memAfterList.rssMiB,
      rssPeakMiB: memEnd.hwmMiB,
    };
    const goals = {
      createsAtLeast2000PerSec: m.createsPerSec >= 2000,
      listServicesJsonP50AtMost50Ms: m.listServicesJsonP50Ms <= 50,
      watchP99AtMost50Ms: m.watchP99Ms <= 50,
      watchNoEventLost: m.watchLostEvents === 0 && m.watchDuplicateEvents === 0,
    };
    const yn = (b: boolean): string => (b ? 'yes' : 'no');
    const mib = (b: number): number => round(b / 2 ** 20);
    const table: Array<Record<string, string | number>> = [
      {
        metric: `pod creates/s, ${z.createClients} HTTPS clients, ${z.createPods} pods`,
        value: round(m.createsPerSec),
        goal: '≥ 2000',
        met: yn(goals.createsAtLeast2000PerSec),
      },
      { metric: 'pod create latency p50 (ms)', value: round(m.createP50Ms), goal: '', met: '' },
      { metric: 'pod create latency p99 (ms)', value: round(m.createP99Ms), goal: '', met: '' },
      {
        metric: 'server CPU per pod create (µs, all threads)',
        value: round(m.createServerCpuUsPerPod),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services JSON p50 (ms)`,
        value: round(m.listServicesJsonP50Ms),
        goal: '≤ 50',
        met: yn(goals.listServicesJsonP50AtMost50Ms),
      },
      {
        metric: `LIST ${z.services} services JSON p99 (ms)`,
        value: round(m.listServicesJsonP99Ms),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services JSON (MiB)`,
        value: mib(m.listServicesJsonBytes),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services Table p50 (ms)`,
        value: round(m.listServicesTableP50Ms),
        goal: '',
        met: '',
      },
      {
        metric: `pod creates/s, ${z.bigLoadClients} clients (bulk load)`,
        value: round(m.bulkLoadCreatesPerSec),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.bigPods} pods, all namespaces, p50 (ms)`,
        value: round(m.listPodsP50Ms),
        goal: '',
        met: '',
      },
      { metric: `LIST ${z.bigPods} pods (MiB)`, value: mib(m.listPodsBytes), goal: '', met: '' },
      {
        metric: `watch delivery p50 (ms), ${z.watchers} watchers, ${z.writesPerSec} writes/s`,
        value: round(m.watchP50Ms),
        goal: '',
        met: '',
      },
      {
        metric: `watch delivery p99 (ms), ${z.watchers} watchers, ${z.writesPerSec} writes/s`,
        value: round(m.watchP99Ms),
        goal: '≤ 50',
        met: yn(goals.watchP99AtMost50Ms),
      },
      {
        metric: 'watch events lost + duplicated (all reps)',
        value: m.watchLostEvents + m.watchDuplicateEvents,
        goal: '0',
        met: yn(goals.watchNoEventLost),
      },
      { metric: 'server RSS, empty store (MiB)', value: round(m.rssEmptyMiB), goal: '', met: '' },
      { metric: `server RSS, ${z.bigPods} pods stored (MiB)`, value: round(m.rssBigMiB), goal: '', met: '' },
      { metric: 'server peak RSS, whole run (MiB)', value: round(m.rssPeakMiB), goal: '', met: '' },
    ];
    end('rest');
    return {
      m,
      goals,
      table,
      data: {
        setup: {
          server:
            (subject === 'up'
              ? 'svcplane up (the API server with its controllers on a worker thread)'
              : 'svcplane apiserver (the API server alone)') +
            ' in a child process: durable SQLite store (synchronous=FULL, group commit), TLS, bearer token, AlwaysAllow',
          clients:
            `${1 + z.watchWorkers} client worker processes; requests through node:https keep-alive agents, ` +
            'watches as raw HTTP/1.1 on one TLS connection each (cheaper per event); the orchestrator only coordinates',
          sharedCpu:
            'client workers and server share the same machine and its CPUs; every figure includes that',
          loadAverage: { start: loadAtStart, end: loadavg() },
          podLoad: `all ${z.bigPods} pods created through the HTTPS API (no direct store writes)`,
          watchOrder: `watch reps run with ${z.bigPods}+ pods and ${z.services} services stored`,
          podBodyBytes: Buffer.byteLength(podBody('bench-ns-000', 'app-7c9f8d6b5-0', 0, epochMs())),
          storedPodBytes: Math.round(m.listPodsBytes / z.bigPods),
        },
        medians: m,
        goals,
        creates,
        warmup: warm,
        serviceCreates: svc,
        listServices: { json: listJson, table: listTable },
        bulkLoad: load,
        listPods: bigList,
        watch: watchReps,
        memory: { empty: memEmpty, bigPods: memBig, afterPodLists: memAfterList, end: memEnd },
      },
    };
  } catch (err) {
    turns?.fail(err);
    if (server !== undefined) ctx.log(`server stderr tail: ${server.stderrTail().slice(-2000)}`);
    throw err;
  } finally {
    for (const w of workers) w.stop();
    if (server !== undefined) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Both servers: the bare API server and `svcplane up` as users run it, with its controllers converging
 * on what the benchmark writes. Their create repetitions alternate, then each runs the later steps in
 * turn (side by side in quick mode, whose figures mean nothing). The table shows both and
 * up ÷ apiserver; the goals are up's.
 */
export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const loadAtStart = loadavg();
  // Both servers are up together (their setups run one after the other); in full mode their create
  // repetitions alternate and the later steps run one subject after the other (Turns), the other server
  // idle meanwhile; quick mode runs them side by side.
  const turns = ctx.quick ? undefined : new Turns(turnOrder(z.createReps));
  const [apiserver, up] = await Promise.all([
    measure(ctx, z, 'apiserver', turns),
    measure(ctx, z, 'up', turns),
  ]);
  const ratio = (k: string): number => up.m[k]! / apiserver.m[k]!;
  const ratios = {
    upOverApiserverCreatesPerSec: ratio('createsPerSec'),
    upOverApiserverListServicesJsonP50: ratio('listServicesJsonP50Ms'),
    upOverApiserverWatchP99: ratio('watchP99Ms'),
    upOverApiserverServerCpuPerPod: ratio('createServerCpuUsPerPod'),
  };
  const goals = { ...up.goals, upCreatesAtLeast90PctOfApiserver: ratios.upOverApiserverCreatesPerSec >= 0.9 };
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  const table = up.table.map((row, i) => ({
    metric: row.metric!,
    apiserver: apiserver.table[i]!.value!,
    up: row.value!,
    'up ÷ apiserver':
      typeof row.value === 'number' &&
      typeof apiserver.table[i]!.value === 'number' &&
      apiserver.table[i]!.value !== 0
        ? r2(row.value / (apiserver.table[i]!.value as number))
        : '',
    goal: row.goal!,
    'met (up)': row.met!,
  }));
  table.splice(1, 0, {
    metric: "up's pod creates/s ÷ apiserver's",
    apiserver: '',
    up: '',
    'up ÷ apiserver': r2(ratios.upOverApiserverCreatesPerSec),
    goal: '≥ 0.9',
    'met (up)': goals.upCreatesAtLeast90PctOfApiserver ? 'yes' : 'no',
  });
  ctx.log(
    `ratio: up ÷ apiserver pod creates/s ${r2(ratios.upOverApiserverCreatesPerSec)}, ` +
      `LIST services p50 ${r2(ratios.upOverApiserverListServicesJsonP50)}, watch p99 ${r2(ratios.upOverApiserverWatchP99)}`,
  );
  return {
    table,
    data: {
      sizes: z,
      loadAverage: { start: loadAtStart, end: loadavg() },
      // up's figures, as users run it; the bare server's are under subjects.apiserver.
      medians: up.m,
      goals,
      ratios,
      subjects: {
        apiserver: { medians: apiserver.m, goals: apiserver.goals, ...apiserver.data },
        up: { medians: up.m, goals: up.goals, ...up.data },
      },
    },
  };
}
