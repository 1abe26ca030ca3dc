// A kubelet's read API stand-in for the wrapper's offline tests: HTTPS on 127.0.0.1 with a certificate
// of its own CA, `GET /pods` answering a v1 PodList the test sets (or a status it sets), and a record of
// what each request presented (bearer token, client certificate).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  generateCA,
  issueClientCert,
  issueServingCert,
  type CertKeyPair,
} from '../../src/apiserver/auth/pki.js';

export interface FakeKubelet {
  readonly url: string;
  /** PEM of the CA that signed its serving certificate. */
  readonly caPem: string;
  /** The pods `/pods` answers with (any JSON objects). */
  pods: unknown[];
  /** Set: `/pods` answers this status instead. */
  failWith: number | undefined;
  /**
   * Per request: its Authorization header, whether it presented a client certificate, and when it came
   * (Date.now(); a benchmark times from the first answer with a change to the event it causes).
   */
  readonly requests: { authorization: string | undefined; clientCert: boolean; at: number }[];
  stop(): Promise<void>;
}

let ca: CertKeyPair | undefined;
let serving: CertKeyPair | undefined;

export async function startFakeKubelet(port = 0): Promise<FakeKubelet> {
  ca ??= generateCA('fake-kubelet-ca');
  serving ??= issueServingCert(ca, { commonName: 'kubelet', ipAddresses: ['127.0.0.1'], dnsNames: [] });
  const state = {
    pods: [] as unknown[],
    failWith: undefined as number | undefined,
    requests: [] as FakeKubelet['requests'],
  };
  const server: Server = createServer(
    { cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      state.requests.push({
        authorization: req.headers.authorization,
        clientCert: (req.socket as TLSSocket).getPeerCertificate()?.raw !== undefined,
        at: Date.now(),
      });
      if (req.url !== '/pods') {
        res.writeHead(404).end();
        return;
      }
      if (state.failWith !== undefined) {
        res.writeHead(state.failWith, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: state.failWith }),
        );
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: state.pods }));
    },
  );
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    caPem: ca.certPem,
    get pods() {
      return state.pods;
    },
    set pods(p) {
      state.pods = p;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(s) {
      state.failWith = s;
    },
    requests: state.requests,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A pod as a kubelet lists it: on `node`, Running, with `ip`, Ready unless `ready` is false. */
export function kubeletPod(
  name: string,
  o: { node: string; ip: string; ready?: boolean; labels?: Record<string, string>; namespace?: string },
): Record<string, unknown> {
  return {
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
    },
    spec: {
      nodeName: o.node,
      containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }],
    },
    status: {
      phase: 'Running',
      podIP: o.ip,
      podIPs: [{ ip: o.ip }],
      hostIP: '127.0.1.1',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

/** A client certificate (and key) of a CA of its own, and another CA's certificate (for a wrong `ca`). */
export function throwawayCerts(): { client: CertKeyPair; otherCaPem: string } {
  const ca = generateCA('fake-kubelet-client-ca');
  return {
    client: issueClientCert(ca, { commonName: 'wrapper', organizations: [] }),
    otherCaPem: generateCA('fake-kubelet-other-ca').certPem,
  };
}
