// Starts a real `svcplane up` (or `svcplane apiserver`) process on 127.0.0.1 with a free port, in a
// fresh data directory, and hands back what a client needs: URL, kubeconfig, admin token, CA. An `up`
// is handed back once its /readyz is 200 (the API and its controllers).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpsRequest } from 'node:https';
import { afterEach } from 'node:test';
import { until } from './until.js';

const BIN = new URL('../../../bin/svcplane.js', import.meta.url).pathname;

/**
 * The servers this test file has run during the current test (those still running, and those that exited
 * since the last test ended: a test that fails because its server died, or that stops its server in a
 * `finally`, still gets the log). When a test fails, the end of each one's log goes to stderr, which the
 * runner prints as comments next to the failure: CI keeps nothing else of a run.
 */
const logged = new Set<{ readonly name: string; readonly log: () => string; exited: boolean }>();
const LOG_LINES_ON_FAILURE = 60;
afterEach((t) => {
  // TestContext.passed (Node 20.12+; not in the @types this project pins).
  if ((t as { passed?: boolean }).passed === false) {
    for (const s of logged) {
      const lines = s.log().trimEnd().split('\n').slice(-LOG_LINES_ON_FAILURE);
      process.stderr.write(
        `--- ${t.name} failed; the last ${lines.length} lines of ${s.name}'s log${s.exited ? ' (it has exited)' : ''}:\n` +
          `${lines.join('\n')}\n---\n`,
      );
    }
  }
  for (const s of logged) if (s.exited) logged.delete(s);
});

/** Prints `log()`'s end when a test of this file fails while the process runs, or in the test it exits in. */
export function logOnFailure(name: string, log: () => string, exited: Promise<unknown>): void {
  const entry = { name, log, exited: false };
  logged.add(entry);
  void exited.then(() => (entry.exited = true));
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly kubeconfig: string;
  readonly token: string;
  readonly ca: string;
  readonly proc: ChildProcess;
  readonly stderr: () => string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** Stop and remove the data directory. */
  destroy(): Promise<void>;
}

export async function startUp(
  opts: { dataDir?: string; args?: string[]; command?: 'up' | 'apiserver'; env?: NodeJS.ProcessEnv } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svcplane-e2e-'));
  const command = opts.command ?? 'up';
  const proc = spawn(
    process.execPath,
    [BIN, command, '--data-dir', dataDir, '--secure-port', '0', ...(opts.args ?? [])],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not become ready:\n${out}\n${err}`)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ready at (https:\/\/\S+?);?\s/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}\n${err}`));
    });
  });
  const kubeconfig = join(dataDir, 'kubeconfig');
  const tokens = command === 'up' ? readFileSync(join(dataDir, 'pki', 'tokens.csv'), 'utf8') : '';
  const token = tokens.split(',')[0] ?? '';
  const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');
  if (command === 'up') {
    // `up` prints its ready line once the API serves; its /readyz also waits for the controllers (on their
    // own thread) to have synced. Tests start from a fully ready server.
    let last = '';
    try {
      await until(
        () => `/readyz 200 (last: ${last}):\n${out}\n${err}`,
        30_000,
        async () => {
          const r = await call({ url, token, ca }, 'GET', '/readyz', { token: null });
          last = `${r.status} ${r.text}`;
          return r.status === 200;
        },
        50,
      );
    } catch (e) {
      proc.kill('SIGKILL');
      throw e;
    }
  }
  logOnFailure(`svcplane ${command} (pid ${proc.pid ?? '?'})`, () => err, exited);
  const stop = async (): Promise<number | null> => {
    if (proc.exitCode !== null) return proc.exitCode;
    proc.kill('SIGTERM');
    return exited;
  };
  return {
    url,
    port: Number(new URL(url).port),
    dataDir,
    kubeconfig,
    token,
    ca,
    proc,
    stderr: () => err,
    stop,
    async destroy() {
      await stop();
      if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

/** One HTTPS request to the test server (admin token unless `token` is given; null for none). */
export function call(
  srv: Pick<TestServer, 'url' | 'token' | 'ca'>,
  method: string,
  path: string,
  opts: {
    body?: unknown;
    rawBody?: string | Buffer;
    contentType?: string;
    token?: string | null;
    accept?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Reply> {
  const u = new URL(path, srv.url);
  const body =
    opts.rawBody !== undefined
      ? opts.rawBody
      : opts.body === undefined
        ? undefined
        : JSON.stringify(opts.body);
  const token = opts.token === undefined ? srv.token : opts.token;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        ca: srv.ca,
        agent: new Agent({ ca: srv.ca, keepAlive: false }),
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined
            ? {}
            : {
                'Content-Type': opts.contentType ?? 'application/json',
                'Content-Length': String(Buffer.byteLength(body)),
              }),
          ...(opts.accept === undefined ? {} : { Accept: opts.accept }),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // A server killed mid-request can end the socket without 'end' or 'error'; never hang on it.
    req.on('close', () => reject(new Error('the connection closed before the response ended')));
    if (body !== undefined) req.write(body);
    req.end();
  });
}
