// The wrapper's composition: the API server's HTTP stack (watch cache, list/watch/get, selectors,
// bookmarks, 410, per-watcher bounded queues, Table output, discovery) over a store of the wrapper's own,
// which WrapperSync fills with the served forms of the upstream objects. Clients may only get, list and
// watch the four served resources; anything else is refused with a Status (403), never proxied under
// the wrapper's identity. With `forward` (--proxy-upstream, wrapper-proxy.ts), what the wrapper refuses an
// authenticated client on the TLS port goes upstream as that client instead.
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Counter, Histogram, Registry as PromRegistry, Gauge } from 'prom-client';
import type { ResourceInfo } from '../api/resources.js';
import { authenticate, type AuthenticationRequest } from '../apiserver/auth/authenticator.js';
import { forbiddenMessage } from '../apiserver/auth/forbidden-message.js';
import type { TokenTable } from '../apiserver/auth/token-file.js';
import { createHandler } from '../apiserver/http/handler.js';
import { listenTls, type TlsListener } from '../apiserver/http/listen.js';
import type { AuthorizationAttributes, HandlerDeps, Identity } from '../apiserver/http/types.js';
import { WatchRegistry } from '../apiserver/http/watch.js';
import type { Logger } from '../runtime/logger.js';
import { ApiMetrics } from '../apiserver/metrics.js';
import { Registry } from '../apiserver/registry/registry.js';
import { WatchCache } from '../apiserver/watch-cache/watch-cache.js';
import type { Client } from '../runtime/client.js';
import type { Store } from '../storage/store.js';
import { SERVED, WrapperSync, type WrapperKubelet } from '../wrapper/sync.js';
import { openAPIV2Protobuf } from '../api/openapi/v2-protobuf.js';
import { openAPIV3Document, openAPIV3Index } from '../api/openapi/v3.js';
import type { AutonomyConfig } from '../core/topology/health-report.js';
import { HealthPoller } from '../runtime/health-poller.js';

/** The group whose members may read the served resources (the kubeconfig's token has it). */
export const READERS_GROUP = 'svcplane:wrapper-readers';
const READ_VERBS = ['get', 'list', 'watch'];

/** The served resources as discovery lists them: read verbs only. */
const SERVED_INFO: readonly ResourceInfo[] = SERVED.map((r) => ({ ...r, verbs: READ_VERBS }));

export interface WrapperOptions {
  readonly upstream: Client;
  readonly store: Store;
  readonly hostname: string;
  readonly bindAddress: string;
  readonly port: number;
  readonly tls: { readonly cert: string; readonly key: string; readonly clientCA: string };
  readonly tokens: TokenTable;
  /** Plain HTTP without authentication (SuperEdge drop-in); every client is a reader there. */
  readonly insecure?: { readonly bindAddress: string; readonly port: number };
  readonly version: Record<string, string>;
  readonly log: Logger;
  /** --proxy-upstream: answers what the wrapper refuses an authenticated client (never on `insecure`). */
  readonly forward?: HandlerDeps['forward'];
  /** --service-autonomy-enhancement, when enabled: edge-health's verdicts drop unhealthy nodes' endpoints. */
  readonly autonomy?: AutonomyConfig;
  /** Rewrite default/kubernetes to its local-endpoint annotations (SuperEdge's --wrapper-in-cluster). */
  readonly localApiserver?: boolean;
  /** --proxy-upstream: discovery and OpenAPI from the upstream, as the client (never on `insecure`). */
  readonly forwardDiscovery?: HandlerDeps['forwardDiscovery'];
  readonly bookmarkIntervalMs?: number;
  readonly maxWatchQueueBytes?: number;
  readonly minRequestTimeoutSeconds?: number;
  readonly watchCacheHistory?: number;
  /** The history's byte budget (default WRAPPER_HISTORY_BYTES). */
  readonly watchCacheHistoryBytes?: number;
  /** --kubelet-url: the node's kubelet, whose pods rewrite the served views while the upstream is away. */
  readonly kubelet?: WrapperKubelet;
}

/**
 * The wrapper's watch history holds at most this much JSON. Its watchers are a node's few clients, and
 * the history only has to bridge their reconnects; unbounded, it kept a superseded version of every
 * object it reached back to (16 MiB of heap in the benchmark's shape after every slice changed once). A
 * watcher resuming from before it gets 410 Expired and relists, as from kube-apiserver's cache.
 */
export const WRAPPER_HISTORY_BYTES = 4 * 2 ** 20;

export interface RunningWrapper {
  readonly url: string;
  readonly port: number;
  readonly insecureUrl?: string;
  readonly sync: WrapperSync;
  readonly cache: WatchCache;
  shutdown(): Promise<void>;
}

const served = (attrs: AuthorizationAttributes): boolean =>
  READ_VERBS.includes(attrs.verb) &&
  attrs.subresource === '' &&
  SERVED.some((r) => r.group === attrs.apiGroup && r.resource === attrs.resource);

const isReader = (user: Identity): boolean =>
  user.groups.includes(READERS_GROUP) || user.groups.includes('system:masters');

function authorize(attrs: AuthorizationAttributes): boolean {
  if (!attrs.resourceRequest) return attrs.verb === 'get' || attrs.verb === 'head';
  return served(attrs) && isReader(attrs.user);
}

function refusal(attrs: AuthorizationAttributes): string {
  if (attrs.resourceRequest && !served(attrs))
    return forbiddenMessage(
      attrs,
      'the wrapper serves only get, list and watch of services, endpoints, endpointslices.discovery.k8s.io and nodes',
    );
  return forbiddenMessage(attrs, `only members of ${READERS_GROUP} may read through the wrapper`);
}

function wrapperMetrics(
  sync: () => WrapperSync | undefined,
  watches: WatchRegistry,
  health: () => HealthPoller | undefined,
) {
  const registry = new PromRegistry();
  const recompute = new Histogram({
    name: 'svcplane_wrapper_recompute_seconds',
    help: 'Time the topology index took to apply one upstream change and recompute the views it touched',
    buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  const writes = new Counter({
    name: 'svcplane_wrapper_served_writes_total',
    help: 'Served objects written (put) or removed (delete) because what this node is served changed',
    labelNames: ['op'],
    registers: [registry],
  });
  new Gauge({
    name: 'svcplane_wrapper_views',
    help: 'Services with a topology view for this node',
    registers: [registry],
    collect() {
      this.set(sync()?.index.stats().services ?? 0);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_pending_writes',
    help: 'Served objects waiting to be re-served (the queue between the topology index and the store)',
    registers: [registry],
    collect() {
      this.set(sync()?.pending() ?? 0);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_upstream_relists',
    help: 'Relists of the upstream informers (the first list of each included)',
    registers: [registry],
    collect() {
      this.set(sync()?.relists() ?? 0);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_upstream_in_sync',
    help: '1 while every upstream informer is watching',
    registers: [registry],
    collect() {
      this.set(sync()?.inSync() === true ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_watch_queued_bytes',
    help: 'Bytes written to watches that their clients have not taken yet, over all open watches',
    registers: [registry],
    collect() {
      this.set(watches.queuedBytes().total);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_watch_queued_bytes_max',
    help: 'The most bytes one open watch has queued; past the queue limit the watch is closed as too slow',
    registers: [registry],
    collect() {
      this.set(watches.queuedBytes().max);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_health_unhealthy_nodes',
    help: 'Nodes the health source (--service-autonomy-enhancement) reports unhealthy, in its answer in force',
    registers: [registry],
    collect() {
      this.set(health()?.unhealthy() ?? 0);
    },
  });
  new Gauge({
    name: 'svcplane_wrapper_offline_rewritten_objects',
    help: "Served EndpointSlices and Endpoints rewritten from the node's kubelet (they carry svcplane.io/offline-local-pods)",
    registers: [registry],
    collect() {
      this.set(sync()?.offlineRewritten() ?? 0);
    },
  });
  const kubeletPolls = new Counter({
    name: 'svcplane_wrapper_kubelet_polls_total',
    help: "Polls of the node's kubelet (--kubelet-url) for its pods, made while the upstream is away",
    registers: [registry],
  });
  const kubeletFailures = new Counter({
    name: 'svcplane_wrapper_kubelet_poll_failures_total',
    help: "Polls of the node's kubelet that got no usable answer (no answer, not 2xx, not a PodList)",
    registers: [registry],
  });
  const healthFailures = new Counter({
    name: 'svcplane_wrapper_health_poll_failures_total',
    help: 'Polls of the health source (--service-autonomy-enhancement) that got no usable answer',
    registers: [registry],
  });
  return {
    registry,
    sink: {
      recomputeSeconds: (s: number) => recompute.observe(s),
      wrote: (op: 'put' | 'delete') => writes.inc({ op }),
      healthPollFailed: () => healthFailures.inc(),
      kubeletPoll: (ok: boolean) => {
        kubeletPolls.inc();
        if (!ok) kubeletFailures.inc();
      },
    },
  };
}

export async function startWrapper(o: WrapperOptions): Promise<RunningWrapper> {
  const metrics = new ApiMetrics();
  const ref: { sync?: WrapperSync; health?: HealthPoller } = {};
  const watches = new WatchRegistry();
  const own = wrapperMetrics(
    () => ref.sync,
    watches,
    () => ref.health,
  );
  const cache = new WatchCache(
    o.store,
    {
      ...(o.watchCacheHistory === undefined ? {} : { historySize: o.watchCacheHistory }),
      historyBytes: o.watchCacheHistoryBytes ?? WRAPPER_HISTORY_BYTES,
      // A node agent is judged by its memory: about 12 MiB less at 10,000 Services (the served JSON, a
      // tenth of its size packed), for an unpack in each LIST, which its clients send rarely.
      packObjects: true,
      log: (msg, fields) => o.log.warn(msg, fields),
    },
    SERVED,
  );
  cache.start();
  await cache.ready;
  const registry = new Registry(o.store, cache);
  const sync = new WrapperSync(
    o.upstream,
    o.store,
    o.hostname,
    o.log,
    own.sink,
    { localApiserver: o.localApiserver ?? true },
    o.kubelet,
  );
  ref.sync = sync;
  await sync.start();
  if (o.autonomy !== undefined) {
    ref.health = new HealthPoller({
      address: o.autonomy.address,
      intervalMs: o.autonomy.intervalSeconds * 1000,
      apply: (node, healthy) => sync.setNodeHealth(node, healthy),
      onFailure: own.sink.healthPollFailed,
      log: o.log,
    });
    ref.health.start();
  }

  let stopping = false;
  let address = `${o.bindAddress}:${o.port}`;
  const deps = {
    registry,
    cache,
    metrics,
    log: o.log,
    authorize,
    forbiddenMessage: refusal,
    openapi: {
      v3Index: () => openAPIV3Index(),
      v3Document: (path: string) => openAPIV3Document(path)?.json,
      v2Protobuf: () => openAPIV2Protobuf(),
    },
    version: o.version,
    serverAddress: () => address,
    watches,
    bookmarkIntervalMs: o.bookmarkIntervalMs ?? 30_000,
    maxWatchQueueBytes: o.maxWatchQueueBytes ?? 16 * 1024 * 1024,
    // A LIST of every slice (kube-proxy's first) held about 8 MiB of C memory at once with the API
    // server's 4 MiB window (its chunks, and their encrypted copies): a node agent takes 512 KiB.
    listWindow: { bytes: 512 * 1024, chunkBytes: 64 * 1024 },
    minRequestTimeoutSeconds: o.minRequestTimeoutSeconds ?? 1800,
    ready: () => !stopping && cache.isHealthy,
    readyChecks: [{ name: 'upstream-sync', ok: () => sync.inSync() }],
    extraMetrics: () => own.registry.metrics(),
    resources: SERVED_INFO,
  };
  const handler = createHandler({
    ...deps,
    ...(o.forward === undefined ? {} : { forward: o.forward }),
    // While the upstream is away, asking it would only hold each discovery request for the timeout.
    ...(o.forwardDiscovery === undefined
      ? {}
      : {
          forwardDiscovery: (req: IncomingMessage, res: ServerResponse, who: Identity) =>
            sync.inSync() ? o.forwardDiscovery!(req, res, who) : Promise.resolve(false),
        }),
    authenticate: (req: IncomingMessage) => {
      const sock = req.socket as TLSSocket;
      const peer = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate() : undefined;
      return authenticate(
        {
          authorization: req.headers.authorization,
          peerCertificate: peer as AuthenticationRequest['peerCertificate'],
          peerCertificateVerified: sock.authorized === true,
        },
        { tokens: o.tokens },
      );
    },
  });
  let listener: TlsListener;
  let insecure: HttpServer | undefined;
  try {
    listener = await listenTls({ handler, tls: o.tls, bindAddress: o.bindAddress, port: o.port });
    if (o.insecure !== undefined) {
      const anonymousReader: Identity = {
        name: 'system:anonymous',
        uid: '',
        groups: ['system:unauthenticated', READERS_GROUP],
      };
      insecure = createHttpServer(createHandler({ ...deps, authenticate: () => anonymousReader }));
      insecure.keepAliveTimeout = 65_000;
      insecure.requestTimeout = 0;
      await new Promise<void>((resolve, reject) => {
        insecure!.once('error', reject);
        insecure!.listen(o.insecure!.port, o.insecure!.bindAddress, () => resolve());
      });
      o.log.warn(
        'serving plain HTTP without authentication: any local process can read what this node is served',
        {
          address: `${o.insecure.bindAddress}:${(insecure.address() as { port: number }).port}`,
        },
      );
    }
  } catch (err) {
    ref.health?.stop();
    await sync.stop();
    await cache.stop();
    throw err;
  }
  const host = o.bindAddress.includes(':') ? `[${o.bindAddress}]` : o.bindAddress;
  address = `${host}:${listener.port}`;
  // The store keeps every version until compacted; the watch cache keeps its own history for resuming.
  const compaction = setInterval(() => {
    void (async () => {
      const head = await o.store.currentRevision();
      const floor = head - 20_000;
      if (floor > (await o.store.compactRevision())) await o.store.compact(floor);
    })().catch((err: unknown) => o.log.warn('compaction failed', { error: String(err) }));
  }, 60_000);
  compaction.unref();
  return {
    url: `https://${address}`,
    port: listener.port,
    ...(insecure === undefined
      ? {}
      : {
          insecureUrl: `http://${o.insecure!.bindAddress}:${(insecure.address() as { port: number }).port}`,
        }),
    sync,
    cache,
    async shutdown() {
      if (stopping) return;
      stopping = true;
      clearInterval(compaction);
      listener.front.close();
      insecure?.close();
      watches.endAll();
      listener.https.closeAllConnections();
      insecure?.closeAllConnections();
      for (const s of listener.sockets) s.destroy();
      ref.health?.stop();
      await sync.stop();
      await cache.stop();
    },
  };
}
