// A kubeconfig (file, $KUBECONFIG or the default locations) becomes an HTTPS transport with its CA, client
// certificate, bearer token or exec plugin. Everything else in the runtime talks to the Transport
// interface, so the same controllers run against svcplane's apiserver, any real kube-apiserver, or an
// in-memory fake in tests.
//
// @kubernetes/client-node reads the kubeconfig, but never in this process's main thread: importing it
// costs ~70 MiB of RSS (its generated API models), more than the node-local wrapper may use in all.
// Loading stays synchronous for the callers (a bad file or context throws here, as it always has):
// - first a child process (kubeconfig-child.ts) loads it and prints its answer. Static credentials come
//   with it, and client-node's memory leaves with the process (a worker thread that ended left ~28 MiB
//   behind: the allocator keeps what it freed);
// - credentials that change (exec plugins, auth providers, the in-cluster token) need client-node for as
//   long as the process runs: a worker thread (kubeconfig-worker.ts) loads the kubeconfig again and stays,
//   unref'd so it never holds the process open, and is asked before each request, as the transport always
//   has. This thread blocks on Atomics.wait until the worker has answered. The worker is also the way
//   when the child process cannot be run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  MessageChannel,
  receiveMessageOnPort,
  SHARE_ENV,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { httpTransport, type HttpCredentials } from './http-transport.js';
import {
  ANSWER_PREFIX,
  type CredentialsAnswer,
  type CredentialsReply,
  type CredentialsRequest,
  type LoadAnswer,
  type WireError,
} from './kubeconfig-load.js';
import type { KubeconfigWorkerData } from './kubeconfig-worker.js';
import type { Transport } from './transport.js';

export interface KubeconfigTransportOptions {
  /** A kubeconfig file; default: $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  readonly path?: string;
  /** Overrides the current context. */
  readonly context?: string;
}

export interface KubeconfigTransport extends Transport {
  /** The current context's namespace, when it names one (what kubectl uses without -n). */
  readonly namespace: string | undefined;
  /** The `Authorization` header the next request would carry (a bearer token), if the kubeconfig has one. */
  authorization(): Promise<string | undefined>;
}

/** How long loading may block before it is given up: client-node takes well under a second to import. */
const LOAD_TIMEOUT_MS = 60_000;

// Compiled, this is dist/runtime/kubeconfig.js next to kubeconfig-worker.js; run from the sources through
// tsx it is kubeconfig.ts, and the worker is the .ts file.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './kubeconfig-worker.ts' : './kubeconfig-worker.js',
  import.meta.url,
);

// What the thread runs first. It imports the worker module, and turns a failure to do so (a missing file,
// a syntax error) into an answer: the caller, blocked on Atomics.wait, would otherwise hear nothing. Under
// tsx a .ts worker needs tsx's hooks, which Node 20 does not pass on to worker threads (tsx's `--import`
// registers itself on the main thread only there), so the bootstrap registers them itself.
const BOOTSTRAP = `
import { workerData } from 'node:worker_threads';
const { module, tsx, port, signal } = workerData;
// A worker that ends before it has answered (process.exit in a dependency) says so, instead of leaving the
// caller blocked until the timeout.
process.on('exit', (code) => {
  if (Atomics.load(signal, 0) !== 0) return;
  port.postMessage({ ok: false, error: { name: 'Error', message: 'the kubeconfig worker exited (code ' + code + ') before answering' } });
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
try {
  if (tsx !== undefined) (await import(tsx)).register();
  await import(module);
} catch (err) {
  if (Atomics.load(signal, 0) === 0) {
    port.postMessage({ ok: false, error: { name: 'Error', message: String(err?.message ?? err) } });
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  }
}
`;
const BOOTSTRAP_URL = new URL(`data:text/javascript,${encodeURIComponent(BOOTSTRAP)}`);

/** tsx's API, when the worker is a .ts file (only ever under tsx, so tsx is installed). */
const tsxApi = (): string | undefined =>
  WORKER_URL.pathname.endsWith('.ts') ? import.meta.resolve('tsx/esm/api') : undefined;

const workers = new Set<Worker>();
/** How many kubeconfig workers are running (for tests: a static kubeconfig leaves none behind). */
export const liveKubeconfigWorkers = (): number => workers.size;
/** For tests: ends every kubeconfig worker as a crash would. */
export async function crashKubeconfigWorkers(): Promise<void> {
  await Promise.all([...workers].map((w) => w.terminate()));
}

const toError = (e: WireError): Error => {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
};

// Structured clone turns the worker's Buffers into plain Uint8Arrays; TLS wants Buffers (or strings).
const asBuffer = <T>(v: T): T => {
  const one = (x: unknown): unknown =>
    x instanceof Uint8Array && !Buffer.isBuffer(x) ? Buffer.from(x.buffer, x.byteOffset, x.byteLength) : x;
  return (Array.isArray(v) ? v.map(one) : one(v)) as T;
};
const received = (c: HttpCredentials): HttpCredentials => ({
  ...c,
  ...(c.ca === undefined ? {} : { ca: asBuffer(c.ca) }),
  ...(c.cert === undefined ? {} : { cert: asBuffer(c.cert) }),
  ...(c.key === undefined ? {} : { key: asBuffer(c.key) }),
});
const credentialsFrom = (a: CredentialsAnswer): HttpCredentials => {
  if (!a.ok) throw toError(a.error);
  return received(a.credentials);
};

/** A loaded kubeconfig: where the server is, and the credentials to reach it with. */
export interface LoadedKubeconfig {
  /** The current cluster's server URL. */
  readonly server: string;
  /** The current context's namespace, when it names one. */
  readonly namespace: string | undefined;
  /** The credentials for the next request: fixed ones, or fresh from the worker (exec plugins etc.). */
  credentials(): Promise<HttpCredentials>;
  /** Stops the worker, if one is still running. */
  close(): void;
}

// Compiled, kubeconfig-child.js; from the sources, the .ts file under tsx (as the worker).
const CHILD_PATH = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.ts') ? './kubeconfig-child.ts' : './kubeconfig-child.js',
    import.meta.url,
  ),
);

/** Counts the child processes run (for tests). */
let childRuns = 0;
export const kubeconfigChildRuns = (): number => childRuns;

/**
 * The child process's answer, or undefined when it could not be run or said nothing (then the worker
 * thread loads the kubeconfig instead).
 */
function childAnswer(opts: KubeconfigTransportOptions): LoadAnswer | undefined {
  const tsx = tsxApi();
  childRuns++;
  const r = spawnSync(
    process.execPath,
    [
      ...(tsx === undefined ? [] : ['--import', import.meta.resolve('tsx')]),
      CHILD_PATH,
      JSON.stringify({ path: opts.path, context: opts.context }),
    ],
    { encoding: 'utf8', timeout: LOAD_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'], env: process.env },
  );
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith(ANSWER_PREFIX));
  if (line === undefined) return undefined;
  try {
    return JSON.parse(line.slice(ANSWER_PREFIX.length), (_k, v: unknown) =>
      v !== null && typeof v === 'object' && typeof (v as { $base64?: unknown }).$base64 === 'string'
        ? Buffer.from((v as { $base64: string }).$base64, 'base64')
        : v,
    ) as LoadAnswer;
  } catch {
    return undefined;
  }
}

/**
 * Loads a kubeconfig (a child process first, a worker thread for credentials that change), blocking until
 * it is read. Throws what client-node throws (a missing or malformed file), and 'the kubeconfig has no
 * current cluster' (also for an unknown context).
 */
export function loadKubeconfig(opts: KubeconfigTransportOptions = {}): LoadedKubeconfig {
  const first = childAnswer(opts);
  if (first !== undefined && !(first.ok && first.dynamic === true)) {
    if (!first.ok) throw toError(first.error);
    const loaded = { server: first.server, namespace: first.namespace };
    if (first.credentials !== undefined) {
      const fixed = first.credentials;
      return { ...loaded, credentials: async () => credentialsFrom(fixed), close: () => {} };
    }
  }
  return loadInWorker(opts);
}

/** Loads a kubeconfig in a worker thread, blocking until it has answered. */
function loadInWorker(opts: KubeconfigTransportOptions): LoadedKubeconfig {
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1: port, port2 } = new MessageChannel();
  const data: KubeconfigWorkerData = {
    ...(opts.path === undefined ? {} : { path: opts.path }),
    ...(opts.context === undefined ? {} : { context: opts.context }),
    port: port2,
    signal,
  };
  const worker = new Worker(BOOTSTRAP_URL, {
    workerData: { ...data, module: WORKER_URL.href, tsx: tsxApi() },
    transferList: [port2],
    env: SHARE_ENV, // $KUBECONFIG, $HOME and what exec plugins inherit are this process's, as they were
  });
  workers.add(worker);
  worker.once('exit', () => workers.delete(worker));
  worker.unref();

  const deadline = Date.now() + LOAD_TIMEOUT_MS;
  while (Atomics.load(signal, 0) === 0) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    Atomics.wait(signal, 0, 0, left);
  }
  const answer = receiveMessageOnPort(port)?.message as LoadAnswer | undefined;
  if (answer === undefined || !answer.ok || answer.credentials !== undefined) {
    // Done with the worker: whatever it might still report is of no use to anyone.
    worker.on('error', () => {});
    port.close();
    void worker.terminate();
  }
  if (answer === undefined) throw new Error('the kubeconfig worker did not answer');
  if (!answer.ok) throw toError(answer.error);
  const loaded = { server: answer.server, namespace: answer.namespace };
  if (answer.credentials !== undefined) {
    const fixed = answer.credentials;
    return { ...loaded, credentials: async () => credentialsFrom(fixed), close: () => {} };
  }
  return { ...loaded, ...askWorker(worker, port) };
}

/** Credentials from a worker that stays: one request per call, the worker ref'd only while one is out. */
function askWorker(worker: Worker, port: MessagePort): Pick<LoadedKubeconfig, 'credentials' | 'close'> {
  const pending = new Map<number, { resolve: (c: HttpCredentials) => void; reject: (e: unknown) => void }>();
  let nextId = 0;
  let gone: Error | undefined;
  const idle = (): void => {
    if (pending.size > 0) return;
    worker.unref();
    port.unref();
  };
  const fail = (err: Error): void => {
    gone ??= err;
    for (const p of pending.values()) p.reject(gone);
    pending.clear();
    idle();
  };
  port.on('message', (reply: CredentialsReply) => {
    const p = pending.get(reply.id);
    if (p === undefined) return;
    pending.delete(reply.id);
    try {
      p.resolve(credentialsFrom(reply));
    } catch (err) {
      p.reject(err);
    }
    idle();
  });
  port.unref(); // listening refs the port; only an outstanding request may keep the process up
  const died = (err: Error): Error => Object.assign(err, { workerDied: true });
  worker.on('error', (err) => fail(died(err)));
  worker.on('exit', (code) => fail(died(new Error(`the kubeconfig worker exited (code ${code})`))));
  return {
    credentials: () =>
      new Promise<HttpCredentials>((resolve, reject) => {
        if (gone !== undefined) return reject(gone);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.ref();
        port.ref();
        port.postMessage({ id } satisfies CredentialsRequest);
      }),
    close: () => {
      fail(new Error('the kubeconfig transport is closed'));
      port.close();
      void worker.terminate();
    },
  };
}

/** The worker that answers for exec plugins and auth providers died (not closed): load it again. */
const workerDied = (err: unknown): boolean => (err as { workerDied?: boolean } | null)?.workerDied === true;

export function kubeconfigTransport(opts: KubeconfigTransportOptions = {}): KubeconfigTransport {
  let kc = loadKubeconfig(opts);
  const credentials = async (): Promise<HttpCredentials> => {
    try {
      return await kc.credentials();
    } catch (err) {
      if (!workerDied(err)) throw err;
      // A long-running agent outlives a crashed worker: a fresh one, as at the start (blocking as then).
      kc = loadKubeconfig(opts);
      return kc.credentials();
    }
  };
  const transport = httpTransport({ server: kc.server, credentials });
  return {
    ...transport,
    namespace: kc.namespace,
    authorization: async () => (await credentials()).headers?.['Authorization'],
    close: () => {
      transport.close();
      kc.close();
    },
  };
}
