// `svcplane up`: the all-in-one server on the embedded store (DESIGN §4). The first start generates a
// CA, a serving certificate for 127.0.0.1/localhost, an admin token (group system:masters) and
// DIR/kubeconfig; every start rewrites the kubeconfig with the URL actually served.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateToken, renderKubeconfig } from '../apiserver/auth/kubeconfig.js';
import { formatTokenFileRecord, parseTokenFile, tokenDigest } from '../apiserver/auth/token-file.js';
import { jsonLogger } from '../apiserver/logger.js';
import { KNOWN_CONTROLLERS } from '../controllers/manager.js';
import { ControllerHost } from './controller-host.js';
import { UsageError } from './flags.js';
import {
  SERVER_FLAGS_HELP,
  ensureServingCert,
  loadAuth,
  parseServerFlags,
  serveFromFlags,
  writeFileAtomic,
} from './serve.js';

export const UP_HELP = `Usage: svcplane up [flags]

All-in-one svcplane: the Kubernetes API server on the embedded SQLite store (or etcd with
--storage-backend etcd3), with the controllers (endpoints, endpointslice, garbagecollector, servicegrid, deploymentgrid) on a worker thread of its own. The first start generates a CA, a serving certificate for 127.0.0.1 and
localhost, an admin token (group system:masters) and DIR/kubeconfig. When ready it prints one line with
the URL and the kubeconfig path:

  KUBECONFIG=.svcplane/kubeconfig kubectl get namespaces

Stop it with Ctrl-C (SIGINT) or SIGTERM: it stops accepting requests, ends watches cleanly, and flushes
and closes the store.

Flags:
${SERVER_FLAGS_HELP}
`;

export async function upCommand(
  args: string[],
  out: (s: string) => void,
  pkgVersion: string,
): Promise<number> {
  const parsed = parseServerFlags(args, UP_HELP, out);
  if (parsed === undefined) return 0;
  const { values, settings } = parsed;
  // Every flag is checked before anything is written: a bad flag leaves no trace.
  const auth = loadAuth(values);
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const tls = ensureServingCert(settings.dataDir, [settings.bindAddress]);
  // The admin identity: a token in DIR/pki/tokens.csv; an operator's --token-auth-file replaces it.
  const tokensFile = join(settings.dataDir, 'pki', 'tokens.csv');
  const adminToken = ensureAdminToken(tokensFile);
  const tokens = new Map(auth.tokens ?? parseTokenFile(readFileSync(tokensFile, 'utf8')));
  // The controllers run on a worker thread (controller-host.ts) and reach this server over a unix socket of
  // the data dir, plain HTTP, with a token of their own that lives only in this process (as kube-apiserver's
  // loopback client has one): the API's event loop spends no TLS on them.
  const controllerToken = generateToken();
  tokens.set(tokenDigest(controllerToken), {
    name: 'system:kube-controller-manager',
    uid: '',
    groups: ['system:masters'],
  });
  const socket = controllerSocketPath(settings.dataDir);
  const log = jsonLogger();
  const controllers = new ControllerHost({
    data: { socketPath: socket.path, token: controllerToken, controllers: KNOWN_CONTROLLERS },
    log,
  });
  try {
    return await serveFromFlags({
      values,
      settings,
      tls: { cert: tls.certPem, key: tls.keyPem },
      auth,
      tokens,
      pkgVersion,
      log,
      local: {
        unixSocket: socket.path,
        readyChecks: [{ name: 'controllers', ok: () => controllers.ready }],
        extraMetrics: () => controllers.metrics(),
      },
      onReady: (server) => {
        const kubeconfig = join(settings.dataDir, 'kubeconfig');
        writeFileAtomic(
          kubeconfig,
          renderKubeconfig({ server: server.url, caPem: tls.caPem, user: 'admin', token: adminToken }),
        );
        out(`svcplane: ready at ${server.url}; kubeconfig: ${kubeconfig}`);
        controllers.start();
      },
      beforeShutdown: () => controllers.stop(),
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
