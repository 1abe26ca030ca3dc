// The floor under a watch fan-out on this machine: a bare Node HTTPS server, in a process of its own
// (as the wrapper is), that holds watch requests open and writes one pre-framed event to every one of
// them, as fast as a loop of socket writes goes. Nothing else runs in it: no store, no cache, no
// dispatch, no selectors. Measured with the same watcher processes as the wrapper, it says how much of a
// fan-out's latency is the machine's (TLS writes over loopback on the same cores as the clients) and how
// much is ours.
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { generateCA, issueServingCert } from '../../src/apiserver/auth/pki.js';
import { epochMs } from './http.js';
import { serveWorker } from './process.js';

export const FLOOR_ROLE_ENV = 'SVCPLANE_BENCH_FANOUT_FLOOR';

export type FloorRequest =
  | { op: 'listen' }
  | { op: 'watchers' }
  /** Writes `line` (one JSON watch event, without its newline) to every open watch; returns when it began. */
  | { op: 'emit'; line: string }
  | { op: 'stop' };

export interface FloorListening {
  readonly port: number;
  readonly ca: string;
  readonly token: string;
}

function chunk(line: string): Buffer {
  const body = Buffer.from(`${line}\n`);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
}

function floorMain(): void {
  const sockets = new Set<Socket>();
  const responses = new Set<ServerResponse>();
  let server: https.Server | undefined;
  serveWorker<FloorRequest>(async (req) => {
    switch (req.op) {
      case 'listen': {
        const ca = generateCA('bench-floor-ca');
        const serving = issueServingCert(ca, {
          commonName: 'bench-floor',
          ipAddresses: ['127.0.0.1'],
          dnsNames: ['localhost'],
        });
        server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) => {
          res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
          res.flushHeaders();
          const sock = res.socket!;
          sockets.add(sock);
          responses.add(res);
          res.once('close', () => {
            sockets.delete(sock);
            responses.delete(res);
          });
        });
        await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
        const addr = server.address();
        if (addr === null || typeof addr === 'string') throw new Error('the floor server has no port');
        return { port: addr.port, ca: ca.certPem, token: 'unused' } satisfies FloorListening;
      }
      case 'watchers':
        return sockets.size;
      case 'emit': {
        const framed = chunk(req.line);
        const t0 = epochMs();
        for (const s of sockets) s.write(framed);
        return t0;
      }
      case 'stop':
        for (const r of responses) r.destroy();
        server?.close();
        return null;
    }
  });
}

if (process.env[FLOOR_ROLE_ENV] === '1') floorMain();
