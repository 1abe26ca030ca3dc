// A Transport that reaches an HTTP request listener (e.g. the API server's handler) in the same process,
// with no socket and no port: each request gets its own in-memory connection, a pair of linked duplex
// streams, and node:http speaks HTTP/1.1 over it on both sides (a non-listening http.Server parses the
// request, http.request parses the response). So tests go through the real wire format: headers,
// chunked streaming for watches, the listener seeing a client that went away, and backpressure.
//
// Aborting a request's signal destroys its connection; the listener's response then emits 'close' as
// it would for a dropped TCP connection. close() destroys every open connection and refuses new requests.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Duplex } from 'node:stream';
import {
  requestHeaders,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface InProcessTransportOptions {
  /** Sent as `Authorization: Bearer <token>` on every request. */
  readonly token?: string;
  /** What `transport.server` reports (default `http://in-process`); requests never leave the process. */
  readonly server?: string;
}

/**
 * One end of an in-memory connection. What is written to one end is read from the other; a write
 * completes when the other end's reader has taken it (or has room for it), so a reader that stops
 * reading stops the writer, as a full TCP window would. Destroying either end destroys both.
 * It carries the few socket methods and fields node:http touches.
 */
class ConnectionEnd extends Duplex {
  peer: ConnectionEnd | undefined;
  /** The peer's write that waits for this end's reader to want more. */
  private blockedWrite: (() => void) | undefined;
  readonly remoteAddress = '127.0.0.1';
  readonly remoteFamily = 'IPv4';
  readonly localAddress = '127.0.0.1';

  constructor(
    readonly remotePort: number,
    readonly localPort: number,
  ) {
    // A socket's default: when the peer ends its side, this side ends too.
    super({ allowHalfOpen: false });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const peer = this.peer;
    if (peer === undefined || peer.destroyed) {
      done();
      return;
    }
    if (peer.push(chunk)) done();
    else peer.blockedWrite = () => done();
  }

  override _read(): void {
    this.releaseWriter();
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.peer !== undefined && !this.peer.destroyed) this.peer.push(null);
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.releaseWriter();
    const peer = this.peer;
    if (peer !== undefined && !peer.destroyed) peer.destroy();
    done(err);
  }

  private releaseWriter(): void {
    const w = this.blockedWrite;
    this.blockedWrite = undefined;
    w?.();
  }

  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

let nextPort = 40_000;

/** Two linked ends: [client, server]. */
function connectionPair(): [ConnectionEnd, ConnectionEnd] {
  const port = nextPort++;
  if (nextPort > 65_000) nextPort = 40_000;
  const client = new ConnectionEnd(443, port);
  const server = new ConnectionEnd(port, 443);
  client.peer = server;
  server.peer = client;
  return [client, server];
}

export function inProcessTransport(
  listener: RequestListener,
  opts: InProcessTransportOptions = {},
): Transport {
  // Never listens: connections are handed to it one by one. No request or headers timeout, as
  // the API server sets none for its watches either.
  const server: Server = createServer({ requestTimeout: 0, keepAlive: false }, listener);
  const open = new Set<ConnectionEnd>();
  let closed = false;

  const send = (req: TransportRequest): Promise<TransportResponse> => {
    if (closed) return Promise.reject(new Error('the in-process transport is closed'));
    const [clientEnd, serverEnd] = connectionPair();
    open.add(clientEnd);
    clientEnd.once('close', () => open.delete(clientEnd));
    server.emit('connection', serverEnd);
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    return new Promise((resolve, reject) => {
      const r = httpRequest(
        {
          // Without an agent http.request uses this connection once and closes it after the response.
          createConnection: () => clientEnd,
          host: 'in-process',
          path: req.path,
          method: req.method,
          headers: {
            ...requestHeaders(req, body),
            ...(opts.token === undefined ? {} : { Authorization: `Bearer ${opts.token}` }),
          },
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        },
        (res) => resolve({ status: res.statusCode ?? 0, body: res }),
      );
      r.on('error', (err) => {
        clientEnd.destroy();
        reject(err);
      });
      if (body !== undefined) r.write(body);
      r.end();
    });
  };

  return {
    server: opts.server ?? 'http://in-process',
    send,
    close: () => {
      closed = true;
      for (const c of [...open]) c.destroy();
    },
  };
}
