// The runtime's HTTP(S) transport: requests to one API server on keep-alive connections, with the TLS
// material and headers a caller supplies. kubeconfig.ts feeds it from a kubeconfig (through
// @kubernetes/client-node); a caller that already knows the server and a token uses it directly and never
// loads the kubeconfig library: `svcplane up` gives its controllers a unix socket of the server's, plain
// HTTP, so no TLS is spent between two threads of one process.
import { Agent, request as httpsRequest, type AgentOptions } from 'node:https';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import {
  requestHeaders,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

/** What every request carries: TLS material (read once, for the connection pool) and headers. */
export interface HttpCredentials {
  readonly ca?: NonNullable<AgentOptions['ca']>;
  readonly cert?: NonNullable<AgentOptions['cert']>;
  readonly key?: NonNullable<AgentOptions['key']>;
  readonly rejectUnauthorized?: boolean;
  /** e.g. `Authorization: Bearer …`. */
  readonly headers?: Record<string, string>;
}

export interface HttpTransportOptions {
  /** The server's URL (`https://127.0.0.1:6443`); plain `http:` is allowed too. */
  readonly server: string;
  /** Called before every request, so credentials that expire (exec plugins) can refresh. */
  readonly credentials: () => Promise<HttpCredentials> | HttpCredentials;
  /** A unix socket to connect to instead of the server's host and port (plain HTTP). */
  readonly socketPath?: string;
}

export function httpTransport(opts: HttpTransportOptions): Transport {
  const server = new URL(opts.server);
  const socketPath = opts.socketPath;
  const secure = server.protocol === 'https:' && socketPath === undefined;
  let agent: Agent | undefined;
  const plainAgent = new HttpAgent({ keepAlive: true });
  const connect = async (): Promise<HttpCredentials> => {
    const creds = await opts.credentials();
    if (secure) {
      agent ??= new Agent({
        keepAlive: true,
        ...(creds.ca === undefined ? {} : { ca: creds.ca }),
        ...(creds.cert === undefined ? {} : { cert: creds.cert }),
        ...(creds.key === undefined ? {} : { key: creds.key }),
        ...(creds.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: creds.rejectUnauthorized }),
      });
    }
    return creds;
  };
  const send = async (req: TransportRequest): Promise<TransportResponse> => {
    const creds = await connect();
    const u = new URL(req.path, server);
    const origin = new URL(server); // never another host, whatever the path says
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    return new Promise((resolve, reject) => {
      const r = (secure ? httpsRequest : httpRequest)(
        {
          ...(socketPath === undefined ? { host: origin.hostname, port: origin.port } : { socketPath }),
          path: u.pathname + u.search,
          method: req.method,
          agent: secure ? agent : plainAgent,
          headers: { ...creds.headers, ...requestHeaders(req, body) },
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        },
        (res) => resolve({ status: res.statusCode ?? 0, body: res }),
      );
      r.on('error', reject);
      if (body !== undefined) r.write(body);
      r.end();
    });
  };
  const stream = async (req: StreamRequest): Promise<StreamResponse> => {
    // Only ever the upstream's own host: a path that is not absolute ("//evil/x", "http://evil/") would
    // otherwise let whoever chose it send this transport's credentials elsewhere.
    if (!/^\/(?!\/)/.test(req.path))
      throw new Error(`not an absolute path: ${JSON.stringify(req.path.slice(0, 64))}`);
    const creds = await connect();
    const u = new URL(server);
    return new Promise((resolve, reject) => {
      const r = (secure ? httpsRequest : httpRequest)(
        {
          ...(socketPath === undefined ? { host: u.hostname, port: u.port } : { socketPath }),
          path: req.path,
          method: req.method,
          agent: secure ? agent : plainAgent,
          headers: { ...(req.headers as Record<string, string | string[]>), ...creds.headers },
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        },
        (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }),
      );
      r.on('error', reject);
      if (req.body === undefined) {
        r.end();
      } else {
        req.body.on('error', (err) => r.destroy(err));
        req.body.pipe(r);
      }
    });
  };
  return {
    server: server.origin,
    send,
    stream,
    close: () => {
      agent?.destroy();
      plainAgent.destroy();
    },
  };
}
