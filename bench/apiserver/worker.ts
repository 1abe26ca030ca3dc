// The client worker: this file, forked with SVCPLANE_APISERVER_BENCH_WORKER=1, serves the orchestrator's
// requests (creates, LISTs, paced writes, watch streams) over keep-alive HTTPS connections.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { agentFor, epochMs, request, type Conn } from '../lib/http.js';
import { serveWorker, Worker } from '../lib/process.js';
import { type CreateJob, createRequest } from './shape.js';
import { WatchSet } from './watch-set.js';

const WORKER_MODULE = fileURLToPath(import.meta.url);
const WORKER_ENV = 'SVCPLANE_APISERVER_BENCH_WORKER';

export type WorkerRequest =
  | { op: 'create'; jobs: CreateJob[]; clients: number }
  | { op: 'list'; path: string; accept: string; reps: number; marker: string }
  | { op: 'get'; path: string }
  | { op: 'write'; namespace: string; prefix: string; count: number; perSec: number }
  | { op: 'watchOpen'; path: string; count: number; prefix: string; maxWrites: number }
  | { op: 'watchFinish'; ok: number[]; graceMs: number };

export interface CreateReply {
  t0: number;
  t1: number;
  latencies: Float64Array;
  errors: number;
  firstError?: string;
  clientCpuMs: number;
}
export interface ListReply {
  times: number[];
  bytes: number[];
  counts: number[];
  statuses: number[];
}
export interface WriteReply {
  ok: number[];
  errors: number;
  firstError?: string;
  latencies: number[];
  spanMs: number;
}
export interface WatchOpenReply {
  opened: number;
  failed: number;
  firstError?: string;
}
export interface WatchFinishReply {
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

/** A client worker process serving the requests below. */
export const clientWorker = (conn: Conn, name: string): Worker<WorkerRequest> =>
  new Worker<WorkerRequest>(
    WORKER_MODULE,
    { [WORKER_ENV]: '1', SVCPLANE_BENCH_CONN: JSON.stringify(conn) },
    name,
  );
