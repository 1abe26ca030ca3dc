// The wrapper's queue of objects to re-serve (sync.ts).
/**
 * Keys to process, in two queues: everything of the first before anything of the second (the wrapper:
 * slices and Endpoints before Services and Nodes, so a client never sees a Service before its slices are
 * filtered). Taking a round is linear in the round's size.
 */
export class DirtyQueue<T> {
  private readonly first = new Map<string, T>();
  private readonly last = new Map<string, T>();

  /** `goesFirst`: whether an entry belongs to the first queue. */
  constructor(private readonly goesFirst: (d: T) => boolean) {}

  get size(): number {
    return this.first.size + this.last.size;
  }

  set(key: string, d: T): void {
    (this.goesFirst(d) ? this.first : this.last).set(key, d);
  }

  /** Removes and returns up to n entries, slices and Endpoints first. */
  take(n: number): [string, T][] {
    const out: [string, T][] = [];
    for (const q of [this.first, this.last])
      for (const entry of q) {
        if (out.length >= n) return out;
        q.delete(entry[0]);
        out.push(entry);
      }
    return out;
  }
}
