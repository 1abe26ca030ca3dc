// `svcplane node --bootstrap-kubeconfig FILE [--cert-dir DIR]`: each node's own identity, as kubelets
// get theirs by TLS bootstrapping. The bootstrap kubeconfig is loaded once (its server, the CA it
// trusts, and the bootstrap credentials); every node gets its certificate (src/nodes/tls-bootstrap.ts,
// with the API server's pki making the key and request) and a client that presents it.
import { existsSync } from 'node:fs';
import { createCertificateRequest } from '../apiserver/auth/pki.js';
import {
  bootstrapNodeCertificate,
  DEFAULT_BOOTSTRAP_TIMEOUT_MS,
  nodeTransport,
} from '../nodes/tls-bootstrap.js';
import { forEachLimit } from '../nodes/register.js';
import { Client } from '../runtime/client.js';
import { httpTransport } from '../runtime/http-transport.js';
import { loadKubeconfig } from '../runtime/kubeconfig.js';
import type { Logger } from '../runtime/logger.js';
import type { Transport } from '../runtime/transport.js';
import { UsageError, durationFlag } from './flags.js';
import { firstLine } from './kubeconfig-flags.js';

const DEFAULT_CERT_DIR = '.svcplane/node-pki';

export interface BootstrapSettings {
  readonly kubeconfig: string;
  readonly context?: string;
  readonly certDir: string;
  readonly timeoutMs: number;
}

/** --bootstrap-kubeconfig and its companions; undefined without it (then --kubeconfig as before). */
export function bootstrapFlags(
  values: Record<string, string | boolean | undefined>,
): BootstrapSettings | undefined {
  const file = values['bootstrap-kubeconfig'];
  if (file === undefined) {
    for (const f of ['cert-dir', 'bootstrap-timeout'])
      if (values[f] !== undefined) throw new UsageError(`--${f} needs --bootstrap-kubeconfig`);
    return undefined;
  }
  if (typeof file !== 'string' || file === '')
    throw new UsageError('--bootstrap-kubeconfig: must name a file');
  if (!existsSync(file)) throw new UsageError(`--bootstrap-kubeconfig: ${file} does not exist`);
  if (values['kubeconfig'] !== undefined)
    throw new UsageError('give --kubeconfig or --bootstrap-kubeconfig, not both');
  const certDir = values['cert-dir'];
  if (certDir !== undefined && (typeof certDir !== 'string' || certDir === ''))
    throw new UsageError('--cert-dir: must name a directory');
  const context = values['context'];
  return {
    kubeconfig: file,
    ...(typeof context === 'string' && context !== '' ? { context } : {}),
    certDir: typeof certDir === 'string' ? certDir : DEFAULT_CERT_DIR,
    timeoutMs: durationFlag('bootstrap-timeout', values['bootstrap-timeout']) ?? DEFAULT_BOOTSTRAP_TIMEOUT_MS,
  };
}

export interface NodeIdentities {
  /** Each node's client, presenting its own certificate. */
  readonly clients: ReadonlyMap<string, Client>;
  close(): void;
}

/** Every node's certificate (reused or bootstrapped, a few at a time) and its client. */
export async function nodeIdentities(
  s: BootstrapSettings,
  names: readonly string[],
  log: Logger,
): Promise<NodeIdentities> {
  let kc;
  try {
    kc = loadKubeconfig({ path: s.kubeconfig, ...(s.context === undefined ? {} : { context: s.context }) });
  } catch (err) {
    throw new UsageError(`--bootstrap-kubeconfig: ${firstLine(err)}`);
  }
  const trust = await kc.credentials();
  const transports: Transport[] = [];
  const bootstrap = httpTransport({ server: kc.server, credentials: () => kc.credentials() });
  transports.push(bootstrap);
  const close = (): void => {
    for (const t of transports) t.close();
    kc.close();
  };
  const clients = new Map<string, Client>();
  try {
    const bootClient = new Client(bootstrap);
    await forEachLimit(names, 8, async (name) => {
      const cert = await bootstrapNodeCertificate({
        client: bootClient,
        nodeName: name,
        certDir: s.certDir,
        createRequest: createCertificateRequest,
        timeoutMs: s.timeoutMs,
      });
      if (cert.requestName !== undefined)
        log.info('node certificate issued', { node: name, csr: cert.requestName });
      const t = nodeTransport(kc.server, trust, cert);
      transports.push(t);
      clients.set(name, new Client(t));
    });
  } catch (err) {
    close();
    throw err;
  }
  return { clients, close };
}
