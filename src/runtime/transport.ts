// How the runtime reaches an API server: one request in, a status and a body stream out. The
// kubeconfig transport does it over HTTPS; tests can supply their own.
import type { Readable } from 'node:stream';

export interface TransportRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, e.g. `/api/v1/namespaces/default/services?limit=500`. */
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

export interface TransportResponse {
  readonly status: number;
  /** The response body; read it to the end or destroy it. */
  readonly body: Readable;
}

export interface Transport {
  readonly server: string;
  send(req: TransportRequest): Promise<TransportResponse>;
  close(): void;
}

/** The headers every transport sends: JSON accepted, and the body's type and length when there is one. */
export function requestHeaders(req: TransportRequest, body: Buffer | undefined): Record<string, string> {
  return {
    Accept: 'application/json',
    ...(body === undefined
      ? {}
      : {
          'Content-Type': req.contentType ?? 'application/json',
          'Content-Length': String(body.length),
        }),
  };
}
