// Reading a kubeconfig with @kubernetes/client-node, for the two places that may import it: the child
// process that answers for static credentials (kubeconfig-child.ts) and the worker thread that stays for
// credentials that change (kubeconfig-worker.ts). Importing client-node costs ~70 MiB of RSS, so it never
// happens on a caller's main thread (kubeconfig.ts).
import type { RequestOptions } from 'node:https';
import type { HttpCredentials } from './http-transport.js';

/** The line prefix of the child process's answer on its stdout (what a dependency prints is not it). */
export const ANSWER_PREFIX = 'svcplane-kubeconfig-answer ';

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
      /** From the child process: the credentials change, so a worker thread must stay to answer. */
      readonly dynamic?: true;
    }
  | { readonly ok: false; readonly error: WireError };

/** A request for credentials (dynamic users only) and its answer, matched by id. */
export interface CredentialsRequest {
  readonly id: number;
}
export type CredentialsReply = CredentialsAnswer & { readonly id: number };

export const wireError = (err: unknown): WireError => {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
};

export interface Loaded {
  readonly getCurrentCluster: () => { readonly server: string } | null;
  readonly applyToHTTPSOptions: (opts: RequestOptions) => Promise<void>;
}

export const credentialsOf = async (kc: Loaded): Promise<CredentialsAnswer> => {
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

/**
 * Loads the kubeconfig (a file, or $KUBECONFIG, ~/.kube/config, in-cluster) and answers for it. Static
 * credentials (a token, a token file, client certificates) come with the answer; for credentials that
 * change (an exec plugin, an auth provider, the in-cluster token file client-node re-reads) the loaded
 * config is returned to ask again, unless `probe` says not to run them (the child process only reports
 * that they change: the worker runs them).
 */
export async function loadAnswer(
  path: string | undefined,
  context: string | undefined,
  probe = false,
): Promise<{ answer: LoadAnswer; dynamic?: Loaded }> {
  try {
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
    const answer: LoadAnswer = {
      ok: true,
      server: cluster.server,
      namespace: namespace === '' ? undefined : namespace,
      ...(changes ? (probe ? { dynamic: true } : {}) : { credentials: await credentialsOf(kc) }),
    };
    return changes && !probe ? { answer, dynamic: kc } : { answer };
  } catch (err) {
    return { answer: { ok: false, error: wireError(err) } };
  }
}
