// The newest changes, kept in memory so that watchers that keep up never touch the backend. A bounded
// ring of events in increasing revision order; it holds every change with revision > `floor` (under
// the prefix it is fed from), and knows everything up to `through`. Oldest events fall off as new
// ones arrive, raising `floor`.
import type { WatchEvent } from './store.js';

export class TailRing {
  private readonly buf: Array<WatchEvent | undefined>;
  private first = 0;
  private count = 0;
  /** Every change with a revision above this is held. */
  floor: number;
  /** Every change up to this revision has been pushed. */
  through: number;
  private wakeUp = deferred();

  constructor(
    private readonly capacity: number,
    floorRevision: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError('tail ring capacity must be >= 1');
    this.buf = new Array<WatchEvent | undefined>(capacity);
    this.floor = floorRevision;
    this.through = floorRevision;
  }

  /** Appends a change; revisions must increase. */
  push(ev: WatchEvent): void {
    if (ev.revision <= this.through) {
      throw new Error(`tail ring: revision ${ev.revision} does not follow ${this.through}`);
    }
    if (this.count === this.capacity) {
      this.floor = this.buf[this.first]!.revision;
      this.buf[this.first] = undefined;
      this.first = (this.first + 1) % this.capacity;
      this.count--;
    }
    this.buf[(this.first + this.count) % this.capacity] = ev;
    this.count++;
    this.through = ev.revision;
  }

  /** True when every change after `after` is held. */
  covers(after: number): boolean {
    return after >= this.floor;
  }

  private at(i: number): WatchEvent {
    return this.buf[(this.first + i) % this.capacity]!;
  }

  /**
   * Changes under `prefix` after `after` (which must be covered), scanning at most `max` events.
   * `through` is the revision the scan reached: the caller's next `after`.
   */
  readAfter(prefix: string, after: number, max: number): { events: WatchEvent[]; through: number } {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).revision <= after) lo = mid + 1;
      else hi = mid;
    }
    const events: WatchEvent[] = [];
    const end = Math.min(this.count, lo + max);
    for (let i = lo; i < end; i++) {
      const ev = this.at(i);
      if (ev.key.startsWith(prefix)) events.push(ev);
    }
    const through = end < this.count ? this.at(end - 1).revision : this.through;
    return { events, through: Math.max(after, through) };
  }

  /** Resolves at the next wake(). */
  nextChange(): Promise<void> {
    return this.wakeUp.promise;
  }

  /** Wakes every watcher waiting in nextChange(). */
  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = deferred();
    w.resolve();
  }
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
