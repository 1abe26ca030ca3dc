// The topology index's node map: node → the Services with an endpoint on it, once per such endpoint, so a
// node's change finds the views it can affect without a scan. Arrays of references to each Service's
// entry rather than Maps of counts: 100,000 endpoints cost about 1 MiB instead of 7. Pure.

export class NodeRefs<E extends { readonly key: string }> {
  private readonly byNode = new Map<string, E[]>();

  has(node: string): boolean {
    return this.byNode.has(node);
  }

  nodes(): IterableIterator<string> {
    return this.byNode.keys();
  }

  /** The entries with an endpoint on `node`, once per endpoint. */
  on(node: string): readonly E[] {
    return this.byNode.get(node) ?? [];
  }

  /** The keys of the entries with an endpoint on `node`. */
  keysOn(node: string): Set<string> {
    const out = new Set<string>();
    for (const e of this.on(node)) out.add(e.key);
    return out;
  }

  /** Adds `e` once for each of these nodes (one per endpoint: a node may come more than once). */
  add(e: E, nodes: Iterable<string>): void {
    for (const node of nodes) {
      let on = this.byNode.get(node);
      if (on === undefined) this.byNode.set(node, (on = []));
      on.push(e);
    }
  }

  /** Takes every reference to `e` off these nodes. */
  remove(e: E, nodes: Iterable<string>): void {
    for (const node of new Set(nodes)) {
      const rest = this.byNode.get(node)?.filter((x) => x !== e) ?? [];
      if (rest.length === 0) this.byNode.delete(node);
      else this.byNode.set(node, rest);
    }
  }

  /** How many references are held (for tests: a fresh index holds as many). */
  size(): number {
    let n = 0;
    for (const on of this.byNode.values()) n += on.length;
    return n;
  }
}
