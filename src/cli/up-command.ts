// `svcplane up`: the all-in-one server on the embedded store (DESIGN §4). The first start generates a
// CA, a serving certificate for 127.0.0.1/localhost, an admin token (group system:masters) and
// DIR/kubeconfig; every start rewrites the kubeconfig with the URL actually served.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateToken, renderKubeconfig } from '../apiserver/auth/kubeconfig.js';
import { formatTokenFileRecord, parseTokenFile } from '../apiserver/auth/token-file.js';
import { ControllerManager, KNOWN_CONTROLLERS } from '../controllers/manager.js';
import { Client } from '../runtime/client.js';
import { httpTransport } from '../runtime/http-transport.js';
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
--storage-backend etcd3), with the controllers (endpoints, endpointslice, garbagecollector) running in-process. The first start generates a CA, a serving certificate for 127.0.0.1 and
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
  const tokens = auth.tokens ?? parseTokenFile(readFileSync(tokensFile, 'utf8'));
  let manager: ControllerManager | undefined;
  let client: Client | undefined;
  return serveFromFlags({
    values,
    settings,
    tls: { cert: tls.certPem, key: tls.keyPem },
    auth,
    tokens,
    pkgVersion,
    onReady: (server, log) => {
      const kubeconfig = join(settings.dataDir, 'kubeconfig');
      writeFileAtomic(
        kubeconfig,
        renderKubeconfig({ server: server.url, caPem: tls.caPem, user: 'admin', token: adminToken }),
      );
      out(`svcplane: ready at ${server.url}; kubeconfig: ${kubeconfig}`);
      // The controllers run in-process, as a client of this server like any other: the kubeconfig's
      // server, CA and token, without loading a kubeconfig library for what this process already knows.
      const credentials = { ca: tls.caPem, headers: { Authorization: `Bearer ${adminToken}` } };
      client = new Client(httpTransport({ server: server.url, credentials: () => credentials }));
      manager = new ControllerManager(client, {
        controllers: KNOWN_CONTROLLERS,
        log,
        metrics: server.metrics.registry,
      });
      manager.start().catch((err: unknown) => log.error('controllers failed to start', { err: String(err) }));
    },
    beforeShutdown: async () => {
      await manager?.stop();
      client?.transport.close();
    },
  });
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
