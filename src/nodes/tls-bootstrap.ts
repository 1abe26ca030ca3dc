// TLS bootstrapping of a simulated node, as a kubelet does it with --bootstrap-kubeconfig (KEP-43,
// kubelet's pkg/kubelet/certificate/bootstrap): a node keeps its own client certificate
// (CN=system:node:NAME, O=system:nodes) in CERT_DIR/NAME/kubelet-client-current.pem (certificate and
// key, mode 0600). A certificate there that is still valid is used again; otherwise a new key is made
// here, a CertificateSigningRequest (signer kubernetes.io/kube-apiserver-client-kubelet) is created
// with the bootstrap identity, watched until it is issued (or denied, failed, or the wait times out),
// and the certificate is written beside its key. The key never leaves this machine.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KUBELET_CLIENT_SIGNER, decodeBytesField, encodeBytesField } from '../api/certificate-request.js';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { csrView, NODE_USER_PREFIX, NODES_GROUP } from '../core/certificates/csr.js';
import type { Client } from '../runtime/client.js';
import { isApiError } from '../runtime/client.js';
import { httpTransport, type HttpCredentials } from '../runtime/http-transport.js';
import type { Transport } from '../runtime/transport.js';
import { writeFileAtomic } from '../storage/write-file-atomic.js';

const CSRS = mustFindResource('certificates.k8s.io', 'certificatesigningrequests');

/** The file a node's certificate and key live in, under CERT_DIR/NAME (the kubelet's name for it). */
export const CLIENT_CERT_FILE = 'kubelet-client-current.pem';

/** How long a node waits for its request to be issued (kubelet waits about as long before giving up). */
export const DEFAULT_BOOTSTRAP_TIMEOUT_MS = 5 * 60 * 1000;

/** A fresh key and a PEM CERTIFICATE REQUEST for it (the pki's, injected). */
export type CertificateRequestMaker = (subject: { commonName: string; organizations: readonly string[] }) => {
  csrPem: string;
  keyPem: string;
};

export interface BootstrapOptions {
  /** The bootstrap identity's client (it may create, get and watch CertificateSigningRequests). */
  readonly client: Client;
  readonly nodeName: string;
  /** CERT_DIR: the node's files go to CERT_DIR/NAME. */
  readonly certDir: string;
  readonly createRequest: CertificateRequestMaker;
  readonly timeoutMs?: number;
  readonly nowMs?: () => number;
  /** Request a new certificate even though the stored one is still valid (rotation). */
  readonly renew?: boolean;
}

export interface NodeCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  /** The name of the request it came from; undefined when a stored certificate was used again. */
  readonly requestName: string | undefined;
}

export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----\n?/g;

/** The stored certificate of a node, when it is there, names the node and is valid at `nowMs`. */
export function storedCertificate(
  file: string,
  nodeName: string,
  nowMs: number,
): NodeCertificate | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const blocks = [...text.matchAll(PEM_BLOCK)];
  const certPem = blocks.find((b) => b[1] === 'CERTIFICATE')?.[0];
  const keyPem = blocks.find((b) => b[1]?.endsWith('PRIVATE KEY'))?.[0];
  if (certPem === undefined || keyPem === undefined) return undefined;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return undefined;
  }
  const notAfterMs = Date.parse(cert.validTo);
  if (!cert.subject.split('\n').includes(`CN=${NODE_USER_PREFIX}${nodeName}`)) return undefined;
  if (Date.parse(cert.validFrom) > nowMs || notAfterMs <= nowMs) return undefined;
  return { certPem, keyPem, notBeforeMs: Date.parse(cert.validFrom), notAfterMs, requestName: undefined };
}

const writeSecret = (file: string, text: string): void => writeFileAtomic(file, text);

/** The node's certificate: the stored one while valid, else a new one through a CertificateSigningRequest. */
export async function bootstrapNodeCertificate(o: BootstrapOptions): Promise<NodeCertificate> {
  const now = o.nowMs ?? Date.now;
  const dir = join(o.certDir, o.nodeName);
  const file = join(dir, CLIENT_CERT_FILE);
  const stored = o.renew === true ? undefined : storedCertificate(file, o.nodeName, now());
  if (stored !== undefined) return stored;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { csrPem, keyPem } = o.createRequest({
    commonName: `${NODE_USER_PREFIX}${o.nodeName}`,
    organizations: [NODES_GROUP],
  });
  const created = await o.client.create(CSRS, '', {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'node-csr-' },
    spec: {
      request: encodeBytesField(csrPem),
      signerName: KUBELET_CLIENT_SIGNER,
      usages: ['digital signature', 'client auth'],
    },
  });
  const name = created.metadata.name ?? '';
  const certPem = await waitForCertificate(o.client, created, o.timeoutMs ?? DEFAULT_BOOTSTRAP_TIMEOUT_MS);
  writeSecret(file, `${certPem.endsWith('\n') ? certPem : `${certPem}\n`}${keyPem}`);
  const cert = new X509Certificate(certPem);
  return {
    certPem,
    keyPem,
    notBeforeMs: Date.parse(cert.validFrom),
    notAfterMs: Date.parse(cert.validTo),
    requestName: name,
  };
}

/** The issued certificate of a request, from its watch; a Denied or Failed request, or the timeout, throws. */
async function waitForCertificate(client: Client, csr: KObject, timeoutMs: number): Promise<string> {
  const name = csr.metadata.name ?? '';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  let current = csr;
  try {
    while (!abort.signal.aborted) {
      const done = outcome(current);
      if (done !== undefined) return done;
      const rv = current.metadata.resourceVersion;
      try {
        const opts = {
          fieldSelector: `metadata.name=${name}`,
          ...(rv === undefined ? {} : { resourceVersion: rv }),
        };
        for await (const ev of client.watch(CSRS, opts, abort.signal)) {
          if (ev.type === 'DELETED')
            throw new BootstrapError(`CertificateSigningRequest "${name}" was deleted`);
          if (ev.type === 'ERROR') {
            // The watch could not go on from there (410 Expired): read the request again.
            current = await client.get(CSRS, '', name, abort.signal);
            break;
          }
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') current = ev.object;
          const got = outcome(current);
          if (got !== undefined) return got;
        }
      } catch (err) {
        if (err instanceof BootstrapError) throw err;
        if (abort.signal.aborted) break;
        // 410 Gone: the resourceVersion is too old to watch from; read the request again.
        if (!isApiError(err, 410)) throw err;
        current = await client.get(CSRS, '', name, abort.signal);
      }
    }
  } finally {
    clearTimeout(timer);
  }
  throw new BootstrapError(
    `timed out after ${timeoutMs < 1000 ? `${timeoutMs}ms` : `${Math.round(timeoutMs / 1000)}s`} waiting for CertificateSigningRequest "${name}" to be approved and issued (kubectl get csr; kubectl certificate approve ${name})`,
  );
}

/** The certificate of an issued request, undefined while pending; throws for a Denied or Failed one. */
function outcome(csr: KObject): string | undefined {
  const v = csrView(csr);
  if (v.denied || v.failed) {
    const conditions = (csr.status as { conditions?: Array<{ type?: string; message?: string }> } | undefined)
      ?.conditions;
    const c = conditions?.find((x) => x.type === 'Denied' || x.type === 'Failed');
    throw new BootstrapError(
      `CertificateSigningRequest "${v.name}" was ${v.denied ? 'denied' : 'not issued (Failed)'}${c?.message ? `: ${c.message}` : ''}`,
    );
  }
  if (!v.issued) return undefined;
  return decodeBytesField((csr.status as { certificate?: unknown }).certificate);
}

/**
 * When to request the next certificate: at a random point between 70% and 90% of the current one's
 * validity, as the kubelet's certificate manager does (so a fleet does not renew all at once). A
 * certificate just issued counts from `nowMs`, not from its notBefore (signers backdate it by minutes,
 * which would make a short one due at once).
 */
export function renewalAtMs(
  cert: NodeCertificate,
  nowMs: number,
  random: () => number = Math.random,
): number {
  const from = cert.requestName === undefined ? cert.notBeforeMs : Math.max(cert.notBeforeMs, nowMs);
  return Math.round(from + (cert.notAfterMs - from) * (0.7 + 0.2 * random()));
}

/**
 * A transport to `server` that presents the node's certificate, trusting what the bootstrap
 * kubeconfig trusts (its CA, or its insecure-skip-tls-verify) and sending none of its credentials.
 */
export function nodeTransport(server: string, trust: HttpCredentials, cert: NodeCertificate): Transport {
  const credentials: HttpCredentials = {
    ...(trust.ca === undefined ? {} : { ca: trust.ca }),
    ...(trust.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: trust.rejectUnauthorized }),
    cert: cert.certPem,
    key: cert.keyPem,
  };
  return httpTransport({ server, credentials: () => credentials });
}
