// `svcplane up`: the all-in-one server on the embedded store (docs/storage.md). The first start generates a
// CA, a serving certificate for 127.0.0.1/localhost, an admin token (group system:masters) and
// DIR/kubeconfig, and the ServiceAccount token signing key DIR/pki/sa.key (EC P-256; tokens are issued by
// https://kubernetes.default.svc.cluster.local unless flags say otherwise); every start rewrites the
// kubeconfig with the URL actually served.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { generateToken, renderKubeconfig } from '../apiserver/auth/kubeconfig.js';
import { generateServiceAccountKey } from '../apiserver/auth/service-account-keys.js';
import { formatTokenFileRecord, parseTokenFile, tokenDigest } from '../apiserver/auth/token-file.js';
import { jsonLogger } from '../runtime/logger.js';
import { Client } from '../runtime/client.js';
import { inProcessTransport, type RequestListener } from '../runtime/in-process-transport.js';
import { DASHBOARD_READER } from '../core/rbac/bootstrap-policy.js';
import { createDashboard } from '../dashboard/server.js';
import { KNOWN_CONTROLLERS } from '../controllers/manager.js';
import { ControllerHost } from './controller-host.js';
import {
  CONTROLLER_MANAGER_LEASE,
  CONTROLLER_TIMING_FLAGS,
  controllerList,
  controllerTimingFlagsHelp,
  nodeLifecycleFlags,
  podGCFlags,
} from './controller-manager-command.js';
import { UsageError, durationFlag, parseFlags, readFlagFile } from './flags.js';
import { CLUSTER_SIGNING_FLAGS, CLUSTER_SIGNING_HELP } from './cluster-signing.js';
import {
  ensureDataDir,
  SERVER_FLAGS,
  SERVER_FLAGS_HELP,
  ensureServingCert,
  parseServerFlags,
  serveFromFlags,
} from './serve.js';
import { writeFileAtomic } from '../storage/write-file-atomic.js';
import { loadAuth } from './auth-flags.js';

/** The issuer of `up`'s ServiceAccount tokens when --service-account-issuer names none (kubeadm's). */
const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export const UP_HELP = `Usage: svcplane up [flags]

All-in-one svcplane: the Kubernetes API server on the embedded SQLite store (or etcd with
--storage-backend etcd3), with its controllers (by default all: ${KNOWN_CONTROLLERS.join(', ')}) on a
worker thread of their own. The first start generates a CA, a serving certificate for 127.0.0.1 and
localhost, an admin token (group system:masters) and DIR/kubeconfig, and a bootstrap token for nodes
(DIR/bootstrap-kubeconfig: svcplane node --bootstrap-kubeconfig). Client certificates of the CA
authenticate; the CSR signer issues with it. When ready it prints one line with
the URL and the kubeconfig path:

  KUBECONFIG=.svcplane/kubeconfig kubectl get namespaces

Stop it with Ctrl-C (SIGINT) or SIGTERM: it stops accepting requests, ends watches cleanly, and flushes
and closes the store.

Flags:
${SERVER_FLAGS_HELP}

The controllers (svcplane controller-manager's flags):
  --controllers LIST                      comma-separated, '*' for all, -NAME to leave one out
                                          (default '*'), e.g. '*,-servicegrid' when another manager
                                          runs the grid controllers
${controllerTimingFlagsHelp(40)}
  ${CLUSTER_SIGNING_HELP[2][0].padEnd(40)}${CLUSTER_SIGNING_HELP[2][1]}
`;

/** The controllers' flags `up` takes: which run, their timings, the longest validity its CSR signer issues. */
const UP_CONTROLLER_FLAGS = {
  ...CONTROLLER_TIMING_FLAGS,
  controllers: { type: 'string' },
  'cluster-signing-duration': CLUSTER_SIGNING_FLAGS['cluster-signing-duration'],
} as const;

/** Splits `args` into the API server's and the controllers' flags (unknown flags are usage errors). */
function splitControllerFlags(args: string[]): {
  serverArgs: string[];
  values: Record<string, string | boolean | undefined>;
} {
  const options = { ...SERVER_FLAGS, ...UP_CONTROLLER_FLAGS };
  const { values } = parseFlags(args, options);
  const { tokens } = parseArgs({ args, options, strict: true, allowPositionals: true, tokens: true });
  const drop = new Set<number>();
  for (const t of tokens) {
    if (t.kind !== 'option' || !Object.hasOwn(UP_CONTROLLER_FLAGS, t.name)) continue;
    drop.add(t.index);
    if (t.value !== undefined && !t.inlineValue) drop.add(t.index + 1);
  }
  return { serverArgs: args.filter((_, i) => !drop.has(i)), values };
}

export async function upCommand(
  args: string[],
  out: (s: string) => void,
  pkgVersion: string,
): Promise<number> {
  const split = splitControllerFlags(args);
  const parsed = parseServerFlags(split.serverArgs, UP_HELP, out, { allowLoopbackEndpoints: true });
  if (parsed === undefined) return 0;
  const { values, settings } = parsed;
  const nodeLifecycle = nodeLifecycleFlags(split.values);
  const podGC = podGCFlags(split.values);
  const signingMs = durationFlag('cluster-signing-duration', split.values['cluster-signing-duration']);
  const controllerNames = controllerList(split.values['controllers']);
  // Every flag is checked before anything is written: a bad flag leaves no trace (a new sa.key is
  // written only once the flags that use it have passed).
  const saKeyFile = join(settings.dataDir, 'pki', 'sa.key');
  const saKeyExists = existsSync(saKeyFile);
  const saKeyPem = saKeyExists ? readFlagFile('data-dir', saKeyFile) : generateServiceAccountKey();
  const auth = loadAuth(values, {
    authorizationMode: 'Node,RBAC',
    serviceAccount: { issuer: DEFAULT_SERVICE_ACCOUNT_ISSUER, signingKeyPem: saKeyPem },
  });
  ensureDataDir(settings.dataDir);
  const tls = ensureServingCert(settings.dataDir, [settings.bindAddress]);
  if (!saKeyExists && values['service-account-signing-key-file'] === undefined) {
    writeFileAtomic(saKeyFile, saKeyPem);
  }
  // The admin identity: a token in DIR/pki/tokens.csv; an operator's --token-auth-file replaces it.
  const tokensFile = join(settings.dataDir, 'pki', 'tokens.csv');
  const adminToken = ensureAdminToken(tokensFile);
  const bootstrapToken = ensureBootstrapToken(tokensFile);
  const tokens = new Map(auth.tokens ?? parseTokenFile(readFileSync(tokensFile, 'utf8')));
  // The controllers run on a worker thread (controller-host.ts) and reach this server over a unix socket of
  // the data dir, plain HTTP, with a token of their own that lives only in this process (as kube-apiserver's
  // loopback client has one): the API's event loop spends no TLS on them.
  // The controllers reach this server over a unix socket of the data dir (plain HTTP) with tokens that live
  // only in this process, as kube-apiserver's loopback client has one: the manager as
  // system:kube-controller-manager (its informers, its Lease, and the TokenRequests that give each
  // controller its own ServiceAccount), the scheduler as system:kube-scheduler, each authorized by its
  // RBAC bootstrap role. Only RBAC has those roles: under other modes (ABAC, AlwaysAllow) they are in
  // system:masters, as every controller was before RBAC.
  const ownIdentities = auth.modes.includes('RBAC');
  const groups = ownIdentities ? [] : ['system:masters'];
  const controllerToken = generateToken();
  tokens.set(tokenDigest(controllerToken), { name: 'system:kube-controller-manager', uid: '', groups });
  const schedulerToken = generateToken();
  tokens.set(tokenDigest(schedulerToken), { name: 'system:kube-scheduler', uid: '', groups });
  const dashboardToken = generateToken();
  tokens.set(tokenDigest(dashboardToken), { name: DASHBOARD_READER, uid: '', groups });
  const socket = controllerSocketPath(settings.dataDir);
  const log = jsonLogger();
  // The dashboard at /dashboard/ (docs/dashboard.md), behind this server's authentication and
  // authorization (a non-resource `get`; svcplane:dashboard-viewer grants it). It reads the API in-process
  // as its own user (DASHBOARD_READER's bootstrap role: list and watch), through the handler the server
  // hands over once it runs.
  let api: RequestListener | undefined;
  const dashboardTransport = inProcessTransport((req, res) => api!(req, res), { token: dashboardToken });
  const dashboard = createDashboard({
    client: new Client(dashboardTransport),
    log: jsonLogger(undefined, 'dashboard'),
    base: '/dashboard',
  });
  const controllers = new ControllerHost({
    data: {
      socketPath: socket.path,
      token: controllerToken,
      schedulerToken,
      serviceAccountCredentials: ownIdentities,
      controllers: controllerNames,
      nodeLifecycle,
      podGC,
      clusterSigning: {
        certFile: join(settings.dataDir, 'pki', 'ca.crt'),
        keyFile: join(settings.dataDir, 'pki', 'ca.key'),
        ...(signingMs === undefined ? {} : { durationSeconds: Math.floor(signingMs / 1000) }),
      },
      // On etcd, several API servers share the store: one `svcplane up` of them runs the controllers, the
      // others stand by, on the Lease `svcplane controller-manager --leader-elect` uses too. SQLite has one
      // process, which needs no campaign (and would otherwise wait out its own old Lease after a crash).
      ...(values['storage-backend'] === 'etcd3'
        ? {
            leaderElection: {
              namespace: 'kube-system',
              name: CONTROLLER_MANAGER_LEASE,
              identity: `${hostname()}_${randomUUID()}`,
            },
          }
        : {}),
    },
    log,
  });
  try {
    return await serveFromFlags({
      values,
      settings,
      // Client certificates of this CA authenticate (CN = user, O = groups): the nodes' own, from CSRs.
      tls: { cert: tls.certPem, key: tls.keyPem, clientCA: tls.caPem },
      auth,
      tokens,
      pkgVersion,
      log,
      local: {
        unixSocket: socket.path,
        readyChecks: [{ name: 'controllers', ok: () => controllers.ready }],
        extraMetrics: () => controllers.metrics(),
        mounts: [{ prefix: '/dashboard', handler: dashboard.listener }],
      },
      onReady: (server) => {
        const kubeconfig = join(settings.dataDir, 'kubeconfig');
        writeFileAtomic(
          kubeconfig,
          renderKubeconfig({ server: server.url, caPem: tls.caPem, user: 'admin', token: adminToken }),
        );
        // What `svcplane node --bootstrap-kubeconfig` starts from (kubeadm's bootstrap-kubelet.conf).
        if (auth.tokens === undefined)
          writeFileAtomic(
            join(settings.dataDir, 'bootstrap-kubeconfig'),
            renderKubeconfig({
              server: server.url,
              caPem: tls.caPem,
              user: 'kubelet-bootstrap',
              token: bootstrapToken,
            }),
          );
        out(`svcplane: ready at ${server.url}; kubeconfig: ${kubeconfig}`);
        controllers.start();
        api = server.handler;
        dashboard
          .start()
          .catch((err: unknown) => log.warn('the dashboard did not start', { error: String(err) }));
      },
      // The dashboard's event streams end first: the server waits for requests in flight.
      beforeShutdown: async () => {
        await dashboard.stop();
        dashboardTransport.close();
        await controllers.stop();
      },
    });
  } finally {
    socket.cleanup();
  }
}

/**
 * DIR/controllers.sock, or a private directory under the system's temporary directory when the data dir's
 * path is too long for a unix socket address (108 bytes on Linux).
 */
function controllerSocketPath(dataDir: string): { path: string; cleanup: () => void } {
  const inDataDir = resolve(dataDir, 'controllers.sock');
  if (Buffer.byteLength(inDataDir) <= 100) return { path: inDataDir, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'svcplane-'));
  return {
    path: join(dir, 'controllers.sock'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The admin token from the tokens file, generated (group system:masters) on the first start. */
function ensureAdminToken(tokensFile: string): string {
  if (existsSync(tokensFile)) {
    const line = readFileSync(tokensFile, 'utf8')
      .split('\n')
      .find((l) => l.includes(',admin,'));
    if (line === undefined)
      throw new UsageError(`${tokensFile} has no admin token; remove it to generate a new one`);
    return line.split(',')[0]!;
  }
  const token = generateToken();
  writeFileAtomic(
    tokensFile,
    `${formatTokenFileRecord(token, { name: 'admin', uid: 'admin', groups: ['system:masters'] })}\n`,
  );
  return token;
}

/** The user `svcplane node --bootstrap-kubeconfig` bootstraps as (a bootstrap token's identity upstream). */
const BOOTSTRAP_USER = { name: 'system:bootstrap:svcplane', uid: '', groups: ['system:bootstrappers'] };

/** The bootstrap token from the tokens file, appended (user system:bootstrap:svcplane) when missing. */
function ensureBootstrapToken(tokensFile: string): string {
  const text = readFileSync(tokensFile, 'utf8');
  const line = text.split('\n').find((l) => l.includes(`,${BOOTSTRAP_USER.name},`));
  if (line !== undefined) return line.split(',')[0]!;
  const token = generateToken();
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileAtomic(tokensFile, `${text}${sep}${formatTokenFileRecord(token, BOOTSTRAP_USER)}\n`);
  return token;
}
