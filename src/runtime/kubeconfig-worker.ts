// The worker thread behind kubeconfig.ts, and the only module that loads @kubernetes/client-node: its
// generated API models cost ~70 MiB of RSS once imported, more than the node-local wrapper's whole budget.
// Loaded here, they live in this thread's heap and go when the thread does. The thread loads the kubeconfig
// (a file, or $KUBECONFIG, ~/.kube/config, in-cluster), answers once through `port` and wakes the blocked
// caller through `signal`. Static credentials (a token, a token file, client certificates) come with that
// answer and the thread ends; credentials that change (an exec plugin, an auth provider, the in-cluster
// token file client-node re-reads every minute) are asked for again on `port` before each request.
import type { RequestOptions } from 'node:https';
import { workerData, type MessagePort } from 'node:worker_threads';
import type { HttpCredentials } from './http-transport.js';

/** What kubeconfig.ts hands the thread. */
export interface KubeconfigWorkerData {
  readonly path?: string;
  readonly context?: string;
  /** Answers (the first one read synchronously with receiveMessageOnPort) and, when dynamic, requests. */
  readonly port: MessagePort;
  /** Set to 1 and notified once the first answer is on `port`. */
  readonly signal: Int32Array;
}

/** An error as it crosses the thread boundary: structured clone keeps neither `code` nor the class. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
}

export type CredentialsAnswer =
  | { readonly ok: true; readonly credentials: HttpCredentials }
  | { readonly ok: false; readonly error: WireError };

export type LoadAnswer =
  | {
      readonly ok: true;
      readonly server: string;
      readonly namespace: string | undefined;
      /** Present when the credentials are static; absent when they must be asked for per request. */
      readonly credentials?: CredentialsAnswer;
    }
  | { readonly ok: false; readonly error: WireError };

/** A request for credentials (dynamic users only) and its answer, matched by id. */
export interface CredentialsRequest {
  readonly id: number;
}
export type CredentialsReply = CredentialsAnswer & { readonly id: number };

const wireError = (err: unknown): WireError => {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
};

interface Loaded {
  readonly getCurrentCluster: () => { readonly server: string } | null;
  readonly applyToHTTPSOptions: (opts: RequestOptions) => Promise<void>;
}

const credentialsOf = async (kc: Loaded): Promise<CredentialsAnswer> => {
  try {
    const base: RequestOptions = {};
    await kc.applyToHTTPSOptions(base); // CA, client cert, token (exec plugins refresh theirs here)
    return {
      ok: true,
      credentials: {
        ...(base.ca === undefined ? {} : { ca: base.ca }),
        ...(base.cert === undefined ? {} : { cert: base.cert }),
        ...(base.key === undefined ? {} : { key: base.key }),
        ...(base.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: base.rejectUnauthorized }),
        ...(base.headers === undefined ? {} : { headers: base.headers as Record<string, string> }),
      },
    };
  } catch (err) {
    return { ok: false, error: wireError(err) };
  }
};

const { path, context, port, signal } = workerData as KubeconfigWorkerData;
let answer: LoadAnswer;
let dynamic: Loaded | undefined;
try {
  // Imported here, not at the top, so that a failure to load it is an answer rather than a thread that
  // dies before it can say why (the caller is blocked until it hears from us).
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (path !== undefined) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (context !== undefined) {
    // As kubectl says it; client-node would only find no current cluster further on.
    if (kc.getContextObject(context) === null) throw new Error(`context "${context}" does not exist`);
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  // client-node's authenticators (exec, azure, gcp, oidc, the in-cluster tokenFile) all key on one of
  // these two; anything else (token, token-file read at load, certificates, basic auth) never changes.
  const user = kc.getCurrentUser();
  const changes = user !== null && (Boolean(user.exec) || Boolean(user.authProvider));
  if (changes) dynamic = kc;
  answer = {
    ok: true,
    server: cluster.server,
    namespace: namespace === '' ? undefined : namespace,
    ...(changes ? {} : { credentials: await credentialsOf(kc) }),
  };
} catch (err) {
  answer = { ok: false, error: wireError(err) };
}
port.postMessage(answer);
Atomics.store(signal, 0, 1);
Atomics.notify(signal, 0);

if (dynamic === undefined) {
  port.close(); // nothing left to do: the thread ends and its heap (client-node's with it) is freed
} else {
  const kc = dynamic;
  port.on('message', (req: CredentialsRequest) => {
    void credentialsOf(kc).then((a) => port.postMessage({ ...a, id: req.id } satisfies CredentialsReply));
  });
}
