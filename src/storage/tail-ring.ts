// The newest changes, kept in memory so that watchers that keep up never touch the backend. A bounded
// ring of events in revision order; it holds every change with revision > `floor` (under the prefix it
// is fed from), and knows everything up to `through`. Oldest events fall off as new ones arrive,
// raising `floor`. Several events may share a revision (an etcd txn or delete-range by another etcd
// client changes several keys at one revision); a read never stops inside a revision.
import { ChangeSignal } from './change-signal.js';
import type { WatchEvent } from './store.js';

export class TailRing {
  private readonly buf: Array<WatchEvent | undefined>;
  private first = 0;
  private count = 0;
  /** Every change with a revision above this is held. */
  floor: number;
  /** Every change up to this revision has been pushed. */
  through: number;
  private readonly changed = new ChangeSignal();

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

  /** Appends a change; revisions never decrease (equal: another change of the same revision). */
  push(ev: WatchEvent): void {
    const last = this.count > 0 ? this.at(this.count - 1).revision : this.floor;
    if (ev.revision < last || (ev.revision === last && this.count === 0)) {
      throw new Error(`tail ring: revision ${ev.revision} does not follow ${last}`);
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
    let end = Math.min(this.count, lo + max);
    // Never stop inside a revision: the cursor is a revision, so the rest of it would be skipped.
    while (end > lo && end < this.count && this.at(end).revision === this.at(end - 1).revision) end++;
    for (let i = lo; i < end; i++) {
      const ev = this.at(i);
      if (ev.key.startsWith(prefix)) events.push(ev);
    }
    const through = end < this.count ? this.at(end - 1).revision : this.through;
    return { events, through: Math.max(after, through) };
  }

  /** Resolves at the next wake(). */
  nextChange(): Promise<void> {
    return this.changed.next();
  }

  /** Wakes every watcher waiting in nextChange(). */
  wake(): void {
    this.changed.fire();
  }
}
