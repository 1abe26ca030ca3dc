// The two subjects: `svcplane up`, and `svcplane apiserver` with a `svcplane controller-manager` running
// only the grid controllers; their workqueue metrics.
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  startApiServer,
  startSvcplane,
  stopChild,
  track,
  writeKubeconfig,
  type ApiServerProc,
  type Proc,
  type SvcplaneRuntime,
} from '../lib/cluster.js';
import { agentFor, request, type Conn } from '../lib/http.js';
import { cpuSeconds, memory, sleep, startServer, stopServer, threadCpuSeconds } from '../lib/process.js';
import { CONTROLLERS } from './shape.js';
import { type CpuReading, type MemoryReading } from './usage.js';
import { machineBusySeconds } from '../lib/machine.js';
import { benchCpuSeconds } from './measure.js';

export type SubjectName = 'up' | 'split';

export interface Subject {
  readonly name: SubjectName;
  readonly setup: string;
  readonly conn: Conn;
  cpu(): CpuReading;
  memory(): MemoryReading;
  /** The CPU that must stay flat for the controllers to count as quiet. */
  quietCpuS(): number;
  /** Throws if a process under test has exited. */
  alive(): void;
  tails(): string;
  /** The controllers' Prometheus text (their workqueue_* metrics). */
  controllerMetrics(): Promise<string>;
  stop(): Promise<void>;
}

const nodeArgs = (env: string): string[] => (process.env[env] ?? '').split(' ').filter((a) => a !== '');

/** More `svcplane controller-manager` flags for the split subject, e.g. "--concurrent-grid-syncs 20". */
const extraControllerArgs = nodeArgs('SVCPLANE_BENCH_GRIDS_CONTROLLER_ARGS');

function httpGetText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${url}: ${res.statusCode}`)),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** Per grid controller's queue: keys added, reconciles done and their total seconds (workqueue_* metrics). */
type QueueCounts = Record<string, { adds: number; reconciles: number; workS: number }>;

export function queueCounts(text: string): QueueCounts {
  const out: QueueCounts = {};
  for (const name of CONTROLLERS) out[name] = { adds: 0, reconciles: 0, workS: 0 };
  for (const line of text.split('\n')) {
    const m =
      /^(workqueue_adds_total|workqueue_work_duration_seconds_count|workqueue_work_duration_seconds_sum)\{name="([^"]+)"\} (\S+)$/.exec(
        line,
      );
    const q = m === null ? undefined : out[m[2]!];
    if (m === null || q === undefined) continue;
    if (m[1] === 'workqueue_adds_total') q.adds = Number(m[3]);
    else if (m[1] === 'workqueue_work_duration_seconds_count') q.reconciles = Number(m[3]);
    else q.workS = Number(m[3]);
  }
  return out;
}

/** Reconciles between two scrapes, with their mean time (a reconcile's time includes its API writes). */
export type QueueFigures = Record<string, { adds: number; reconciles: number; meanMs: number }>;

export function queueDelta(a: QueueCounts, b: QueueCounts): QueueFigures {
  const out: QueueFigures = {};
  for (const [name, y] of Object.entries(b)) {
    const x = a[name] ?? { adds: 0, reconciles: 0, workS: 0 };
    const n = y.reconciles - x.reconciles;
    out[name] = {
      adds: y.adds - x.adds,
      reconciles: n,
      meanMs: n === 0 ? 0 : ((y.workS - x.workS) / n) * 1000,
    };
  }
  return out;
}

export const fmtQueues = (q: QueueFigures): string =>
  Object.entries(q)
    .map(([k, v]) => `${k} ${v.reconciles} reconciles (${v.meanMs.toFixed(1)} ms mean)`)
    .join(', ');

export async function startUp(root: string): Promise<Subject> {
  const dataDir = path.join(root, 'up');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer(dataDir);
  track(server.child);
  // Ready line first, then the controllers' worker: /readyz turns 200 once its informers synced.
  const agent = agentFor(server.conn, 1);
  try {
    const deadline = performance.now() + 120_000;
    for (;;) {
      const res = await request(agent, server.conn, 'GET', '/readyz');
      if (res.status === 200) break;
      if (performance.now() > deadline)
        throw new Error(`svcplane up: /readyz still ${res.status} after 120 s`);
      await sleep(50);
    }
  } finally {
    agent.destroy();
  }
  const pid = server.pid;
  return {
    name: 'up',
    setup:
      '`svcplane up` (embedded sqlite; every default controller on its worker thread, the grid controllers ' +
      'among them, the endpoints controllers also writing Endpoints and EndpointSlices for the grid Services)',
    conn: server.conn,
    cpu: () => {
      // The main thread first: the rest (read after) then never comes out below what it is.
      const apiserverS = threadCpuSeconds(pid, pid);
      const totalS = cpuSeconds(pid);
      return {
        controllersS: totalS - apiserverS,
        apiserverS,
        totalS,
        benchS: benchCpuSeconds(),
        machineS: machineBusySeconds(),
      };
    },
    memory: () => {
      const m = memory(pid);
      return {
        controllersRssMiB: null,
        controllersPeakMiB: null,
        serverRssMiB: m.rssMiB,
        serverPeakMiB: m.hwmMiB,
      };
    },
    quietCpuS: () => cpuSeconds(pid),
    alive: () => {
      if (server.child.exitCode !== null || server.child.signalCode !== null)
        throw new Error(`svcplane up exited (${server.child.exitCode ?? server.child.signalCode})`);
    },
    tails: () => `svcplane up stderr: ${server.stderrTail().slice(-3000)}`,
    // up's /metrics carries its worker's workqueue_* metrics too.
    controllerMetrics: async () => {
      const agent = agentFor(server.conn, 1);
      try {
        const res = await request(agent, server.conn, 'GET', '/metrics', {
          accept: 'text/plain',
          keepText: true,
        });
        if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
        return res.text ?? '';
      } finally {
        agent.destroy();
      }
    },
    stop: () => stopServer(server),
  };
}

export async function startSplit(root: string, runtime: SvcplaneRuntime): Promise<Subject> {
  const dataDir = path.join(root, 'apiserver');
  mkdirSync(dataDir, { recursive: true });
  const api: ApiServerProc = await startApiServer(runtime, dataDir, [], {
    timeoutMs: 120_000,
    nodeArgs: nodeArgs('SVCPLANE_BENCH_SERVER_NODE_ARGS'),
  });
  const kubeconfig = path.join(root, 'kubeconfig');
  writeKubeconfig(kubeconfig, api);
  let cm: Proc;
  try {
    cm = await startSvcplane(
      'controller-manager',
      runtime,
      [
        'controller-manager',
        '--kubeconfig',
        kubeconfig,
        '--controllers',
        CONTROLLERS.join(','),
        '--metrics-bind-address',
        '127.0.0.1:0',
        ...extraControllerArgs,
      ],
      /controller-manager running/,
      { timeoutMs: 120_000, nodeArgs: nodeArgs('SVCPLANE_BENCH_CONTROLLER_NODE_ARGS') },
    );
  } catch (err) {
    await stopChild(api.child);
    throw err;
  }
  // Logged before the running line: {"msg":"serving metrics","url":"http://127.0.0.1:PORT"}.
  const metricsUrl = /"serving metrics".*?"url":"(http:\/\/[^"]+)"/.exec(cm.stderrTail())?.[1];
  if (metricsUrl === undefined) {
    await stopChild(cm.child);
    await stopChild(api.child);
    throw new Error(`controller-manager: no metrics URL in its log: ${cm.stderrTail().slice(-1000)}`);
  }
  return {
    name: 'split',
    setup:
      '`svcplane apiserver` (embedded sqlite) and `svcplane controller-manager --kubeconfig K --controllers ' +
      `${[CONTROLLERS.join(','), ...extraControllerArgs].join(' ')}\` (token auth over TLS on 127.0.0.1), ` +
      'each its own process',
    conn: api.conn,
    cpu: () => {
      const controllersS = cpuSeconds(cm.pid);
      const apiserverS = cpuSeconds(api.pid);
      return {
        controllersS,
        apiserverS,
        totalS: controllersS + apiserverS,
        benchS: benchCpuSeconds(),
        machineS: machineBusySeconds(),
      };
    },
    memory: () => {
      const c = memory(cm.pid);
      const a = memory(api.pid);
      return {
        controllersRssMiB: c.rssMiB,
        controllersPeakMiB: c.hwmMiB,
        serverRssMiB: a.rssMiB,
        serverPeakMiB: a.hwmMiB,
      };
    },
    quietCpuS: () => cpuSeconds(cm.pid),
    alive: () => {
      for (const p of [api, cm])
        if (p.child.exitCode !== null || p.child.signalCode !== null)
          throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode})`);
    },
    controllerMetrics: () => httpGetText(`${metricsUrl}/metrics`),
    tails: () =>
      `controller-manager stderr: ${cm.stderrTail().slice(-3000)}\napiserver stderr: ${api.stderrTail().slice(-2000)}`,
    stop: async () => {
      await stopChild(cm.child);
      await stopChild(api.child);
    },
  };
}
