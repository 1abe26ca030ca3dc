// A stand-in for the dashboard's server, for the page's browser tests: it serves the BUILT page
// (dist/dashboard/page) at /dashboard/ and answers the routes of the contract (core/dashboard/types.ts)
// from a fixed model the test owns, with no cluster behind it. The layout's rows, groups, filters, the
// cells' index ranges, staleness and group summaries follow the contract; the cells, explanations and
// Service views are whatever the model says. `change()` edits the model and sends a `change` event.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type {
  Cell,
  CellsAnswer,
  ChangeEvent,
  ExplainAnswer,
  GroupSummary,
  Layout,
  LayoutColumn,
  LayoutGroup,
  LayoutRow,
  NodeHealthState,
  ServiceAnswer,
} from '../../../src/core/dashboard/types.js';

export interface FixtureNode {
  readonly name: string;
  labels: Record<string, string>;
  ready: boolean;
  health: NodeHealthState;
}

export interface FixtureModel {
  readonly nodes: FixtureNode[];
  /** In column order. */
  readonly services: LayoutColumn[];
  readonly defaultGroupKey: string;
  readonly healthConfigured: boolean;
  cell(node: FixtureNode, service: LayoutColumn): Cell;
  explain(node: FixtureNode, service: LayoutColumn): Omit<ExplainAnswer, 'cell'>;
  service(service: LayoutColumn, groupKey: string): ServiceAnswer;
}

export const PAGE_DIR = path.resolve(
  path.dirname(new URL(import.meta.url).pathname),
  '../../../dist/dashboard/page',
);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function layoutOf(m: FixtureModel, version: number, q: URLSearchParams): Layout {
  const groupKey = q.has('group') ? (q.get('group') ?? '') : m.defaultGroupKey;
  const namespace = q.get('namespace') ?? '';
  const name = q.get('name') ?? '';
  const valueOf = (n: FixtureNode): string | null => (groupKey === '' ? null : (n.labels[groupKey] ?? null));
  const sorted = [...m.nodes].sort((a, b) => {
    const va = valueOf(a);
    const vb = valueOf(b);
    if (va !== vb) return va === null ? 1 : vb === null ? -1 : va < vb ? -1 : 1;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  const rows: LayoutRow[] = sorted.map((n) => ({
    node: n.name,
    group: valueOf(n),
    ready: n.ready,
    health: n.health,
  }));
  const groups: LayoutGroup[] = [];
  rows.forEach((r, i) => {
    const last = groups.at(-1);
    if (last && last.value === r.group) groups[groups.length - 1] = { ...last, count: last.count + 1 };
    else groups.push({ value: r.group, first: i, count: 1 });
  });
  const keys = new Set<string>();
  for (const n of m.nodes) for (const k of Object.keys(n.labels)) keys.add(k);
  keys.delete(m.defaultGroupKey);
  return {
    version,
    groupKey,
    groupKeys: [m.defaultGroupKey, ...[...keys].sort()],
    namespaces: [...new Set(m.services.map((s) => s.namespace))].sort(),
    rows,
    groups,
    columns: m.services.filter(
      (s) => (namespace === '' || s.namespace === namespace) && (name === '' || s.name.includes(name)),
    ),
    totalColumns: m.services.length,
    healthConfigured: m.healthConfigured,
  };
}

function range(text: string | null, count: number): [number, number] {
  const m = /^(\d+)-(\d+)$/.exec(text ?? '');
  if (!m) throw new Error(`bad range ${text}`);
  return [Math.min(Number(m[1]), count - 1), Math.min(Number(m[2]), count - 1)];
}

function cellsOf(m: FixtureModel, l: Layout, q: URLSearchParams): CellsAnswer {
  const rows = range(q.get('rows'), l.rows.length);
  const cols = range(q.get('cols'), l.columns.length);
  const byName = new Map(m.nodes.map((n) => [n.name, n]));
  const cell = (r: number, c: number): Cell => m.cell(byName.get(l.rows[r]!.node)!, l.columns[c]!);
  const cells: Cell[][] = [];
  for (let r = rows[0]; r <= rows[1]; r++) {
    const line: Cell[] = [];
    for (let c = cols[0]; c <= cols[1]; c++) line.push(cell(r, c));
    cells.push(line);
  }
  const groups = l.groups
    .filter((g) => g.first <= rows[1] && g.first + g.count - 1 >= rows[0])
    .map((g) => {
      const summary: GroupSummary[] = [];
      for (let c = cols[0]; c <= cols[1]; c++) {
        const s = { all: 0, some: 0, refused: 0, dropped: 0 };
        for (let r = g.first; r < g.first + g.count; r++) s[cell(r, c).state]++;
        summary.push(s);
      }
      return { value: g.value, summary };
    });
  return { stale: false, version: l.version, rows, cols, cells, groups };
}

export interface FixtureServer {
  /** The page's URL: http://127.0.0.1:PORT/dashboard/ */
  readonly url: string;
  /** Edits the model, then sends the `change` event (a new layout version when nodes changed). */
  change(ev: Omit<ChangeEvent, 'generation'>, edit?: () => void): void;
  /** Ends every open event stream (the page's EventSource reconnects by itself). */
  dropStreams(): void;
  close(): Promise<void>;
}

export async function startFixtureServer(m: FixtureModel): Promise<FixtureServer> {
  let version = 1;
  let generation = 1;
  const streams = new Set<ServerResponse>();
  const json = (res: ServerResponse, body: unknown, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const find = (q: URLSearchParams) => {
    const node = m.nodes.find((n) => n.name === q.get('node'));
    const service = m.services.find((s) => s.key === q.get('service'));
    return { node, service };
  };
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', 'http://x');
    const q = u.searchParams;
    const route = u.pathname.replace(/^\/dashboard\//, '');
    if (u.pathname === '/') {
      res.writeHead(302, { location: '/dashboard/' }).end();
    } else if (route === 'api/layout') {
      json(res, layoutOf(m, version, q));
    } else if (route === 'api/cells') {
      if (Number(q.get('version')) !== version) return json(res, { stale: true, version });
      json(res, cellsOf(m, layoutOf(m, version, q), q));
    } else if (route === 'api/explain') {
      const { node, service } = find(q);
      if (!node || !service) return json(res, { message: 'not found' }, 404);
      json(res, { ...m.explain(node, service), cell: m.cell(node, service) });
    } else if (route === 'api/service') {
      const { service } = find(q);
      if (!service) return json(res, { message: 'not found' }, 404);
      json(res, m.service(service, q.get('group') ?? m.defaultGroupKey));
    } else if (route === 'api/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': open\n\n');
      streams.add(res);
      req.on('close', () => streams.delete(res));
    } else {
      const file = route === '' ? 'index.html' : route;
      const type = TYPES[path.extname(file)];
      if (!type || file.includes('/')) return json(res, { message: 'not found' }, 404);
      res.writeHead(200, { 'content-type': type }).end(await readFile(path.join(PAGE_DIR, file)));
    }
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => json(res, { message: String(err) }, 500));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/dashboard/`,
    change(ev, edit) {
      edit?.();
      if (ev.nodes.length > 0) version++;
      const data = JSON.stringify({ generation: ++generation, ...ev });
      for (const s of streams) s.write(`event: change\ndata: ${data}\n\n`);
    },
    dropStreams() {
      for (const s of streams) s.destroy();
      streams.clear();
    },
    async close() {
      for (const s of streams) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
