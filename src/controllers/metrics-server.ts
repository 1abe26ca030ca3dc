// The controller manager's own HTTP endpoint (plain HTTP, like controller-runtime's metrics server):
// /metrics in Prometheus text format, /healthz, and /readyz (ok once the controllers run: for a copy
// waiting for the leader Lease, not ready).
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { servePaths } from '../runtime/http-endpoint.js';

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(
  host: string,
  port: number,
  registry: Registry,
  ready: () => boolean,
): Promise<MetricsServer> {
  const server = await servePaths(host, port, (path, req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('method not allowed\n');
      return true;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
      );
      return true;
    }
    if (path === '/healthz' || path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return true;
    }
    if (path === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'not leading');
      return true;
    }
    return false;
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
