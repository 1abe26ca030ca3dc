// A measured window (idle, steady): Lease writes/s and CPU over a fixed time.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { type Conn } from '../lib/http.js';
import type { Worker } from '../lib/process.js';
import { sleep } from '../lib/process.js';
import { type WatcherRequest, type WatcherStatus } from './watcher.js';
import { type Cpu, type Procs, cpu, cpuDelta, perSecond, type Mem, mem } from './usage.js';
import { requestTotals, totalsDelta } from './api-metrics.js';

interface Window {
  seconds: number;
  leasePutsPerSec: number;
  leaseEventsPerSec: number;
  requests: Record<string, number>;
  cpuCoresUsed: Cpu;
  memory: Mem;
}

export async function measureWindow(
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
