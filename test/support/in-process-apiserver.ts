// An API server for tests, in this process: the real one (startApiServer: watch cache, registry,
// allocators, HTTP handler) on the memory store, with bearer-token auth that accepts one token, and a
// runtime Client that reaches its handler over the in-process transport (no socket, no TLS on the
// client's side). It lives outside src/ because it composes two layers that may not import each other:
// runtime tests import it from here (scripts/eslint/layers.js lets test files reach test support).
//
// startApiServer still opens its HTTPS port on 127.0.0.1:0 with a throwaway certificate; nothing here
// uses it, but `server.url` works for tools that want a real endpoint.
import { randomBytes } from 'node:crypto';
import { openAPIV2Protobuf } from '../../src/api/openapi/v2-protobuf.js';
import { openAPIV3Document, openAPIV3Index } from '../../src/api/openapi/v3.js';
import { authenticate } from '../../src/apiserver/auth/authenticator.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../../src/apiserver/auth/pki.js';
import { formatTokenFileRecord, parseTokenFile } from '../../src/apiserver/auth/token-file.js';
import { SYSTEM_MASTERS } from '../../src/apiserver/auth/types.js';
import { silentLogger, type Logger } from '../../src/runtime/logger.js';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../../src/apiserver/server.js';
import { Client } from '../../src/runtime/client.js';
import { inProcessTransport } from '../../src/runtime/in-process-transport.js';
import type { Transport } from '../../src/runtime/transport.js';
import { MemoryStore } from '../../src/storage/memory/memory-store.js';

export interface InProcessApiServerOptions {
  /** The one token the server accepts (user "admin", group system:masters); default: a random one. */
  readonly token?: string;
  /** Passed to startApiServer; a small watch-cache history makes 410 Expired easy to provoke. */
  readonly watchCacheHistory?: number;
  /** Passed to startApiServer: the watch-cache history's byte budget. */
  readonly watchCacheHistoryBytes?: number;
  readonly bookmarkIntervalMs?: number;
  readonly minRequestTimeoutSeconds?: number;
  /** Passed to startApiServer: bytes a watcher may leave unread before it is closed with 410. */
  readonly maxWatchQueueBytes?: number;
  /** Passed to startApiServer: a LIST's flush window and how long it may stall. */
  readonly listWindow?: ApiServerOptions['listWindow'];
  readonly log?: Logger;
  /** Passed to startApiServer: handlers for non-resource paths under a prefix. */
  readonly mounts?: ApiServerOptions['mounts'];
  /** Authentication and authorization of its own instead of the one token and allow-all. */
  readonly auth?: Pick<
    ApiServerOptions,
    | 'authenticate'
    | 'authorize'
    | 'forbiddenMessage'
    | 'rulesFor'
    | 'authorization'
    | 'serviceAccountTokens'
    | 'reviewToken'
  >;
}

export interface InProcessApiServer {
  /** A client authenticated with the accepted token. */
  readonly client: Client;
  readonly token: string;
  readonly server: RunningApiServer;
  readonly store: MemoryStore;
  /** Another transport to the same server: another token, or none at all (null). */
  transport(token: string | null): Transport;
  /** Closes every transport handed out, shuts the server down and closes the store. */
  stop(): Promise<void>;
}

// One throwaway serving certificate per test process: key generation is the slow part of a start.
let tls: CertKeyPair | undefined;
function servingCert(): CertKeyPair {
  tls ??= issueServingCert(generateCA('svcplane-test-ca'), {
    commonName: 'svcplane-test',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
  });
  return tls;
}

export async function startInProcessApiServer(
  opts: InProcessApiServerOptions = {},
): Promise<InProcessApiServer> {
  const token = opts.token ?? randomBytes(16).toString('hex');
  const tokens = parseTokenFile(
    formatTokenFileRecord(token, { name: 'admin', uid: 'admin-uid', groups: [SYSTEM_MASTERS] }),
  );
  const store = new MemoryStore();
  const cert = servingCert();
  const options: ApiServerOptions = {
    store,
    bindAddress: '127.0.0.1',
    port: 0,
    tls: { cert: cert.certPem, key: cert.keyPem },
    authenticate: (req) => authenticate(req, { tokens }),
    authorize: () => true,
    forbiddenMessage: () => 'forbidden',
    ...opts.auth,
    openapi: {
      v3Index: () => openAPIV3Index(),
      v3Document: (path) => openAPIV3Document(path)?.json,
      v2Protobuf: () => openAPIV2Protobuf(),
    },
    version: { major: '1', minor: '33', gitVersion: 'v1.33.0+svcplane.test' },
    log: opts.log ?? silentLogger,
    allocation: {
      serviceClusterIPRange: ['10.96.0.0/12'],
      serviceNodePortRange: { base: 30000, size: 2768 },
    },
    ...(opts.watchCacheHistory === undefined ? {} : { watchCacheHistory: opts.watchCacheHistory }),
    ...(opts.watchCacheHistoryBytes === undefined
      ? {}
      : { watchCacheHistoryBytes: opts.watchCacheHistoryBytes }),
    ...(opts.bookmarkIntervalMs === undefined ? {} : { bookmarkIntervalMs: opts.bookmarkIntervalMs }),
    ...(opts.minRequestTimeoutSeconds === undefined
      ? {}
      : { minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds }),
    ...(opts.maxWatchQueueBytes === undefined ? {} : { maxWatchQueueBytes: opts.maxWatchQueueBytes }),
    ...(opts.listWindow === undefined ? {} : { listWindow: opts.listWindow }),
    ...(opts.mounts === undefined ? {} : { mounts: opts.mounts }),
  };
  let server: RunningApiServer;
  try {
    server = await startApiServer(options);
  } catch (err) {
    await store.close();
    throw err;
  }
  const transports: Transport[] = [];
  const transport = (t: string | null): Transport => {
    const tr = inProcessTransport(server.handler, t === null ? {} : { token: t });
    transports.push(tr);
    return tr;
  };
  const client = new Client(transport(token));
  let stopped: Promise<void> | undefined;
  return {
    client,
    token,
    server,
    store,
    transport,
    stop: () =>
      (stopped ??= (async () => {
        for (const t of transports) t.close();
        await server.shutdown();
        await store.close();
      })()),
  };
}
