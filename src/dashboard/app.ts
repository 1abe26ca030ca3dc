// The dashboard's HTTP routes (core/dashboard/types.ts documents each answer), on Hono, under a mount
// point: `/` for `svcplane dashboard`, `/dashboard` for `svcplane up`. The page's files are served from
// its bundle (dist/dashboard/page/, built by `npm run build`). Bad input is answered with a Kubernetes
// Status (400 BadRequest, 404 NotFound), as the API server answers it. Every answer says
// `X-Content-Type-Options: nosniff`. With `acceptHosts` (svcplane dashboard's own server, which has no
// authentication), a request whose Host is not accepted gets 403 Forbidden, against DNS rebinding, as
// `kubectl proxy --accept-hosts` does.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { StatusError, statusErrors, type Status } from '../api/status.js';
import type { ChangeEvent } from '../core/dashboard/types.js';
import type { Range, DashboardWorld } from '../core/dashboard/world.js';
import type { LayoutQuery } from '../core/dashboard/layout.js';
import type { Logger } from '../runtime/logger.js';

export interface DashboardAppOptions {
  readonly world: DashboardWorld;
  readonly subscribe: (fn: (e: ChangeEvent) => void) => () => void;
  /** '' (served at /) or a path such as `/dashboard` (no trailing slash). */
  readonly base: string;
  /** The directory of the page's bundle (index.html, app.js, app.css). */
  readonly pageDir: string;
  readonly log: Logger;
  /** Resolves when the server stops: every event stream then ends. */
  readonly closed: Promise<void>;
  /** Between keepalive comments on an event stream (default 15 s). */
  readonly keepaliveMs?: number;
  /**
   * The hosts a request may name (its Host header without the port, an IPv6 address in brackets); any
   * host when unset (svcplane up's mount, behind the API server's authentication).
   */
  readonly acceptHosts?: readonly RegExp[];
}

/** The most rows, columns, and cells one `api/cells` request may ask for (before clipping to the layout). */
const CELLS_LIMITS = { rows: 1_000, cols: 1_000, cells: 250_000 } as const;

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json',
  svg: 'image/svg+xml',
  png: 'image/png',
  json: 'application/json',
};

const status = (c: Context, err: StatusError) => c.json(err.status as Status, err.status.code as 400);

/** `A-B`, two indices with A ≤ B. */
function range(name: string, raw: string | undefined): Range {
  const m = raw === undefined ? null : /^(\d{1,9})-(\d{1,9})$/.exec(raw);
  if (m === null)
    throw statusErrors.badRequest(
      `${name}: want A-B, two indices with A <= B; got ${JSON.stringify(raw ?? '')}`,
    );
  const a = Number(m[1]);
  const b = Number(m[2]);
  if (a > b) throw statusErrors.badRequest(`${name}: ${a} is after ${b}`);
  return [a, b];
}

function required(c: Context, name: string): string {
  const v = c.req.query(name);
  if (v === undefined || v === '') throw statusErrors.badRequest(`the query parameter ${name} is required`);
  return v;
}

/** The host a Host header names, without its port (an IPv6 address in brackets); undefined if malformed. */
function hostOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  try {
    return new URL(`http://${header}/`).hostname;
  } catch {
    return undefined;
  }
}

function forbiddenHost(host: string | undefined): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `forbidden: the host ${JSON.stringify(host ?? '')} is not accepted (see --accept-hosts)`,
    reason: 'Forbidden',
    code: 403,
  });
}

/** One event for several: every node and Service they name, and the latest generation. */
function mergeChanges(a: ChangeEvent, b: ChangeEvent): ChangeEvent {
  return {
    generation: Math.max(a.generation, b.generation),
    nodes: [...new Set([...a.nodes, ...b.nodes])],
    services: [...new Set([...a.services, ...b.services])],
  };
}

const layoutQuery = (c: Context): LayoutQuery => ({
  group: c.req.query('group'),
  namespace: c.req.query('namespace'),
  name: c.req.query('name'),
});

export function dashboardApp(o: DashboardAppOptions): Hono {
  const app = new Hono();
  const b = o.base;
  // One reaction to `closed` for every event stream: each stream registers its ender while it is open.
  const enders = new Set<() => void>();
  let closed = false;
  void o.closed.then(() => {
    closed = true;
    for (const end of enders) end();
  });

  app.use('*', async (c, next) => {
    c.header('X-Content-Type-Options', 'nosniff');
    if (o.acceptHosts !== undefined) {
      const host = hostOf(c.req.header('host'));
      if (host === undefined || !o.acceptHosts.some((re) => re.test(host)))
        return status(c, forbiddenHost(host ?? c.req.header('host')));
    }
    await next();
  });

  const file = async (c: Context, name: string) => {
    try {
      const body = await readFile(join(o.pageDir, name));
      const ext = name.slice(name.lastIndexOf('.') + 1);
      return c.body(body, 200, {
        'Content-Type': CONTENT_TYPES[ext] ?? 'application/octet-stream',
        'Cache-Control': 'no-cache',
      });
    } catch {
      try {
        await readFile(join(o.pageDir, 'index.html'));
      } catch {
        return status(
          c,
          statusErrors.serviceUnavailable(
            `the dashboard's page is not built (no ${join(o.pageDir, 'index.html')}): run \`npm run build\``,
          ),
        );
      }
      return status(c, statusErrors.pathNotFound());
    }
  };

  if (b !== '') app.get(b, (c) => c.redirect(`${b}/`, 301));
  app.get(`${b}/`, (c) => file(c, 'index.html'));

  app.get(`${b}/api/layout`, (c) => c.json(o.world.layout(layoutQuery(c))));

  app.get(`${b}/api/cells`, (c) => {
    const raw = c.req.query('version');
    if (raw === undefined || !/^\d{1,15}$/.test(raw))
      throw statusErrors.badRequest(
        `version: want the layout's version, a number; got ${JSON.stringify(raw ?? '')}`,
      );
    const rows = range('rows', c.req.query('rows'));
    const cols = range('cols', c.req.query('cols'));
    const nRows = rows[1] - rows[0] + 1;
    const nCols = cols[1] - cols[0] + 1;
    if (nRows > CELLS_LIMITS.rows || nCols > CELLS_LIMITS.cols || nRows * nCols > CELLS_LIMITS.cells)
      throw statusErrors.badRequest(
        `rows ${rows[0]}-${rows[1]} × cols ${cols[0]}-${cols[1]}: at most ${CELLS_LIMITS.rows} rows, ` +
          `${CELLS_LIMITS.cols} columns and ${CELLS_LIMITS.cells} cells per request`,
      );
    return c.json(o.world.cells(layoutQuery(c), Number(raw), rows, cols));
  });

  app.get(`${b}/api/explain`, (c) => {
    const node = required(c, 'node');
    const service = required(c, 'service');
    if (!o.world.hasNode(node)) throw statusErrors.notFound({ group: '', resource: 'nodes' }, node);
    const answer = o.world.explain(node, service);
    if (answer === undefined) throw statusErrors.notFound({ group: '', resource: 'services' }, service);
    return c.json(answer);
  });

  app.get(`${b}/api/service`, (c) => {
    const service = required(c, 'service');
    const answer = o.world.service(service, c.req.query('group'));
    if (answer === undefined) throw statusErrors.notFound({ group: '', resource: 'services' }, service);
    return c.json(answer);
  });

  app.get(`${b}/api/events`, (c) => {
    // Not buffered by a proxy in between (nginx honours this header), and not cached.
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(c, async (stream) => {
      // What changed since the last event went out, merged into one: a client that stops reading holds
      // one pending event (and one pending write), however many changes come meanwhile.
      let pending: ChangeEvent | undefined;
      let wake: (() => void) | undefined;
      const unsubscribe = o.subscribe((e) => {
        pending = pending === undefined ? e : mergeChanges(pending, e);
        wake?.();
      });
      let open = !closed;
      const end = () => {
        open = false;
        wake?.();
      };
      stream.onAbort(end);
      enders.add(end);
      let writing = 0;
      const write = async (w: () => Promise<unknown>) => {
        writing++;
        try {
          await w();
        } finally {
          writing--;
        }
      };
      const keepalive = setInterval(() => {
        // A client that does not read: no second write behind the one it has not taken.
        if (writing === 0) void write(() => stream.write(': keepalive\n\n'));
      }, o.keepaliveMs ?? 15_000);
      try {
        // A first comment sends the headers at once, so the page knows the stream is open.
        await write(() => stream.write(': connected\n\n'));
        while (open) {
          const e = pending;
          if (e !== undefined) {
            pending = undefined;
            await write(() => stream.writeSSE({ event: 'change', data: JSON.stringify(e) }));
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        clearInterval(keepalive);
        enders.delete(end);
        unsubscribe();
      }
    });
  });

  app.get(`${b}/:file{[A-Za-z0-9_][A-Za-z0-9_.-]*}`, (c) => file(c, c.req.param('file')));

  app.notFound((c) => status(c, statusErrors.pathNotFound()));
  app.onError((err, c) => {
    if (err instanceof StatusError) return status(c, err);
    o.log.error('dashboard request failed', { path: c.req.path, error: String(err) });
    return status(c, statusErrors.internal(err));
  });
  return app;
}
