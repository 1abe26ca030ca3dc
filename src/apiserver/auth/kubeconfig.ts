// The admin kubeconfig: one cluster (server URL + embedded CA), one token user, one context, selected.
// kubectl and client libraries read it as they read any kubeconfig.
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** e.g. "https://127.0.0.1:6443". */
  readonly server: string;
  /** The CA that signed the serving certificate, as PEM; embedded as certificate-authority-data. */
  readonly caPem: string;
  /** The kubeconfig's name for the user entry (e.g. "admin"). */
  readonly user: string;
  readonly token: string;
  /** Default "svcplane". */
  readonly clusterName?: string;
  /** Default: the cluster name. */
  readonly contextName?: string;
}

/** A kubeconfig (YAML) using `token` against `server`, trusting `caPem`, with its one context current. */
export function renderKubeconfig(opts: KubeconfigOptions): string {
  const cluster = opts.clusterName ?? 'svcplane';
  const context = opts.contextName ?? cluster;
  if (!/^https:\/\//.test(opts.server)) throw new Error(`server must be an https:// URL, got ${opts.server}`);
  if (!opts.caPem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('caPem must be a PEM certificate');
  if (opts.user === '' || cluster === '' || context === '') throw new Error('names must be non-empty');
  if (opts.token === '') throw new Error('token must be non-empty');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: cluster,
        cluster: {
          server: opts.server,
          'certificate-authority-data': Buffer.from(opts.caPem, 'utf8').toString('base64'),
        },
      },
    ],
    users: [{ name: opts.user, user: { token: opts.token } }],
    contexts: [{ name: context, context: { cluster, user: opts.user } }],
    'current-context': context,
    preferences: {},
  };
  // lineWidth 0: never fold the long base64 line.
  return stringify(doc, { lineWidth: 0 });
}

/** A new bearer token: 32 random bytes, base64url (43 characters, safe in a token file and a header). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}
