// The CSR controllers' X.509 tooling for the commands that run them: the API server's pki
// (parseCertificateRequest, signCertificateRequest) and the cluster CA of kube-controller-manager's
// --cluster-signing-cert-file/--cluster-signing-key-file, which `svcplane up` sets to its own DIR/pki CA.
import { readFileSync } from 'node:fs';
import { parseCertificateRequest, signCertificateRequest } from '../apiserver/auth/pki.js';
import type { CertificateControllerSettings } from '../controllers/manager.js';
import { UsageError, durationFlag } from './flags.js';

/** The signing flags' parse options. */
export const CLUSTER_SIGNING_FLAGS = {
  'cluster-signing-cert-file': { type: 'string' },
  'cluster-signing-key-file': { type: 'string' },
  'cluster-signing-duration': { type: 'string' },
} as const;

export const CLUSTER_SIGNING_HELP = [
  ['--cluster-signing-cert-file FILE', 'the CA certificate the CSR signer issues client certificates with'],
  ['--cluster-signing-key-file FILE', "that CA's private key (both or neither; without them no signer)"],
  ['--cluster-signing-duration D', 'the longest validity it issues (default 8760h: one year)'],
] as const;

/** Where the cluster CA is, and the longest validity it issues. */
export interface ClusterSigningFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly durationSeconds?: number;
}

/** The signing flags as files and a duration; undefined when neither file is named. */
export function clusterSigningFlags(
  values: Record<string, string | boolean | undefined>,
): ClusterSigningFiles | undefined {
  const cert = values['cluster-signing-cert-file'];
  const key = values['cluster-signing-key-file'];
  const ms = durationFlag('cluster-signing-duration', values['cluster-signing-duration']);
  if (cert === undefined && key === undefined) {
    if (ms !== undefined)
      throw new UsageError('--cluster-signing-duration needs --cluster-signing-cert-file');
    return undefined;
  }
  if (typeof cert !== 'string' || cert === '' || typeof key !== 'string' || key === '')
    throw new UsageError('--cluster-signing-cert-file and --cluster-signing-key-file go together');
  return {
    certFile: cert,
    keyFile: key,
    ...(ms === undefined ? {} : { durationSeconds: Math.floor(ms / 1000) }),
  };
}

/** The CSR controllers' settings: always the parser; the signer when the CA files are given (read now). */
export function certificateControllers(
  files: ClusterSigningFiles | undefined,
): CertificateControllerSettings {
  if (files === undefined) return { parse: parseCertificateRequest };
  const read = (flag: string, path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw new UsageError(`--${flag}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const ca = {
    certPem: read('cluster-signing-cert-file', files.certFile),
    keyPem: read('cluster-signing-key-file', files.keyFile),
  };
  return {
    parse: parseCertificateRequest,
    sign: (csrPem, opts) => signCertificateRequest(ca, csrPem, opts),
    ...(files.durationSeconds === undefined ? {} : { signingDurationSeconds: files.durationSeconds }),
  };
}
