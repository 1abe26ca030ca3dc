// `svcplane apiserver`: the API server alone, configured with kube-apiserver's flag names.
// Without --tls-cert-file it serves a self-signed certificate kept in DIR/pki, as kube-apiserver does
// in its --cert-dir.
import { UsageError, readFlagFile } from './flags.js';
import { SERVER_FLAGS_HELP, ensureServingCert, parseServerFlags, serveFromFlags } from './serve.js';
import { loadAuth } from './auth-flags.js';

export const APISERVER_HELP = `Usage: svcplane apiserver [flags]

The Kubernetes API server alone. Authentication: bearer tokens (--token-auth-file), client
certificates (--client-ca-file) and, with --service-account-issuer, bound ServiceAccount tokens
(kubectl create token); requests without credentials get 401 except /healthz, /livez, /readyz and
/version. Authorization: the --authorization-mode chain (default AlwaysAllow).

Flags:
${SERVER_FLAGS_HELP}
`;

export async function apiserverCommand(
  args: string[],
  out: (s: string) => void,
  pkgVersion: string,
): Promise<number> {
  const parsed = parseServerFlags(args, APISERVER_HELP, out);
  if (parsed === undefined) return 0;
  const { values, settings } = parsed;
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  if ((typeof certFile === 'string') !== (typeof keyFile === 'string')) {
    throw new UsageError('--tls-cert-file and --tls-private-key-file go together');
  }
  const auth = loadAuth(values);
  let tls: { cert: string; key: string };
  if (typeof certFile === 'string' && typeof keyFile === 'string') {
    tls = {
      cert: readFlagFile('tls-cert-file', certFile),
      key: readFlagFile('tls-private-key-file', keyFile),
    };
  } else {
    const generated = ensureServingCert(settings.dataDir, [settings.bindAddress]);
    tls = { cert: generated.certPem, key: generated.keyPem };
  }
  return serveFromFlags({
    values,
    settings,
    tls,
    auth,
    tokens: auth.tokens,
    pkgVersion,
    onReady: (server) => out(`svcplane: apiserver ready at ${server.url}`),
  });
}
