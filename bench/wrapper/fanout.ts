// The fan-out's floor: a bare Node HTTPS server writing the same event to the same watchers, and the
// per-write, per-watcher statistics both fan-outs are judged by.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { KObject } from '../../src/api/object.js';
import { type Conn } from '../lib/http.js';
import { sleep, Worker } from '../lib/process.js';
import { FLOOR_ROLE_ENV, type FloorListening, type FloorRequest } from '../lib/fanout-floor.js';
import { median, percentile } from '../run.js';
import { SEQ_ANNOTATION, type Sizes } from './shape.js';
import { WATCHER_MODULE, ROLE_ENV, type WatcherRequest, type WatcherCollect } from './watcher.js';

const FLOOR_MODULE = fileURLToPath(new URL('../lib/fanout-floor.ts', import.meta.url));

/**
 * P7's floor: a bare HTTPS server (lib/fanout-floor.ts) holds as many watches, from as many client
 * processes, as P7, and writes the same event line (`sample` as MODIFIED, with the write's sequence
 * annotation) to all of them, `z.writes` times. Latency is from the start of its write loop.
 */
export async function floorFanout(
  z: Sizes,
  per: readonly number[],
  sample: KObject,
  track: (w: Worker<WatcherRequest>) => void,
): Promise<{ p50Ms: number; p99Ms: number; maxMs: number; drops: number; perWriteMedianP99Ms: number }> {
  const server = new Worker<FloorRequest>(FLOOR_MODULE, { [FLOOR_ROLE_ENV]: '1' }, 'fanout-floor');
  const clients = per.map((_, i) => {
    const w = new Worker<WatcherRequest>(WATCHER_MODULE, { [ROLE_ENV]: 'watcher' }, `floor-watcher-${i}`);
    track(w);
    return w;
  });
  try {
    const l = await server.call<FloorListening>({ op: 'listen' });
    const conn: Conn = { host: '127.0.0.1', port: l.port, token: l.token, ca: l.ca };
    await Promise.all(clients.map((w, i) => w.call({ op: 'start', conn, rv: '0', count: per[i]! })));
    const total = per.reduce((a, n) => a + n, 0);
    const connectBy = performance.now() + z.eventTimeoutMs;
    for (;;) {
      const open = await server.call<number>({ op: 'watchers' });
      if (open >= total) break;
      if (performance.now() > connectBy) throw new Error(`P7 floor: ${open} of ${total} watches open`);
      await sleep(50);
    }
    await sleep(500);
    await Promise.all(clients.map((w) => w.call({ op: 'begin', writes: z.writes })));
    const writeT0: number[] = [];
    for (let k = 0; k < z.writes; k++) {
      const meta = {
        ...sample.metadata,
        annotations: { ...sample.metadata.annotations, [SEQ_ANNOTATION]: String(k) },
      };
      const line = JSON.stringify({ type: 'MODIFIED', object: { ...sample, metadata: meta } });
      writeT0.push(await server.call<number>({ op: 'emit', line }));
      await sleep(z.writeSpacingMs);
    }
    const deadline = performance.now() + z.eventTimeoutMs;
    for (;;) {
      const prog = await Promise.all(clients.map((w) => w.call<{ received: number }>({ op: 'progress' })));
      if (prog.reduce((a, p) => a + p.received, 0) >= total * z.writes || performance.now() > deadline) break;
      await sleep(100);
    }
    const collected = await Promise.all(clients.map((w) => w.call<WatcherCollect>({ op: 'collect' })));
    const { lat, perWrite, drops } = fanoutStats(collected, writeT0, z.writes);
    return {
      p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
      p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
      maxMs: lat.length === 0 ? NaN : Math.max(...lat),
      drops,
      perWriteMedianP99Ms: median(perWrite.map((w) => w.p99Ms).filter(Number.isFinite)),
    };
  } finally {
    for (const w of clients) await w.call({ op: 'stop' }).catch(() => undefined);
    await server.call({ op: 'stop' }).catch(() => undefined);
    server.stop();
  }
}

/** Per write and watcher: arrival − write time; per-write summaries; watchers that never got a write. */
export function fanoutStats(
  collected: readonly WatcherCollect[],
  writeT0: readonly number[],
  writes: number,
): {
  lat: number[];
  perWrite: Array<{ p50Ms: number; p99Ms: number; maxMs: number; drops: number; spreadMs: number }>;
  drops: number;
} {
  const lat: number[] = [];
  const perWrite: Array<{ p50Ms: number; p99Ms: number; maxMs: number; drops: number; spreadMs: number }> =
    [];
  let drops = 0;
  for (let k = 0; k < writes; k++) {
    const xs: number[] = [];
    let d = 0;
    for (const c of collected)
      for (const t of c.arrivals[k]!) {
        if (Number.isNaN(t)) d++;
        else xs.push(t - writeT0[k]!);
      }
    drops += d;
    for (const x of xs) lat.push(x);
    perWrite.push(
      xs.length === 0
        ? { p50Ms: NaN, p99Ms: NaN, maxMs: NaN, drops: d, spreadMs: NaN }
        : {
            p50Ms: percentile(xs, 50),
            p99Ms: percentile(xs, 99),
            maxMs: Math.max(...xs),
            drops: d,
            spreadMs: Math.max(...xs) - Math.min(...xs),
          },
    );
  }
  return { lat, perWrite, drops };
}
