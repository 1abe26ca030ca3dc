// What the nftables proxy mode keeps in its own table, as plain data (chains with their rules, sets and
// maps with their elements), and the two ways of writing it as one `nft -f` transaction: all of it, or
// only the difference from what the last transaction left. Behaves like kube-proxy's pkg/proxy/nftables
// proxier, which also keeps its own record of what it wrote and never lists the ruleset to sync.

/** One chain: a base chain's hook specification (`type nat hook prerouting priority -100 ;`), and its rules. */
export interface NftChain {
  readonly hook?: string;
  readonly rules: readonly string[];
}

/** One set or map: its specification (`type ipv4_addr ; flags interval ;`) and elements (key → value, '' in a set). */
export interface NftSet {
  readonly map: boolean;
  readonly spec: string;
  readonly elements: ReadonlyMap<string, string>;
}

/** Everything in one family's table. */
export interface NftModel {
  /** `ip` or `ip6`. */
  readonly family: 'ip' | 'ip6';
  readonly table: string;
  readonly chains: ReadonlyMap<string, NftChain>;
  readonly sets: ReadonlyMap<string, NftSet>;
}

const sorted = <V>(m: ReadonlyMap<string, V>): [string, V][] =>
  [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export const element = (s: Pick<NftSet, 'map'>, key: string, value: string): string =>
  s.map ? `${key} : ${value}` : key;

/** Elements written per `add element` command in a whole-table write. */
export const ELEMENTS_PER_COMMAND = 500;

/** The commands of a transaction, collected in the order nft must see them. */
export class Transaction {
  readonly lines: string[] = [];
  constructor(readonly m: Pick<NftModel, 'family' | 'table'>) {}

  private get t(): string {
    return `${this.m.family} ${this.m.table}`;
  }

  addChain(name: string, c: NftChain): void {
    this.lines.push(`add chain ${this.t} ${name}${c.hook !== undefined ? ` { ${c.hook} }` : ''}`);
  }
  addSet(name: string, s: NftSet): void {
    this.lines.push(`add ${s.map ? 'map' : 'set'} ${this.t} ${name} { ${s.spec} }`);
  }
  rules(name: string, c: NftChain): void {
    for (const r of c.rules) this.lines.push(`add rule ${this.t} ${name} ${r}`);
  }
  flush(name: string): void {
    this.lines.push(`flush chain ${this.t} ${name}`);
  }
  deleteChain(name: string): void {
    this.lines.push(`delete chain ${this.t} ${name}`);
  }
  flushSet(name: string, s: NftSet): void {
    this.lines.push(`flush ${s.map ? 'map' : 'set'} ${this.t} ${name}`);
  }
  deleteSet(name: string, s: NftSet): void {
    this.lines.push(`delete ${s.map ? 'map' : 'set'} ${this.t} ${name}`);
  }
  addElement(name: string, s: NftSet, key: string, value: string): void {
    this.lines.push(`add element ${this.t} ${name} { ${element(s, key, value)} }`);
  }
  /** All elements of a set, in commands of up to ELEMENTS_PER_COMMAND (nft parses one command per element slowly). */
  addElements(name: string, s: NftSet): number {
    // In the order the render added them (deterministic: Service ports in key order); sorting 200,000
    // elements would cost more than it tells.
    return this.addElementList(
      name,
      [...s.elements].map(([k, v]) => element(s, k, v)),
    );
  }
  /** Elements already written as `key` or `key : value`, batched as addElements does. */
  addElementList(name: string, elements: readonly string[]): number {
    for (let i = 0; i < elements.length; i += ELEMENTS_PER_COMMAND)
      this.lines.push(
        `add element ${this.t} ${name} { ${elements.slice(i, i + ELEMENTS_PER_COMMAND).join(', ')} }`,
      );
    return elements.length;
  }
  deleteElement(name: string, key: string): void {
    this.lines.push(`delete element ${this.t} ${name} { ${key} }`);
  }

  /** The commands collected so far as text, and the transaction emptied (a whole-table write, a piece at a time). */
  take(): string {
    const text = this.text();
    this.lines.length = 0;
    return text;
  }

  text(): string {
    return this.lines.length === 0 ? '' : `${this.lines.join('\n')}\n`;
  }
}

/** Counts of what a transaction does. */
export interface NftChanges {
  /** Chains created or flushed and refilled. */
  readonly chainsWritten: number;
  readonly chainsDeleted: number;
  /** Map and set elements added or deleted. */
  readonly elements: number;
}

/**
 * The whole table as one transaction: the table is created (when missing) and deleted, so that nothing
 * another writer or an earlier version left in it survives, then created again with everything in `m`.
 * Sets and maps come before the chains whose rules name them, chains are all created before any rule jumps
 * to them, and elements come last.
 */
export function writeModel(m: NftModel): { text: string; changes: NftChanges } {
  const tx = new Transaction(m);
  const t = `${m.family} ${m.table}`;
  tx.lines.push(`add table ${t}`, `delete table ${t}`, `add table ${t}`);
  const sets = sorted(m.sets);
  const chains = sorted(m.chains);
  let elements = 0;
  for (const [name, s] of sets) tx.addSet(name, s);
  for (const [name, c] of chains) tx.addChain(name, c);
  for (const [name, c] of chains) tx.rules(name, c);
  for (const [name, s] of sets) elements += tx.addElements(name, s);
  return { text: tx.text(), changes: { chainsWritten: chains.length, chainsDeleted: 0, elements } };
}

/** A set the kernel fills (ClientIP affinity: `update @set`): its elements are the packets', not ours. */
export const dynamic = (s: NftSet): boolean => /\bflags [^;]*\bdynamic\b/.test(s.spec);

const sameRules = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((r, i) => r === b[i]);

/**
 * The names a difference is computed over: when a caller knows which chains, sets and elements can have
 * changed (those of the Service ports it rewrote), only those are compared; anything else is taken to be
 * the same in both models.
 */
export interface NftTouched {
  readonly chains: ReadonlySet<string>;
  readonly sets: ReadonlySet<string>;
  /** Per set or map, the element keys. */
  readonly elements: ReadonlyMap<string, ReadonlySet<string>>;
}

const byName = (names: Iterable<string>): string[] => [...new Set(names)].sort();

/** Every name of both models: a difference over everything. */
function everything(previous: NftModel, next: NftModel): NftTouched {
  const elements = new Map<string, Set<string>>();
  for (const m of [previous, next])
    for (const [name, s] of m.sets) {
      let keys = elements.get(name);
      if (keys === undefined) elements.set(name, (keys = new Set()));
      for (const k of s.elements.keys()) keys.add(k);
    }
  return {
    chains: new Set([...previous.chains.keys(), ...next.chains.keys()]),
    sets: new Set([...previous.sets.keys(), ...next.sets.keys()]),
    elements,
  };
}

/**
 * Whether `next` can be reached from `previous` by a partial transaction: same table, and no set, map or
 * chain that both have changed its kind, specification or hook (nft cannot change those in place).
 */
function compatible(previous: NftModel, next: NftModel, names: NftTouched): boolean {
  if (previous.family !== next.family || previous.table !== next.table) return false;
  for (const name of names.sets) {
    const [p, s] = [previous.sets.get(name), next.sets.get(name)];
    if (p !== undefined && s !== undefined && (p.map !== s.map || p.spec !== s.spec)) return false;
  }
  for (const name of names.chains) {
    const [p, c] = [previous.chains.get(name), next.chains.get(name)];
    if (p !== undefined && c !== undefined && p.hook !== c.hook) return false;
  }
  return true;
}

/**
 * The smallest transaction that turns the table `previous` describes into `next`, in an order nft accepts
 * in one go: new sets and chains are created; changed chains are flushed and refilled and new ones filled;
 * elements that went or changed their value are deleted and the new values added; then chains and sets
 * nothing refers to any more are flushed and deleted (every rule and element that referred to them is gone
 * or rewritten earlier in the same transaction). Unchanged chains, sets and elements are not mentioned.
 * With `touched`, only those names are compared. When the two cannot be bridged in place (another table,
 * or an object whose specification changed), the whole table is written instead.
 */
export function writeDifference(
  previous: NftModel,
  next: NftModel,
  touched?: NftTouched,
): { text: string; changes: NftChanges } {
  const names = touched ?? everything(previous, next);
  if (!compatible(previous, next, names)) return writeModel(next);
  const tx = new Transaction(next);
  const setNames = byName(names.sets);
  const chainNames = byName(names.chains);
  for (const name of setNames) {
    const s = next.sets.get(name);
    if (s !== undefined && !previous.sets.has(name)) tx.addSet(name, s);
  }
  for (const name of chainNames) {
    const c = next.chains.get(name);
    if (c !== undefined && !previous.chains.has(name)) tx.addChain(name, c);
  }
  let chainsWritten = 0;
  for (const name of chainNames) {
    const [p, c] = [previous.chains.get(name), next.chains.get(name)];
    if (c === undefined || (p !== undefined && sameRules(p.rules, c.rules))) continue;
    if (p !== undefined && p.rules.length > 0) tx.flush(name);
    tx.rules(name, c);
    chainsWritten++;
  }
  let elements = 0;
  const none = new Map<string, string>();
  const elementNames = byName(names.elements.keys());
  const keysOf = (name: string): string[] => byName(names.elements.get(name) ?? []);
  for (const name of elementNames) {
    const before = previous.sets.get(name)?.elements ?? none;
    const now = next.sets.get(name)?.elements ?? none;
    for (const k of keysOf(name)) {
      const v = before.get(k);
      if (v !== undefined && now.get(k) !== v) {
        tx.deleteElement(name, k);
        elements++;
      }
    }
  }
  for (const name of elementNames) {
    const s = next.sets.get(name);
    if (s === undefined) continue;
    const before = previous.sets.get(name)?.elements ?? none;
    for (const k of keysOf(name)) {
      const v = s.elements.get(k);
      if (v !== undefined && before.get(k) !== v) {
        tx.addElement(name, s, k, v);
        elements++;
      }
    }
  }
  // Chains that go may jump to one another: all are emptied before any is deleted.
  const gone = chainNames.filter((name) => previous.chains.has(name) && !next.chains.has(name));
  for (const name of gone) if (previous.chains.get(name)!.rules.length > 0) tx.flush(name);
  for (const name of gone) tx.deleteChain(name);
  for (const name of setNames) {
    const p = previous.sets.get(name);
    if (p !== undefined && !next.sets.has(name)) tx.deleteSet(name, p);
  }
  return { text: tx.text(), changes: { chainsWritten, chainsDeleted: gone.length, elements } };
}
