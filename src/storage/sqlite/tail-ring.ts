// The newest committed changes, kept in memory so that watchers that keep up never touch the table.
// A fixed-size ring: events[i] holds revision start + i; the oldest fall off as new ones arrive.
import type { WatchEvent } from '../store.js';

export class TailRing {
  private readonly buf: Array<WatchEvent | undefined>;
  /** Revision of the oldest event held (or the next revision, when empty). */
  start: number;
  private count = 0;
  private wakeUp: { promise: Promise<void>; resolve: () => void };

  constructor(
    private readonly capacity: number,
    firstRevision: number,
  ) {
    this.buf = new Array<WatchEvent | undefined>(capacity);
    this.start = firstRevision;
    this.wakeUp = deferred();
  }

  /** Appends the next revision (revisions must arrive consecutively). */
  push(ev: WatchEvent): void {
    const expected = this.start + this.count;
    if (ev.revision !== expected) {
      // Revisions are gap-free in the log; anything else is a bug worth failing loudly on.
      throw new Error(`tail ring: expected revision ${expected}, got ${ev.revision}`);
    }
    this.buf[(this.start + this.count) % this.capacity] = ev;
    if (this.count < this.capacity) this.count++;
    else this.start++;
  }

  /** True when every revision from `rev` on is in memory. */
  covers(rev: number): boolean {
    return rev >= this.start;
  }

  readAfter(
    prefix: string,
    after: number,
    max: number,
    head: number,
  ): { events: WatchEvent[]; through: number } {
    const events: WatchEvent[] = [];
    const last = Math.min(head, after + max, this.start + this.count - 1);
    for (let r = after + 1; r <= last; r++) {
      const ev = this.buf[r % this.capacity]!;
      if (ev.key.startsWith(prefix)) events.push(ev);
    }
    return { events, through: Math.max(after, last) };
  }

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

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
