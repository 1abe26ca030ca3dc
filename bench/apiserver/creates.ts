// Creates split over the client workers: the aggregate rate, latencies and server CPU per create.
import { loadavg } from 'node:os';
import type { Worker } from '../lib/process.js';
import { cpuSeconds } from '../lib/process.js';
import { pctSorted } from '../run.js';
import { type CreateJob } from './shape.js';
import { type WorkerRequest, type CreateReply } from './worker.js';

/** Splits creates over workers; returns the aggregate rate (first start to last finish) and latencies. */
export async function createAcross(
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

export function nsJobs(names: string[]): CreateJob[] {
  return names.map((n) => ({ kind: 'namespace', namespace: '', prefix: n, from: 0, to: 1 }));
}
