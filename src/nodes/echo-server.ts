// `svcplane node --serve-pods`: a small HTTP echo server on every container port of every running pod,
// bound to the pod's own IP, so traffic sent to a pod IP (through a Service, a proxy, or curl) reaches
// "the pod". The body follows the layout of Kubernetes' echoserver image (the seed's example greps its
// `node name:` line), with `name: value` lines:
//
//   Hostname: web-1
//
//   Pod Information:
//   	node name: node-0
//   	pod name: web-1
//   	pod namespace: default
//   	pod IP: 127.10.0.1
//
//   Request Information:
//   	client address: 127.0.0.1:51234
//   	method: GET
//   	real path: /
//   	...
//
// Pod IPs in 127.0.0.0/8 need no root (Linux routes all of it to loopback); other addresses must be
// assigned to a local interface first. A bind that fails is handed back to the caller. Someone else
// holding the port (EADDRINUSE) is for the simulated kubelet a container that did not start, tried again
// at the next ensure(); an address this host does not have (EADDRNOTAVAIL: a pod CIDR outside 127/8, an
// IPv6 pod IP) cannot be served at all and is not tried again.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../runtime/http-endpoint.js';

export interface PodEndpoint {
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  /** The pod's IPs, primary first; a listener is opened on each. */
  readonly ips: readonly string[];
  /** Its containers' TCP ports. */
  readonly ports: readonly number[];
}

/** A listener that could not be opened. */
export interface ServeFailure {
  readonly ip: string;
  readonly port: number;
  /** The bind error, e.g. `listen EADDRINUSE: address already in use 127.10.0.1:8080`. */
  readonly message: string;
  /** Its errno code (EADDRINUSE, EADDRNOTAVAIL, EACCES, ...). */
  readonly code: string;
}

/** A failure that another process causes, and that may go away: the port is in use. */
export const isPortTaken = (f: ServeFailure): boolean => f.code === 'EADDRINUSE';

/** The echo body for one request. */
export function echoBody(
  pod: PodEndpoint,
  ip: string,
  req: {
    method?: string | undefined;
    url?: string | undefined;
    httpVersion?: string | undefined;
    headers: Record<string, unknown>;
  },
  client: string,
): string {
  const headers = Object.entries(req.headers).map(([k, v]) => `\t${k}: ${String(v)}`);
  return [
    `Hostname: ${pod.name}`,
    '',
    'Pod Information:',
    `\tnode name: ${pod.node}`,
    `\tpod name: ${pod.name}`,
    `\tpod namespace: ${pod.namespace}`,
    `\tpod IP: ${ip}`,
    '',
    'Request Information:',
    `\tclient address: ${client}`,
    `\tmethod: ${req.method ?? 'GET'}`,
    `\treal path: ${req.url ?? '/'}`,
    `\trequest version: ${req.httpVersion ?? '1.1'}`,
    '',
    'Request Headers:',
    ...headers,
    '',
  ].join('\n');
}

const hostPort = (addr: string, port: number): string =>
  addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;

/** The listeners of every served pod, keyed by the pod's namespace/name. */
export class PodServers {
  private readonly pods = new Map<string, { spec: string; servers: Server[]; failed: number }>();

  /** How many listeners are open. */
  get listeners(): number {
    let n = 0;
    for (const p of this.pods.values()) n += p.servers.length;
    return n;
  }

  /**
   * Opens the pod's listeners, or re-opens them when its IPs or ports changed, or when a port was taken
   * last time. Resolves to the listeners that could not be opened now (none: the pod is served).
   */
  async ensure(key: string, pod: PodEndpoint): Promise<ServeFailure[]> {
    const spec = JSON.stringify([pod.ips, pod.ports, pod.node]);
    const have = this.pods.get(key);
    if (have?.spec === spec && have.failed === 0) return [];
    if (have !== undefined) await this.close(key);
    const entry = { spec, servers: [] as Server[], failed: 0 };
    this.pods.set(key, entry);
    const failures: ServeFailure[] = [];
    await Promise.all(
      pod.ips.flatMap((ip) =>
        pod.ports.map(async (port) => {
          const server = createServer((req, res) => {
            const a = req.socket.remoteAddress ?? '';
            const body = echoBody(pod, ip, req, hostPort(a, req.socket.remotePort ?? 0));
            res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
            res.end(body);
          });
          server.keepAliveTimeout = 1000;
          try {
            await listen(server, { host: ip, port, exclusive: true });
            // A later accept error (out of file descriptors) must not crash the process.
            server.on('error', () => undefined);
            if (this.pods.get(key) === entry) entry.servers.push(server);
            else server.close();
          } catch (err) {
            const f = {
              ip,
              port,
              message: (err as Error).message,
              code: (err as NodeJS.ErrnoException).code ?? '',
            };
            if (isPortTaken(f)) entry.failed++;
            failures.push(f);
          }
        }),
      ),
    );
    return failures;
  }

  /** Closes the pod's listeners (and drops their open connections). */
  async close(key: string): Promise<void> {
    const have = this.pods.get(key);
    if (have === undefined) return;
    this.pods.delete(key);
    await Promise.all(
      have.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.pods.keys()].map((k) => this.close(k)));
  }

  /** The address a listener is bound to (for tests). */
  addresses(key: string): string[] {
    return (this.pods.get(key)?.servers ?? []).map((s) => {
      const a = s.address() as AddressInfo;
      return hostPort(a.address, a.port);
    });
  }
}
