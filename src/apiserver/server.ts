// The API server process: watch cache + registry + HTTPS handler on one port, with the system
// namespaces, namespace lifecycle, and a graceful shutdown (stop accepting, end watches cleanly,
// finish in-flight requests, stop the cache; the caller then closes the store).
import { parseCertificateRequest } from './auth/pki.js';
import type { ValidationOptions } from '../api/validation/options.js';
import { connect, type Socket } from 'node:net';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import { chmodSync, rmSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import type { Store } from '../storage/store.js';
import type { AuthenticationRequest, AuthenticationResult } from './auth/authenticator.js';
import { cachedObjectLookup } from './auth/cached-lookup.js';
import type { ObjectLookup, ServiceAccountTokens } from './auth/service-account-tokens.js';
import type { TokenReviewResult } from './auth/token-review.js';
import { createHandler } from './http/handler.js';
import type { HandlerDeps, ReadyCheck } from './http/types.js';
import { WatchRegistry } from './http/watch.js';
import { listenTls, type TlsListener } from './http/listen.js';
import { listen } from '../runtime/http-endpoint.js';
import { ApiMetrics } from './metrics.js';
import { NamespaceLifecycle, ensureSystemNamespaces } from './namespace-lifecycle.js';
import { Registry } from './registry/registry.js';
import { scanUndecodable } from './undecodable-scan.js';
import { WatchCache } from './watch-cache/watch-cache.js';
import { RESOURCES, resourceId } from '../api/resources.js';
import { KubernetesServiceController } from './allocation/kubernetes-service.js';
import { AllocationMetrics } from './allocation/metrics.js';
import { rangeAllocations } from './allocation/range-view.js';
import { AllocationRepair } from './allocation/repair.js';
import { ServiceAllocators, type AllocationConfig } from './allocation/service-allocation.js';
import { EventRecorder } from './events.js';
import { errText } from '../api/err-text.js';
import { forbiddenMessage } from './auth/forbidden-message.js';
import type { ServerAuthorization } from './auth/modes.js';
import { composeHooks } from './registry/compose-hooks.js';

/** The options the HTTP handler takes as they are given (HandlerDeps), and the server's own. */
export interface ApiServerOptions
  extends
    Partial<Pick<HandlerDeps, 'authorize' | 'rulesFor' | 'forbiddenMessage'>>,
    Pick<HandlerDeps, 'openapi' | 'version' | 'log'> {
  /**
   * The authorization chain, built once the watch cache has loaded (modes such as RBAC answer from the
   * server's own objects); it replaces authorize, rulesFor and forbiddenMessage, and adds its modes'
   * write checks to the registry. Without it, authorize and forbiddenMessage must be given.
   */
  readonly authorization?: (cache: WatchCache) => ServerAuthorization;
  readonly store: Store;
  readonly bindAddress: string;
  readonly port: number;
  readonly tls: { readonly cert: string; readonly key: string; readonly clientCA?: string };
  /**
   * Decides who a request is: from its Authorization header or its verified client certificate;
   * `objects` reads the server's cache (for the ServiceAccount and bound object a token names).
   */
  readonly authenticate: (
    req: AuthenticationRequest,
    objects: ObjectLookup,
  ) => AuthenticationResult | Promise<AuthenticationResult>;
  /** ServiceAccount tokens: the TokenRequest subresource and the issuer's discovery documents. */
  readonly serviceAccountTokens?: ServiceAccountTokens;
  /**
   * Answers TokenReviews with the bearer-token part of `authenticate` (auth/token-review.ts); `objects`
   * as there. Without it a TokenReview is answered as it came.
   */
  readonly reviewToken?: (
    token: string,
    audiences: readonly string[],
    objects: ObjectLookup,
  ) => Promise<TokenReviewResult>;
  /** ClusterIP and NodePort ranges; the repair loops; the kubernetes Service. */
  readonly allocation: AllocationConfig & {
    /** --repair-interval (default 3 minutes). */
    readonly repairIntervalMs?: number;
    /** The address the kubernetes Endpoints name for this apiserver (default: the bind address). */
    readonly advertiseAddress?: string;
    /** How often the kubernetes Service and Endpoints are reconciled (default 10 s). */
    readonly endpointIntervalMs?: number;
  };
  readonly bookmarkIntervalMs?: number;
  /**
   * Also serve the API as plain HTTP on this unix socket (mode 0600, replaced if a stale one is there),
   * for clients in the same process or on the same host that should not pay for TLS: `svcplane up`'s
   * controllers. Requests on it authenticate by token like any other.
   */
  readonly unixSocket?: string;
  readonly readyChecks?: readonly ReadyCheck[];
  readonly extraMetrics?: () => Promise<string>;
  readonly mounts?: HandlerDeps['mounts'];
  readonly maxWatchQueueBytes?: number;
  /** A LIST's flush window (HandlerDeps.listWindow); tests shorten its stall timeout. */
  readonly listWindow?: HandlerDeps['listWindow'];
  readonly minRequestTimeoutSeconds?: number;
  readonly watchCacheHistory?: number;
  /** At most this many bytes of JSON in the watch cache's history (default API_HISTORY_BYTES). */
  readonly watchCacheHistoryBytes?: number;
  /** What validation accepts beyond kube-apiserver's rules (--allow-loopback-endpoints). */
  readonly validation?: ValidationOptions;
}

export interface RunningApiServer {
  readonly url: string;
  readonly port: number;
  readonly registry: Registry;
  readonly cache: WatchCache;
  readonly metrics: ApiMetrics;
  /**
   * The request listener the HTTPS server runs, for serving the same API in-process (tests hand it to
   * src/runtime/in-process-transport.ts). Requests that reach it outside TLS carry no client certificate.
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The ClusterIP/NodePort allocators and their repair (a pass can be run on demand). */
  readonly allocation: { readonly allocators: ServiceAllocators; readonly repair: AllocationRepair };
  /** Graceful: stops accepting, ends watches, waits for in-flight requests, stops the cache. */
  shutdown(): Promise<void>;
}

/**
 * The watch cache keeps at most 10,000 events for watches to resume from, and at most this much JSON
 * counted over them: each event counts its object and the version it replaced (a version two events
 * share counts twice, so the history keeps at most this much alive). With a count alone, large objects
 * under churn (an Endpoints of a thousand addresses rewritten on every pod change) let the history grow
 * to gigabytes. Objects up to about 6 KiB still fill the 10,000 events; larger ones shorten the window,
 * and a watcher resuming from before it gets 410 Expired and relists, as from kube-apiserver's cache.
 */
export const API_HISTORY_BYTES = 128 * 2 ** 20;

/** A wildcard bind address is not an address anyone can reach; loopback is. */
const advertisable = (bind: string): string =>
  bind === '0.0.0.0' ? '127.0.0.1' : bind === '::' ? '::1' : bind;

/** The handler's authorization, from the chain (opts.authorization) or as given. */
function authorizationOf(
  opts: ApiServerOptions,
  cache: WatchCache,
): Pick<HandlerDeps, 'authorize' | 'rulesFor' | 'forbiddenMessage'> &
  Pick<ServerAuthorization, 'registryHooks' | 'onStart'> {
  if (opts.authorization !== undefined) {
    const { authorizer, rules, registryHooks, onStart } = opts.authorization(cache);
    return {
      authorize: (attrs) => authorizer(attrs).decision === 'allow',
      rulesFor: rules,
      forbiddenMessage: (attrs) => forbiddenMessage(attrs, authorizer(attrs).reason),
      registryHooks,
      onStart,
    };
  }
  if (opts.authorize === undefined || opts.forbiddenMessage === undefined)
    throw new Error('startApiServer: authorization, or authorize and forbiddenMessage, must be given');
  return {
    authorize: opts.authorize,
    forbiddenMessage: opts.forbiddenMessage,
    ...(opts.rulesFor === undefined ? {} : { rulesFor: opts.rulesFor }),
    registryHooks: [],
    onStart: async () => {},
  };
}

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const log = opts.log;
  const metrics = new ApiMetrics();
  if (opts.store.retries !== undefined) metrics.countStoreRetries(opts.store);
  const cache = new WatchCache(opts.store, {
    ...(opts.watchCacheHistory === undefined ? {} : { historySize: opts.watchCacheHistory }),
    historyBytes: opts.watchCacheHistoryBytes ?? API_HISTORY_BYTES,
    log: (msg, fields) => log.warn(msg, fields),
  });
  const allocMetrics = new AllocationMetrics(metrics.registry);
  const allocators = new ServiceAllocators(opts.store, opts.allocation, log, allocMetrics);
  metrics.storageObjects.reset();
  const collectObjects = (): void => {
    for (const r of RESOURCES) metrics.storageObjects.set({ resource: resourceId(r) }, cache.count(r));
  };
  cache.start();
  await cache.ready;
  const listWarnings = scanUndecodable(cache, log);
  const authz = authorizationOf(opts, cache);
  const registry = new Registry(opts.store, cache, {
    hooks: composeHooks([...authz.registryHooks, allocators.hooks()]),
    // CertificateSigningRequests' spec.request is parsed and its signature checked, as upstream.
    validation: { parseCertificateRequest, ...opts.validation },
    // Approving and signing CertificateSigningRequests ask the chain about signers.
    authorize: authz.authorize,
  });
  collectObjects();
  cache.onBatch = () => collectObjects();
  await ensureSystemNamespaces(registry);
  await allocators.start();
  // The repair passes run once before any write is accepted; a failed first pass fails the start.
  const instance = `${opts.bindAddress}:${opts.port}`;
  const repair = new AllocationRepair(
    opts.store,
    allocators,
    new EventRecorder(registry, 'ipallocator-repair-controller', instance, log),
    new EventRecorder(registry, 'portallocator-repair-controller', instance, log),
    log,
    allocMetrics,
  );
  try {
    const first = await repair.runOnce();
    const problems = first.clusterIPs.problems.length + first.nodePorts.problems.length;
    if (problems > 0) log.warn("allocation repair found problems; see the Services' events", { problems });
  } catch (err) {
    await allocators.stop();
    await cache.stop();
    throw new Error(`unable to repair the service IP and node port allocations: ${String(err)}`, {
      cause: err,
    });
  }
  const lifecycle = new NamespaceLifecycle(registry, cache, log);
  await lifecycle.start();

  const watches = new WatchRegistry();
  let shuttingDown = false;
  let address = `${opts.bindAddress}:${opts.port}`;
  const objects = cachedObjectLookup(cache);
  const handler = createHandler({
    registry,
    cache,
    metrics,
    log,
    authenticate: (req: IncomingMessage) => {
      const sock = req.socket as TLSSocket;
      const peer = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate() : undefined;
      return opts.authenticate(
        {
          authorization: req.headers.authorization,
          peerCertificate: peer as AuthenticationRequest['peerCertificate'],
          peerCertificateVerified: sock.authorized === true,
        },
        objects,
      );
    },
    ...(opts.serviceAccountTokens === undefined ? {} : { serviceAccountTokens: opts.serviceAccountTokens }),
    ...(opts.reviewToken === undefined
      ? {}
      : { reviewToken: (token: string, auds: readonly string[]) => opts.reviewToken!(token, auds, objects) }),
    authorize: authz.authorize,
    ...(authz.rulesFor === undefined ? {} : { rulesFor: authz.rulesFor }),
    forbiddenMessage: authz.forbiddenMessage,
    openapi: opts.openapi,
    listWarnings,
    version: opts.version,
    serverAddress: () => address,
    watches,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 30_000,
    maxWatchQueueBytes: opts.maxWatchQueueBytes ?? 16 * 1024 * 1024,
    ...(opts.listWindow === undefined ? {} : { listWindow: opts.listWindow }),
    minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds ?? 1800,
    ready: () => !shuttingDown && cache.isHealthy,
    ...(opts.readyChecks === undefined ? {} : { readyChecks: opts.readyChecks }),
    ...(opts.extraMetrics === undefined ? {} : { extraMetrics: opts.extraMetrics }),
    ...(opts.mounts === undefined ? {} : { mounts: opts.mounts }),
    rangeAllocations: () => rangeAllocations(allocators),
  });

  let listener: TlsListener;
  try {
    listener = await listenTls({ handler, tls: opts.tls, bindAddress: opts.bindAddress, port: opts.port });
  } catch (err) {
    lifecycle.stop();
    await allocators.stop();
    await cache.stop();
    throw err;
  }
  const { https, front, sockets } = listener;
  let local: HttpServer | undefined;
  if (opts.unixSocket !== undefined) {
    try {
      local = await listenUnix(opts.unixSocket, handler, sockets);
    } catch (err) {
      front.close();
      lifecycle.stop();
      await allocators.stop();
      await cache.stop();
      throw new Error(`cannot serve on ${opts.unixSocket}: ${errText(err)}`, {
        cause: err,
      });
    }
  }
  // The modes' start steps (RBAC's bootstrap policy) run once the server listens, as kube-apiserver's
  // post-start hooks do: a server that cannot listen writes nothing, and it is not ready before they end.
  try {
    await authz.onStart(registry, log);
  } catch (err) {
    local?.close();
    front.close();
    lifecycle.stop();
    await allocators.stop();
    await cache.stop();
    throw err;
  }
  const port = listener.port;
  const host = opts.bindAddress.includes(':') ? `[${opts.bindAddress}]` : opts.bindAddress;
  address = `${host}:${port}`;
  const url = `https://${address}`;
  repair.start(opts.allocation.repairIntervalMs ?? 180_000);
  const kubernetesService = new KubernetesServiceController(
    registry,
    opts.store,
    {
      primaryRange: allocators.ipRanges[0]!,
      advertiseAddress: opts.allocation.advertiseAddress ?? advertisable(opts.bindAddress),
      securePort: port,
      ...(opts.allocation.endpointIntervalMs === undefined
        ? {}
        : { intervalMs: opts.allocation.endpointIntervalMs }),
    },
    log,
  );
  kubernetesService.start();
  log.info('serving', { url });

  return {
    url,
    port,
    registry,
    cache,
    metrics,
    handler,
    allocation: { allocators, repair },
    async shutdown() {
      if (shuttingDown) return;
      shuttingDown = true;
      lifecycle.stop();
      await kubernetesService.stop();
      await repair.stop();
      front.close();
      local?.close();
      watches.endAll();
      await new Promise<void>((resolve) => {
        https.close(() => resolve());
        https.closeIdleConnections();
        local?.closeIdleConnections();
        // In-flight requests get a grace period; then every connection goes.
        const t = setTimeout(() => {
          https.closeAllConnections();
          local?.closeAllConnections();
          for (const s of sockets) s.destroy();
          resolve();
        }, 5_000);
        t.unref();
      });
      for (const s of sockets) s.destroy();
      await allocators.stop();
      await cache.stop();
      log.info('stopped', { url });
    },
  };
}

/** A plain-HTTP server for `handler` on a unix socket only this user can open. */
async function listenUnix(
  file: string,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  sockets: Set<Socket>,
): Promise<HttpServer> {
  // A socket file left by a process that died is replaced; one a live server answers on is not taken over.
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(file);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error('another server is serving on it');
  rmSync(file, { force: true });
  const server = createHttpServer(handler);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 0;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await listen(server, { path: file, readableAll: false, writableAll: false });
  chmodSync(file, 0o600);
  server.once('close', () => rmSync(file, { force: true }));
  return server;
}
