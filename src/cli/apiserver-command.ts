// `svcplane apiserver`: the API server alone, configured with kube-apiserver's flag names.
// Without --tls-cert-file it serves a self-signed certificate kept in DIR/pki, as kube-apiserver does
// in its --cert-dir.
import { readFileSync } from 'node:fs';
import { jsonLogger } from '../apiserver/logger.js';
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
} from './serve.js';

export const APISERVER_HELP = `Usage: svcplane apiserver [flags]

The Kubernetes API server alone. Authentication: bearer tokens (--token-auth-file) and client
certificates (--client-ca-file); requests without credentials get 401 except /healthz, /livez, /readyz
and /version. Authorization: AlwaysAllow or ABAC.

Flags:
${SERVER_FLAGS_HELP}
`;

export async function apiserverCommand(
  args: string[],
  out: (s: string) => void,
  pkgVersion: string,
): Promise<number> {
  const { values, positionals } = parseFlags(args, SERVER_FLAGS);
  if (values.help) {
    out(APISERVER_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const settings = serverSettings(values);
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  if ((typeof certFile === 'string') !== (typeof keyFile === 'string')) {
    throw new UsageError('--tls-cert-file and --tls-private-key-file go together');
  }
  const read = (flag: string, path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw new UsageError(
        `--${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
  };
  const tls =
    typeof certFile === 'string' && typeof keyFile === 'string'
      ? { cert: read('tls-cert-file', certFile), key: read('tls-private-key-file', keyFile) }
      : (() => {
          const t = ensureServingCert(settings.dataDir, [settings.bindAddress]);
          return { cert: t.certPem, key: t.keyPem };
        })();
  const auth = loadAuth(values);
  const log = jsonLogger();
  const store = await openStoreFromFlags({ ...values, 'data-dir': settings.dataDir });
  let server;
  try {
    server = await runServer({
      store,
      settings,
      tls: { ...tls, ...(auth.clientCA === undefined ? {} : { clientCA: auth.clientCA }) },
      tokens: auth.tokens,
      authorizer: auth.authorizer,
      pkgVersion,
      log,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  out(`svcplane: apiserver ready at ${server.url}`);
  return untilSignalled(server, store, log);
}
