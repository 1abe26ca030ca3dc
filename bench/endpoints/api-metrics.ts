// The API server's request counts and mean server-side time by resource, from its /metrics.
import { agentFor, scrapeApiRequests, type ApiRequests, type Conn } from '../lib/http.js';

export type { ApiRequests } from '../lib/http.js';

/** apiserver_request_duration_seconds from the API server's /metrics, for the resources named. */
export async function apiRequests(conn: Conn, resources: readonly string[]): Promise<ApiRequests> {
  const agent = agentFor(conn, 1);
  try {
    return await scrapeApiRequests(agent, conn, resources);
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
