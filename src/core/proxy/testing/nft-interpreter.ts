// A small model of nft for tests: applies the subset of `nft -f` commands the nftables renderer emits to
// an in-memory ruleset, as the kernel would, refusing what it would refuse (a rule or element naming a
// missing chain or set, an element added twice with another value, deleting something missing, still
// referred to, or a chain that still has rules). A refused transaction changes nothing.

import { resolveSlots } from './nft-slots.js';

interface Chain {
  hook: string | undefined;
  rules: string[];
}
interface Set_ {
  kind: 'set' | 'map';
  spec: string;
  elements: Map<string, string>;
}
interface Table {
  chains: Map<string, Chain>;
  sets: Map<string, Set_>;
}

/** Chains a rule or a map value jumps to, and sets it names. */
const targets = (text: string): string[] =>
  [...text.matchAll(/\b(?:goto|jump) ([^\s,}]+)/g)].map((m) => m[1]!);
const setRefs = (text: string): string[] => [...text.matchAll(/@([^\s,}]+)/g)].map((m) => m[1]!);

/** `{ inner }` at the end of a command: the inner text. */
function braces(rest: string): string {
  const m = /^\{ (.*) \}$/.exec(rest.trim());
  if (m === null) throw new Error(`expected { … }: ${rest}`);
  return m[1]!;
}

function clone(tables: Map<string, Table>): Map<string, Table> {
  const out = new Map<string, Table>();
  for (const [name, t] of tables)
    out.set(name, {
      chains: new Map([...t.chains].map(([c, v]) => [c, { hook: v.hook, rules: [...v.rules] }])),
      sets: new Map([...t.sets].map(([s, v]) => [s, { ...v, elements: new Map(v.elements) }])),
    });
  return out;
}

export class NftInterpreter {
  private tables = new Map<string, Table>();

  /** Applies one transaction; throws (leaving the ruleset as it was) when nft would refuse it. */
  apply(text: string): void {
    const next = clone(this.tables);
    const lines = text === '' ? [] : text.split('\n');
    if (lines.length > 0 && lines.pop() !== '') throw new Error('the text ends with a newline');
    for (const [i, line] of lines.entries()) {
      try {
        this.command(next, line);
      } catch (e) {
        throw new Error(`line ${i + 1}: ${line}: ${(e as Error).message}`, { cause: e });
      }
    }
    this.tables = next;
  }

  private command(tables: Map<string, Table>, line: string): void {
    const [verb = '', kind = '', family = '', tableName = '', name = '', ...more] = line.split(' ');
    const key = `${family} ${tableName}`;
    if (kind === 'table') {
      if (verb === 'add') {
        if (!tables.has(key)) tables.set(key, { chains: new Map(), sets: new Map() });
      } else if (verb === 'delete') {
        if (!tables.delete(key)) throw new Error('no such table');
      } else throw new Error('unexpected');
      return;
    }
    const t = tables.get(key);
    if (t === undefined) throw new Error('no such table');
    const rest = more.join(' ');
    const referenced = (what: (text: string) => string[], n: string): boolean => {
      for (const c of t.chains.values()) for (const r of c.rules) if (what(r).includes(n)) return true;
      for (const s of t.sets.values())
        for (const v of s.elements.values()) if (what(v).includes(n)) return true;
      return false;
    };
    const checkRefs = (text: string): void => {
      for (const c of targets(text)) if (!t.chains.has(c)) throw new Error(`no chain ${c}`);
      for (const s of setRefs(text)) if (!t.sets.has(s)) throw new Error(`no set ${s}`);
    };
    if (kind === 'chain') {
      const c = t.chains.get(name);
      if (verb === 'add') {
        const hook = rest === '' ? undefined : braces(rest);
        if (c === undefined) t.chains.set(name, { hook, rules: [] });
        else if (c.hook !== hook) throw new Error('chain exists with another hook');
      } else if (c === undefined) throw new Error('no such chain');
      else if (verb === 'flush') c.rules = [];
      else if (verb === 'delete') {
        if (c.rules.length > 0) throw new Error('chain not empty');
        if (referenced(targets, name)) throw new Error('chain in use');
        t.chains.delete(name);
      } else throw new Error('unexpected');
    } else if (kind === 'rule' && verb === 'add') {
      const c = t.chains.get(name);
      if (c === undefined) throw new Error('no such chain');
      checkRefs(rest);
      c.rules.push(rest);
    } else if (kind === 'set' || kind === 'map') {
      const s = t.sets.get(name);
      if (verb === 'add') {
        const spec = braces(rest);
        if (s === undefined) t.sets.set(name, { kind, spec, elements: new Map() });
        else if (s.kind !== kind || s.spec !== spec) throw new Error('set exists with another spec');
      } else if (verb === 'flush') {
        if (s === undefined || s.kind !== kind) throw new Error(`no such ${kind}`);
        s.elements.clear();
      } else if (verb === 'delete') {
        if (s === undefined || s.kind !== kind) throw new Error(`no such ${kind}`);
        if (referenced(setRefs, name)) throw new Error(`${kind} in use`);
        t.sets.delete(name);
      } else throw new Error('unexpected');
    } else if (kind === 'element') {
      const s = t.sets.get(name);
      if (s === undefined) throw new Error('no such set');
      // Several elements per command: `{ k1 : v1, k2 : v2 }` (no key or value of the renderer holds ', ').
      for (const one of braces(rest).split(', ')) {
        const [k, v = ''] = s.kind === 'map' && verb === 'add' ? one.split(' : ') : [one];
        if (verb === 'add') {
          checkRefs(v);
          const had = s.elements.get(k!);
          if (had !== undefined && had !== v) throw new Error('element exists');
          s.elements.set(k!, v);
        } else if (verb === 'delete') {
          if (!s.elements.delete(k!)) throw new Error('no such element');
        } else throw new Error('unexpected');
      }
    } else throw new Error('unexpected');
  }

  /** Another interpreter holding the same ruleset. */
  clone(): NftInterpreter {
    const c = new NftInterpreter();
    c.tables = clone(this.tables);
    return c;
  }

  /**
   * The ruleset as it routes, whatever endpoint ranges a history of renders allocated: each
   * `numgen random mod K offset BASE map @endpoints-N` rule shows the K endpoints it picks from, and the
   * endpoint maps go, except for elements no rule picks (kept under `unreferenced`: a leak).
   */
  resolved(): unknown {
    const copy = this.clone();
    for (const t of copy.tables.values()) {
      const used = new Set<string>();
      for (const c of t.chains.values())
        c.rules = c.rules.map((r) => resolveSlots(r, (map, key) => t.sets.get(map)?.elements.get(key), used));
      const unreferenced: string[] = [];
      for (const [name, set] of [...t.sets])
        if (name.startsWith('endpoints-')) {
          for (const k of set.elements.keys())
            if (!used.has(`${name} ${k}`)) unreferenced.push(`${name} ${k}`);
          t.sets.delete(name);
        }
      if (unreferenced.length > 0)
        t.sets.set('unreferenced', {
          kind: 'set',
          spec: '',
          elements: new Map(unreferenced.map((u) => [u, ''])),
        });
    }
    return copy.snapshot();
  }

  /** The ruleset as plain data, in name order. */
  snapshot(): unknown {
    const byName = <V>(m: Map<string, V>): [string, V][] =>
      [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return byName(this.tables).map(([name, t]) => ({
      table: name,
      chains: byName(t.chains),
      sets: byName(t.sets).map(([n, s]) => [n, s.kind, s.spec, byName(s.elements)]),
    }));
  }
}
