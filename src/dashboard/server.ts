// The dashboard as a request listener: its watches (feed.ts) and its routes (app.ts) behind node:http's
// listener interface, for `svcplane dashboard`'s own server and for `svcplane up`, which mounts it behind
// the API server's authentication and authorization.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import type { Client } from '../runtime/client.js';
import type { Logger } from '../runtime/logger.js';
import { dashboardApp } from './app.js';
import { DashboardFeed } from './feed.js';

/** Where `npm run build` puts the page: dist/dashboard/page/, beside this module once compiled. */
export const DEFAULT_PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));

export interface DashboardOptions {
  readonly client: Client;
  readonly log: Logger;
  /** '' or a mount point such as `/dashboard`. */
  readonly base: string;
  readonly edgeHealth?: string | undefined;
  readonly pageDir?: string;
  /**
   * The hosts a request may name (Host without the port): 403 Forbidden for any other. Set for
   * `svcplane dashboard`'s own server (no authentication of its own: against DNS rebinding); unset for
   * `svcplane up`'s mount, behind the API server's authentication.
   */
  readonly acceptHosts?: readonly RegExp[];
}

export interface Dashboard {
  /** Serves the routes under the mount point (answers 404 for everything else). */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Starts the watches; resolves once each has listed. */
  start(): Promise<void>;
  /** Ends every event stream and stops the watches; once, however often it is called. */
  stop(): Promise<void>;
}

export function createDashboard(o: DashboardOptions): Dashboard {
  const feed = new DashboardFeed({ client: o.client, log: o.log, edgeHealth: o.edgeHealth });
  let close!: () => void;
  const closed = new Promise<void>((resolve) => (close = resolve));
  const app = dashboardApp({
    world: feed.world,
    subscribe: (fn) => feed.subscribe(fn),
    base: o.base,
    pageDir: o.pageDir ?? DEFAULT_PAGE_DIR,
    log: o.log,
    closed,
    ...(o.acceptHosts === undefined ? {} : { acceptHosts: o.acceptHosts }),
  });
  let stopping: Promise<void> | undefined;
  const listen = getRequestListener(app.fetch);
  return {
    listener: (req, res) => void listen(req, res),
    start: () => feed.start(),
    stop: () => {
      close();
      return (stopping ??= feed.stop());
    },
  };
}

/** A plain HTTP server for the listener on host:port; resolves with it once it listens. */
export async function listenDashboard(
  listener: Dashboard['listener'],
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  // No request timeout: the event stream is long-lived.
  const server = createServer({ requestTimeout: 0 }, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr !== null ? addr.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return { server, url: `http://${shown}:${actual}/` };
}
