// Composition of the API server from flags: store, TLS material, authentication, authorization.
// `svcplane apiserver` and `svcplane up` both end here; `up` first generates what it needs.
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { openAPIV2Protobuf } from '../api/openapi/v2-protobuf.js';
import { openAPIV3Document, openAPIV3Index } from '../api/openapi/v3.js';
import { authenticate } from '../apiserver/auth/authenticator.js';
import { AUTHORIZATION_MODES, type ServerAuthorization } from '../apiserver/auth/modes.js';
import type { WatchCache } from '../apiserver/watch-cache/watch-cache.js';
import { generateCA, issueServingCert } from '../apiserver/auth/pki.js';
import type { TokenTable } from '../apiserver/auth/token-file.js';
import { reviewToken } from '../apiserver/auth/token-review.js';
import { jsonLogger, type Logger } from '../runtime/logger.js';
import { startApiServer, type ApiServerOptions, type RunningApiServer } from '../apiserver/server.js';
import { makeDirs } from '../storage/make-dirs.js';
import { writeFileAtomic } from '../storage/write-file-atomic.js';
import type { Store } from '../storage/store.js';
import { formatCidr, parseCidrRange } from '../core/allocator/cidr.js';
import { parsePortRange, type PortRange } from '../core/allocator/port-allocator.js';
import { UsageError, durationFlag, intFlag, commandFlags, noExtraArgs, type Flags } from './flags.js';
import type { LoadedAuth } from './auth-flags.js';
import { openStoreFromFlags } from './store-command.js';
import { signalled } from './signals.js';
import type { ServiceAccountTokens } from '../apiserver/auth/service-account-tokens.js';
import { SERVICE_ACCOUNT_FLAGS, SERVICE_ACCOUNT_FLAGS_HELP } from './service-account-flags.js';

export const SERVER_FLAGS = {
  'storage-backend': { type: 'string' },
  'etcd-servers': { type: 'string' },
  'etcd-prefix': { type: 'string' },
  'storage-retry-budget': { type: 'string' },
  'data-dir': { type: 'string' },
  'bind-address': { type: 'string' },
  'secure-port': { type: 'string' },
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'client-ca-file': { type: 'string' },
  'token-auth-file': { type: 'string' },
  'authorization-mode': { type: 'string' },
  'authorization-policy-file': { type: 'string' },
  'service-cluster-ip-range': { type: 'string' },
  'service-node-port-range': { type: 'string' },
  'min-request-timeout': { type: 'string' },
  'repair-interval': { type: 'string' },
  'advertise-address': { type: 'string' },
  'allow-loopback-endpoints': { type: 'string' },
  ...SERVICE_ACCOUNT_FLAGS,
  help: { type: 'boolean', short: 'h' },
} as const;

export const SERVER_FLAGS_HELP = `  --storage-backend sqlite|etcd3          default sqlite (embedded, in --data-dir)
  --etcd-servers URL[,URL]                etcd client URLs, with --storage-backend etcd3
  --etcd-prefix PREFIX                    key prefix in etcd (default /registry)
  --storage-retry-budget DURATION         how long a safe etcd request is retried while etcd fails over
                                          before the client gets a 503 (default 15s; 0s: never)
  --data-dir DIR                          default ./.svcplane
  --bind-address IP                       default 127.0.0.1
  --secure-port N                         default 6443; 0 picks a free port
  --tls-cert-file, --tls-private-key-file serving certificate (PEM)
  --client-ca-file FILE                   CA for client certificates (CN = user, O = groups)
  --token-auth-file FILE                  static tokens: token,user,uid,"group1,group2"
  --authorization-mode MODE[,MODE]        ordered list of ${Object.keys(AUTHORIZATION_MODES).join(', ')}; the first to
                                          allow or deny decides, system:masters is always allowed (default
                                          RBAC for up, AlwaysAllow for apiserver)
  --authorization-policy-file FILE        ABAC policy, one JSON Policy per line
  --service-cluster-ip-range CIDR[,CIDR]  default 10.96.0.0/12
  --service-node-port-range A-B           default 30000-32767
  --repair-interval DURATION              ClusterIP/NodePort repair period (default 3m)
  --advertise-address IP                  address listed in the kubernetes Endpoints (default: bind address)
  --min-request-timeout SECONDS           watches without timeoutSeconds last 1-2x this (default 1800)
  --allow-loopback-endpoints true|false   accept 127.0.0.0/8 and ::1 in Endpoints and EndpointSlices, which
                                          kube-apiserver refuses: pods of \`svcplane node --pod-cidr 127.x\`
                                          (default true for up, false for apiserver)
${SERVICE_ACCOUNT_FLAGS_HELP}`;

const str = (v: string | boolean | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

/** --service-cluster-ip-range, checked as kube-apiserver checks it (one CIDR per family, at most 2^20 addresses). */
export function checkCidrs(raw: string): string[] {
  const flag = '--service-cluster-ip-range';
  const cidrs = raw.split(',').map((s) => s.trim());
  if (cidrs.length > 2) throw new UsageError(`${flag}: at most two CIDRs (one per IP family), got ${raw}`);
  const parsed = cidrs.map((c) => {
    const p = parseCidrRange(c);
    if (p === undefined) throw new UsageError(`${flag}: ${JSON.stringify(c)} is not a CIDR`);
    // kube-apiserver's maxCIDRBits = 20: a bigger range would not fit a sane allocation bitmap.
    if (p.bits - p.prefix > 20) {
      throw new UsageError(
        `specified ${flag} is too large; for ${p.bits}-bit addresses, the mask must be >= ${p.bits - 20}`,
      );
    }
    if (Math.min(2 ** (p.bits - p.prefix), 65536) < 8) {
      throw new UsageError(`${flag}: the service cluster IP range must be at least 8 IP addresses`);
    }
    return p;
  });
  if (parsed.length === 2 && parsed[0]!.family === parsed[1]!.family) {
    throw new UsageError(`${flag}: two CIDRs must be of different IP families`);
  }
  return parsed.map(formatCidr);
}

export function checkPortRange(raw: string): PortRange {
  let r: PortRange;
  try {
    r = parsePortRange(raw);
  } catch (err) {
    throw new UsageError(`--service-node-port-range: ${(err as Error).message}`);
  }
  if (r.size === 0 || r.base < 1) {
    throw new UsageError(
      `--service-node-port-range: ${JSON.stringify(raw)} is not a port range within 1-65535`,
    );
  }
  return r;
}

export interface ServerSettings {
  readonly bindAddress: string;
  readonly port: number;
  readonly dataDir: string;
  readonly serviceClusterIPRange: string[];
  readonly serviceNodePortRange: { base: number; size: number };
  readonly minRequestTimeoutSeconds: number;
  readonly repairIntervalMs: number;
  readonly advertiseAddress: string | undefined;
  readonly allowLoopbackEndpoints: boolean;
}

export function serverSettings(
  values: Flags,
  defaults: { readonly allowLoopbackEndpoints?: boolean } = {},
): ServerSettings {
  const bindAddress = str(values['bind-address']) ?? '127.0.0.1';
  if (isIP(bindAddress) === 0)
    throw new UsageError(`--bind-address: ${JSON.stringify(bindAddress)} is not an IP address`);
  const port = intFlag('secure-port', values['secure-port'], 0) ?? 6443;
  if (port > 65535) throw new UsageError('--secure-port: must be at most 65535');
  return {
    bindAddress,
    port,
    dataDir: resolve(str(values['data-dir']) ?? '.svcplane'),
    serviceClusterIPRange: checkCidrs(str(values['service-cluster-ip-range']) ?? '10.96.0.0/12'),
    serviceNodePortRange: checkPortRange(str(values['service-node-port-range']) ?? '30000-32767'),
    minRequestTimeoutSeconds: intFlag('min-request-timeout', values['min-request-timeout'], 1) ?? 1800,
    repairIntervalMs: durationFlag('repair-interval', values['repair-interval'], 100) ?? 180_000,
    advertiseAddress: advertiseAddress(values['advertise-address']),
    allowLoopbackEndpoints: boolFlag(
      'allow-loopback-endpoints',
      values['allow-loopback-endpoints'],
      defaults.allowLoopbackEndpoints ?? false,
    ),
  };
}

function boolFlag(name: string, raw: string | boolean | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UsageError(`--${name}: must be true or false, got ${JSON.stringify(raw)}`);
}

function advertiseAddress(raw: string | boolean | undefined): string | undefined {
  const v = str(raw);
  if (v === undefined) return undefined;
  if (isIP(v) === 0 || v === '0.0.0.0' || v === '::') {
    throw new UsageError(`--advertise-address: ${JSON.stringify(v)} is not a specific IP address`);
  }
  return v;
}

/**
 * Creates `--data-dir` (and `sub` under it) when missing, owner-only. A path that exists and is not a
 * directory, or one that cannot be created, is a usage error naming the flag, not an errno line.
 */
export function ensureDataDir(dataDir: string, sub = ''): void {
  const dir = sub === '' ? dataDir : join(dataDir, sub);
  try {
    makeDirs(dir, 0o700);
  } catch (err) {
    // The first path from the top that is there but is not a directory, if any.
    let blocking: string | undefined;
    for (let p = resolve(dir); ; p = dirname(p)) {
      if (existsSync(p) && !statSync(p).isDirectory()) blocking = p;
      if (dirname(p) === p) break;
    }
    if (blocking !== undefined) throw new UsageError(`--data-dir: ${blocking} exists and is not a directory`);
    throw new UsageError(`--data-dir: cannot create ${dir}: ${(err as Error).message}`);
  }
}

/** A CA and a serving certificate in DIR/pki, generated on first use; the serving cert covers `hosts`. */
export function ensureServingCert(
  dataDir: string,
  hosts: readonly string[],
): { caPem: string; certPem: string; keyPem: string } {
  ensureDataDir(dataDir, 'pki');
  const pki = join(dataDir, 'pki');
  const caCrt = join(pki, 'ca.crt');
  const caKey = join(pki, 'ca.key');
  const crt = join(pki, 'apiserver.crt');
  const key = join(pki, 'apiserver.key');
  if (!existsSync(caCrt) || !existsSync(caKey)) {
    const ca = generateCA('svcplane-ca');
    writeFileAtomic(caKey, ca.keyPem);
    writeFileAtomic(caCrt, ca.certPem, 0o644);
  }
  const ca = { certPem: readFileSync(caCrt, 'utf8'), keyPem: readFileSync(caKey, 'utf8') };
  const wanted = [...new Set(['127.0.0.1', 'localhost', ...hosts])];
  let fresh = existsSync(crt) && existsSync(key);
  if (fresh) {
    const san = new X509Certificate(readFileSync(crt)).subjectAltName ?? '';
    const covered = wanted.every((h) => san.includes(isIP(h) !== 0 ? `IP Address:${h}` : `DNS:${h}`));
    fresh = covered && new X509Certificate(readFileSync(crt)).checkIssued(new X509Certificate(ca.certPem));
  }
  if (!fresh) {
    const serving = issueServingCert(ca, {
      commonName: 'svcplane-apiserver',
      ipAddresses: wanted.filter((h) => isIP(h) !== 0),
      dnsNames: wanted.filter((h) => isIP(h) === 0),
    });
    writeFileAtomic(key, serving.keyPem);
    writeFileAtomic(crt, serving.certPem, 0o644);
  }
  return { caPem: ca.certPem, certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

export function versionInfo(pkgVersion: string): Record<string, string> {
  return {
    major: '1',
    minor: '33',
    gitVersion: `v1.33.0+svcplane.${pkgVersion}`,
    gitCommit: 'svcplane',
    gitTreeState: 'clean',
    buildDate: '2026-11-21T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export type LocalServing = Pick<ApiServerOptions, 'unixSocket' | 'readyChecks' | 'extraMetrics' | 'mounts'>;

export async function runServer(opts: {
  store: Store;
  settings: ServerSettings;
  tls: { cert: string; key: string; clientCA?: string };
  tokens: TokenTable | undefined;
  serviceAccountTokens?: ServiceAccountTokens | undefined;
  authorization: (cache: WatchCache) => ServerAuthorization;
  pkgVersion: string;
  log?: Logger;
  /** What `up` adds for its controllers: a unix socket, a readiness check and their metrics. */
  local?: LocalServing;
}): Promise<RunningApiServer> {
  const log = opts.log ?? jsonLogger();
  const sa = opts.serviceAccountTokens;
  const bookmarkMs = Math.trunc(Number(process.env.SVCPLANE_BOOKMARK_INTERVAL_MS ?? 0)) || 0;
  const endpointMs = Math.trunc(Number(process.env.SVCPLANE_ENDPOINT_INTERVAL_MS ?? 0)) || 0;
  return startApiServer({
    ...opts.local,
    store: opts.store,
    bindAddress: opts.settings.bindAddress,
    port: opts.settings.port,
    tls: opts.tls,
    authenticate: (req, objects) =>
      authenticate(req, {
        tokens: opts.tokens,
        serviceAccounts: sa === undefined ? undefined : (token) => sa.authenticate(token, objects),
      }),
    reviewToken: (token, audiences, objects) =>
      reviewToken(token, audiences, {
        tokens: opts.tokens,
        serviceAccounts: sa === undefined ? undefined : (t, auds) => sa.review(t, objects, auds),
        apiAudiences: sa?.config.audiences ?? [],
      }),
    ...(sa === undefined ? {} : { serviceAccountTokens: sa }),
    authorization: opts.authorization,
    openapi: {
      v3Index: () => openAPIV3Index(),
      v3Document: (path) => openAPIV3Document(path)?.json,
      v2Protobuf: () => openAPIV2Protobuf(),
    },
    version: versionInfo(opts.pkgVersion),
    log,
    minRequestTimeoutSeconds: opts.settings.minRequestTimeoutSeconds,
    validation: { allowLoopbackEndpoints: opts.settings.allowLoopbackEndpoints },
    allocation: {
      serviceClusterIPRange: opts.settings.serviceClusterIPRange,
      serviceNodePortRange: opts.settings.serviceNodePortRange,
      repairIntervalMs: opts.settings.repairIntervalMs,
      ...(opts.settings.advertiseAddress === undefined
        ? {}
        : { advertiseAddress: opts.settings.advertiseAddress }),
      // Hidden, for tests: how often the kubernetes Service and Endpoints are reconciled (default 10 s).
      ...(endpointMs > 0 ? { endpointIntervalMs: endpointMs } : {}),
    },
    // Hidden, for tests: how often watches that allow bookmarks get one (default 30 s).
    ...(bookmarkMs > 0 ? { bookmarkIntervalMs: bookmarkMs } : {}),
  });
}

export { signalled };

/** Runs until SIGTERM/SIGINT, then shuts down gracefully and closes the store. */
export async function untilSignalled(
  server: RunningApiServer,
  store: Store,
  log: Logger,
  beforeShutdown?: () => Promise<void>,
): Promise<number> {
  await signalled(log);
  await beforeShutdown?.();
  await server.shutdown();
  await store.close();
  return 0;
}

/**
 * The flags of `up` and `apiserver`: `undefined` when --help was asked for (and printed), otherwise
 * the checked values and settings.
 */
export function parseServerFlags(
  args: string[],
  help: string,
  out: (s: string) => void,
  defaults: { readonly allowLoopbackEndpoints?: boolean } = {},
): { values: Flags; settings: ServerSettings } | undefined {
  const flags = commandFlags(args, SERVER_FLAGS, help, out);
  if (flags === undefined) return undefined;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  return { values, settings: serverSettings(values, defaults) };
}

/**
 * Opens the store the flags name, serves on it, announces readiness once, and runs until
 * SIGTERM/SIGINT. A server that fails to start closes the store before the error propagates.
 */
export async function serveFromFlags(opts: {
  values: Flags;
  settings: ServerSettings;
  tls: { cert: string; key: string; clientCA?: string };
  auth: LoadedAuth;
  tokens: TokenTable | undefined;
  pkgVersion: string;
  onReady: (server: RunningApiServer, log: Logger) => void;
  /** Runs on SIGTERM/SIGINT before the server shuts down (in-process controllers stop here). */
  beforeShutdown?: () => Promise<void>;
  local?: LocalServing;
  log?: Logger;
}): Promise<number> {
  const log = opts.log ?? jsonLogger();
  const store = await openStoreFromFlags({ ...opts.values, 'data-dir': opts.settings.dataDir });
  let server: RunningApiServer;
  try {
    server = await runServer({
      store,
      settings: opts.settings,
      tls: { ...opts.tls, ...(opts.auth.clientCA === undefined ? {} : { clientCA: opts.auth.clientCA }) },
      tokens: opts.tokens,
      serviceAccountTokens: opts.auth.serviceAccountTokens,
      authorization: opts.auth.authorization,
      pkgVersion: opts.pkgVersion,
      log,
      ...(opts.local === undefined ? {} : { local: opts.local }),
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  opts.onReady(server, log);
  return untilSignalled(server, store, log, opts.beforeShutdown);
}
