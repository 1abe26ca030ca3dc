// A kubelet's read API for the offline step, in the benchmark's process: HTTPS on 127.0.0.1 with a serving
// certificate of a CA of its own, `GET /pods` answering a v1 PodList of the pods it is given and
// `GET /healthz` "ok", as `svcplane node --kubelet-port` serves them. A request must carry a client
// certificate or a bearer token (401 otherwise); neither is reviewed: the benchmark times the wrapper, not
// the kubelet's authorization. It notes the time it sends the first answer carrying each version of its
// pods, so a change is timed from the moment the wrapper could know it.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { KObject } from '../../src/api/object.js';
import { statusErrors } from '../../src/api/status.js';
import { generateCA, issueServingCert } from '../../src/apiserver/auth/pki.js';
import { epochMs } from '../lib/http.js';

export interface FakeKubelet {
  /** https://127.0.0.1:PORT, for --kubelet-url. */
  readonly url: string;
  /** The CA of its serving certificate, for --kubelet-certificate-authority. */
  readonly caFile: string;
  /** Serves these pods from now on; returns the version number of the new list. */
  setPods(pods: readonly KObject[]): number;
  /** When the first answer carrying `version` (or a later one) was sent (epoch ms), if it was. */
  servedAt(version: number): number | undefined;
  /** GET /pods answered so far. */
  readonly answers: () => number;
  close(): Promise<void>;
}

export async function startFakeKubelet(dir: string): Promise<FakeKubelet> {
  const ca = generateCA('bench-kubelet-ca');
  const serving = issueServingCert(ca, {
    commonName: 'bench-kubelet',
    ipAddresses: ['127.0.0.1'],
    dnsNames: [],
  });
  const caFile = path.join(dir, 'kubelet-ca.crt');
  writeFileSync(caFile, ca.certPem);
  let body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [] });
  let version = 0;
  let answers = 0;
  const firstSent = new Map<number, number>();
  const server: Server = createServer(
    { cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const cert = (req.socket as TLSSocket).getPeerCertificate();
      const authenticated =
        (cert !== null && Object.keys(cert).length > 0) ||
        /^Bearer \S+/.test(req.headers.authorization ?? '');
      const url = new URL(req.url ?? '/', 'https://kubelet');
      if (!authenticated) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(statusErrors.unauthorized().status));
      } else if (req.method === 'GET' && url.pathname === '/pods') {
        answers++;
        if (!firstSent.has(version)) firstSent.set(version, epochMs());
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      } else if (req.method === 'GET' && url.pathname === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found\n');
      }
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caFile,
    setPods(pods) {
      body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods });
      return ++version;
    },
    servedAt(v) {
      let first: number | undefined;
      for (const [at, t] of firstSent) if (at >= v && (first === undefined || t < first)) first = t;
      return first;
    },
    answers: () => answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
