// The store benchmark's sizes, its pod-sized value, and the loop that runs operations with some in flight.
import { performance } from 'node:perf_hooks';

export const VALUE = Buffer.from(JSON.stringify({ kind: 'Pod', pad: 'x'.repeat(1400) })); // ~1.5 KB, pod-sized

export interface Sizes {
  reps: number;
  sequential: number;
  concurrent: number;
  inFlight: number;
  cas: number;
  listKeys: number;
  watchers: number;
  watchWrites: number;
}

export const FULL: Sizes = {
  reps: 5,
  sequential: 1000,
  concurrent: 10_000,
  inFlight: 64,
  cas: 5000,
  listKeys: 10_000,
  watchers: 100,
  watchWrites: 500,
};
export const QUICK: Sizes = {
  reps: 1,
  sequential: 50,
  concurrent: 500,
  inFlight: 64,
  cas: 200,
  listKeys: 300,
  watchers: 10,
  watchWrites: 30,
};

/** Runs `total` operations with `inFlight` concurrent loops; returns operations per second. */
export async function rate(
  total: number,
  inFlight: number,
  op: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < total; i = next++) await op(i);
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}
