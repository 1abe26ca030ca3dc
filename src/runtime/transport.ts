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

/** A request passed through as it is: any method, the caller's headers, a streamed body. */
export interface StreamRequest {
  readonly method: string;
  /** Path and query, as the client sent them. */
  readonly path: string;
  /** Sent as given (the transport's own credentials win); an array sends the header once per value. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** Piped to the server; none for a request without a body. */
  readonly body?: Readable;
  readonly signal?: AbortSignal;
}

export interface StreamResponse {
  readonly status: number;
  /** As node:http reports them: lower-case names; set-cookie and repeated headers as arrays. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The response body; read it to the end or destroy it. */
  readonly body: Readable;
}

export interface Transport {
  readonly server: string;
  send(req: TransportRequest): Promise<TransportResponse>;
  /** Passes a request through with its own method, headers and body (transports that can). */
  stream?(req: StreamRequest): Promise<StreamResponse>;
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
