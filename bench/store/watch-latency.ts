// Watch latency through the Store interface: one paced writer, many watchers.
import { performance } from 'node:perf_hooks';
import type { Store } from '../../src/storage/store.js';
import { percentile } from '../run.js';
import { VALUE, type Sizes } from './shape.js';

/** One writer, `watchers` watchers: time from issuing each write to each watcher receiving it. */
export async function watchLatency(
  store: Store,
  tag: string,
  z: Sizes,
): Promise<{ p50: number; p99: number }> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const from = await store.currentRevision();
  const controllers: AbortController[] = [];
  let received = 0;
  const want = z.watchers * z.watchWrites;
  let allDone!: () => void;
  const done = new Promise<void>((r) => (allDone = r));
  const watchers = Array.from({ length: z.watchers }, async () => {
    const ac = new AbortController(); // one per watch, as an apiserver has one per request
    controllers.push(ac);
    for await (const batch of store.watch(`/${tag}/watch/`, from, ac.signal)) {
      const now = performance.now();
      for (const ev of batch) {
        latencies.push(now - sentAt.get(ev.key)!);
        if (++received === want) allDone();
      }
    }
  });
  await new Promise((r) => setTimeout(r, 200)); // let every watch get established
  for (let i = 0; i < z.watchWrites; i++) {
    const key = `/${tag}/watch/${i}`;
    sentAt.set(key, performance.now());
    await store.create(key, VALUE);
    await new Promise((r) => setTimeout(r, 2)); // a paced writer, not a flood
  }
  const timeout = setTimeout(() => allDone(), 30_000);
  await done;
  clearTimeout(timeout);
  controllers.forEach((c) => c.abort());
  await Promise.allSettled(watchers);
  if (received < want) throw new Error(`watch: received ${received} of ${want} events`);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
