// One backend through the Store interface: sequential and concurrent creates, CAS updates, a list of
// a full prefix, watch latency.
import { performance } from 'node:perf_hooks';
import type { Store } from '../../src/storage/store.js';
import { median } from '../run.js';
import { VALUE, type Sizes, rate } from './shape.js';
import { watchLatency } from './watch-latency.js';

export interface StoreFigures {
  sequentialCreates: number;
  concurrentCreates: number;
  casUpdates: number;
  list10kMs: number;
  watchP50Ms: number;
  watchP99Ms: number;
}

export async function measureStore(store: Store, tag: string, z: Sizes): Promise<StoreFigures> {
  const sequentialCreates = await rate(z.sequential, 1, (i) => store.create(`/${tag}/seq/${i}`, VALUE));
  const concurrentCreates = await rate(z.concurrent, z.inFlight, (i) =>
    store.create(`/${tag}/conc/${i}`, VALUE),
  );
  // CAS: each loop owns one key and updates it with its last revision (no conflicts: pure CAS cost).
  const revs = await Promise.all(
    Array.from(
      { length: z.inFlight },
      async (_, k) => (await store.create(`/${tag}/cas/${k}`, VALUE)).modRevision,
    ),
  );
  let nextCas = 0;
  const t0 = performance.now();
  await Promise.all(
    revs.map(async (_, k) => {
      while (nextCas++ < z.cas)
        revs[k] = (await store.update(`/${tag}/cas/${k}`, VALUE, revs[k]!)).modRevision;
    }),
  );
  const casUpdates = z.cas / ((performance.now() - t0) / 1000);
  // List: fill a prefix with listKeys keys, then time a full list of it.
  await rate(z.listKeys, z.inFlight, (i) =>
    store.create(`/${tag}/list/${String(i).padStart(6, '0')}`, VALUE),
  );
  const listTimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const res = await store.list(`/${tag}/list/`);
    listTimes.push(performance.now() - t);
    if (res.items.length !== z.listKeys)
      throw new Error(`list returned ${res.items.length}, want ${z.listKeys}`);
  }
  const { p50, p99 } = await watchLatency(store, tag, z);
  return {
    sequentialCreates,
    concurrentCreates,
    casUpdates,
    list10kMs: median(listTimes),
    watchP50Ms: p50,
    watchP99Ms: p99,
  };
}
