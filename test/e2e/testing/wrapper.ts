// Running a real `svcplane wrapper` process for end-to-end tests, plus two small things its clients need:
// the python that has the Kubernetes client, and a splitter for a stream of concatenated JSON values
// (what `kubectl get --watch -o json` prints).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { logOnFailure } from './server.js';

const BIN = new URL('../../../bin/svcplane.js', import.meta.url).pathname;

export interface TestWrapper {
  readonly url: string;
  readonly port: number;
  readonly kubeconfig: string;
  readonly proc: ChildProcess;
  readonly stderr: () => string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `svcplane wrapper` for `hostname` against the upstream kubeconfig and resolves once it prints its
 * serving line. `port` 0 (the default) picks a free one; pass the previous port to restart in place.
 */
export async function startWrapper(opts: {
  upstreamKubeconfig: string;
  hostname: string;
  dataDir: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
  /** More flags. */
  args?: readonly string[];
}): Promise<TestWrapper> {
  const proc = spawn(
    process.execPath,
    [
      BIN,
      'wrapper',
      '--kubeconfig',
      opts.upstreamKubeconfig,
      '--hostname',
      opts.hostname,
      '--bind-address',
      `127.0.0.1:${opts.port ?? 0}`,
      '--data-dir',
      opts.dataDir,
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 1_000_000) err = err.slice(-500_000);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  logOnFailure(`svcplane wrapper --hostname ${opts.hostname} (pid ${proc.pid ?? '?'})`, () => err, exited);
  const m = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the wrapper did not start:\n${out}\n${err}`));
    }, 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const hit = /serving node \S+ at (https:\/\/\S+?); kubeconfig: (\S+)/.exec(out);
      if (hit !== null) {
        clearTimeout(timer);
        resolve(hit);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the wrapper exited with ${code}:\n${out}\n${err}`));
    });
  });
  const url = m[1]!;
  return {
    url,
    port: Number(new URL(url).port),
    kubeconfig: m[2]!,
    proc,
    stderr: () => err,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** The first python that can import kubernetes (PATH's python3 may be a pyenv without Debian's packages). */
export function findPython(): string {
  const candidates = [process.env.SVCPLANE_PYTHON, 'python3', '/usr/bin/python3'].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  const tried: string[] = [];
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import kubernetes'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status === 0) return py;
    tried.push(`${py}: ${r.error?.message ?? r.stderr.trim().split('\n').pop()}`);
  }
  throw new Error(
    `the Python Kubernetes client is missing; run \`apt-get install -y python3-kubernetes\` (tried ${tried.join('; ')})`,
  );
}

/**
 * A feeder for a stream of concatenated JSON objects (pretty-printed or one per line): call it with each
 * chunk of text; it calls `onValue` with every complete top-level object.
 */
export function jsonObjects(onValue: (v: unknown) => void): (chunk: string) => void {
  let buf = '';
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  let i = 0;
  return (chunk) => {
    buf += chunk;
    for (; i < buf.length; i++) {
      const c = buf[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') {
        if (depth++ === 0) start = i;
      } else if (c === '}' && --depth === 0) {
        onValue(JSON.parse(buf.slice(start, i + 1)));
        buf = buf.slice(i + 1);
        i = -1;
      }
    }
    if (depth === 0) {
      buf = '';
      i = 0;
    }
  };
}
