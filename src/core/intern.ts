// One copy of each string that many objects repeat (namespaces, label values, node and zone names):
// every parsed object otherwise holds a copy of its own. Bounded: past `limit` distinct strings the table
// starts over, so a stream of unique values costs at most `limit` entries.

export class Interner {
  private readonly strings = new Map<string, string>();

  constructor(private readonly limit: number) {}

  /** The first copy of `s` seen (since the table last started over). */
  intern(s: string): string {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    if (this.strings.size >= this.limit) this.strings.clear();
    this.strings.set(s, s);
    return s;
  }

  get size(): number {
    return this.strings.size;
  }
}
