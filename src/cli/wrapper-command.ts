// `svcplane wrapper`: flags → PKI, tokens, store → the wrapper server (wrapper-server.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateToken, renderKubeconfig } from '../apiserver/auth/kubeconfig.js';
import { formatTokenFileRecord, parseTokenFile } from '../apiserver/auth/token-file.js';
import { jsonLogger } from '../runtime/logger.js';
import { Client } from '../runtime/client.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import {
  UsageError,
  durationFlag,
  hostPort,
  parseFlags,
  noExtraArgs,
  readFlagFile,
  type Flags,
} from './flags.js';
import { kubeletPodsReader } from '../wrapper/kubelet-client.js';
import { firstLine, transportFromFlags } from './kubeconfig-flags.js';
import { ensureDataDir, ensureServingCert, signalled, versionInfo } from './serve.js';
import { writeFileAtomic } from '../storage/write-file-atomic.js';
import { upstreamDiscovery, upstreamForwarder } from './wrapper-proxy.js';
import { parseAutonomyFlag, type AutonomyConfig } from '../core/topology/health-report.js';
import { READERS_GROUP, startWrapper } from './wrapper-server.js';
import { superEdgeFlags } from './superedge-flags.js';
import { favourMemory } from './favour-memory.js';

export const WRAPPER_HELP = `Usage: svcplane wrapper --hostname NODE [flags]

The node-local list/watch server (SuperEdge's application-grid-wrapper, done right). It watches Services,
EndpointSlices, Endpoints and Nodes upstream through --kubeconfig (svcplane or any Kubernetes API server)
and serves them to kube-proxy-like clients on this node: Services and Nodes unchanged, and each
Service's EndpointSlices and Endpoints with only the endpoints the topology engine keeps for NODE
(docs/topology.md), decided over all of the Service's slices. Lists and watches behave as an API
server's: resourceVersions, resuming, 410 Expired, bookmarks, sendInitialEvents, selectors, limit and
continue, Table output. When the upstream is away it keeps serving the last good views; on reconnect it
emits only what changed. The first start generates a CA, a serving certificate and a reader token under
--data-dir, and writes DIR/kubeconfig for clients.

Examples:
  svcplane wrapper --kubeconfig .svcplane/kubeconfig --hostname edge-0
  KUBECONFIG=.svcplane-wrapper/kubeconfig kubectl get endpointslices -A --watch

Flags:
  --hostname NODE                 the node whose view is served (required)
  --bind-address HOST:PORT        HTTPS (default 127.0.0.1:51006; port 0 picks a free one)
  --insecure-bind-address HOST:PORT  also serve plain HTTP there, without authentication, for SuperEdge
                                  drop-in setups (kube-proxy pointed at http://127.0.0.1:51006); logs a warning
  --data-dir DIR                  default ./.svcplane-wrapper (pki/, tokens, the served views, kubeconfig)
  --kubeconfig FILE               the upstream (default: $KUBECONFIG, then ~/.kube/config)
  --context NAME                  a kubeconfig context other than the current one
  --proxy-upstream                pass what the wrapper does not serve (writes, events, other resources)
                                  from authenticated clients to the upstream, impersonating the client
                                  (Impersonate-User/-Group), so the upstream decides what the client may
                                  do; the --kubeconfig identity needs the impersonate verb on users and
                                  groups. Never for anonymous clients or the --insecure-bind-address port.
                                  Discovery and OpenAPI come from the upstream too (the wrapper's own
                                  when it is away or refuses), so kubectl finds what is forwarded.
                                  Without it such requests are refused with 403.
  --wrapper-in-cluster=false      do not rewrite default/kubernetes to its superedge.io/local-endpoint and
                                  local-port annotations (SuperEdge's flag; default true)
  --kubelet-url https://IP:PORT   the node's kubelet: while the upstream is away (also when it is
                                  away at start), GET /pods there, and serve this node's pods as it reports them
                                  (current IPs and readiness, gone pods dropped, new selected pods added) in
                                  every Service's slices and Endpoints, marked svcplane.io/offline-local-pods
                                  (docs/wrapper.md, "Offline: the node's own pods")
  --kubelet-certificate-authority FILE  verify the kubelet's serving certificate (without it the
                                  certificate is not verified, as kube-apiserver; a warning is logged)
  --kubelet-client-certificate FILE, --kubelet-client-key FILE
                                  a client certificate for the kubelet (both or neither); without one, the
                                  bearer token of --kubeconfig is sent
  --kubelet-poll-interval DURATION  how often to read the kubelet while it is needed (default 1s)
  --service-autonomy-enhancement enabled=true[,interval=30][,address=http://localhost:51005/localinfo]
                                  SuperEdge's edge autonomy: every interval seconds, ask edge-health which
                                  nodes answer; endpoints on a node it reports not Normal are left out of
                                  every Service. An answer stays in force two intervals plus the 5 s
                                  timeout; with none newer, every node counts as healthy (docs/wrapper.md).

SuperEdge's own flags are taken as its DaemonSet passes them (--flag=value): --wrapper-in-cluster as
above; --notify-channel-size, --support-endpointslice, --kube-qps and --kube-burst are accepted and
change nothing here (the log says why); --insecure, --debug, --ca-file, --cert-file and --key-file are
refused with what to use instead (docs/wrapper.md, "SuperEdge's flags").
`;

const FLAGS = {
  hostname: { type: 'string' },
  'bind-address': { type: 'string' },
  'insecure-bind-address': { type: 'string' },
  'data-dir': { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'proxy-upstream': { type: 'boolean' },
  'service-autonomy-enhancement': { type: 'string' },
  'kubelet-url': { type: 'string' },
  'kubelet-certificate-authority': { type: 'string' },
  'kubelet-client-certificate': { type: 'string' },
  'kubelet-client-key': { type: 'string' },
  'kubelet-poll-interval': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The kubelet flags, checked; undefined without --kubelet-url. */
function kubeletFlags(values: Flags): KubeletFlags | undefined {
  const url = values['kubelet-url'];
  const others = [
    'kubelet-certificate-authority',
    'kubelet-client-certificate',
    'kubelet-client-key',
    'kubelet-poll-interval',
  ].filter((f) => values[f] !== undefined);
  if (url === undefined) {
    if (others.length > 0) throw new UsageError(`--${others[0]} needs --kubelet-url`);
    return undefined;
  }
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'https:' || parsed.host === '')
    throw new UsageError(
      `--kubelet-url: ${JSON.stringify(url)} is not an https URL (e.g. https://127.0.1.1:10250): the kubelet serves HTTPS only`,
    );
  const file = (flag: string): string | undefined => {
    const v = values[flag];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${flag}: must name a file`);
    return readFlagFile(flag, v);
  };
  const cert = file('kubelet-client-certificate');
  const key = file('kubelet-client-key');
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError(
      '--kubelet-client-certificate and --kubelet-client-key go together: give both or neither',
    );
  const ca = file('kubelet-certificate-authority');
  return {
    url: parsed.origin,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined || key === undefined ? {} : { cert, key }),
    intervalMs: durationFlag('kubelet-poll-interval', values['kubelet-poll-interval']) ?? 1000,
  };
}

interface KubeletFlags {
  readonly url: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly intervalMs: number;
}

/** The reader token in DIR/pki/tokens.csv, generated on the first start; the file may hold more tokens. */
function ensureReaderToken(file: string): string {
  if (existsSync(file)) {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.includes(',wrapper-reader,'));
    if (line === undefined)
      throw new UsageError(`${file} has no wrapper-reader token; remove it to generate one`);
    return line.split(',')[0]!;
  }
  const token = generateToken();
  writeFileAtomic(
    file,
    `${formatTokenFileRecord(token, { name: 'wrapper-reader', uid: 'wrapper-reader', groups: [READERS_GROUP] })}\n`,
  );
  return token;
}

export async function wrapperCommand(
  args: string[],
  out: (s: string) => void,
  pkgVersion: string,
): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    out(WRAPPER_HELP);
    return 0;
  }
  const superedge = superEdgeFlags(args);
  const { values, positionals } = parseFlags(superedge.rest, FLAGS);
  noExtraArgs(positionals);
  favourMemory();
  const hostname = values['hostname'];
  if (typeof hostname !== 'string' || hostname === '')
    throw new UsageError('--hostname is required: the node whose view this wrapper serves');
  const bind = hostPort(
    'bind-address',
    typeof values['bind-address'] === 'string' ? values['bind-address'] : '127.0.0.1:51006',
  );
  const insecureRaw = values['insecure-bind-address'];
  const insecure =
    typeof insecureRaw === 'string' ? hostPort('insecure-bind-address', insecureRaw) : undefined;
  const dataDir = resolve(
    typeof values['data-dir'] === 'string' && values['data-dir'] !== ''
      ? values['data-dir']
      : '.svcplane-wrapper',
  );
  const autonomyRaw = values['service-autonomy-enhancement'];
  let autonomy: AutonomyConfig | undefined;
  try {
    autonomy = typeof autonomyRaw === 'string' ? parseAutonomyFlag(autonomyRaw) : undefined;
  } catch (err) {
    throw new UsageError(`--service-autonomy-enhancement: ${(err as Error).message}`);
  }
  const kubelet = kubeletFlags(values);
  const transport = transportFromFlags(values, (message) => new UsageError(message));
  const log = jsonLogger(undefined, 'wrapper');
  if (kubelet !== undefined && kubelet.ca === undefined)
    log.warn(
      "--kubelet-url without --kubelet-certificate-authority: the kubelet's serving certificate is not verified",
      { url: kubelet.url },
    );
  for (const note of superedge.flags.notes) log.info(`SuperEdge flag ${note}`);

  ensureDataDir(dataDir, 'pki');
  const tls = ensureServingCert(dataDir, [bind.host]);
  const tokensFile = join(dataDir, 'pki', 'tokens.csv');
  const token = ensureReaderToken(tokensFile);
  const tokens = parseTokenFile(readFileSync(tokensFile, 'utf8'));
  let store: SqliteStore;
  try {
    // The served views: derived, so not worth an fsync each; kept so a restart serves them at once. The
    // store's only watcher is the wrapper's watch cache, which keeps up: a short in-memory tail (the
    // default 20,000 changes held ~18 MiB) is enough, and a watcher behind it reads from SQLite.
    store = SqliteStore.open({
      dataDir: join(dataDir, 'views'),
      synchronous: 'NORMAL',
      tailSize: 1024,
      // About SQLite's own default (2,000 KiB): the watch cache serves every read, so the cache only
      // speeds up a relabel's writes, and better-sqlite3's 16,000 KiB would fill during the initial sync
      // and stay.
      cacheKiB: 2048,
    });
  } catch (err) {
    transport.close();
    throw new UsageError(`--data-dir: ${firstLine(err)}`);
  }
  const wrapper = await startWrapper({
    upstream: new Client(transport),
    store,
    hostname,
    bindAddress: bind.host,
    port: bind.port,
    tls: { cert: tls.certPem, key: tls.keyPem, clientCA: tls.caPem },
    tokens,
    ...(insecure === undefined ? {} : { insecure: { bindAddress: insecure.host, port: insecure.port } }),
    version: versionInfo(pkgVersion),
    log,
    ...(autonomy?.enabled === true ? { autonomy } : {}),
    ...(kubelet === undefined
      ? {}
      : {
          kubelet: {
            url: kubelet.url,
            intervalMs: kubelet.intervalMs,
            read: kubeletPodsReader({ ...kubelet, authorization: () => transport.authorization() }),
          },
        }),
    localApiserver: superedge.flags.wrapperInCluster,
    ...(values['proxy-upstream'] === true
      ? { forward: upstreamForwarder(transport, log), forwardDiscovery: upstreamDiscovery(transport, log) }
      : {}),
    ...(Number(process.env.SVCPLANE_BOOKMARK_INTERVAL_MS ?? 0) > 0
      ? { bookmarkIntervalMs: Number(process.env.SVCPLANE_BOOKMARK_INTERVAL_MS) }
      : {}),
  }).catch(async (err: unknown) => {
    await store.close();
    transport.close();
    throw err;
  });
  const kubeconfig = join(dataDir, 'kubeconfig');
  writeFileAtomic(
    kubeconfig,
    renderKubeconfig({
      server: wrapper.url,
      caPem: tls.caPem,
      user: 'wrapper-reader',
      token,
      clusterName: 'svcplane-wrapper',
    }),
  );
  out(
    `svcplane wrapper: serving node ${hostname} at ${wrapper.url}${wrapper.insecureUrl === undefined ? '' : ` and ${wrapper.insecureUrl}`}; kubeconfig: ${kubeconfig}`,
  );
  await signalled(log);
  await wrapper.shutdown();
  await store.close();
  transport.close();
  return 0;
}
