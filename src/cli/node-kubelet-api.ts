// `svcplane node`'s kubelet API flags (the kubelet's own names) → one kubelet server per node
// (src/nodes/kubelet-server.ts):
//   --kubelet-port P                    default 10250; 0 turns the API off
//   --tls-cert-file, --tls-private-key-file
//                                       the serving certificate of every node; without them each node
//                                       makes its own, self-signed, in ROOT_DIR/NAME/pki (kubelet.crt,
//                                       kubelet.key, and kubelet-ca.crt, the CA a client can trust)
//   --client-ca-file FILE               the CA client certificates are verified against; default: the CA
//                                       of the kubeconfig's cluster entry (for `svcplane up`, the CA that
//                                       signs client certificates)
//   --authorization-mode Webhook|AlwaysAllow
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCA, issueServingCert } from '../apiserver/auth/pki.js';
import { OfflineDecisions } from '../core/nodes/kubelet-auth.js';
import { AUTHORIZATIONS_FILE, nodeDir, writeNodeFile } from '../nodes/checkpoint-store.js';
import {
  apiReviews,
  startKubeletServer,
  type KubeletAuthorizationMode,
  type KubeletServer,
} from '../nodes/kubelet-server.js';
import type { KObject } from '../api/object.js';
import type { Client } from '../runtime/client.js';
import { loadKubeconfig } from '../runtime/kubeconfig.js';
import type { Logger } from '../runtime/logger.js';
import { writeFileAtomic } from '../storage/write-file-atomic.js';
import { UsageError, intFlag } from './flags.js';
import { firstLine } from './kubeconfig-flags.js';

export const DEFAULT_KUBELET_PORT = 10250;

/** The kubelet API cannot be served (its address is taken); the message is the one line printed. */
export class KubeletApiError extends Error {
  override readonly name = 'KubeletApiError';
}

export const KUBELET_API_FLAGS = {
  'kubelet-port': { type: 'string' },
  'tls-cert-file': { type: 'string' },
  'tls-private-key-file': { type: 'string' },
  'client-ca-file': { type: 'string' },
  'authorization-mode': { type: 'string' },
} as const;

export interface KubeletApiSettings {
  /** undefined: the API is off (--kubelet-port 0). */
  readonly port: number | undefined;
  /** Whether --kubelet-port was given: then an address in use is an error, else a warning. */
  readonly explicitPort: boolean;
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
  /** --client-ca-file's PEM, when given. */
  readonly clientCAPem?: string;
  readonly authorization: KubeletAuthorizationMode;
}

const readFlagFile = (flag: string, file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--${flag}: cannot read ${file}: ${firstLine(err)}`);
  }
};

/** The kubelet API flags, checked. */
export function kubeletApiFlags(values: Record<string, string | boolean | undefined>): KubeletApiSettings {
  const port = intFlag('kubelet-port', values['kubelet-port'], 0) ?? DEFAULT_KUBELET_PORT;
  if (port > 65535) throw new UsageError(`--kubelet-port: ${port} is not a port`);
  const mode = values['authorization-mode'] ?? 'Webhook';
  if (mode !== 'Webhook' && mode !== 'AlwaysAllow')
    throw new UsageError(`--authorization-mode: ${JSON.stringify(mode)} is not Webhook or AlwaysAllow`);
  const certFile = values['tls-cert-file'];
  const keyFile = values['tls-private-key-file'];
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new UsageError('give both --tls-cert-file and --tls-private-key-file, or neither');
  const caFile = values['client-ca-file'];
  return {
    port: port === 0 ? undefined : port,
    explicitPort: values['kubelet-port'] !== undefined,
    ...(typeof certFile === 'string' && typeof keyFile === 'string'
      ? {
          tls: {
            certPem: readFlagFile('tls-cert-file', certFile),
            keyPem: readFlagFile('tls-private-key-file', keyFile),
          },
        }
      : {}),
    ...(typeof caFile === 'string' ? { clientCAPem: readFlagFile('client-ca-file', caFile) } : {}),
    authorization: mode,
  };
}

/** The CA of a kubeconfig's current cluster entry (the default --client-ca-file), if it names one. */
export async function kubeconfigCA(
  path: string | undefined,
  context: string | undefined,
): Promise<string | undefined> {
  const kc = loadKubeconfig({
    ...(path === undefined ? {} : { path }),
    ...(context === undefined ? {} : { context }),
  });
  try {
    const ca = (await kc.credentials()).ca;
    if (ca === undefined) return undefined;
    const text = (Array.isArray(ca) ? ca : [ca]).map((c) =>
      typeof c === 'string' ? c : Buffer.from(c).toString('utf8'),
    );
    return text.join('\n');
  } finally {
    kc.close();
  }
}

/**
 * The node's self-signed serving certificate, as the kubelet makes one without --tls-cert-file: in
 * ROOT_DIR/NAME/pki, made on first use and again when it does not cover the node's IP or has expired.
 */
export function nodeServingCert(
  rootDir: string,
  node: string,
  ip: string,
): { certPem: string; keyPem: string } {
  const pki = join(nodeDir(rootDir, node), 'pki');
  const crt = join(pki, 'kubelet.crt');
  const key = join(pki, 'kubelet.key');
  if (existsSync(crt) && existsSync(key)) {
    const certPem = readFileSync(crt, 'utf8');
    const cert = new X509Certificate(certPem);
    if ((cert.subjectAltName ?? '').includes(`IP Address:${ip}`) && Date.parse(cert.validTo) > Date.now())
      return { certPem, keyPem: readFileSync(key, 'utf8') };
  }
  nodeDir(join(rootDir, node), 'pki');
  const ca = generateCA(`${node}-ca`);
  const serving = issueServingCert(ca, { commonName: node, ipAddresses: [ip], dnsNames: [node] });
  writeFileAtomic(key, serving.keyPem);
  writeFileAtomic(crt, `${serving.certPem.trimEnd()}\n${ca.certPem}`);
  writeFileAtomic(join(pki, 'kubelet-ca.crt'), ca.certPem, 0o644);
  return { certPem: readFileSync(crt, 'utf8'), keyPem: serving.keyPem };
}

export interface NodeApi {
  readonly name: string;
  readonly internalIP: string;
  /** The client the node's reviews go through (its own identity with TLS bootstrapping). */
  readonly client: Client;
  readonly pods: () => readonly KObject[];
}

/** Starts every node's kubelet API; on a failure, those started are closed again. */
export async function startKubeletApis(
  s: KubeletApiSettings & { readonly port: number },
  nodes: readonly NodeApi[],
  rootDir: string,
  clientCAPem: string | undefined,
  log: Logger,
): Promise<KubeletServer[]> {
  const servers: KubeletServer[] = [];
  try {
    for (const n of nodes) {
      const file = join(nodeDir(rootDir, n.name), AUTHORIZATIONS_FILE);
      let decisions = new OfflineDecisions();
      if (existsSync(file)) {
        const read = OfflineDecisions.decode(readFileSync(file, 'utf8'));
        if (typeof read === 'string')
          log.warn('ignoring the kept kubelet API decisions', { file, problem: read });
        else decisions = read;
      }
      const tls = s.tls ?? nodeServingCert(rootDir, n.name, n.internalIP);
      const server = await startKubeletServer({
        node: n.name,
        host: n.internalIP,
        port: s.port,
        ...tls,
        ...(clientCAPem === undefined ? {} : { clientCAPem }),
        authorization: s.authorization,
        reviews: apiReviews(n.client),
        pods: n.pods,
        decisions,
        saveDecisions: () =>
          writeNodeFile(rootDir, n.name, AUTHORIZATIONS_FILE, decisions.encode(Date.now())),
        log,
      }).catch((err: unknown) => {
        // Two processes on the default --node-ip: the second runs its nodes without the API.
        if (s.explicitPort || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        log.warn('the kubelet API is not served: its address is in use (give --node-ip or --kubelet-port)', {
          node: n.name,
          address: `${n.internalIP}:${s.port}`,
        });
        return undefined;
      });
      if (server !== undefined) servers.push(server);
    }
  } catch (err) {
    await Promise.all(servers.map((x) => x.close()));
    throw new KubeletApiError(`cannot serve the kubelet API: ${firstLine(err)}`, { cause: err });
  }
  return servers;
}
