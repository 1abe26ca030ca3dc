// `svcplane up`: the all-in-one server on the embedded store (DESIGN §4). The first start generates a
// CA, a serving certificate for 127.0.0.1/localhost, an admin token (group system:masters) and
// DIR/kubeconfig; every start rewrites the kubeconfig with the URL actually served.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatTokenFileRecord, parseTokenFile } from '../apiserver/auth/token-file.js';
import { generateToken, renderKubeconfig } from '../apiserver/auth/kubeconfig.js';
import { jsonLogger } from '../apiserver/logger.js';
import { buildAuthorizer, alwaysAllow } from '../apiserver/auth/authorizer.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { parseFlags, UsageError } from './flags.js';
import { openStoreFromFlags } from './store-command.js';
import {
  SERVER_FLAGS,
  SERVER_FLAGS_HELP,
  ensureServingCert,
  loadAuth,
  runServer,
  serverSettings,
  untilSignalled,
  writeFileAtomic,
} from './serve.js';

export const UP_HELP = `Usage: svcplane up [flags]

All-in-one svcplane: the Kubernetes API server on the embedded SQLite store (or etcd with
--storage-backend etcd3). The first start generates a CA, a serving certificate for 127.0.0.1 and
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
  const { values, positionals } = parseFlags(args, SERVER_FLAGS);
  if (values.help) {
    out(UP_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const settings = serverSettings(values);
  // Every flag is checked before anything is written: a bad flag leaves no trace.
  const userAuth = loadAuth(values);
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const log = jsonLogger();

  // The admin identity: a token in DIR/pki/tokens.csv, unless the operator brings their own file.
  const tokensFile = join(settings.dataDir, 'pki', 'tokens.csv');
  const tls = ensureServingCert(settings.dataDir, [settings.bindAddress]);
  let adminToken: string;
  if (existsSync(tokensFile)) {
    const line = readFileSync(tokensFile, 'utf8')
      .split('\n')
      .find((l) => l.includes(',admin,'));
    if (line === undefined)
      throw new UsageError(`${tokensFile} has no admin token; remove it to generate a new one`);
    adminToken = line.split(',')[0]!;
  } else {
    adminToken = generateToken();
    writeFileAtomic(
      tokensFile,
      `${formatTokenFileRecord(adminToken, { name: 'admin', uid: 'admin', groups: ['system:masters'] })}\n`,
    );
  }
  const auth = userAuth;
  const tokens = auth.tokens ?? parseTokenFile(readFileSync(tokensFile, 'utf8'));

  const store =
    values['storage-backend'] === 'etcd3'
      ? await openStoreFromFlags(values)
      : SqliteStore.open({ dataDir: settings.dataDir });
  let server;
  try {
    server = await runServer({
      store,
      settings,
      tls: {
        cert: tls.certPem,
        key: tls.keyPem,
        ...(auth.clientCA === undefined ? {} : { clientCA: auth.clientCA }),
      },
      tokens,
      authorizer:
        values['authorization-mode'] === undefined ? buildAuthorizer([alwaysAllow]) : auth.authorizer,
      pkgVersion,
      log,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const kubeconfig = join(settings.dataDir, 'kubeconfig');
  writeFileAtomic(
    kubeconfig,
    renderKubeconfig({ server: server.url, caPem: tls.caPem, user: 'admin', token: adminToken }),
  );
  out(`svcplane: ready at ${server.url}; kubeconfig: ${kubeconfig}`);
  return untilSignalled(server, store, log);
}
