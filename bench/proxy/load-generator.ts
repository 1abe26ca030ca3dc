// P8a's load generator: raw sockets, hand-parsed HTTP/1.1, keep-alive or a new connection per request.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { serveWorker } from '../lib/process.js';
import { type Target } from './echo-backends.js';

export type LoadKind = 'keepalive' | 'newconn';
export type LoadRequest = {
  op: 'run';
  targets: Target[];
  kind: LoadKind;
  connections: number;
  warmupMs: number;
  durationMs: number;
};

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  firstError?: string;
  /** Responses per backend name (the body). */
  bodies: Record<string, number>;
  /** Over the measured window: this process's cores. */
  cores: number;
}

const KEEPALIVE_REQ = Buffer.from('GET /echo HTTP/1.1\r\nHost: bench\r\n\r\n', 'latin1');
const CLOSE_REQ = Buffer.from('GET /echo HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n', 'latin1');

/** Status, body and length of the first whole response in `buf`, or undefined while it is incomplete. */
function parseResponse(buf: string): { status: number; body: string; length: number } | undefined {
  const h = buf.indexOf('\r\n\r\n');
  if (h < 0) return undefined;
  const head = buf.slice(0, h);
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const cl = m === null ? 0 : Number(m[1]);
  if (buf.length < h + 4 + cl) return undefined;
  return { status: Number(head.slice(9, 12)), body: buf.slice(h + 4, h + 4 + cl), length: h + 4 + cl };
}

/**
 * The load generator: `connections` loops, each with one request in flight, for warmupMs (not counted)
 * then durationMs (counted: responses that complete in the window, with their latency from the write).
 */
async function runLoad(msg: LoadRequest): Promise<LoadResult> {
  let lat = new Float64Array(1 << 16);
  let n = 0;
  let errors = 0;
  let firstError: string | undefined;
  const bodies: Record<string, number> = {};
  const t0 = performance.now();
  const windowStart = t0 + msg.warmupMs;
  const windowEnd = windowStart + msg.durationMs;
  let cpu0: NodeJS.CpuUsage | undefined;
  const startCpu = setTimeout(() => (cpu0 = process.cpuUsage()), msg.warmupMs);
  let cpuWindow = NaN;
  const endCpu = setTimeout(() => {
    const c = process.cpuUsage(cpu0);
    cpuWindow = (c.user + c.system) / 1e6 / (msg.durationMs / 1000);
  }, msg.warmupMs + msg.durationMs);
  const record = (sent: number, done: number, status: number, body: string): void => {
    if (status !== 200) {
      errors++;
      firstError ??= `status ${status}`;
      return;
    }
    if (done < windowStart || done >= windowEnd) return;
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = done - sent;
    bodies[body] = (bodies[body] ?? 0) + 1;
  };
  const fail = (err: Error): void => {
    errors++;
    firstError ??= err.message;
  };
  const over = (): boolean => performance.now() >= windowEnd;

  const keepAlive = (target: Target): Promise<void> =>
    new Promise((resolve) => {
      const s = net.connect({ host: target.host, port: target.port, noDelay: true });
      s.setEncoding('latin1');
      let buf = '';
      let sent = 0;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        s.destroy();
        resolve();
      };
      const send = (): void => {
        if (over()) {
          finish();
          return;
        }
        sent = performance.now();
        s.write(KEEPALIVE_REQ);
      };
      s.on('connect', send);
      s.on('data', (chunk: string) => {
        buf += chunk;
        const r = parseResponse(buf);
        if (r === undefined) return;
        buf = buf.slice(r.length);
        record(sent, performance.now(), r.status, r.body);
        send();
      });
      s.on('error', (err) => {
        if (!finished) fail(err);
      });
      s.on('close', () => {
        if (!finished && !over()) fail(new Error('connection closed by the server'));
        finish();
      });
    });

  const oneShot = (target: Target): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const s = net.connect({ host: target.host, port: target.port, noDelay: true });
      s.setEncoding('latin1');
      let buf = '';
      let failed = false;
      s.on('connect', () => s.write(CLOSE_REQ));
      s.on('data', (chunk: string) => (buf += chunk));
      s.on('error', (err) => {
        failed = true;
        fail(err);
      });
      s.on('close', () => {
        if (!failed) {
          const r = parseResponse(buf);
          if (r === undefined) fail(new Error(`incomplete response (${buf.length} bytes)`));
          else record(sent, performance.now(), r.status, r.body);
        }
        resolve();
      });
    });

  const loops = Array.from({ length: msg.connections }, async (_, i) => {
    const target = msg.targets[i % msg.targets.length]!;
    while (!over()) {
      if (msg.kind === 'keepalive') await keepAlive(target);
      else await oneShot(target);
    }
  });
  await Promise.all(loops);
  clearTimeout(startCpu);
  clearTimeout(endCpu);
  const s = lat.subarray(0, n).sort();
  const pct = (p: number): number => (n === 0 ? NaN : s[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]!);
  const seconds = msg.durationMs / 1000;
  return {
    requests: n,
    seconds,
    rps: n / seconds,
    p50Ms: pct(50),
    p99Ms: pct(99),
    maxMs: n === 0 ? NaN : s[n - 1]!,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    bodies,
    cores: cpuWindow,
  };
}

export function loadMain(): void {
  serveWorker<LoadRequest>((msg) => runLoad(msg));
}
