// Helpers shared by the conformance suite's files.
import assert from 'node:assert/strict';
import { isStoreError, type Store, type WatchEvent } from '../store.js';

export const enc = (s: string): Uint8Array => Buffer.from(s);
export const dec = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Recorded {
  type: 'PUT' | 'DELETE';
  key: string;
  value: string;
  revision: number;
}

export const simplify = (e: WatchEvent): Recorded => ({
  type: e.type,
  key: e.key,
  value: dec(e.value),
  revision: e.revision,
});

/** Collects events under `prefix` after `from` until one with revision >= `until` arrives. */
export async function collect(
  store: Store,
  prefix: string,
  from: number,
  until: number,
  timeoutMs = 15_000,
): Promise<WatchEvent[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const out: WatchEvent[] = [];
  try {
    for await (const batch of store.watch(prefix, from, ac.signal)) {
      out.push(...batch);
      if (out.length > 0 && out[out.length - 1]!.revision >= until) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (until > from && (out.length === 0 || out[out.length - 1]!.revision < until)) {
    throw new Error(`watch on ${prefix} from ${from} did not reach revision ${until} in ${timeoutMs} ms`);
  }
  return out;
}

export async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isStoreError(err), `expected a StoreError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    return true;
  });
}

export async function firstBatch(
  store: Store,
  prefix: string,
  from: number,
): Promise<WatchEvent[] | undefined> {
  const ac = new AbortController();
  try {
    const it = store.watch(prefix, from, ac.signal)[Symbol.asyncIterator]();
    const timer = setTimeout(() => ac.abort(), 2000);
    const r = await it.next();
    clearTimeout(timer);
    await it.return?.();
    return r.done ? undefined : r.value;
  } finally {
    ac.abort();
  }
}

/** Increments a decimal counter at `key` with get + CAS update, retrying every Conflict. */
export async function casIncrement(store: Store, key: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const cur = await store.get(key);
    assert.ok(cur, `${key} vanished`);
    try {
      await store.update(key, enc(String(Number(dec(cur.value)) + 1)), cur.modRevision);
      return attempt;
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
    }
  }
}
