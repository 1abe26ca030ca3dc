// `svcplane node --bootstrap-kubeconfig FILE [--cert-dir DIR]`: each node's own identity, as kubelets
// get theirs by TLS bootstrapping. The bootstrap kubeconfig is loaded once (its server, the CA it
// trusts, and the bootstrap credentials); every node gets its certificate (src/nodes/tls-bootstrap.ts,
// with the API server's pki making the key and request) and a client that presents it, and renews it
// before it expires.
import { existsSync } from 'node:fs';
import { createCertificateRequest } from '../apiserver/auth/pki.js';
import {
  bootstrapNodeCertificate,
  DEFAULT_BOOTSTRAP_TIMEOUT_MS,
  nodeTransport,
  renewalAtMs,
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

/**
 * A transport whose target can be swapped (a renewed certificate): requests go to the current one;
 * the old one is closed, so its watches end and the informers watch again with the new certificate.
 */
function swappableTransport(first: Transport): Transport & { swap(next: Transport): void } {
  let current = first;
  return {
    server: first.server,
    send: (req) => current.send(req),
    stream: (req) => current.stream!(req),
    close: () => current.close(),
    swap(next) {
      const old = current;
      current = next;
      old.close();
    },
  };
}

/** The longest delay setTimeout takes (2^31 - 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long a failed renewal waits before it tries again. */
const RENEW_RETRY_MS = 60_000;

/**
 * Every node's certificate (reused or bootstrapped, a few at a time) and its client. Each certificate is
 * renewed by the node itself (its own identity: certificatesigningrequests/selfnodeclient) at 70–90% of
 * its validity, as the kubelet's certificate manager does.
 */
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
  const timers = new Set<NodeJS.Timeout>();
  const bootstrap = httpTransport({ server: kc.server, credentials: () => kc.credentials() });
  transports.push(bootstrap);
  const close = (): void => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    for (const t of transports) t.close();
    kc.close();
  };
  const clients = new Map<string, Client>();
  const certificate = (client: Client, name: string, renew: boolean) =>
    bootstrapNodeCertificate({
      client,
      nodeName: name,
      certDir: s.certDir,
      createRequest: createCertificateRequest,
      timeoutMs: s.timeoutMs,
      renew,
    });
  const scheduleRenewal = (
    name: string,
    transport: ReturnType<typeof swappableTransport>,
    atMs: number,
  ): void => {
    if (atMs - Date.now() > MAX_TIMER_MS) {
      // A timer cannot wait a year (node's limit is about 24.8 days): wait in steps.
      const step = setTimeout(() => {
        timers.delete(step);
        scheduleRenewal(name, transport, atMs);
      }, MAX_TIMER_MS);
      step.unref();
      timers.add(step);
      return;
    }
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        certificate(clients.get(name)!, name, true).then(
          (cert) => {
            log.info('node certificate renewed', { node: name, csr: cert.requestName });
            transport.swap(nodeTransport(kc.server, trust, cert));
            scheduleRenewal(name, transport, renewalAtMs(cert, Date.now()));
          },
          (err: unknown) => {
            log.warn('node certificate renewal failed; retrying', { node: name, err: firstLine(err) });
            scheduleRenewal(name, transport, Date.now() + RENEW_RETRY_MS);
          },
        );
      },
      Math.max(0, atMs - Date.now()),
    );
    timer.unref();
    timers.add(timer);
  };
  try {
    const bootClient = new Client(bootstrap);
    await forEachLimit(names, 8, async (name) => {
      const cert = await certificate(bootClient, name, false);
      if (cert.requestName !== undefined)
        log.info('node certificate issued', { node: name, csr: cert.requestName });
      const t = swappableTransport(nodeTransport(kc.server, trust, cert));
      transports.push(t);
      clients.set(name, new Client(t));
      scheduleRenewal(name, t, renewalAtMs(cert, Date.now()));
    });
  } catch (err) {
    close();
    throw err;
  }
  return { clients, close };
}
