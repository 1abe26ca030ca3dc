// HTTPS client side shared by the benchmarks that drive a server over the API: connection details,
// one request on a keep-alive agent, and a clock comparable across processes.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { parse as parseYaml } from 'yaml';

export interface Conn {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly ca: string;
}

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export interface HttpResult {
  status: number;
  bytes: number;
  text?: string;
  marks: number;
}

/** One HTTPS request; resolves after the whole response body arrived. */
export function request(
  agent: https.Agent,
  conn: Conn,
  method: string,
  p: string,
  opts: { body?: string; accept?: string; contentType?: string; keepText?: boolean; marker?: Buffer } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${conn.token}`,
      Accept: opts.accept ?? 'application/json',
      'User-Agent': 'svcplane-bench/1.0',
    };
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    if (body !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const req = https.request(
      { host: conn.host, port: conn.port, method, path: p, agent, headers, timeout: 120_000 },
      (res) => {
        let bytes = 0;
        let marks = 0;
        let carry = Buffer.alloc(0);
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (opts.keepText === true) chunks.push(chunk);
          if (opts.marker !== undefined) {
            // Count a marker that occurs once per item, across chunk boundaries.
            const m = opts.marker;
            const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
            for (let at = buf.indexOf(m); at >= 0; at = buf.indexOf(m, at + m.length)) marks++;
            carry = Buffer.from(buf.subarray(Math.max(0, buf.length - m.length + 1)));
          }
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            bytes,
            marks,
            ...(opts.keepText === true ? { text: Buffer.concat(chunks).toString('utf8') } : {}),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${p}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

export const agentFor = (conn: Conn, maxSockets: number): https.Agent =>
  new https.Agent({ keepAlive: true, maxSockets, ca: conn.ca });

/** The server URL, CA and bearer token of a kubeconfig `svcplane up` or `svcplane wrapper` wrote. */
export function connFromKubeconfig(file: string): { conn: Conn; url: string } {
  const doc = parseYaml(readFileSync(file, 'utf8')) as {
    clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }>;
    users: Array<{ user: { token: string } }>;
  };
  const cluster = doc.clusters[0]!.cluster;
  const u = new URL(cluster.server);
  return {
    url: cluster.server,
    conn: {
      host: u.hostname,
      port: Number(u.port),
      token: doc.users[0]!.user.token,
      ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8'),
    },
  };
}

/** Requests the API server counted, by "VERB resource[/subresource]": how many and their total seconds. */
export type ApiRequests = Record<string, { count: number; sumS: number }>;

/** apiserver_request_duration_seconds from the API server's /metrics, for the resources named. */
export async function scrapeApiRequests(
  agent: https.Agent,
  conn: Conn,
  resources: readonly string[],
): Promise<ApiRequests> {
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
}
