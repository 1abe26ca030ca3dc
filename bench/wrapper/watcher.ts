// The watcher process (this file, forked with SVCPLANE_WRAPPER_BENCH_ROLE=watcher): raw HTTPS watches of
// endpointslices, each chunk stamped on arrival with an epoch clock comparable across processes.
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { epochMs, type Conn } from '../lib/http.js';
import { serveWorker } from '../lib/process.js';
import { SEQ_ANNOTATION, SLICES_PATH } from './shape.js';

export const WATCHER_MODULE = fileURLToPath(import.meta.url);
export const ROLE_ENV = 'SVCPLANE_WRAPPER_BENCH_ROLE';

export type WatcherRequest =
  | { op: 'start'; conn: Conn; rv: string; count: number }
  | { op: 'begin'; writes: number }
  | { op: 'progress' }
  | { op: 'collect' }
  | { op: 'stop' };

export interface WatcherCollect {
  /** Per write (sequence number), per watcher: the epoch ms its event arrived, NaN if it did not. */
  arrivals: Float64Array[];
  duplicates: number;
  /** Watches whose stream ended or failed (not restarted). */
  closed: number;
  errors: string[];
  /** Over begin → collect: CPU seconds (user + system) and event-loop utilization. */
  cpuS: number;
  wallS: number;
  elu: number;
}

function watcherMain(): void {
  const seqRe = new RegExp(`"${SEQ_ANNOTATION.replace(/[./]/g, (c) => `\\${c}`)}":\\s*"(\\d+)"`);
  let agent: https.Agent | undefined;
  const reqs: Array<ReturnType<typeof https.request>> = [];
  let count = 0;
  let arrivals: Float64Array[] = [];
  let received = 0;
  let duplicates = 0;
  let closed = 0;
  const errors: string[] = [];
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  let elu0 = performance.eventLoopUtilization();
  const onLine = (w: number, line: string, t: number): void => {
    const m = seqRe.exec(line);
    if (m === null) return;
    const seq = Number(m[1]);
    const a = arrivals[seq];
    if (a === undefined) return;
    if (Number.isNaN(a[w]!)) {
      a[w] = t;
      received++;
    } else duplicates++;
  };
  const open = (conn: Conn, rv: string, w: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const q = new URLSearchParams({
        watch: '1',
        resourceVersion: rv,
        allowWatchBookmarks: 'true',
        timeoutSeconds: '3600',
      });
      const req = https.request(
        {
          host: conn.host,
          port: conn.port,
          method: 'GET',
          path: `${SLICES_PATH}?${q.toString()}`,
          agent,
          headers: {
            Authorization: `Bearer ${conn.token}`,
            Accept: 'application/json',
            'User-Agent': 'svcplane-bench-wrapper-watch/1.0',
          },
        },
        (res) => {
          if (res.statusCode !== 200) {
            reject(new Error(`watch ${w}: ${res.statusCode}`));
            res.resume();
            return;
          }
          resolve();
          let carry = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const t = epochMs();
            const text = carry + chunk;
            let start = 0;
            for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
              onLine(w, text.slice(start, nl), t);
              start = nl + 1;
            }
            carry = text.slice(start);
          });
          res.on('error', () => {});
          res.on('close', () => closed++);
        },
      );
      req.on('error', (err) => {
        if (errors.length < 5) errors.push(`watch ${w}: ${err.message}`);
        reject(err);
      });
      req.end();
      reqs.push(req);
    });
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        agent = new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: msg.conn.ca });
        count = msg.count;
        // In batches, so the wrapper's TLS handshakes do not all queue at once.
        for (let w = 0; w < count; w += 50)
          await Promise.all(
            Array.from({ length: Math.min(50, count - w) }, (_, j) => open(msg.conn, msg.rv, w + j)),
          );
        return process.pid;
      }
      case 'begin':
        arrivals = Array.from({ length: msg.writes }, () => new Float64Array(count).fill(NaN));
        received = 0;
        duplicates = 0;
        cpu0 = process.cpuUsage();
        wall0 = performance.now();
        elu0 = performance.eventLoopUtilization();
        return null;
      case 'progress':
        return { received, closed };
      case 'collect': {
        const c = process.cpuUsage(cpu0);
        const out: WatcherCollect = {
          arrivals,
          duplicates,
          closed,
          errors,
          cpuS: (c.user + c.system) / 1e6,
          wallS: (performance.now() - wall0) / 1000,
          elu: performance.eventLoopUtilization(elu0).utilization,
        };
        return out;
      }
      case 'stop':
        for (const r of reqs) r.destroy();
        agent?.destroy();
        return null;
    }
  });
}

if (process.env[ROLE_ENV] === 'watcher') watcherMain();
