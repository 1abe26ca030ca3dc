// P8a's backends: two HTTP echo servers in one process.
import http from 'node:http';
import type net from 'node:net';
import { serveWorker } from '../lib/process.js';

export interface Target {
  host: string;
  port: number;
}

export type EchoRequest = { op: 'start'; hosts: string[] };
export interface EchoStarted {
  pid: number;
  backends: Array<Target & { name: string }>;
}

/** The backends: one node:http server per host, answering every request with its name. */
export function echoMain(): void {
  const servers: http.Server[] = [];
  serveWorker<EchoRequest>(async (msg) => {
    const backends: EchoStarted['backends'] = [];
    for (const [i, host] of msg.hosts.entries()) {
      const name = `b${i}`;
      const body = Buffer.from(name);
      const srv = http.createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(body.length) });
        res.end(body);
      });
      srv.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, host, () => resolve());
      });
      servers.push(srv);
      backends.push({ host, port: (srv.address() as net.AddressInfo).port, name });
    }
    const out: EchoStarted = { pid: process.pid, backends };
    return out;
  });
}
