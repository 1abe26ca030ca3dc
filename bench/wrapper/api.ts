// Requests to the servers: POSTs and PATCHes in parallel, LISTs and the wrapper's /metrics.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { KObject } from '../../src/api/object.js';
import { request, type Conn } from '../lib/http.js';
import { cpuSeconds, sleep } from '../lib/process.js';

/** Sends every request, `concurrency` at a time; throws on the first unexpected status. */
export async function sendAll(
  agent: https.Agent,
  conn: Conn,
  reqs: ReadonlyArray<{ method: string; path: string; body: string; contentType?: string }>,
  concurrency: number,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, reqs.length) }, async () => {
      for (let i = next++; i < reqs.length; i = next++) {
        const r = reqs[i]!;
        const res = await request(agent, conn, r.method, r.path, {
          body: r.body,
          keepText: true,
          ...(r.contentType === undefined ? {} : { contentType: r.contentType }),
        });
        if (res.status !== 201 && res.status !== 200)
          throw new Error(`${r.method} ${r.path}: ${res.status} ${(res.text ?? '').slice(0, 400)}`);
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

export async function getJson<T>(agent: https.Agent, conn: Conn, p: string): Promise<T> {
  const res = await request(agent, conn, 'GET', p, { keepText: true });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
  return JSON.parse(res.text ?? 'null') as T;
}

export interface List {
  metadata: { resourceVersion: string; continue?: string };
  items: KObject[];
}

/** Every item of a collection, in pages. */
export async function listAll(agent: https.Agent, conn: Conn, p: string): Promise<List> {
  const items: KObject[] = [];
  let cont: string | undefined;
  let rv = '';
  do {
    const q = new URLSearchParams({ limit: '2000', ...(cont === undefined ? {} : { continue: cont }) });
    const page = await getJson<List>(agent, conn, `${p}?${q.toString()}`);
    items.push(...page.items);
    if (rv === '') rv = page.metadata.resourceVersion;
    cont = page.metadata.continue === '' ? undefined : page.metadata.continue;
  } while (cont !== undefined);
  return { metadata: { resourceVersion: rv }, items };
}

interface WrapperMetrics {
  recomputeSum: number;
  recomputeCount: number;
  puts: number;
  deletes: number;
  inSync: number;
}

export async function wrapperMetrics(agent: https.Agent, conn: Conn): Promise<WrapperMetrics> {
  const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
  if (res.status !== 200) throw new Error(`wrapper GET /metrics: ${res.status}`);
  const text = res.text ?? '';
  const num = (re: RegExp): number => Number(re.exec(text)?.[1] ?? NaN);
  return {
    recomputeSum: num(/^svcplane_wrapper_recompute_seconds_sum(?:\{\})? (\S+)$/m),
    recomputeCount: num(/^svcplane_wrapper_recompute_seconds_count(?:\{\})? (\S+)$/m),
    puts: num(/^svcplane_wrapper_served_writes_total\{op="put"\} (\S+)$/m) || 0,
    deletes: num(/^svcplane_wrapper_served_writes_total\{op="delete"\} (\S+)$/m) || 0,
    inSync: num(/^svcplane_wrapper_upstream_in_sync(?:\{\})? (\S+)$/m),
  };
}

/** Waits until the process uses under 0.05 cores over `windowMs` (at most `maxMs`). */
export async function waitQuiet(pid: number, windowMs: number, maxMs: number): Promise<void> {
  const deadline = performance.now() + maxMs;
  for (;;) {
    const c0 = cpuSeconds(pid);
    await sleep(windowMs);
    if ((cpuSeconds(pid) - c0) / (windowMs / 1000) < 0.05 || performance.now() > deadline) return;
  }
}
