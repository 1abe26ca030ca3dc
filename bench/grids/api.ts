// Requests to the API server: POSTs in parallel, GETs, and the requests it served from its /metrics.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { request, scrapeApiRequests, type ApiRequests, type Conn } from '../lib/http.js';

interface Posted {
  /** Per request, ms from send to response. */
  ms: number[];
  failed: Array<{ path: string; status: number; text: string }>;
  seconds: number;
}

/** POSTs every body, `concurrency` at a time. */
export async function postAll(
  agent: https.Agent,
  conn: Conn,
  reqs: ReadonlyArray<{ path: string; body: string }>,
  concurrency: number,
): Promise<Posted> {
  const ms: number[] = [];
  const failed: Posted['failed'] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, reqs.length) }, async () => {
      for (let i = next++; i < reqs.length; i = next++) {
        const r = reqs[i]!;
        const s = performance.now();
        const res = await request(agent, conn, 'POST', r.path, { body: r.body, keepText: true });
        ms.push(performance.now() - s);
        if (res.status !== 201)
          failed.push({ path: r.path, status: res.status, text: (res.text ?? '').slice(0, 300) });
      }
    }),
  );
  return { ms, failed, seconds: (performance.now() - t0) / 1000 };
}

export function mustAllSucceed(what: string, p: Posted): void {
  const f = p.failed[0];
  if (f !== undefined)
    throw new Error(`${p.failed.length} ${what} POSTs failed; the first: ${f.path} → ${f.status} ${f.text}`);
}

export async function getJson(agent: https.Agent, conn: Conn, p: string): Promise<unknown> {
  const res = await request(agent, conn, 'GET', p, { keepText: true });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
  return JSON.parse(res.text ?? 'null') as unknown;
}

/** Requests the API server counted, by "VERB resource[/subresource]": how many and their total seconds. */
const API_RESOURCES = [
  'services',
  'deployments',
  'servicegrids',
  'deploymentgrids',
  'nodes',
  'endpoints',
  'endpointslices',
  'events',
];

/** apiserver_request_duration_seconds from /metrics, for API_RESOURCES. */
export const apiRequests = (agent: https.Agent, conn: Conn): Promise<ApiRequests> =>
  scrapeApiRequests(agent, conn, API_RESOURCES);

export type RequestCounts = Record<string, { requests: number; meanMs: number }>;

/** What the API server served between two scrapes (the benchmark's own requests included). */
export function apiDelta(before: ApiRequests, after: ApiRequests): RequestCounts {
  const out: RequestCounts = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { count: 0, sumS: 0 };
    const n = a.count - b.count;
    if (n > 0) out[k] = { requests: n, meanMs: ((a.sumS - b.sumS) / n) * 1000 };
  }
  return out;
}

export const fmtRequests = (r: RequestCounts): string =>
  Object.entries(r)
    .sort((a, b) => b[1].requests - a[1].requests)
    .map(([k, v]) => `${k} ${v.requests} (${v.meanMs.toFixed(1)} ms)`)
    .join(', ');
