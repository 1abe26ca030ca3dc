// Bytes written to the store per create: the history between two marker writes, replayed, set against
// what upstream's RangeAllocation (one bitmap for the whole range) would write.
import { ipRange } from '../../src/core/allocator/ip-allocator.js';
import type { Store } from '../../src/storage/store.js';
import { NODE_PORTS } from './shape.js';

/** Revisions (exclusive) around one timed create phase, and what the store's history holds between. */
export interface Window {
  readonly start: number;
  readonly end: number;
  puts: number;
  deletes: number;
  bytes: { service: number; clusterIP: number; nodePort: number; other: number };
}

/** Upstream's RangeAllocation bitmaps: one bit per usable value, rewritten whole by every allocation. */
export function upstreamBitmapBytes(cidr: string): { ip: number; port: number; keys: number } {
  return {
    ip: Math.ceil(ipRange(cidr).max / 8),
    port: Math.ceil(NODE_PORTS.size / 8),
    keys: '/ranges/serviceips'.length + '/ranges/servicenodeports'.length,
  };
}

function category(key: string): keyof Window['bytes'] {
  if (key.startsWith('/services/')) return 'service';
  if (key.startsWith('/allocations/serviceips/')) return 'clusterIP';
  if (key.startsWith('/allocations/servicenodeports/')) return 'nodePort';
  return 'other';
}

/**
 * Replays the store's history once over every window (sorted, disjoint) and tallies the writes in
 * each: PUTs (creates and updates) with their key + value bytes, and DELETEs.
 */
export async function replay(store: Store, windows: Window[]): Promise<void> {
  if (windows.length === 0) return;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 120_000);
  let w = 0;
  const last = windows[windows.length - 1]!.end;
  let seen = windows[0]!.start;
  try {
    outer: for await (const batch of store.watch('/', windows[0]!.start, ac.signal)) {
      for (const ev of batch) {
        seen = ev.revision;
        while (w < windows.length && ev.revision >= windows[w]!.end) w++;
        if (w === windows.length) break outer;
        const win = windows[w]!;
        if (ev.revision <= win.start) continue;
        if (ev.type === 'DELETE') {
          win.deletes++;
          continue;
        }
        win.puts++;
        win.bytes[category(ev.key)] += Buffer.byteLength(ev.key) + ev.value.length;
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (seen < last) throw new Error(`replay: history ended at revision ${seen}, before ${last}`);
}
