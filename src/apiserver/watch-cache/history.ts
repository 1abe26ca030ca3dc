// The watch cache's history: the latest events in revision order, for resuming watches. Bounded by a
// number of events and by the JSON they keep alive: each event holds its object and the version that
// object replaced, so under churn the history, not the live objects, would otherwise set the cache's
// size. Every change with a revision above `floor` is held.
import type { CacheEvent } from './delivery.js';

/**
 * What an event keeps alive in the history: its object's JSON and the replaced version's (unpacked
 * lengths, so the budget holds the same events whether or not the cache packs them).
 */
const eventBytes = (ev: CacheEvent): number => ev.cur.size + (ev.prev?.size ?? 0);

export class EventHistory {
  /** Events in revision order; the slots before `start` are evicted (undefined). */
  private events: (CacheEvent | undefined)[] = [];
  private start = 0;
  /** JSON bytes of the events from `start` on. */
  private bytes = 0;
  private floorRev = 0;

  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
  ) {}

  /** Every change with a revision above this one is held. */
  get floor(): number {
    return this.floorRev;
  }

  /** Empties the history: it holds every change after `revision` (none yet). */
  reset(revision: number): void {
    this.events = [];
    this.start = 0;
    this.bytes = 0;
    this.floorRev = revision;
  }

  push(ev: CacheEvent): void {
    this.events.push(ev);
    this.bytes += eventBytes(ev);
    while (
      this.events.length - this.start > this.maxEvents ||
      (this.bytes > this.maxBytes && this.start < this.events.length)
    ) {
      const evicted = this.events[this.start]!;
      this.events[this.start] = undefined; // let the versions it held go
      this.bytes -= eventBytes(evicted);
      this.floorRev = evicted.revision;
      this.start++;
    }
    if (this.start > 4_096 && this.start * 2 > this.events.length) {
      this.events = this.events.slice(this.start);
      this.start = 0;
    }
  }

  /** The events with a revision above `from`, in order (found by binary search). */
  *after(from: number): Generator<CacheEvent> {
    let lo = this.start;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.revision > from) hi = mid;
      else lo = mid + 1;
    }
    for (let i = lo; i < this.events.length; i++) yield this.events[i]!;
  }

  stats(): { events: number; bytes: number; floor: number; maxEvents: number; maxBytes: number } {
    return {
      events: this.events.length - this.start,
      bytes: this.bytes,
      floor: this.floorRev,
      maxEvents: this.maxEvents,
      maxBytes: this.maxBytes,
    };
  }
}
