// P8a: userspace proxy throughput against HAProxy and the direct path, interleaved repetitions.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { scratchDir, stopChild, track } from '../lib/cluster.js';
import { ensureDep } from '../lib/deps.js';
import { coresWindow, type CoresUsed } from '../lib/machine.js';
import { sleep, Worker } from '../lib/process.js';
import { median, type BenchContext } from '../run.js';
import { type Sizes } from './shape.js';
import { freePort, runOut } from './programs.js';
import { WORKER_MODULE, ROLE_ENV } from './workers.js';
import { type Target, type EchoRequest, type EchoStarted } from './echo-backends.js';
import { type UserspaceRequest } from './userspace-worker.js';
import { type LoadKind, type LoadRequest, type LoadResult } from './load-generator.js';

export type Mode = 'direct' | 'userspace' | 'haproxy';
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

export async function runP8a(ctx: BenchContext, z: Sizes) {
  const haproxyBin = ensureDep('haproxy', 'HAPROXY_BIN');
  const dir = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-proxy-p8a-')));
  const echo = new Worker<EchoRequest>(WORKER_MODULE, { [ROLE_ENV]: 'echo' }, 'echo');
  const load = new Worker<LoadRequest>(WORKER_MODULE, { [ROLE_ENV]: 'load' }, 'load');
  const us = new Worker<UserspaceRequest>(WORKER_MODULE, { [ROLE_ENV]: 'userspace' }, 'userspace');
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
