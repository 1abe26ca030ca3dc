// The requests `up` served, by resource and verb, from its /metrics.
import type https from 'node:https';
import { request, type Conn } from '../lib/http.js';

/**
 * From up's /metrics: apiserver_request_total for leases, nodes and pods, by "VERB resource[/sub]"; and
 * each controller's workqueue as "wq:NAME adds|reconciles|workS" (its worker's workqueue_* metrics).
 */
export async function requestTotals(agent: https.Agent, conn: Conn): Promise<Record<string, number>> {
  const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  const out: Record<string, number> = {};
  for (const line of (res.text ?? '').split('\n')) {
    const q =
      /^(workqueue_adds_total|workqueue_work_duration_seconds_count|workqueue_work_duration_seconds_sum)\{name="([^"]+)"\} (\S+)$/.exec(
        line,
      );
    if (q !== null) {
      const what =
        q[1] === 'workqueue_adds_total'
          ? 'adds'
          : q[1] === 'workqueue_work_duration_seconds_count'
            ? 'reconciles'
            : 'workS';
      out[`wq:${q[2]} ${what}`] = Number(q[3]);
      continue;
    }
    const m = /^apiserver_request_total\{([^}]*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const l = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (!['leases', 'nodes', 'pods'].includes(l['resource'] ?? '')) continue;
    const key = `${l['verb']} ${l['resource']}${l['subresource'] ? `/${l['subresource']}` : ''}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

export const totalsDelta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(b)
      .map(([k, v]): [string, number] => [k, v - (a[k] ?? 0)])
      .filter(([, v]) => v > 0),
  );

export async function getJson<T>(agent: https.Agent, conn: Conn, p: string): Promise<T> {
  const res = await request(agent, conn, 'GET', p, { keepText: true });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
  return JSON.parse(res.text ?? 'null') as T;
}
