// Processes shared by the benchmarks that drive a server over the API: the server under test
// (`svcplane up` from the current sources), client worker processes that talk to it over IPC, and
// CPU/RSS sampling of a process from /proc.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ipPath } from '../../src/demo/netns.js';
import { svcplaneRuntime, track } from './cluster.js';
import type { Conn } from './http.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------------------------ client workers

/**
 * A client worker: `module` forked with `env` (which tells it to serve requests, see serveWorker), so
 * the load generator never shares an event loop with the orchestrator or the server.
 */
export class Worker<Req> {
  private readonly child: ChildProcess;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(
    module: string,
    env: Record<string, string>,
    readonly name: string,
    opts: { netns?: string } = {},
  ) {
    this.child =
      opts.netns === undefined
        ? fork(module, [], {
            execArgv: ['--import', 'tsx'],
            env: { ...process.env, ...env },
            serialization: 'advanced',
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          })
        : // Inside a network namespace: `ip netns exec` execs node in place and keeps the IPC channel's
          // file descriptor and the NODE_CHANNEL_* variables, so the worker talks back as a forked one does.
          spawn(ipPath(), ['netns', 'exec', opts.netns, process.execPath, '--import', 'tsx', module], {
            cwd: ROOT,
            env: { ...process.env, ...env },
            serialization: 'advanced',
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          });
    track(this.child); // killed with the benchmark, however it ends (Ctrl-C included)
    this.child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const w = this.waiting.get(m.id);
      if (w === undefined) return;
      this.waiting.delete(m.id);
      if (m.error !== undefined) w.reject(new Error(`${this.name}: ${m.error}`));
      else w.resolve(m.result);
    });
    this.child.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`${this.name} exited (${code})`));
      this.waiting.clear();
    });
  }

  /** The worker's pid (node's own, inside a namespace too). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  call<T>(req: Req): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, req });
    });
  }

  stop(): void {
    if (this.child.connected) this.child.disconnect();
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
  }
}

/** The worker side: answers each request the orchestrator sends with `handle`'s result; exits with it. */
export function serveWorker<Req>(handle: (req: Req) => Promise<unknown>): void {
  process.on('message', (m: { id: number; req: Req }) => {
    handle(m.req).then(
      (result) => process.send?.({ id: m.id, result }),
      (err: unknown) => process.send?.({ id: m.id, error: err instanceof Error ? err.stack : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}

// -------------------------------------------------------------------------------------------- server

export interface Server {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly conn: Conn;
  readonly url: string;
  stderrTail(): string;
}

/**
 * `svcplane up` (the compiled dist/ when it is current, else the sources through tsx: svcplaneRuntime), on 127.0.0.1 and a free port, in `dataDir`, with
 * `args` appended (e.g. the storage backend or the allocation ranges).
 */
export async function startServer(dataDir: string, args: readonly string[] = []): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      // e.g. SVCPLANE_BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server
      ...(process.env.SVCPLANE_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
      ...svcplaneRuntime().argv,
      'up',
      '--data-dir',
      dataDir,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      '0',
      ...args,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Killed with the benchmark, however it ends: an interrupted run left `svcplane up` running before.
  track(child);
  let tail = '';
  child.stderr!.on('data', (d: Buffer) => (tail = (tail + d.toString()).slice(-8000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server not ready after 90 s: ${tail}`)), 90_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ready at (https:\/\/\S+);/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before it was ready: ${tail}`));
    });
  });
  const u = new URL(url);
  const tokenLine = readFileSync(path.join(dataDir, 'pki', 'tokens.csv'), 'utf8')
    .split('\n')
    .find((l) => l.includes(',admin,'));
  if (tokenLine === undefined) throw new Error('no admin token in tokens.csv');
  return {
    child,
    pid: child.pid!,
    url,
    conn: {
      host: u.hostname,
      port: Number(u.port),
      token: tokenLine.split(',')[0]!,
      ca: readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8'),
    },
    stderrTail: () => tail,
  };
}

export async function stopServer(s: Server): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise<void>((r) => s.child.once('exit', () => r()));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------- /proc

let ticksPerSec = 100;
try {
  ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* Linux default */
}

/** CPU seconds (user + system, all threads) the process has used. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSec; // fields 14 and 15 of proc(5)
}

/** CPU seconds (user + system) one thread of the process has used (tid = pid: the main thread). */
export function threadCpuSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSec;
}

export function memory(pid: number): {
  rssMiB: number;
  hwmMiB: number;
  /** Of the RSS: anonymous memory (heaps), and file-backed pages (the node binary's code, mostly). */
  anonMiB: number;
  fileMiB: number;
} {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return {
    rssMiB: kb('VmRSS') / 1024,
    hwmMiB: kb('VmHWM') / 1024,
    anonMiB: kb('RssAnon') / 1024,
    fileMiB: kb('RssFile') / 1024,
  };
}
