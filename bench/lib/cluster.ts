// Separate svcplane processes for the benchmarks that measure one component alone: `svcplane apiserver`
// and `svcplane controller-manager`, each in its own child process (so /proc figures are that
// component's), started from the compiled dist/ when it is current and from the sources (tsx)
// otherwise. Every child started here is killed when the benchmark exits, however it exits.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateToken, renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { ipPath } from '../../src/demo/netns.js';
import type { MemoryCgroup } from './cgroup.js';
import { epochMs, type Conn } from './http.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// ------------------------------------------------------------------------------ which svcplane to run

export interface SvcplaneRuntime {
  readonly kind: 'dist' | 'tsx';
  /** node arguments before the svcplane command's own arguments. */
  readonly argv: readonly string[];
  readonly why: string;
}

/** The dashboard's page: bundled by esbuild into dist/dashboard/page/, not compiled file by file. */
const PAGE_SRC = path.join(ROOT, 'src/dashboard/page');

/** The first source file (non-test) whose compiled dist/ file is missing or older, if any. */
function staleDist(): string | undefined {
  const walk = (dir: string): string | undefined => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) {
        if (name === 'testing' || p === PAGE_SRC) continue;
        const s = walk(p);
        if (s !== undefined) return s;
      } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) {
        const out = path.join(ROOT, 'dist', path.relative(path.join(ROOT, 'src'), p)).replace(/\.ts$/, '.js');
        try {
          if (statSync(out).mtimeMs + 1 < statSync(p).mtimeMs) return path.relative(ROOT, p);
        } catch {
          return path.relative(ROOT, p);
        }
      }
    }
    return undefined;
  };
  return walk(path.join(ROOT, 'src'));
}

/**
 * `node bin/svcplane.js` (dist/, as `npm ci` builds it) when dist/ is at least as new as every source
 * file; otherwise the sources through tsx, so a benchmark never measures stale code.
 * SVCPLANE_BENCH_RUNTIME=dist|tsx forces one.
 */
export function svcplaneRuntime(): SvcplaneRuntime {
  const forced = process.env.SVCPLANE_BENCH_RUNTIME;
  const dist: SvcplaneRuntime = { kind: 'dist', argv: [path.join(ROOT, 'bin/svcplane.js')], why: '' };
  const tsx: SvcplaneRuntime = {
    kind: 'tsx',
    argv: ['--import', 'tsx', path.join(ROOT, 'src/cli/svcplane.ts')],
    why: '',
  };
  if (forced === 'dist') return { ...dist, why: 'SVCPLANE_BENCH_RUNTIME=dist' };
  if (forced === 'tsx') return { ...tsx, why: 'SVCPLANE_BENCH_RUNTIME=tsx' };
  const stale = staleDist();
  return stale === undefined
    ? { ...dist, why: 'dist/ is current' }
    : { ...tsx, why: `dist/ is older than ${stale} (npm run build to measure the compiled code)` };
}

/**
 * `svcplane up`'s flags for a cluster preloaded into its store, whose nodes have no kubelet: the node
 * lifecycle controller waits an hour before it marks them NotReady and evicts their pods.
 */
export const NO_KUBELET_FLAGS: readonly string[] = [
  '--node-monitor-period',
  '1h',
  '--node-monitor-grace-period',
  '1h',
  '--node-startup-grace-period',
  '1h',
];

/** `svcplane up` on loopback, a free port, the given data directory and Service range, no kubelets. */
export const upArgs = (dataDir: string, serviceCidr: string): string[] => [
  'up',
  '--data-dir',
  dataDir,
  '--bind-address',
  '127.0.0.1',
  '--secure-port',
  '0',
  '--service-cluster-ip-range',
  serviceCidr,
  ...NO_KUBELET_FLAGS,
];

// ------------------------------------------------------------------------------------ child processes

const children = new Set<ChildProcess>();
const scratchDirs = new Set<string>();
const exitHooks = new Set<() => void>();
let guardsInstalled = false;

function killAllNow(): void {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  for (const d of scratchDirs) rmSync(d, { recursive: true, force: true });
  for (const hook of exitHooks) {
    try {
      hook();
    } catch {
      /* best effort: the next hook still runs */
    }
  }
}

/** Children die with the benchmark: on exit (any path through process.exit) and on SIGINT/SIGTERM. */
function installGuards(): void {
  if (guardsInstalled) return;
  guardsInstalled = true;
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAllNow();
      process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
    });
  }
}

/** Removes `dir` when the benchmark exits, however it exits (and lets the caller remove it earlier). */
export function scratchDir(dir: string): string {
  installGuards();
  scratchDirs.add(dir);
  return dir;
}

/**
 * Runs `hook` (synchronously) when the benchmark exits, however it exits, after its children are killed:
 * for what a child cannot take with it, such as a network namespace. Returns a function that unregisters it.
 */
export function atExit(hook: () => void): () => void {
  installGuards();
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}

/** Registers a child started elsewhere (a forked worker) so it dies with the benchmark too. */
export function track(child: ChildProcess): void {
  installGuards();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

export interface StartOptions {
  timeoutMs?: number;
  nodeArgs?: readonly string[];
  env?: Record<string, string>;
  /** Runs the process inside this network namespace (`ip netns exec`). */
  netns?: string;
  /** Runs the process inside this memory cgroup (it joins before node starts; the pid is node's). */
  cgroup?: MemoryCgroup;
  /** Every complete stderr line, with the epoch ms (lib/http.ts epochMs) its chunk arrived. */
  onStderrLine?: (line: string, t: number) => void;
}

export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The match of the ready pattern on stdout. */
  readonly ready: RegExpExecArray;
  stderrTail(): string;
  stdoutTail(): string;
}

/**
 * Starts `node <nodeArgs> <runtime argv> <args>` and resolves when its stdout matches `ready`; rejects
 * (and kills it) when it exits first or after `timeoutMs`.
 */
export async function startSvcplane(
  name: string,
  runtime: SvcplaneRuntime,
  args: readonly string[],
  ready: RegExp,
  opts: StartOptions = {},
): Promise<Proc> {
  installGuards();
  const argv = [...(opts.nodeArgs ?? []), ...runtime.argv, ...args];
  // `ip netns exec` execs node in place (no fork), so the child's pid is node's own.
  if (opts.cgroup !== undefined && opts.netns !== undefined)
    throw new Error('startSvcplane: cgroup or netns, not both');
  const [cmd, ...cmdArgs] = opts.cgroup?.wrap([process.execPath, ...argv]) ?? [process.execPath, ...argv];
  const child =
    opts.netns === undefined
      ? spawn(cmd!, cmdArgs, {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, ...opts.env },
        })
      : spawn(ipPath(), ['netns', 'exec', opts.netns, process.execPath, ...argv], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, ...opts.env },
        });
  track(child);
  let errTail = '';
  let outTail = '';
  let errLine = '';
  const onLine = opts.onStderrLine;
  child.stderr!.on('data', (d: Buffer) => {
    const s = d.toString();
    errTail = (errTail + s).slice(-16_000);
    if (onLine === undefined) return;
    const t = epochMs();
    const text = errLine + s;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      onLine(text.slice(start, nl), t);
      start = nl + 1;
    }
    errLine = text.slice(start);
  });
  const timeoutMs = opts.timeoutMs ?? 120_000;
  try {
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      let out = '';
      let done = false;
      const timer = setTimeout(
        () => reject(new Error(`${name} not ready after ${timeoutMs / 1000} s: ${errTail.slice(-2000)}`)),
        timeoutMs,
      );
      child.stdout!.on('data', (d: Buffer) => {
        const s = d.toString();
        outTail = (outTail + s).slice(-16_000);
        if (done) return;
        out += s;
        const m = ready.exec(out);
        if (m !== null) {
          done = true;
          clearTimeout(timer);
          resolve(m);
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before it was ready: ${errTail.slice(-3000)}`));
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return {
      name,
      child,
      pid: child.pid!,
      ready: match,
      stderrTail: () => errTail,
      stdoutTail: () => outTail,
    };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child exited. */
export async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

// ----------------------------------------------------------------------------- apiserver + kubeconfig

export interface ApiServerProc extends Proc {
  readonly url: string;
  readonly conn: Conn;
}

/**
 * `svcplane apiserver` on 127.0.0.1 and a free port over the store in `dataDir`, with one admin token
 * (group system:masters) in `dataDir/tokens.csv`; its self-signed CA is `dataDir/pki/ca.crt`.
 */
export async function startApiServer(
  runtime: SvcplaneRuntime,
  dataDir: string,
  args: readonly string[] = [],
  opts: Pick<StartOptions, 'timeoutMs' | 'nodeArgs' | 'env' | 'netns'> = {},
): Promise<ApiServerProc> {
  const token = generateToken();
  const tokens = path.join(dataDir, 'tokens.csv');
  writeFileSync(tokens, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
  const p = await startSvcplane(
    'apiserver',
    runtime,
    [
      'apiserver',
      '--data-dir',
      dataDir,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      '0',
      '--token-auth-file',
      tokens,
      ...args,
    ],
    /apiserver ready at (https:\/\/\S+)/,
    opts,
  );
  const url = p.ready[1]!;
  const u = new URL(url);
  return {
    ...p,
    url,
    conn: {
      host: u.hostname,
      port: Number(u.port),
      token,
      ca: readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8'),
    },
  };
}

/** A kubeconfig for `server` (token auth, CA embedded), written to `file`. */
export function writeKubeconfig(file: string, server: ApiServerProc): void {
  writeFileSync(
    file,
    renderKubeconfig({ server: server.url, caPem: server.conn.ca, user: 'admin', token: server.conn.token }),
    { mode: 0o600 },
  );
}

/** The controllers this runtime's controller-manager knows, from its --help. */
export function knownControllers(runtime: SvcplaneRuntime): string[] {
  const r = spawnSync(process.execPath, [...runtime.argv, 'controller-manager', '--help'], {
    encoding: 'utf8',
  });
  const m = /known: ([\w, -]+)/.exec(r.stdout ?? '');
  if (r.status !== 0 || m === null) throw new Error(`controller-manager --help: ${r.status} ${r.stderr}`);
  return m[1]!.split(',').map((s) => s.trim());
}
