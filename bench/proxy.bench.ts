// Node proxy benchmark (issue 16): the userspace data plane against HAProxy (P8a), the cost of an iptables
// sync at 10,000 Services (P8b), and the whole pipeline from a pod readiness flip to the iptables rules of a
// node (P4).
//
// P8a, userspace proxy throughput. Two HTTP echo backends (node:http, one process, on 127.0.0.2 and
//   127.0.0.3), a load generator in a process of its own (raw `net` sockets, hand-parsed HTTP/1.1), and
//   three ways to reach the backends, all on loopback in the root namespace, all up for the whole step:
//     direct     the load generator's connections split over the two backends;
//     userspace  `UserspaceProxy` (src/proxy/userspace.ts) in a process of its own, given a hand-built
//                ProxyState of one Service port with the two backends (listening at 127.77.0.10, what
//                --userspace-cidr 127.77.0.0/16 makes of cluster IP 10.96.0.10);
//     haproxy    HAProxy, `mode tcp`, `balance roundrobin` over the same backends, `nbthread 1`, started
//                with `-db -f <generated config>` (no splice: HAProxy's default).
//   Cores: nothing is pinned. Each proxy moves bytes on one thread (HAProxy nbthread 1; Node's one event
//   loop, whose GC and libuv helper threads are counted in its CPU), and the load generator, the backends
//   and the proxy share the machine's cores (2 on the reference VM) with whatever else runs. Each run
//   reports the cores every one of them used (/proc/<pid>/stat), and the machine's other load.
//   Each repetition runs direct, userspace, haproxy in turn (A/B/C, A/B/C, ...), first with keep-alive
//   (64 connections, one GET in flight on each, for a fixed time after a warm-up), then with a new
//   connection per request (32 at a time, `Connection: close`). Per run: requests/s, p50/p99 latency
//   (from the request's write to its response's last byte), errors, and which backend answered (both must).
//   Goal: userspace ≥ 50% of HAProxy's keep-alive requests/s (medians over the repetitions).
//
// P8b, iptables sync cost. In a network namespace made for it (svcp-bench-<hex>, deleted at the end), a
//   ProxyState of 10,000 Services × 1 port × 10 endpoints (plain data, no API server) is applied with
//   IptablesBackend over iptablesRunner({ family: 4, netns }) (so every program runs through
//   `ip netns exec`, whose own cost is reported): full syncs (the first onto an empty table, the later ones
//   onto the full table), then partial syncs of one Service whose endpoint was replaced,
//   apply(next, new Set([key])). Each apply is split into its iptables-restore, its iptables-save calls and
//   its jump-rule checks (a runner that times its calls), and the rest (render); the pure renders are also
//   timed alone. Run with the machine's iptables (nf_tables backend here) and again, in a second namespace,
//   with iptables-legacy when the kernel has it, for comparison. A restore still running after the restore
//   timeout is killed and that full sync counts as not finished (iptables-nft 1.8.9's --noflush restore of
//   this ruleset takes 2.5–4 minutes with the descending declarations the renderer writes, and ran for 43
//   minutes without finishing in the order it wrote before); the table is then filled with a
//   flush-mode restore of the same text (possible only because the namespace holds nothing else; not the
//   proxy's path, and reported as such), so the partial syncs are still measured against a full table.
//   After the partial syncs iptables-save must list exactly the chains the state owns.
//   Goals: full ≤ 1 s (the median onto the full table: the periodic resync), partial ≤ 20 ms (the median).
//
// P4, the pipeline at 10,000 Services / 100,000 pods / 1,000 nodes. The cluster is written into the
//   embedded store before `svcplane up` starts (lib/preload.ts: 1,000 Ready nodes, 10,000 ClusterIP
//   Services with selectors, 100,000 Running and Ready pods bound to nodes, 10 per Service, as the registry
//   would store them, status included: no simulated kubelets); `up`'s EndpointSlice controller then makes
//   the slices. Everything runs inside ONE network namespace the benchmark makes (a process in a fresh
//   namespace cannot reach the root namespace's loopback): `svcplane up` on its 127.0.0.1, `svcplane
//   wrapper` for node-0000, `svcplane proxy --proxy-mode iptables --min-sync-period 0s --sync-period 1h`
//   (kube-proxy's defaults are 1 s and 30 s; with flips spaced further apart than either sync's duration,
//   0 s and 1 s behave the same; the 1 h keeps the periodic full resync, 12-16 s at this scale with
//   iptables-legacy, from landing in the middle of the flips) pointed at the wrapper, and a client worker
//   of this file started with `ip netns exec` that sends the flips and watches the slices upstream.
//   The nodes' monitor grace periods are 1 h, so no node goes NotReady for lack of a kubelet.
//   Each flip is a status PATCH of one pod (Ready False, later True again: ContainersReady and Ready, as a
//   kubelet sends them); timed from the PATCH response to the arrival (stamped as the line arrives here)
//   of the proxy's `partial sync` log line, which it writes right after iptables-restore returned. After
//   each flip, iptables-save (in the namespace) must show that pod's KUBE-SEP chain absent or present.
//   Also: when the upstream slice watch saw the flip (the controller's share), the proxy's and the
//   wrapper's RSS, and the proxy's first full sync. Goal: p99 ≤ 100 ms.
//   Which iptables the proxy runs: at full size iptables-legacy (a directory of iptables, iptables-restore
//   and iptables-save symlinks to the legacy programs first on the proxy's PATH), because one full restore
//   of this ruleset with the machine's iptables-nft (1.8.9 here) does not finish in 40 minutes (see P8b);
//   in --quick mode the machine's. Which one ran is named in the results.
//
// Knobs: SVCPLANE_BENCH_PROXY_NFT_FULL_REPS (P8b full syncs with the machine's iptables, default 2);
//   SVCPLANE_BENCH_PROXY_RESTORE_TIMEOUT_S (P8b, default 60 at full size, 120 in --quick mode);
//   SVCPLANE_BENCH_PROXY_P4_IPTABLES=system|legacy (P4's iptables); SVCPLANE_BENCH_PROXY_STEPS=p8a,p8b,p4
//   (a subset).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type https from 'node:https';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sepChain, isServiceChain } from '../src/core/proxy/chain-names.js';
import {
  jumpRules,
  parseSaveChains,
  renderFull,
  renderPartial,
  type RenderOptions,
} from '../src/core/proxy/iptables.js';
import type { ProxyEndpoint, ServicePortState } from '../src/core/proxy/types.js';
import { IptablesBackend } from '../src/proxy/iptables-backend.js';
import { iptablesRunner, type IptablesRunner } from '../src/proxy/iptables-runner.js';
import type { SyncLog } from '../src/proxy/sync.js';
import { UserspaceProxy } from '../src/proxy/userspace.js';
import { prng } from '../src/storage/testing/helpers.js';
import { scratchDir, startSvcplane, stopChild, svcplaneRuntime, track, type Proc } from './lib/cluster.js';
import { ensureDep } from './lib/deps.js';
import { agentFor, connFromKubeconfig, epochMs, request, type Conn } from './lib/http.js';
import { coresWindow, type CoresUsed } from './lib/machine.js';
import { ipPath } from '../src/demo/netns.js';
import { createNetns, type BenchNetns } from './lib/netns.js';
import {
  namespaceOf,
  podKey,
  podName,
  podPlacement,
  preloadCluster,
  serviceName,
  type ClusterShape,
  type PreloadFigures,
} from './lib/preload.js';
import { memory, serveWorker, sleep, Worker } from './lib/process.js';
import { Watch, type WatchEventLine } from './lib/watch.js';
import { median, percentile, round, type BenchContext, type BenchResult } from './run.js';

const SELF = fileURLToPath(import.meta.url);
const ROLE_ENV = 'SVCPLANE_PROXY_BENCH_ROLE';
const SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const SEED = 0x9b0c_0016;

function p4IptablesFlag(): 'system' | 'legacy' | undefined {
  const v = process.env.SVCPLANE_BENCH_PROXY_P4_IPTABLES;
  if (v === undefined || v === '') return undefined;
  if (v !== 'system' && v !== 'legacy')
    throw new Error(`SVCPLANE_BENCH_PROXY_P4_IPTABLES=${v}: system or legacy`);
  return v;
}

interface Sizes {
  // P8a
  readonly reps: number;
  readonly keepAliveConns: number;
  readonly newConnConns: number;
  readonly warmupMs: number;
  readonly keepAliveMs: number;
  readonly newConnMs: number;
  // P8b
  readonly services: number;
  readonly endpointsPerService: number;
  readonly nftFullReps: number;
  readonly legacyFullReps: number;
  readonly partialReps: number;
  readonly renderReps: number;
  /** A P8b restore still running after this is killed and counted as failed. */
  readonly restoreTimeoutS: number;
  // P4
  readonly shape: ClusterShape;
  readonly flips: number;
  /**
   * The proxy's iptables in P4: the machine's (`system`: iptables-nft on Debian 12) or `legacy`
   * (iptables-legacy, first on the proxy's PATH). SVCPLANE_BENCH_PROXY_P4_IPTABLES overrides.
   */
  readonly p4Iptables: 'system' | 'legacy';
  readonly convergeTimeoutS: number;
  readonly proxySyncTimeoutS: number;
  /** A flip whose partial sync does not arrive within this counts as lost. */
  readonly syncTimeoutS: number;
}

const FULL: Sizes = {
  reps: 5,
  keepAliveConns: 64,
  newConnConns: 32,
  warmupMs: 500,
  keepAliveMs: 3000,
  newConnMs: 2000,
  services: 10_000,
  endpointsPerService: 10,
  nftFullReps: Math.max(1, Number(process.env.SVCPLANE_BENCH_PROXY_NFT_FULL_REPS ?? 2)),
  legacyFullReps: 5,
  partialReps: 20,
  renderReps: 5,
  restoreTimeoutS: Number(process.env.SVCPLANE_BENCH_PROXY_RESTORE_TIMEOUT_S ?? 60),
  shape: {
    nodes: 1000,
    zones: 10,
    namespaces: 10,
    services: 10_000,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flips: 40,
  // One full restore of this ruleset with the machine's iptables-nft does not finish in 40 minutes here.
  p4Iptables: p4IptablesFlag() ?? 'legacy',
  convergeTimeoutS: 900,
  proxySyncTimeoutS: 3600,
  syncTimeoutS: 120,
};

const QUICK: Sizes = {
  reps: 2,
  keepAliveConns: 16,
  newConnConns: 8,
  warmupMs: 150,
  keepAliveMs: 400,
  newConnMs: 300,
  services: 200,
  endpointsPerService: 10,
  nftFullReps: 2,
  legacyFullReps: 2,
  partialReps: 5,
  renderReps: 2,
  restoreTimeoutS: Number(process.env.SVCPLANE_BENCH_PROXY_RESTORE_TIMEOUT_S ?? 120),
  shape: {
    nodes: 20,
    zones: 2,
    namespaces: 2,
    services: 100,
    podsPerService: 5,
    serviceCidr: '10.96.0.0/12',
  },
  flips: 6,
  p4Iptables: p4IptablesFlag() ?? 'system',
  convergeTimeoutS: 60,
  proxySyncTimeoutS: 120,
  syncTimeoutS: 30,
};

const quietLog: SyncLog = { info: () => {}, warn: () => {}, error: () => {} };

/** iptables-legacy's programs, for iptablesRunner's `bin`. */
const LEGACY_BIN = {
  iptables: 'iptables-legacy',
  restore: 'iptables-legacy-restore',
  save: 'iptables-legacy-save',
} as const;

/** An executable on PATH or in the sbin directories PATH often lacks. */
function findProgram(name: string): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
  for (const dir of new Set([...dirs, '/usr/sbin', '/sbin', '/usr/bin', '/bin'])) {
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * A directory of symlinks named iptables, iptables-restore and iptables-save to the legacy programs
 * (xtables-legacy-multi acts on the name it is called by): first on a process's PATH, it makes the proxy,
 * which runs whatever iptables it finds, use iptables-legacy. Undefined when they are not installed.
 */
function legacyShim(dir: string): string | undefined {
  const shim = path.join(dir, 'iptables-legacy-bin');
  const targets = Object.entries({
    iptables: LEGACY_BIN.iptables,
    'iptables-restore': LEGACY_BIN.restore,
    'iptables-save': LEGACY_BIN.save,
  }).map(([name, legacy]) => [name, findProgram(legacy)] as const);
  if (targets.some(([, t]) => t === undefined)) return undefined;
  mkdirSync(shim, { recursive: true });
  for (const [name, target] of targets) symlinkSync(target!, path.join(shim, name));
  return shim;
}

/** A free TCP port on `host` (bound, read, closed). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

const compareEndpoints = (a: ProxyEndpoint, b: ProxyEndpoint): number =>
  a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : a.port - b.port;

// ===================================================================================== P8a: the workers

interface Target {
  host: string;
  port: number;
}

type EchoRequest = { op: 'start'; hosts: string[] };
interface EchoStarted {
  pid: number;
  backends: Array<Target & { name: string }>;
}

/** The backends: one node:http server per host, answering every request with its name. */
function echoMain(): void {
  const servers: http.Server[] = [];
  serveWorker<EchoRequest>(async (msg) => {
    const backends: EchoStarted['backends'] = [];
    for (const [i, host] of msg.hosts.entries()) {
      const name = `b${i}`;
      const body = Buffer.from(name);
      const srv = http.createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(body.length) });
        res.end(body);
      });
      srv.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, host, () => resolve());
      });
      servers.push(srv);
      backends.push({ host, port: (srv.address() as net.AddressInfo).port, name });
    }
    const out: EchoStarted = { pid: process.pid, backends };
    return out;
  });
}

type UserspaceRequest =
  | { op: 'start'; backends: Target[]; cidr: string; clusterIP: string; listenHost: string }
  | { op: 'stats' }
  | { op: 'stop' };

/** UserspaceProxy in a process of its own, given a hand-built state of one Service port. */
function userspaceMain(): void {
  let proxy: UserspaceProxy | undefined;
  serveWorker<UserspaceRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        proxy = new UserspaceProxy({ cidr: msg.cidr, nodePortAddresses: [], log: quietLog });
        const port = await freePort(msg.listenHost);
        const internal = msg.backends
          .map((b): ProxyEndpoint => ({ ip: b.host, port: b.port, local: false, ready: true }))
          .sort(compareEndpoints);
        const st: ServicePortState = {
          key: 'bench/echo:http',
          namespace: 'bench',
          name: 'echo',
          portName: 'http',
          protocol: 'TCP',
          clusterIPs: [msg.clusterIP],
          port,
          externalIPs: [],
          loadBalancerIPs: [],
          internal,
          external: internal,
          externalLocal: false,
          internalLocal: false,
        };
        const r = await proxy.apply(new Map([[st.key, st]]));
        if (r.opened !== 1 || r.failed.length > 0) throw new Error(`userspace apply: ${JSON.stringify(r)}`);
        const l = proxy.addresses(st.key)[0]!;
        return { pid: process.pid, host: l.address, port: l.port };
      }
      case 'stats':
        return proxy?.stats() ?? null;
      case 'stop':
        await proxy?.close();
        return null;
    }
  });
}

type LoadKind = 'keepalive' | 'newconn';
type LoadRequest = {
  op: 'run';
  targets: Target[];
  kind: LoadKind;
  connections: number;
  warmupMs: number;
  durationMs: number;
};

interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  firstError?: string;
  /** Responses per backend name (the body). */
  bodies: Record<string, number>;
  /** Over the measured window: this process's cores. */
  cores: number;
}

const KEEPALIVE_REQ = Buffer.from('GET /echo HTTP/1.1\r\nHost: bench\r\n\r\n', 'latin1');
const CLOSE_REQ = Buffer.from('GET /echo HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n', 'latin1');

/** Status, body and length of the first whole response in `buf`, or undefined while it is incomplete. */
function parseResponse(buf: string): { status: number; body: string; length: number } | undefined {
  const h = buf.indexOf('\r\n\r\n');
  if (h < 0) return undefined;
  const head = buf.slice(0, h);
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const cl = m === null ? 0 : Number(m[1]);
  if (buf.length < h + 4 + cl) return undefined;
  return { status: Number(head.slice(9, 12)), body: buf.slice(h + 4, h + 4 + cl), length: h + 4 + cl };
}

/**
 * The load generator: `connections` loops, each with one request in flight, for warmupMs (not counted)
 * then durationMs (counted: responses that complete in the window, with their latency from the write).
 */
async function runLoad(msg: LoadRequest): Promise<LoadResult> {
  let lat = new Float64Array(1 << 16);
  let n = 0;
  let errors = 0;
  let firstError: string | undefined;
  const bodies: Record<string, number> = {};
  const t0 = performance.now();
  const windowStart = t0 + msg.warmupMs;
  const windowEnd = windowStart + msg.durationMs;
  let cpu0: NodeJS.CpuUsage | undefined;
  const startCpu = setTimeout(() => (cpu0 = process.cpuUsage()), msg.warmupMs);
  let cpuWindow = NaN;
  const endCpu = setTimeout(() => {
    const c = process.cpuUsage(cpu0);
    cpuWindow = (c.user + c.system) / 1e6 / (msg.durationMs / 1000);
  }, msg.warmupMs + msg.durationMs);
  const record = (sent: number, done: number, status: number, body: string): void => {
    if (status !== 200) {
      errors++;
      firstError ??= `status ${status}`;
      return;
    }
    if (done < windowStart || done >= windowEnd) return;
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = done - sent;
    bodies[body] = (bodies[body] ?? 0) + 1;
  };
  const fail = (err: Error): void => {
    errors++;
    firstError ??= err.message;
  };
  const over = (): boolean => performance.now() >= windowEnd;

  const keepAlive = (target: Target): Promise<void> =>
    new Promise((resolve) => {
      const s = net.connect({ host: target.host, port: target.port, noDelay: true });
      s.setEncoding('latin1');
      let buf = '';
      let sent = 0;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        s.destroy();
        resolve();
      };
      const send = (): void => {
        if (over()) {
          finish();
          return;
        }
        sent = performance.now();
        s.write(KEEPALIVE_REQ);
      };
      s.on('connect', send);
      s.on('data', (chunk: string) => {
        buf += chunk;
        const r = parseResponse(buf);
        if (r === undefined) return;
        buf = buf.slice(r.length);
        record(sent, performance.now(), r.status, r.body);
        send();
      });
      s.on('error', (err) => {
        if (!finished) fail(err);
      });
      s.on('close', () => {
        if (!finished && !over()) fail(new Error('connection closed by the server'));
        finish();
      });
    });

  const oneShot = (target: Target): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const s = net.connect({ host: target.host, port: target.port, noDelay: true });
      s.setEncoding('latin1');
      let buf = '';
      let failed = false;
      s.on('connect', () => s.write(CLOSE_REQ));
      s.on('data', (chunk: string) => (buf += chunk));
      s.on('error', (err) => {
        failed = true;
        fail(err);
      });
      s.on('close', () => {
        if (!failed) {
          const r = parseResponse(buf);
          if (r === undefined) fail(new Error(`incomplete response (${buf.length} bytes)`));
          else record(sent, performance.now(), r.status, r.body);
        }
        resolve();
      });
    });

  const loops = Array.from({ length: msg.connections }, async (_, i) => {
    const target = msg.targets[i % msg.targets.length]!;
    while (!over()) {
      if (msg.kind === 'keepalive') await keepAlive(target);
      else await oneShot(target);
    }
  });
  await Promise.all(loops);
  clearTimeout(startCpu);
  clearTimeout(endCpu);
  const s = lat.subarray(0, n).sort();
  const pct = (p: number): number => (n === 0 ? NaN : s[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]!);
  const seconds = msg.durationMs / 1000;
  return {
    requests: n,
    seconds,
    rps: n / seconds,
    p50Ms: pct(50),
    p99Ms: pct(99),
    maxMs: n === 0 ? NaN : s[n - 1]!,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    bodies,
    cores: cpuWindow,
  };
}

function loadMain(): void {
  serveWorker<LoadRequest>((msg) => runLoad(msg));
}

// ========================================================================================= P8a: the run

type Mode = 'direct' | 'userspace' | 'haproxy';
const MODES: readonly Mode[] = ['direct', 'userspace', 'haproxy'];
const KINDS: readonly LoadKind[] = ['keepalive', 'newconn'];

interface P8aRun extends LoadResult {
  rep: number;
  mode: Mode;
  kind: LoadKind;
  proxyCores: number;
  backendCores: number;
  othersCores: number;
}

interface P8aFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  proxyCores: number;
  loadCores: number;
  backendCores: number;
  errors: number;
}

function haproxyConfig(port: number, backends: readonly Target[]): string {
  return [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    'defaults',
    '  mode tcp',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend bench',
    `  bind 127.0.0.1:${port}`,
    '  default_backend echo',
    'backend echo',
    '  balance roundrobin',
    ...backends.map((b, i) => `  server b${i} ${b.host}:${b.port}`),
    '',
  ].join('\n');
}

async function waitConnectable(t: Target, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: t.host, port: t.port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (child !== undefined && child.exitCode !== null) throw new Error(`exited (${child.exitCode})`);
    if (performance.now() > deadline) throw new Error(`${t.host}:${t.port} not accepting connections`);
    await sleep(50);
  }
}

async function runP8a(ctx: BenchContext, z: Sizes) {
  const haproxyBin = ensureDep('haproxy', 'HAPROXY_BIN');
  const dir = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-proxy-p8a-')));
  const echo = new Worker<EchoRequest>(SELF, { [ROLE_ENV]: 'echo' }, 'echo');
  const load = new Worker<LoadRequest>(SELF, { [ROLE_ENV]: 'load' }, 'load');
  const us = new Worker<UserspaceRequest>(SELF, { [ROLE_ENV]: 'userspace' }, 'userspace');
  let haproxy: ChildProcess | undefined;
  try {
    const backends = await echo.call<EchoStarted>({ op: 'start', hosts: ['127.0.0.2', '127.0.0.3'] });
    const usAt = await us.call<Target & { pid: number }>({
      op: 'start',
      backends: backends.backends,
      cidr: '127.77.0.0/16',
      clusterIP: '10.96.0.10',
      listenHost: '127.77.0.10',
    });
    const hpPort = await freePort('127.0.0.1');
    const cfg = path.join(dir, 'haproxy.cfg');
    writeFileSync(cfg, haproxyConfig(hpPort, backends.backends));
    const hp = spawn(haproxyBin, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
    haproxy = hp;
    track(hp);
    let hpErr = '';
    hp.stderr!.on('data', (d: Buffer) => (hpErr = (hpErr + d.toString()).slice(-4000)));
    await waitConnectable({ host: '127.0.0.1', port: hpPort }, 10_000, hp).catch((err: unknown) => {
      throw new Error(`haproxy: ${String(err)}: ${hpErr}`);
    });
    const version = (await runOut(haproxyBin, ['-v'])).split('\n')[0] ?? '';
    ctx.log(
      `P8a: backends ${backends.backends.map((b) => `${b.host}:${b.port}`).join(', ')}; userspace proxy at ` +
        `${usAt.host}:${usAt.port}; ${version.trim()} at 127.0.0.1:${hpPort} (nbthread 1)`,
    );
    const targets: Record<Mode, Target[]> = {
      direct: backends.backends,
      userspace: [{ host: usAt.host, port: usAt.port }],
      haproxy: [{ host: '127.0.0.1', port: hpPort }],
    };
    const proxyPid: Record<Mode, number | undefined> = {
      direct: undefined,
      userspace: usAt.pid,
      haproxy: hp.pid,
    };
    // One untimed pass so every path has its connections, JIT and caches warm.
    for (const mode of MODES)
      await load.call<LoadResult>({
        op: 'run',
        targets: targets[mode],
        kind: 'keepalive',
        connections: z.keepAliveConns,
        warmupMs: 0,
        durationMs: z.warmupMs,
      });
    const runs: P8aRun[] = [];
    for (let rep = 0; rep < z.reps; rep++) {
      for (const kind of KINDS) {
        for (const mode of MODES) {
          const pids: Record<string, number> = { backend: backends.pid, loadgen: load.pid! };
          const pp = proxyPid[mode];
          if (pp !== undefined) pids['proxy'] = pp;
          const w = coresWindow(pids);
          const r = await load.call<LoadResult>({
            op: 'run',
            targets: targets[mode],
            kind,
            connections: kind === 'keepalive' ? z.keepAliveConns : z.newConnConns,
            warmupMs: z.warmupMs,
            durationMs: kind === 'keepalive' ? z.keepAliveMs : z.newConnMs,
          });
          const c: CoresUsed = w();
          // The load generator's own figure (r.cores) covers the measured window; these the whole call.
          const run: P8aRun = {
            ...r,
            rep,
            mode,
            kind,
            proxyCores: c.by['proxy'] ?? 0,
            backendCores: c.by['backend']!,
            othersCores: c.others,
          };
          runs.push(run);
          if (Object.keys(r.bodies).length < backends.backends.length)
            throw new Error(`P8a ${mode} ${kind}: not every backend answered: ${JSON.stringify(r.bodies)}`);
          await sleep(200);
        }
        const line = runs
          .filter((x) => x.rep === rep && x.kind === kind)
          .map((x) => `${x.mode} ${Math.round(x.rps)}/s p99 ${x.p99Ms.toFixed(2)} ms`)
          .join(', ');
        ctx.log(`P8a rep ${rep + 1}/${z.reps} ${kind}: ${line}`);
      }
    }
    const figures = (mode: Mode, kind: LoadKind): P8aFigures => {
      const xs = runs.filter((r) => r.mode === mode && r.kind === kind);
      return {
        rps: median(xs.map((r) => r.rps)),
        p50Ms: median(xs.map((r) => r.p50Ms)),
        p99Ms: median(xs.map((r) => r.p99Ms)),
        proxyCores: median(xs.map((r) => r.proxyCores)),
        loadCores: median(xs.map((r) => r.cores)),
        backendCores: median(xs.map((r) => r.backendCores)),
        errors: xs.reduce((a, r) => a + r.errors, 0),
      };
    };
    const medians = Object.fromEntries(
      MODES.map((m) => [m, Object.fromEntries(KINDS.map((k) => [k, figures(m, k)]))]),
    ) as Record<Mode, Record<LoadKind, P8aFigures>>;
    const paired = (kind: LoadKind, f: (r: P8aRun) => number): number =>
      median(
        Array.from({ length: z.reps }, (_, rep) => {
          const get = (m: Mode) => runs.find((r) => r.rep === rep && r.mode === m && r.kind === kind)!;
          return f(get('userspace')) / f(get('haproxy'));
        }),
      );
    const ratios = {
      userspaceOverHaproxyKeepAliveRps: medians.userspace.keepalive.rps / medians.haproxy.keepalive.rps,
      userspaceOverHaproxyNewConnRps: medians.userspace.newconn.rps / medians.haproxy.newconn.rps,
      userspaceOverDirectKeepAliveRps: medians.userspace.keepalive.rps / medians.direct.keepalive.rps,
      haproxyOverDirectKeepAliveRps: medians.haproxy.keepalive.rps / medians.direct.keepalive.rps,
      userspaceOverHaproxyKeepAliveP99: medians.userspace.keepalive.p99Ms / medians.haproxy.keepalive.p99Ms,
      pairedUserspaceOverHaproxyKeepAliveRps: paired('keepalive', (r) => r.rps),
      pairedUserspaceOverHaproxyNewConnRps: paired('newconn', (r) => r.rps),
      /** Requests per proxy CPU-second, userspace ÷ HAProxy (keep-alive). */
      userspaceOverHaproxyKeepAliveRpsPerCore:
        medians.userspace.keepalive.rps /
        medians.userspace.keepalive.proxyCores /
        (medians.haproxy.keepalive.rps / medians.haproxy.keepalive.proxyCores),
    };
    const stats = await us.call<Record<string, number>>({ op: 'stats' });
    ctx.log(
      `P8a: keep-alive userspace ${Math.round(medians.userspace.keepalive.rps)}/s, HAProxy ` +
        `${Math.round(medians.haproxy.keepalive.rps)}/s, direct ${Math.round(medians.direct.keepalive.rps)}/s: ` +
        `userspace ÷ HAProxy ${ratios.userspaceOverHaproxyKeepAliveRps.toFixed(2)}`,
    );
    return {
      haproxy: { version: version.trim(), config: haproxyConfig(hpPort, backends.backends) },
      backends: backends.backends,
      userspaceListener: `${usAt.host}:${usAt.port}`,
      userspaceStats: stats,
      medians,
      ratios,
      runs,
    };
  } finally {
    await us.call({ op: 'stop' }).catch(() => undefined);
    for (const w of [us, load, echo]) w.stop();
    if (haproxy !== undefined) await stopChild(haproxy, 5000);
    await sleep(300); // the workers exit (and are reaped, so their CPU counts as this step's)
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A program's stdout (and stderr), for version strings. */
function runOut(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', () => resolve(out));
    c.on('error', () => resolve(''));
  });
}

// ================================================================================================= P8b

/** Service s's cluster IP: 10.100.0.0 + s + 1 (inside 10.96.0.0/12). */
const clusterIPOf = (s: number): string => {
  const v = (100 << 16) + s + 1;
  return `10.${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}`;
};
/** Endpoint k (of all): 10.128.0.0 + k. */
const endpointIPOf = (k: number): string => `10.${128 + ((k >> 16) & 63)}.${(k >> 8) & 255}.${k & 255}`;
/** The i-th replacement endpoint: 10.200.0.0 + i. */
const replacementIPOf = (i: number): string => `10.200.${(i >> 8) & 255}.${i & 255}`;

function portState(s: number, eps: ProxyEndpoint[]): ServicePortState {
  const namespace = `bench-p8b-${String(s % 10).padStart(2, '0')}`;
  const name = serviceName(s);
  return {
    key: `${namespace}/${name}:http`,
    namespace,
    name,
    portName: 'http',
    protocol: 'TCP',
    clusterIPs: [clusterIPOf(s)],
    port: 80,
    externalIPs: [],
    loadBalancerIPs: [],
    internal: eps,
    external: eps,
    externalLocal: false,
    internalLocal: false,
  };
}

function buildState(services: number, perService: number): Map<string, ServicePortState> {
  const state = new Map<string, ServicePortState>();
  for (let s = 0; s < services; s++) {
    const eps = Array.from({ length: perService }, (_, e): ProxyEndpoint => ({
      ip: endpointIPOf(s * perService + e),
      port: 8080,
      local: false,
      ready: true,
    })).sort(compareEndpoints);
    const st = portState(s, eps);
    state.set(st.key, st);
  }
  return state;
}

/** The state with service s's first endpoint replaced by replacement i; its key. */
function replaceEndpoint(
  state: ReadonlyMap<string, ServicePortState>,
  keys: readonly string[],
  s: number,
  i: number,
): { next: Map<string, ServicePortState>; key: string; removed: ProxyEndpoint; added: ProxyEndpoint } {
  const key = keys[s]!;
  const old = state.get(key)!;
  const removed = old.internal[0]!;
  const added: ProxyEndpoint = { ip: replacementIPOf(i), port: 8080, local: false, ready: true };
  const eps = [added, ...old.internal.slice(1)].sort(compareEndpoints);
  const next = new Map(state);
  next.set(key, { ...old, internal: eps, external: eps });
  return { next, key, removed, added };
}

interface CallTimes {
  restoreMs: number;
  saveMs: number;
  jumpsMs: number;
  restores: number;
}

/**
 * A runner that adds up the time spent in each kind of call, so an apply() can be split. Its restores give
 * up after `restoreTimeoutMs` (the program is killed). With `seeding` set, a restore runs `seedRestore`
 * instead: see seedTable.
 */
function timedRunner(
  inner: IptablesRunner,
  restoreTimeoutMs: number,
  seedRestore: (text: string) => Promise<void>,
): { runner: IptablesRunner; take: () => CallTimes; seeding: { on: boolean } } {
  let t: CallTimes = { restoreMs: 0, saveMs: 0, jumpsMs: 0, restores: 0 };
  const seeding = { on: false };
  const timed = async <T>(k: 'restoreMs' | 'saveMs' | 'jumpsMs', f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      t[k] += performance.now() - t0;
      if (k === 'restoreMs') t.restores++;
    }
  };
  return {
    runner: {
      ...inner,
      restore: (text, signal) =>
        timed('restoreMs', () =>
          seeding.on
            ? seedRestore(text)
            : inner.restore(text, signal ?? AbortSignal.timeout(restoreTimeoutMs)),
        ),
      save: (table, signal) => timed('saveMs', () => inner.save(table, signal)),
      ensureRule: (table, chain, args, target) =>
        timed('jumpsMs', () => inner.ensureRule(table, chain, args, target)),
    },
    take: () => {
      const out = t;
      t = { restoreMs: 0, saveMs: 0, jumpsMs: 0, restores: 0 };
      return out;
    },
    seeding,
  };
}

/**
 * `iptables-restore --wait` WITHOUT --noflush in the namespace: it replaces the whole of each table in the
 * input. Only for seeding the benchmark's own, otherwise empty, namespace when the product's --noflush
 * restore does not finish in time (iptables-nft at full size), so that the partial syncs can still be
 * measured against a full table. Not what the proxy does.
 */
function flushRestore(ns: BenchNetns, program: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = ns.exec([program, '--wait'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    c.stdin!.on('error', () => {});
    c.on('error', reject);
    c.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${program} (flush mode): ${code ?? signal}: ${err.trim().split('\n')[0]}`)),
    );
    c.stdin!.end(text);
  });
}

interface ApplyTiming extends CallTimes {
  totalMs: number;
  /** totalMs minus the programs' calls: the render, and this process's own work around it. */
  renderMs: number;
  rules: number;
}

interface FlavorResult {
  flavor: 'nft' | 'legacy';
  programs: string;
  skipped?: string;
  /** Full syncs that failed or did not finish within the restore timeout (the program was killed). */
  failed: Array<{ onto: 'empty' | 'existing'; afterMs: number; error: string }>;
  /** After a failed full sync: the table seeded in flush mode (flushRestore), and how long that took. */
  seeds: Array<{ ms: number }>;
  full: Array<ApplyTiming & { onto: 'empty' | 'existing' }>;
  partial: ApplyTiming[];
  check?: {
    /** From iptables-save; absent when it failed (then only the changed Service's chains are checked). */
    svcChains?: number;
    sepChains?: number;
    expectedSep: number;
    replacedPresent: boolean;
    removedGone: boolean;
    saveError?: string;
  };
  fullFirstMs?: number;
  fullExistingMedianMs?: number;
  fullExistingRestoreMedianMs?: number;
  partialMedianMs?: number;
  partialP99Ms?: number;
  partialRestoreMedianMs?: number;
  partialRenderMedianMs?: number;
  saveMs?: number;
}

async function timeExec(ns: BenchNetns, reps: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const c = ns.exec(['true'], { stdio: 'ignore' });
      c.on('error', reject);
      c.on('close', () => resolve());
    });
    xs.push(performance.now() - t0);
  }
  return median(xs);
}

async function runFlavor(
  ctx: BenchContext,
  z: Sizes,
  flavor: 'nft' | 'legacy',
  base: Map<string, ServicePortState>,
  keys: readonly string[],
  ns: BenchNetns,
): Promise<FlavorResult> {
  const bin = flavor === 'legacy' ? LEGACY_BIN : undefined;
  const inner = iptablesRunner({ family: 4, netns: ns.name, ...(bin === undefined ? {} : { bin }) });
  const programs =
    flavor === 'legacy'
      ? 'iptables-legacy, iptables-legacy-restore, iptables-legacy-save'
      : (await runOut('iptables', ['--version'])).trim() || 'iptables';
  const out: FlavorResult = { flavor, programs, full: [], partial: [], failed: [], seeds: [] };
  const ok = await inner.check();
  if (!ok.ok) {
    out.skipped = ok.reason;
    ctx.log(`P8b ${flavor}: skipped: ${ok.reason}`);
    return out;
  }
  const restoreProgram = flavor === 'legacy' ? LEGACY_BIN.restore : 'iptables-restore';
  const { runner, take, seeding } = timedRunner(inner, z.restoreTimeoutS * 1000, (text) =>
    flushRestore(ns, restoreProgram, text),
  );
  const backend = new IptablesBackend({ runner, render: { family: 4 }, log: quietLog });
  /** Fills the table through a flush-mode restore, then puts the jumps back (flush mode removed them). */
  const seed = async (): Promise<void> => {
    const t0 = performance.now();
    seeding.on = true;
    try {
      await backend.apply(base, 'full');
    } finally {
      seeding.on = false;
    }
    for (const j of jumpRules()) {
      const target = j.args[j.args.indexOf('-j') + 1];
      await inner.ensureRule(j.table, j.chain, j.args, target);
    }
    const ms = performance.now() - t0;
    out.seeds.push({ ms });
    ctx.log(
      `P8b ${flavor}: table seeded in flush mode in ${(ms / 1000).toFixed(1)} s (not the proxy's path)`,
    );
  };
  const reps = flavor === 'nft' ? z.nftFullReps : z.legacyFullReps;
  let tableFull = false;
  for (let i = 0; i < reps; i++) {
    take();
    const onto = tableFull ? ('existing' as const) : ('empty' as const);
    const t0 = performance.now();
    let res: Awaited<ReturnType<IptablesBackend['apply']>>;
    try {
      res = await backend.apply(base, 'full');
    } catch (err) {
      // A full sync that fails or does not finish in time is a result too (how long it ran, how it ended).
      const totalMs = performance.now() - t0;
      const c = take();
      out.failed.push({ onto, afterMs: totalMs, error: String(err) });
      ctx.log(
        `P8b ${flavor} full sync ${i + 1}/${reps} onto ${onto} table FAILED after ${(totalMs / 1000).toFixed(1)} s ` +
          `(restore ${(c.restoreMs / 1000).toFixed(1)} s): ${String(err)}`,
      );
      // The table is as before that restore (it is atomic): fill it another way to go on measuring.
      if (!tableFull) await seed();
      tableFull = true;
      continue;
    }
    tableFull = true;
    const totalMs = performance.now() - t0;
    const c = take();
    const r = {
      onto,
      totalMs,
      ...c,
      renderMs: totalMs - c.restoreMs - c.saveMs - c.jumpsMs,
      rules: res.detail?.['rules'] ?? NaN,
    };
    out.full.push(r);
    ctx.log(
      `P8b ${flavor} full sync ${i + 1}/${reps} onto ${r.onto} table: ${(totalMs / 1000).toFixed(2)} s ` +
        `(restore ${(c.restoreMs / 1000).toFixed(2)} s, save ${(c.saveMs / 1000).toFixed(2)} s, jumps ` +
        `${(c.jumpsMs / 1000).toFixed(2)} s, render ${(r.renderMs / 1000).toFixed(2)} s; ${r.rules} rules)`,
    );
  }
  // A failed full sync leaves the backend without a record of the table: its next apply would be full.
  if (out.failed.length > 0 && out.failed[out.failed.length - 1]!.onto === 'existing') await seed();
  let state = base;
  let last: ReturnType<typeof replaceEndpoint> | undefined;
  for (let i = 0; i < z.partialReps; i++) {
    const s = (i * 7919 + 13) % keys.length;
    last = replaceEndpoint(state, keys, s, i);
    take();
    const t0 = performance.now();
    const res = await backend.apply(last.next, new Set([last.key]));
    const totalMs = performance.now() - t0;
    const c = take();
    if (!res.partial) throw new Error(`P8b ${flavor}: apply(next, {key}) was not a partial sync`);
    out.partial.push({
      totalMs,
      ...c,
      renderMs: totalMs - c.restoreMs - c.saveMs - c.jumpsMs,
      rules: res.detail?.['rules'] ?? NaN,
    });
    state = last.next;
  }
  // What the kernel holds now must be exactly what the state owns.
  const t0 = performance.now();
  const saved = await inner.save('nat').catch((err: unknown) => err as Error);
  if (!(saved instanceof Error)) out.saveMs = performance.now() - t0;
  const expectedSep = [...state.values()].reduce((a, st) => a + st.internal.length, 0);
  const sepOf = (e: ProxyEndpoint): string => sepChain(last!.key, 'TCP', e.ip, e.port);
  let seen: string;
  if (saved instanceof Error) {
    // iptables-nft-save 1.8.9 crashes (SIGSEGV) on this table: check the replaced endpoint's chains one by
    // one instead (`iptables -S CHAIN` reads one chain).
    const listed = async (chain: string): Promise<boolean> =>
      /^-N /m.test(
        await runOut(ipPath(), [
          'netns',
          'exec',
          ns.name,
          bin?.iptables ?? 'iptables',
          '-w',
          '-t',
          'nat',
          '-S',
          chain,
        ]),
      );
    out.check = {
      expectedSep,
      replacedPresent: last === undefined || (await listed(sepOf(last.added))),
      removedGone: last === undefined || !(await listed(sepOf(last.removed))),
      saveError: saved.message.split('\n')[0] ?? '',
    };
    seen = `iptables-save failed (${out.check.saveError}) after ${((performance.now() - t0) / 1000).toFixed(1)} s; reduced check: the replaced endpoint's chains are as expected`;
  } else {
    const chains = parseSaveChains(saved).nat;
    const has = new Set(chains.filter(isServiceChain));
    out.check = {
      svcChains: chains.filter((c) => c.startsWith('KUBE-SVC-')).length,
      sepChains: chains.filter((c) => c.startsWith('KUBE-SEP-')).length,
      expectedSep,
      replacedPresent: last === undefined || has.has(sepOf(last.added)),
      removedGone: last === undefined || !has.has(sepOf(last.removed)),
    };
    seen = `iptables-save lists ${out.check.sepChains} KUBE-SEP chains as expected`;
  }
  const c = out.check;
  const counted = c.saveError !== undefined || (c.svcChains === state.size && c.sepChains === expectedSep);
  if (!counted || !c.replacedPresent || !c.removedGone)
    throw new Error(`P8b ${flavor}: the kernel differs from the state: ${JSON.stringify(c)}`);
  const existing = out.full.filter((f) => f.onto === 'existing');
  const first = out.full.find((f) => f.onto === 'empty');
  out.fullFirstMs = first === undefined ? NaN : first.totalMs;
  out.fullExistingMedianMs = existing.length === 0 ? NaN : median(existing.map((f) => f.totalMs));
  out.fullExistingRestoreMedianMs = existing.length === 0 ? NaN : median(existing.map((f) => f.restoreMs));
  out.partialMedianMs = median(out.partial.map((p) => p.totalMs));
  out.partialP99Ms = percentile(
    out.partial.map((p) => p.totalMs),
    99,
  );
  out.partialRestoreMedianMs = median(out.partial.map((p) => p.restoreMs));
  out.partialRenderMedianMs = median(out.partial.map((p) => p.renderMs));
  ctx.log(
    `P8b ${flavor}: partial sync median ${out.partialMedianMs.toFixed(1)} ms (restore ` +
      `${out.partialRestoreMedianMs.toFixed(1)} ms, render ${out.partialRenderMedianMs.toFixed(1)} ms) over ` +
      `${z.partialReps}; ${seen}`,
  );
  return out;
}

async function runP8b(ctx: BenchContext, z: Sizes) {
  ensureDep('iptables', 'IPTABLES_BIN');
  const tBuild = performance.now();
  const base = buildState(z.services, z.endpointsPerService);
  const keys = [...base.keys()];
  const buildMs = performance.now() - tBuild;
  // The pure renders, alone.
  const o: RenderOptions = { family: 4 };
  const fullRender: number[] = [];
  let plan = renderFull(base, { nat: [], filter: [] }, o);
  for (let i = 0; i < z.renderReps; i++) {
    const t0 = performance.now();
    plan = renderFull(base, { nat: [], filter: [] }, o);
    fullRender.push(performance.now() - t0);
  }
  const partialRender: number[] = [];
  let partialPlan = renderPartial(base, new Set([keys[0]!]), plan.applied, o);
  for (let i = 0; i < Math.max(5, z.renderReps * 4); i++) {
    const { next, key } = replaceEndpoint(base, keys, (i * 31) % keys.length, i);
    const t0 = performance.now();
    partialPlan = renderPartial(next, new Set([key]), plan.applied, o);
    partialRender.push(performance.now() - t0);
  }
  const render = {
    fullMedianMs: median(fullRender),
    partialMedianMs: median(partialRender),
    fullLines: plan.text.split('\n').length - 1,
    fullBytes: Buffer.byteLength(plan.text),
    fullRules: plan.rules,
    partialLines: partialPlan.text.split('\n').length - 1,
    partialBytes: Buffer.byteLength(partialPlan.text),
    partialRules: partialPlan.rules,
  };
  ctx.log(
    `P8b: ${z.services} Services × ${z.endpointsPerService} endpoints (state built in ${buildMs.toFixed(0)} ms); ` +
      `renderFull ${render.fullMedianMs.toFixed(0)} ms (${render.fullLines} lines, ` +
      `${(render.fullBytes / 2 ** 20).toFixed(1)} MiB), renderPartial ${render.partialMedianMs.toFixed(1)} ms ` +
      `(${render.partialLines} lines)`,
  );
  const flavors: FlavorResult[] = [];
  let netnsExecMs = NaN;
  for (const flavor of ['nft', 'legacy'] as const) {
    const ns = createNetns(`p8b-${flavor}`);
    try {
      if (flavor === 'nft') netnsExecMs = await timeExec(ns, 10);
      flavors.push(await runFlavor(ctx, z, flavor, base, keys, ns));
    } finally {
      ns.remove();
    }
  }
  return { buildMs, render, netnsExecMs, flavors };
}

// =========================================================================================== P4: worker

type ClientRequest =
  | { op: 'init'; conn: Conn; shape: ClusterShape }
  | { op: 'converged'; timeoutS: number }
  | { op: 'wrapperSynced'; conn: Conn; atLeast: number; timeoutS: number }
  | { op: 'flip'; s: number; r: number; ready: boolean }
  | { op: 'sliceSeen'; pod: string; ready: boolean; after: number; timeoutMs: number }
  | { op: 'stop' };

interface FlipSent {
  sentAt: number;
  acceptedAt: number;
  status: number;
  error?: string;
}

/** The Ready (and ContainersReady) conditions as a kubelet patches them (as the endpoints benchmark does). */
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

/**
 * The client inside the node's namespace: it watches every EndpointSlice upstream (ready endpoints per
 * Service; each pod's readiness as the slices show it, with the time the event arrived), waits for the
 * wrapper to sync, and sends the flips.
 */
function clientMain(): void {
  let conn: Conn | undefined;
  let shape: ClusterShape | undefined;
  let agent: https.Agent | undefined;
  let watch: Watch | undefined;
  const slices = new Map<string, { svc: string; ready: number }>();
  const readyBySvc = new Map<string, number>();
  let convergedServices = 0;
  const podState = new Map<string, { ready: boolean; t: number }>();
  const errors: string[] = [];

  const onSlice = (ev: WatchEventLine, t: number): void => {
    const o = ev.object as {
      metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
      endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { kind?: string; name?: string } }>;
    };
    const ns = o.metadata?.namespace ?? '';
    const key = `${ns}/${o.metadata?.name ?? ''}`;
    const svcName = o.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (svcName === undefined) return;
    const svc = `${ns}/${svcName}`;
    const eps = ev.type === 'DELETED' ? [] : (o.endpoints ?? []);
    const ready = eps.filter((e) => e.conditions?.ready === true).length;
    const before = slices.get(key);
    const total0 = readyBySvc.get(svc) ?? 0;
    const total1 = total0 - (before?.ready ?? 0) + ready;
    readyBySvc.set(svc, total1);
    if (ev.type === 'DELETED') slices.delete(key);
    else slices.set(key, { svc, ready });
    const want = shape!.podsPerService;
    if (total0 === want && total1 !== want) convergedServices--;
    if (total0 !== want && total1 === want) convergedServices++;
    for (const e of eps) {
      if (e.targetRef?.kind !== 'Pod' || e.targetRef.name === undefined) continue;
      const pod = `${ns}/${e.targetRef.name}`;
      const r = e.conditions?.ready === true;
      const known = podState.get(pod);
      if (known === undefined || known.ready !== r) podState.set(pod, { ready: r, t });
    }
  };

  serveWorker<ClientRequest>(async (msg) => {
    switch (msg.op) {
      case 'init':
        conn = msg.conn;
        shape = msg.shape;
        agent = agentFor(conn, 4);
        watch = new Watch(conn, SLICES_PATH, onSlice, {}, (err) => {
          if (errors.length < 5) errors.push(err.message);
        });
        await watch.connected();
        return process.pid;
      case 'converged': {
        const t0 = performance.now();
        let lastLog = t0;
        while (convergedServices < shape!.services) {
          if (performance.now() - t0 > msg.timeoutS * 1000)
            throw new Error(
              `slices not converged after ${msg.timeoutS} s: ${convergedServices}/${shape!.services} ` +
                `Services with ${shape!.podsPerService} ready endpoints; ${errors.join('; ')}`,
            );
          if (performance.now() - lastLog > 30_000) {
            lastLog = performance.now();
            process.stdout.write(
              `  (slices: ${convergedServices}/${shape!.services} Services with every endpoint ready)\n`,
            );
          }
          await sleep(100);
        }
        return { seconds: (performance.now() - t0) / 1000, slices: slices.size };
      }
      case 'wrapperSynced': {
        const wAgent = agentFor(msg.conn, 2);
        try {
          const t0 = performance.now();
          let last = -1;
          let stable = 0;
          for (;;) {
            if (performance.now() - t0 > msg.timeoutS * 1000)
              throw new Error(`the wrapper did not sync in ${msg.timeoutS} s (served writes ${last})`);
            const ready = (await request(wAgent, msg.conn, 'GET', '/readyz')).status === 200;
            const m = await request(wAgent, msg.conn, 'GET', '/metrics', {
              accept: 'text/plain',
              keepText: true,
            });
            const puts = Number(
              /^svcplane_wrapper_served_writes_total\{op="put"\} (\S+)$/m.exec(m.text ?? '')?.[1] ?? 0,
            );
            if (ready && puts >= msg.atLeast && puts === last) stable++;
            else stable = 0;
            last = puts;
            if (stable >= 2) return { seconds: (performance.now() - t0) / 1000, servedWrites: puts };
            await sleep(500);
          }
        } finally {
          wAgent.destroy();
        }
      }
      case 'flip': {
        const ns = namespaceOf(shape!, msg.s);
        const out: FlipSent = { sentAt: epochMs(), acceptedAt: 0, status: 0 };
        const res = await request(
          agent!,
          conn!,
          'PATCH',
          `/api/v1/namespaces/${ns}/pods/${podName(msg.s, msg.r)}/status`,
          {
            body: statusPatch(msg.ready),
            contentType: 'application/strategic-merge-patch+json',
            keepText: true,
          },
        );
        out.acceptedAt = epochMs();
        out.status = res.status;
        if (res.status !== 200) out.error = (res.text ?? '').slice(0, 300);
        return out;
      }
      case 'sliceSeen': {
        const deadline = performance.now() + msg.timeoutMs;
        for (;;) {
          const s = podState.get(msg.pod);
          if (s !== undefined && s.ready === msg.ready && s.t >= msg.after) return s.t;
          if (performance.now() > deadline) return NaN;
          await sleep(2);
        }
      }
      case 'stop':
        watch?.stop();
        agent?.destroy();
        return { errors, relists: watch?.stats.relists ?? 0 };
    }
  });
}

// ============================================================================================= P4: run

interface SyncLine {
  t: number;
  msg: string;
  servicePorts?: number;
  changed?: number;
  ms?: number;
  rules?: number;
}

interface FlipRecord {
  pod: string;
  ready: boolean;
  sep: string;
  patchMs: number;
  /** PATCH response → the proxy's partial sync line (NaN if none came). */
  latencyMs: number;
  /** PATCH response → the upstream slice watch event. */
  upstreamSliceMs: number;
  /** The proxy's own figure for that sync (render + restore, its log's ms). */
  syncMs: number;
  /** Sync lines that arrived for this flip (1 expected). */
  syncs: number;
  changed: number;
  sepPresent: boolean;
  verified: boolean;
  saveMs: number;
}

async function runP4(ctx: BenchContext, z: Sizes) {
  const shape = z.shape;
  ensureDep('iptables', 'IPTABLES_BIN');
  const runtime = svcplaneRuntime();
  ctx.log(`P4: svcplane from ${runtime.kind} (${runtime.why})`);
  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-proxy-p4-')));
  const upDir = path.join(root, 'up');
  mkdirSync(upDir, { recursive: true });
  const pods = shape.services * shape.podsPerService;
  const node = 'node-0000';
  let up: Proc | undefined;
  let wrapper: Proc | undefined;
  let proxy: Proc | undefined;
  let client: Worker<ClientRequest> | undefined;
  let ns: BenchNetns | undefined;
  try {
    ctx.log(
      `P4 preload: ${shape.nodes} nodes, ${shape.services} Services, ${pods} Ready pods bound to nodes ` +
        `(straight into up's store)`,
    );
    const preload: PreloadFigures = await preloadCluster(upDir, shape, ctx.log);
    ctx.log(`P4 preload: ${preload.objects} keys in ${preload.seconds.toFixed(1)} s`);
    ns = createNetns('p4');
    const netns = ns.name;
    let proxyEnv: Record<string, string> = {};
    let iptables = (await runOut('iptables', ['--version'])).trim() || "the machine's iptables";
    if (z.p4Iptables === 'legacy') {
      const shim = legacyShim(root);
      if (shim === undefined)
        throw new Error('P4: iptables-legacy is not installed (Debian package iptables)');
      proxyEnv = { PATH: `${shim}${path.delimiter}${process.env.PATH ?? ''}` };
      iptables = (await runOut(findProgram(LEGACY_BIN.iptables)!, ['--version'])).trim() || 'iptables-legacy';
    }
    const ipt = iptablesRunner({
      family: 4,
      netns,
      ...(z.p4Iptables === 'legacy' ? { bin: LEGACY_BIN } : {}),
    });
    const iptOk = await ipt.check();
    if (!iptOk.ok) throw new Error(`P4: ${iptables} in ${netns}: ${iptOk.reason}`);
    ctx.log(`P4: the proxy uses ${iptables}`);
    const tUp = performance.now();
    up = await startSvcplane(
      'up',
      runtime,
      [
        'up',
        '--data-dir',
        upDir,
        '--bind-address',
        '127.0.0.1',
        '--secure-port',
        '0',
        '--service-cluster-ip-range',
        shape.serviceCidr,
        '--node-monitor-period',
        '1h',
        '--node-monitor-grace-period',
        '1h',
        '--node-startup-grace-period',
        '1h',
      ],
      /ready at (https:\/\/\S+); kubeconfig: (\S+)/,
      { netns, timeoutMs: 600_000 },
    );
    const upReadyS = (performance.now() - tUp) / 1000;
    const upConn = connFromKubeconfig(up.ready[2]!).conn;
    ctx.log(`P4: up ready in ${netns} after ${upReadyS.toFixed(1)} s (${up.ready[1]})`);

    client = new Worker<ClientRequest>(SELF, { [ROLE_ENV]: 'client' }, 'client', { netns });
    const clientPid = await client.call<number>({ op: 'init', conn: upConn, shape });
    const conv = await client.call<{ seconds: number; slices: number }>({
      op: 'converged',
      timeoutS: z.convergeTimeoutS,
    });
    const slicesConvergedS = (performance.now() - tUp) / 1000;
    ctx.log(
      `P4: ${conv.slices} EndpointSlices list every pod ready ${slicesConvergedS.toFixed(1)} s after up's spawn`,
    );

    const tWrap = performance.now();
    wrapper = await startSvcplane(
      'wrapper',
      runtime,
      [
        'wrapper',
        '--kubeconfig',
        up.ready[2]!,
        '--hostname',
        node,
        '--bind-address',
        '127.0.0.1:0',
        '--data-dir',
        path.join(root, 'wrapper'),
      ],
      /serving node \S+ at (https:\/\/\S+?); kubeconfig: (\S+)/,
      { netns, timeoutMs: 600_000 },
    );
    const wrapperKubeconfig = wrapper.ready[2]!;
    const wsync = await client.call<{ seconds: number; servedWrites: number }>({
      op: 'wrapperSynced',
      conn: connFromKubeconfig(wrapperKubeconfig).conn,
      atLeast: shape.nodes + 2 * shape.services,
      timeoutS: z.convergeTimeoutS,
    });
    const wrapperSyncS = (performance.now() - tWrap) / 1000;
    ctx.log(
      `P4: wrapper for ${node} synced ${wrapperSyncS.toFixed(1)} s after its spawn (${wsync.servedWrites} writes)`,
    );

    const syncLines: SyncLine[] = [];
    const onLine = (line: string, t: number): void => {
      if (!line.startsWith('{')) return;
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        const msg = o['msg'];
        if (
          msg === 'partial sync' ||
          msg === 'full sync' ||
          msg === 'sync failed; the next one is a full sync'
        )
          syncLines.push({
            t,
            msg,
            ...(typeof o['servicePorts'] === 'number' ? { servicePorts: o['servicePorts'] } : {}),
            ...(typeof o['changed'] === 'number' ? { changed: o['changed'] } : {}),
            ...(typeof o['ms'] === 'number' ? { ms: o['ms'] } : {}),
            ...(typeof o['rules'] === 'number' ? { rules: o['rules'] } : {}),
          });
      } catch {
        /* not a log line */
      }
    };
    const tProxy = performance.now();
    proxy = await startSvcplane(
      'proxy',
      runtime,
      [
        'proxy',
        '--kubeconfig',
        wrapperKubeconfig,
        '--hostname-override',
        node,
        '--proxy-mode',
        'iptables',
        '--min-sync-period',
        '0s',
        '--sync-period',
        '1h',
        '--metrics-bind-address',
        '127.0.0.1:0',
        '--healthz-bind-address',
        '127.0.0.1:0',
      ],
      /proxy for \S+ \(iptables\) in sync: (\d+) service ports/,
      { netns, timeoutMs: z.proxySyncTimeoutS * 1000, onStderrLine: onLine, env: proxyEnv },
    );
    const proxyInSyncS = (performance.now() - tProxy) / 1000;
    // Every Service programmed (and default/kubernetes), then nothing more to do for 3 s.
    const expectPorts = shape.services;
    for (let quiet = 0; ;) {
      const last = syncLines[syncLines.length - 1];
      const n0 = syncLines.length;
      await sleep(1000);
      if (syncLines.length === n0 && last !== undefined && (last.servicePorts ?? 0) >= expectPorts) quiet++;
      else quiet = 0;
      if (quiet >= 3) break;
      if (performance.now() - tProxy > z.proxySyncTimeoutS * 1000)
        throw new Error(`the proxy did not program ${expectPorts} service ports: ${JSON.stringify(last)}`);
    }
    const firstFull = syncLines.find((l) => l.msg === 'full sync');
    const syncsBeforeFlips = syncLines.length;
    const programmedS = (performance.now() - tProxy) / 1000;
    ctx.log(
      `P4: proxy in sync ${proxyInSyncS.toFixed(1)} s after its spawn; first full sync ` +
        `${((firstFull?.ms ?? NaN) / 1000).toFixed(2)} s (${firstFull?.servicePorts} service ports, ` +
        `${firstFull?.rules} rules); ${syncsBeforeFlips} syncs before the flips`,
    );

    // ---- flips
    const runner = ipt;
    const random = prng(SEED);
    const picked = new Set<number>();
    const targets: Array<{ s: number; r: number }> = [];
    while (targets.length < Math.ceil(z.flips / 2)) {
      const s = Math.floor(random() * shape.services);
      if (picked.has(s)) continue;
      picked.add(s);
      targets.push({ s, r: Math.floor(random() * shape.podsPerService) });
    }
    const saved0 = await runner.save('nat');
    const sepTotal0 = parseSaveChains(saved0).nat.filter((c) => c.startsWith('KUBE-SEP-')).length;
    const flips: FlipRecord[] = [];
    const tFlips = performance.now();
    for (let i = 0; i < z.flips; i++) {
      const { s, r } = targets[Math.floor(i / 2)]!;
      const ready = i % 2 === 1;
      const pod = podKey(shape, s, r);
      const sep = sepChain(
        `${namespaceOf(shape, s)}/${serviceName(s)}:http`,
        'TCP',
        podPlacement(shape, s, r).ip,
        8080,
      );
      const before = syncLines.length;
      const sent = await client.call<FlipSent>({ op: 'flip', s, r, ready });
      if (sent.status !== 200) throw new Error(`flip ${pod}: ${sent.status} ${sent.error}`);
      const deadline = performance.now() + z.syncTimeoutS * 1000;
      let line: SyncLine | undefined;
      while (line === undefined && performance.now() < deadline) {
        line = syncLines.slice(before).find((l) => l.msg === 'partial sync' && (l.changed ?? 0) > 0);
        if (line === undefined) await sleep(1);
      }
      const seen = await client.call<number>({
        op: 'sliceSeen',
        pod,
        ready,
        after: sent.sentAt,
        timeoutMs: 2000,
      });
      // Anything else this flip set off, before the check.
      await sleep(250);
      const tSave = performance.now();
      const saved = await runner.save('nat');
      const saveMs = performance.now() - tSave;
      const present = saved.includes(`:${sep} `);
      const rec: FlipRecord = {
        pod,
        ready,
        sep,
        patchMs: sent.acceptedAt - sent.sentAt,
        latencyMs: line === undefined ? NaN : line.t - sent.acceptedAt,
        upstreamSliceMs: seen - sent.acceptedAt,
        syncMs: line?.ms ?? NaN,
        syncs: syncLines.length - before,
        changed: line?.changed ?? 0,
        sepPresent: present,
        verified: present === ready,
        saveMs,
      };
      flips.push(rec);
      if (!rec.verified)
        ctx.log(
          `P4 flip ${i + 1}: ${sep} of ${pod} is ${present ? 'present' : 'absent'} after Ready=${ready}`,
        );
      if (i % 10 === 9 || i === z.flips - 1)
        ctx.log(
          `P4 flip ${i + 1}/${z.flips}: ${pod} Ready=${ready}: ${rec.latencyMs.toFixed(1)} ms to the partial ` +
            `sync (upstream slice event ${rec.upstreamSliceMs.toFixed(1)} ms, the proxy's sync ${rec.syncMs} ms); ` +
            `iptables-save ${saveMs.toFixed(0)} ms`,
        );
    }
    const flipsS = (performance.now() - tFlips) / 1000;
    const lat = flips.map((f) => f.latencyMs).filter(Number.isFinite);
    const rssOf = (p: Proc) => {
      const m = memory(p.pid);
      return { rssMiB: m.rssMiB, peakMiB: m.hwmMiB };
    };
    const rss = { proxy: rssOf(proxy), wrapper: rssOf(wrapper), up: rssOf(up) };
    const clientStats = await client.call<{ errors: string[]; relists: number }>({ op: 'stop' });
    const fin = (xs: number[]): number[] => xs.filter(Number.isFinite);
    const result = {
      shape,
      node,
      iptables,
      setup:
        'preloaded store (lib/preload.ts), up + wrapper + proxy + client in one network namespace; ' +
        'proxy --min-sync-period 0s --sync-period 1h, pointed at the wrapper',
      preload,
      upReadyS,
      slicesConvergedS,
      wrapperSyncS,
      proxy: {
        inSyncS: proxyInSyncS,
        programmedS,
        firstFullSyncMs: firstFull?.ms ?? NaN,
        firstFullSyncServicePorts: firstFull?.servicePorts ?? NaN,
        firstFullSyncRules: firstFull?.rules ?? NaN,
        syncsBeforeFlips,
        sepChains: sepTotal0,
        expectedSepChains: pods,
      },
      flips: {
        count: flips.length,
        lost: flips.filter((f) => !Number.isFinite(f.latencyMs)).length,
        unverified: flips.filter((f) => !f.verified).length,
        extraSyncs: flips.reduce((a, f) => a + Math.max(0, f.syncs - 1), 0),
        p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
        p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
        maxMs: lat.length === 0 ? NaN : Math.max(...lat),
        upstreamSliceP50Ms: median(fin(flips.map((f) => f.upstreamSliceMs))),
        upstreamSliceP99Ms: percentile(fin(flips.map((f) => f.upstreamSliceMs)), 99),
        proxySyncMedianMs: median(fin(flips.map((f) => f.syncMs))),
        patchMedianMs: median(flips.map((f) => f.patchMs)),
        saveMedianMs: median(flips.map((f) => f.saveMs)),
        seconds: flipsS,
        records: flips,
      },
      rss,
      client: { pid: clientPid, ...clientStats },
    };
    ctx.log(
      `P4: ${flips.length} flips: p50 ${result.flips.p50Ms.toFixed(1)} ms, p99 ${result.flips.p99Ms.toFixed(1)} ms ` +
        `(upstream slice event p50 ${result.flips.upstreamSliceP50Ms.toFixed(1)} ms); ${result.flips.lost} lost, ` +
        `${result.flips.unverified} not as expected in iptables-save; proxy RSS ${rss.proxy.rssMiB.toFixed(0)} MiB, ` +
        `wrapper ${rss.wrapper.rssMiB.toFixed(0)} MiB`,
    );
    if (result.flips.unverified > 0 || result.flips.lost > 0)
      throw new Error(
        `P4: ${result.flips.lost} flips lost, ${result.flips.unverified} not in iptables-save as expected`,
      );
    return result;
  } finally {
    client?.stop();
    for (const p of [proxy, wrapper, up]) if (p !== undefined) await stopChild(p.child, 20_000);
    await sleep(300);
    ns?.remove();
    rmSync(root, { recursive: true, force: true });
  }
}

// ================================================================================================ main

const ROLES: Record<string, () => void> = {
  echo: echoMain,
  load: loadMain,
  userspace: userspaceMain,
  client: clientMain,
};
const role = process.env[ROLE_ENV];
if (role !== undefined) ROLES[role]?.();

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const steps = new Set((process.env.SVCPLANE_BENCH_PROXY_STEPS ?? 'p8a,p8b,p4').split(','));
  const load0 = loadavg();
  const pids: Record<string, number> = {};
  const whole = coresWindow(pids);
  const p8a = steps.has('p8a') ? await runP8a(ctx, z) : undefined;
  const p8aCores = whole();
  const w8b = coresWindow({});
  const p8b = steps.has('p8b') ? await runP8b(ctx, z) : undefined;
  const p8bCores = w8b();
  const w4 = coresWindow({});
  const p4 = steps.has('p4') ? await runP4(ctx, z) : undefined;
  const p4Cores = w4();

  const nft = p8b?.flavors.find((f) => f.flavor === 'nft');
  // The goal is judged on the full syncs onto the full table (the periodic resync); a failed one misses it.
  // Judged on the full syncs onto the full table (the periodic resync; else the first one): one that failed
  // or did not finish counts as infinitely long.
  const fullTimes = (f: FlavorResult, onto: 'empty' | 'existing'): number[] => [
    ...f.full.filter((x) => x.onto === onto).map((x) => x.totalMs),
    ...f.failed.filter((x) => x.onto === onto).map(() => Infinity),
  ];
  const fullGoalMs =
    nft === undefined
      ? NaN
      : fullTimes(nft, 'existing').length > 0
        ? median(fullTimes(nft, 'existing'))
        : median(fullTimes(nft, 'empty'));
  const goals = {
    p8aUserspaceAtLeastHalfOfHaproxy:
      p8a === undefined ? null : p8a.ratios.userspaceOverHaproxyKeepAliveRps >= 0.5,
    p8bFullAtMost1s: nft === undefined ? null : fullGoalMs <= 1000,
    p8bPartialAtMost20ms: nft === undefined ? null : (nft.partialMedianMs ?? Infinity) <= 20,
    p4P99AtMost100ms: p4 === undefined ? null : p4.flips.p99Ms <= 100,
  };
  const yn = (b: boolean | null): string => (b === null ? '' : b ? 'yes' : 'no');
  const row = (
    metric: string,
    value: string | number,
    goal = '',
    met = '',
  ): Record<string, string | number> => ({
    metric,
    value,
    goal,
    met,
  });
  const table: Array<Record<string, string | number>> = [];
  if (p8a !== undefined) {
    const m = p8a.medians;
    const fig = (mode: Mode, kind: LoadKind): string =>
      `${Math.round(m[mode][kind].rps)}/s; p50 ${round(m[mode][kind].p50Ms)}, p99 ${round(m[mode][kind].p99Ms)} ms`;
    table.push(
      row('P8a keep-alive: direct (req/s; latency)', fig('direct', 'keepalive')),
      row('P8a keep-alive: userspace proxy', fig('userspace', 'keepalive')),
      row('P8a keep-alive: HAProxy (tcp, nbthread 1)', fig('haproxy', 'keepalive')),
      row(
        'P8a keep-alive req/s: userspace ÷ HAProxy',
        round(p8a.ratios.userspaceOverHaproxyKeepAliveRps),
        '≥ 0.5',
        yn(goals.p8aUserspaceAtLeastHalfOfHaproxy),
      ),
      row(
        'P8a keep-alive: proxy cores userspace / HAProxy; p99 ratio',
        `${round(m.userspace.keepalive.proxyCores)} / ${round(m.haproxy.keepalive.proxyCores)}; ${round(p8a.ratios.userspaceOverHaproxyKeepAliveP99)}`,
      ),
      row('P8a new conn/request: direct', fig('direct', 'newconn')),
      row('P8a new conn/request: userspace proxy', fig('userspace', 'newconn')),
      row('P8a new conn/request: HAProxy', fig('haproxy', 'newconn')),
      row(
        'P8a new conn/request req/s: userspace ÷ HAProxy',
        round(p8a.ratios.userspaceOverHaproxyNewConnRps),
      ),
    );
  }
  if (p8b !== undefined) {
    table.push(
      row(
        `P8b ${z.services} svc × ${z.endpointsPerService} eps: renderFull; renderPartial (ms, pure)`,
        `${round(p8b.render.fullMedianMs)}; ${round(p8b.render.partialMedianMs)} (${p8b.render.fullLines} / ${p8b.render.partialLines} lines)`,
      ),
    );
    for (const f of p8b.flavors) {
      if (f.skipped !== undefined) {
        table.push(row(`P8b ${f.flavor}`, `skipped: ${f.skipped}`));
        continue;
      }
      const isNft = f.flavor === 'nft';
      const timeout = `did not finish in ${z.restoreTimeoutS} s`;
      const fullCell = (onto: 'empty' | 'existing'): string => {
        const ok = f.full.filter((x) => x.onto === onto);
        const bad = f.failed.filter((x) => x.onto === onto);
        const parts: string[] = [];
        if (ok.length > 0)
          parts.push(
            `${round(median(ok.map((x) => x.totalMs)))}; restore ${round(median(ok.map((x) => x.restoreMs)))}`,
          );
        for (const b of bad)
          parts.push(/TimeoutError|aborted/i.test(b.error) ? timeout : `failed after ${round(b.afterMs)}`);
        return parts.join('; ') || '-';
      };
      const nExisting =
        f.full.filter((x) => x.onto === 'existing').length +
        f.failed.filter((x) => x.onto === 'existing').length;
      table.push(
        row(`P8b ${f.flavor} full sync onto empty table (ms)`, fullCell('empty')),
        row(
          `P8b ${f.flavor} full sync onto full table, median of ${nExisting} (ms)`,
          fullCell('existing'),
          isNft ? '≤ 1000' : '',
          isNft ? yn(goals.p8bFullAtMost1s) : '',
        ),
      );
      if (f.seeds.length > 0)
        table.push(
          row(
            `P8b ${f.flavor}: table filled in flush mode instead (s; not the proxy's path)`,
            f.seeds.map((x) => round(x.ms / 1000)).join(', '),
          ),
        );
      table.push(
        row(
          `P8b ${f.flavor} partial sync, median of ${f.partial.length} (ms; restore; render)`,
          `${round(f.partialMedianMs!)}; ${round(f.partialRestoreMedianMs!)}; ${round(f.partialRenderMedianMs!)}`,
          isNft ? '≤ 20' : '',
          isNft ? yn(goals.p8bPartialAtMost20ms) : '',
        ),
      );
    }
    table.push(row('P8b `ip netns exec` alone (ms, median)', round(p8b.netnsExecMs)));
  }
  if (p4 !== undefined) {
    table.push(
      row(
        "P4 shape; preload (s); the proxy's iptables",
        `${p4.shape.nodes} nodes, ${p4.shape.services} svc, ${p4.shape.services * p4.shape.podsPerService} pods; ` +
          `${round(p4.preload.seconds)}; ${p4.iptables}`,
      ),
      row(
        'P4 up ready; slices converged (s from up spawn)',
        `${round(p4.upReadyS)}; ${round(p4.slicesConvergedS)}`,
      ),
      row(
        'P4 wrapper synced; proxy first sync done (s from spawn)',
        `${round(p4.wrapperSyncS)}; ${round(p4.proxy.inSyncS)}`,
      ),
      row('P4 proxy first full sync (ms, its log)', round(p4.proxy.firstFullSyncMs)),
      row(`P4 ${p4.flips.count} flips: PATCH → partial sync p50 (ms)`, round(p4.flips.p50Ms)),
      row('P4 PATCH → partial sync p99 (ms)', round(p4.flips.p99Ms), '≤ 100', yn(goals.p4P99AtMost100ms)),
      row(
        "P4 PATCH → upstream slice event p50; proxy's sync (median, ms)",
        `${round(p4.flips.upstreamSliceP50Ms)}; ${round(p4.flips.proxySyncMedianMs)}`,
      ),
      row('P4 flips lost / not as expected in iptables-save', `${p4.flips.lost} / ${p4.flips.unverified}`),
      row(
        'P4 RSS proxy / wrapper / up (MiB; peak)',
        `${round(p4.rss.proxy.rssMiB)} / ${round(p4.rss.wrapper.rssMiB)} / ${round(p4.rss.up.rssMiB)}; ` +
          `${round(p4.rss.proxy.peakMiB)} / ${round(p4.rss.wrapper.peakMiB)} / ${round(p4.rss.up.peakMiB)}`,
      ),
    );
  }
  table.push(
    row(
      `machine (${cpus().length} CPUs): cores used by others in P8a; P8b; P4; load avg`,
      `${round(p8aCores.others)}; ${round(p8bCores.others)}; ${round(p4Cores.others)}; ${load0.map(round).join(' ')} → ${loadavg().map(round).join(' ')}`,
    ),
  );
  return {
    table,
    data: {
      sizes: z,
      seed: SEED,
      setup: {
        p8a:
          'loopback, root namespace; 2 node:http echo backends (one process), a raw-socket HTTP/1.1 load ' +
          'generator (its own process), UserspaceProxy (its own process, hand-built state), HAProxy mode tcp ' +
          'roundrobin nbthread 1 -db; nothing pinned: each proxy moves bytes on one thread; repetitions ' +
          'interleave direct/userspace/haproxy',
        p8b:
          'IptablesBackend + iptablesRunner({ family: 4, netns }) in a namespace of its own; full syncs (first ' +
          'onto an empty table), then partial syncs of one replaced endpoint; machine iptables and ' +
          'iptables-legacy',
        p4:
          'preloaded store; up, wrapper, proxy and the client in one network namespace; flips are pod status ' +
          'PATCHes; latency from the PATCH response to the proxy\'s "partial sync" log line',
      },
      p8a,
      p8b,
      p4,
      machineCores: { p8a: p8aCores, p8b: p8bCores, p4: p4Cores, loadavgStart: load0, loadavgEnd: loadavg() },
      goals,
    },
  };
}
