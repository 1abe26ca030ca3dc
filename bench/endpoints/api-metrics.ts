// The API server's request counts and mean server-side time by resource, from its /metrics.
import { agentFor, request, type Conn } from '../lib/http.js';

/** Requests the API server counted, by "VERB resource[/subresource]": how many and their total seconds. */
export type ApiRequests = Record<string, { count: number; sumS: number }>;

/** apiserver_request_duration_seconds from the API server's /metrics, for the resources named. */
export async function apiRequests(conn: Conn, resources: readonly string[]): Promise<ApiRequests> {
  const agent = agentFor(conn, 1);
  try {
    const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
    if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
    const out: ApiRequests = {};
    for (const line of (res.text ?? '').split('\n')) {
      const m = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
      if (m === null) continue;
      const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (!resources.includes(labels['resource'] ?? '')) continue;
      const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
      const e = (out[key] ??= { count: 0, sumS: 0 });
      if (m[1] === 'sum') e.sumS += Number(m[3]);
      else e.count += Number(m[3]);
    }
    return out;
  } finally {
    agent.destroy();
  }
}

/** What the API server served between two scrapes: requests and mean server-side latency per verb. */
export function apiDelta(
  before: ApiRequests,
  after: ApiRequests,
): Record<string, { requests: number; meanMs: number }> {
  const out: Record<string, { requests: number; meanMs: number }> = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { count: 0, sumS: 0 };
    const n = a.count - b.count;
    if (n > 0) out[k] = { requests: n, meanMs: ((a.sumS - b.sumS) / n) * 1000 };
  }
  return out;
}

export const API_RESOURCES = ['endpoints', 'endpointslices', 'pods', 'services', 'nodes'];
