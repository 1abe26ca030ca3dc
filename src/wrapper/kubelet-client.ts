// The wrapper's reader of its node's kubelet: `GET /pods` over HTTPS, as kube-apiserver talks to kubelets
// (--kubelet-certificate-authority, --kubelet-client-certificate/--kubelet-client-key; without a client
// certificate, the bearer token of the wrapper's --kubeconfig). Without a CA the kubelet's serving
// certificate is not verified, as kube-apiserver does without --kubelet-certificate-authority.
import { request } from 'node:https';

export interface KubeletClientOptions {
  /** `https://HOST:PORT` of the kubelet. */
  readonly url: string;
  /** PEM: verifies the kubelet's serving certificate; without it the certificate is not verified. */
  readonly ca?: string;
  /** PEM client certificate and key, both or neither. */
  readonly cert?: string;
  readonly key?: string;
  /** The `Authorization` header to send when there is no client certificate (`Bearer …`), if any. */
  readonly authorization?: () => Promise<string | undefined>;
  /** Per request (default 5 s). */
  readonly timeoutMs?: number;
}

/** Reads one URL of the kubelet. */
export type KubeletRead = (signal: AbortSignal) => Promise<unknown>;

/**
 * A reader of the kubelet's `/pods`: resolves to the parsed body of a 2xx answer; rejects with an Error
 * that says why otherwise (`no answer in N ms`, `no answer (ECONNREFUSED)`, `status 401`, `not JSON`).
 */
export function kubeletPodsReader(o: KubeletClientOptions): KubeletRead {
  const url = new URL('/pods', o.url);
  const timeoutMs = o.timeoutMs ?? 5_000;
  return async (signal) => {
    const authorization = o.cert === undefined ? await o.authorization?.() : undefined;
    return new Promise<unknown>((resolve, reject) => {
      const req = request(url, {
        method: 'GET',
        headers: {
          Accept: 'application/json',
          ...(authorization === undefined ? {} : { Authorization: authorization }),
        },
        ...(o.ca === undefined ? { rejectUnauthorized: false } : { ca: o.ca }),
        ...(o.cert === undefined || o.key === undefined ? {} : { cert: o.cert, key: o.key }),
        signal,
        timeout: timeoutMs,
      });
      req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      req.on('error', (err: NodeJS.ErrnoException) =>
        reject(
          err.message.startsWith('no answer')
            ? err
            : new Error(`no answer (${err.code ?? err.message})`, { cause: err }),
        ),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) {
            reject(new Error(`status ${status}`));
            return;
          }
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error('not JSON'));
          }
        });
      });
      req.end();
    });
  };
}
