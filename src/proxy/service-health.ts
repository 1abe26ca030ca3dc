// The health-check node port servers (kube-proxy's ServiceHealthServer): one plain-HTTP listener per
// Service with a health check (core/proxy/health-check.ts) on each address that takes node ports. After
// every successful sync the proxy hands over the new set: a Service that left, or whose port changed, is
// closed; a new one is opened; the others keep their sockets and only their counts change. A port that
// cannot be bound is reported (a Warning Event on the Service, as kube-proxy writes) and tried again at
// the next sync that hands it over, so it opens once whoever held it lets go.
import { createServer, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { cidrContains, parseAddress, parseCidrRange } from '../core/allocator/cidr.js';
import { healthCheckAnswer, type HealthCheckService } from '../core/proxy/health-check.js';
import { listen as listenServer } from '../runtime/http-endpoint.js';
import type { Logger } from '../runtime/logger.js';

/**
 * Where health checks listen: where the mode takes node ports. userspace: the --nodeport-addresses IPs
 * (none by default, as for its node ports). iptables: this host's addresses inside the
 * --nodeport-addresses CIDRs, read once at start as kube-proxy does, or every address when none is given.
 */
export function healthCheckHosts(
  mode: 'iptables' | 'nftables' | 'userspace',
  nodePortAddresses: readonly string[],
): (string | undefined)[] {
  if (mode === 'userspace') return [...nodePortAddresses];
  if (nodePortAddresses.length === 0) return [undefined];
  const cidrs = nodePortAddresses.map(parseCidrRange).filter((c) => c !== undefined);
  const hosts: string[] = [];
  for (const [name, addrs] of Object.entries(networkInterfaces()))
    for (const a of addrs ?? []) {
      const ip = parseAddress(a.address);
      if (ip === undefined || !cidrs.some((c) => cidrContains(c, ip))) continue;
      // A link-local IPv6 address is bound with its interface.
      hosts.push(a.family === 'IPv6' && (a.scopeid ?? 0) > 0 ? `${a.address}%${name}` : a.address);
    }
  return [...new Set(hosts)];
}

export interface ServiceHealthOptions {
  /**
   * Where each health check listens: one listener per address; `undefined` listens on every address of
   * the host (kube-proxy's default, with no --nodeport-addresses).
   */
  readonly addresses: readonly (string | undefined)[];
  /** The proxy's own health (its /healthz): a health check answers 503 while the proxy is unhealthy. */
  readonly proxyHealthy: () => boolean;
  /** A Service whose health check could not be opened (some address refused it). */
  readonly onListenError?: (svc: HealthCheckService, err: Error) => void;
  readonly log?: Pick<Logger, 'info'> & Partial<Pick<Logger, 'warn'>>;
}

interface Instance {
  svc: HealthCheckService;
  readonly servers: Server[];
}

function listen(
  server: Server,
  address: string | undefined,
  port: number,
  onError: (err: Error) => void,
): Promise<void> {
  return listenServer(server, { port, ...(address === undefined ? {} : { host: address }) }).then(() => {
    // Later errors (an accept that fails for want of file descriptors) are logged, never thrown.
    server.on('error', onError);
  });
}

const closeAll = (servers: readonly Server[]): Promise<unknown> =>
  Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((r) => {
          s.close(() => r());
          s.closeAllConnections();
        }),
    ),
  );

export class ServiceHealthServers {
  private readonly instances = new Map<string, Instance>();
  /** Syncs run one after another, in the order they were asked for. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly o: ServiceHealthOptions) {}

  /** Makes the open health checks match `want` (Service key → health check). */
  sync(want: ReadonlyMap<string, HealthCheckService>): Promise<void> {
    const run = this.queue.then(() => this.apply(want));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Service key → the port its health check is open on (for status and tests). */
  open(): Map<string, number> {
    return new Map([...this.instances].map(([k, i]) => [k, i.svc.port]));
  }

  async close(): Promise<void> {
    await this.queue;
    const all = [...this.instances.values()];
    this.instances.clear();
    await closeAll(all.flatMap((i) => i.servers));
  }

  private async apply(want: ReadonlyMap<string, HealthCheckService>): Promise<void> {
    const closing: Server[] = [];
    for (const [key, inst] of this.instances) {
      const next = want.get(key);
      if (next !== undefined && next.port === inst.svc.port) {
        inst.svc = next;
        continue;
      }
      this.o.log?.info('closing a health check', { service: key, port: inst.svc.port });
      this.instances.delete(key);
      closing.push(...inst.servers);
    }
    // A port moving from one Service to another is free again before the other opens it.
    await closeAll(closing);
    for (const [key, svc] of want) {
      if (this.instances.has(key)) continue;
      const inst: Instance = { svc, servers: [] };
      try {
        for (const address of this.o.addresses) {
          const server = createServer((req, res) => {
            req.resume();
            const a = healthCheckAnswer(inst.svc, this.o.proxyHealthy());
            res.writeHead(a.status, a.headers).end(a.body);
          });
          inst.servers.push(server);
          await listen(server, address, svc.port, (err) =>
            this.o.log?.warn?.('a health check server failed', { service: key, error: err.message }),
          );
        }
      } catch (err) {
        await closeAll(inst.servers);
        this.o.onListenError?.(svc, err instanceof Error ? err : new Error(String(err)));
        continue;
      }
      this.o.log?.info('opened a health check', { service: key, port: svc.port });
      this.instances.set(key, inst);
    }
  }
}
