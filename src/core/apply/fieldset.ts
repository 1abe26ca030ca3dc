// Sets of field paths, the unit of ownership in server-side apply, and their FieldsV1 wire form:
//
//   {"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:targetPort":{}}}}}
//
// A path is a list of elements: a struct or map field (`f:name`), an item of a list of type map
// named by its key fields (`k:{json}`), an item of a set list named by its value (`v:json`), or a
// list index (`i:3`). A set holds paths exactly: owning `.spec.ports[port=80]` does not imply owning
// `.spec.ports[port=80].targetPort` and vice versa. It is stored as a trie; in FieldsV1 a node that is
// both a member and a prefix of other members carries the `".": {}` marker.
import { isJsonObject } from '../../api/json.js';
import type { Json } from '../patch/merge-patch.js';

export type PathElement =
  | { readonly kind: 'field'; readonly name: string }
  /** Key fields sorted by name, the way kube-apiserver names a list-map item. */
  | { readonly kind: 'key'; readonly fields: ReadonlyArray<readonly [string, Json]> }
  | { readonly kind: 'value'; readonly value: Json }
  | { readonly kind: 'index'; readonly index: number };

export type FieldPath = readonly PathElement[];

/** A FieldsV1 document that does not decode. */
export class FieldsV1Error extends Error {
  override readonly name = 'FieldsV1Error';
}

// ---------------------------------------------------------------------------------------------------
// Path elements: construction, ordering, wire keys, display.

export const field = (name: string): PathElement => ({ kind: 'field', name });
export const index = (i: number): PathElement => ({ kind: 'index', index: i });
export const value = (v: Json): PathElement => ({ kind: 'value', value: v });
export const key = (
  fields: Readonly<Record<string, Json>> | ReadonlyArray<readonly [string, Json]>,
): PathElement => {
  const entries = Array.isArray(fields)
    ? [...(fields as ReadonlyArray<readonly [string, Json]>)]
    : Object.entries(fields as Record<string, Json>);
  entries.sort((a, b) => compareStrings(a[0], b[0]));
  return { kind: 'key', fields: entries };
};

/** Byte order of the UTF-8 encodings, which is code point order (what Go's string compare gives). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF, which sort after 0xE000–0xFFFF.
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy) return sx ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const typeRank = (v: Json): number =>
  typeof v === 'number'
    ? 0
    : typeof v === 'string'
      ? 1
      : typeof v === 'boolean'
        ? 2
        : Array.isArray(v)
          ? 3
          : v === null
            ? 5
            : 4;

/** A total order on JSON values: numbers, strings, booleans, lists, maps, null. */
export function compareJson(a: Json, b: Json): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareJson(a[i] as Json, b[i] as Json);
      if (c !== 0) return c;
    }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const ka = Object.keys(a).sort(compareStrings);
    const kb = Object.keys(b).sort(compareStrings);
    for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
      const x = ka[i] as string;
      const y = kb[i] as string;
      const c = compareStrings(x, y) || compareJson(a[x] as Json, b[y] as Json);
      if (c !== 0) return c;
    }
    return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
  }
  return 0;
}

const kindRank = { field: 0, key: 1, value: 2, index: 3 } as const;

/** Fields first (by name), then list-map keys, then set values, then indices. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return kindRank[a.kind] < kindRank[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as typeof a).name);
    case 'key': {
      const bf = (b as typeof a).fields;
      for (let i = 0; i < Math.min(a.fields.length, bf.length); i++) {
        const [na, va] = a.fields[i] as readonly [string, Json];
        const [nb, vb] = bf[i] as readonly [string, Json];
        const c = compareStrings(na, nb) || compareJson(va, vb);
        if (c !== 0) return c;
      }
      return a.fields.length === bf.length ? 0 : a.fields.length < bf.length ? -1 : 1;
    }
    case 'value':
      return compareJson(a.value, (b as typeof a).value);
    case 'index': {
      const bi = (b as typeof a).index;
      return a.index === bi ? 0 : a.index < bi ? -1 : 1;
    }
  }
}

/**
 * JSON the way Go's encoder writes it: object keys sorted, and `<`, `>`, `&`, U+2028, U+2029
 * escaped. Used for `k:` and `v:` keys, so that equal values always give equal keys.
 */
export function canonicalJson(v: Json): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x)).join(',')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort(compareStrings);
    return `{${keys.map((k) => `${goString(k)}:${canonicalJson(v[k] as Json)}`).join(',')}}`;
  }
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(Object.is(v, -0) ? 0 : v) : 'null';
  return JSON.stringify(v);
}

const goString = (s: string): string =>
  JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The FieldsV1 key of one element: `f:name`, `k:{"port":80}`, `v:"x"`, `i:0`. */
export function encodePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([n, v]) => `${goString(n)}:${canonicalJson(v)}`).join(',')}}`;
    case 'value':
      return `v:${canonicalJson(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

function parseJson(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new FieldsV1Error(`invalid ${what} in FieldsV1 key: ${JSON.stringify(text)}`);
  }
}

/** The inverse of encodePathElement. */
export function decodePathElement(s: string): PathElement {
  const prefix = s.slice(0, 2);
  const rest = s.slice(2);
  switch (prefix) {
    case 'f:':
      return field(rest);
    case 'k:': {
      const obj = parseJson(rest, 'key');
      if (!isJsonObject(obj))
        throw new FieldsV1Error(`FieldsV1 key ${JSON.stringify(s)} is not a JSON object`);
      return key(Object.entries(obj));
    }
    case 'v:':
      return value(parseJson(rest, 'value'));
    case 'i:': {
      if (!/^(0|[1-9][0-9]*)$/.test(rest))
        throw new FieldsV1Error(`invalid index in FieldsV1 key: ${JSON.stringify(s)}`);
      return index(Number(rest));
    }
    default:
      throw new FieldsV1Error(`unknown FieldsV1 key ${JSON.stringify(s)}: expected f:, k:, v:, i: or "."`);
  }
}

/** A value the way kube-apiserver prints it inside a path: strings quoted, the rest as JSON. */
function displayValue(v: Json): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => displayValue(x)).join(',')}]`;
  if (isJsonObject(v))
    return Object.keys(v)
      .map((k) => `${k}=${displayValue(v[k] as Json)}`)
      .join('');
  return v === null ? 'null' : String(v);
}

/** `.spec.ports[port=80,protocol="TCP"].targetPort`, the form conflicts are reported in. */
export function pathToString(path: FieldPath): string {
  let out = '';
  for (const pe of path) {
    switch (pe.kind) {
      case 'field':
        out += `.${pe.name}`;
        break;
      case 'key':
        out += `[${pe.fields.map(([n, v]) => `${n}=${displayValue(v)}`).join(',')}]`;
        break;
      case 'value':
        out += `[=${displayValue(pe.value)}]`;
        break;
      case 'index':
        out += `[${pe.index}]`;
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// The set.

interface Node {
  member: boolean;
  readonly children: Map<string, Child>;
}
interface Child {
  readonly pe: PathElement;
  readonly node: Node;
}

const newNode = (): Node => ({ member: false, children: new Map() });
const isEmptyNode = (n: Node): boolean => !n.member && n.children.size === 0;

function copyNode(n: Node): Node {
  const out = newNode();
  out.member = n.member;
  for (const [k, c] of n.children) out.children.set(k, { pe: c.pe, node: copyNode(c.node) });
  return out;
}

function unionNodes(a: Node, b: Node): Node {
  const out = newNode();
  out.member = a.member || b.member;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    out.children.set(k, {
      pe: c.pe,
      node: other === undefined ? copyNode(c.node) : unionNodes(c.node, other.node),
    });
  }
  for (const [k, c] of b.children)
    if (!a.children.has(k)) out.children.set(k, { pe: c.pe, node: copyNode(c.node) });
  return out;
}

function intersectNodes(a: Node, b: Node): Node {
  const out = newNode();
  out.member = a.member && b.member;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    if (other === undefined) continue;
    const n = intersectNodes(c.node, other.node);
    if (!isEmptyNode(n)) out.children.set(k, { pe: c.pe, node: n });
  }
  return out;
}

function diffNodes(a: Node, b: Node): Node {
  const out = newNode();
  out.member = a.member && !b.member;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    const n = other === undefined ? copyNode(c.node) : diffNodes(c.node, other.node);
    if (!isEmptyNode(n)) out.children.set(k, { pe: c.pe, node: n });
  }
  return out;
}

/** Drops every path of `a` that has a member of `b` as a prefix (or equals one). */
function recursiveDiffNodes(a: Node, b: Node): Node {
  const out = newNode();
  out.member = a.member;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    if (other !== undefined && other.node.member) continue;
    const n = other === undefined ? copyNode(c.node) : recursiveDiffNodes(c.node, other.node);
    if (!isEmptyNode(n)) out.children.set(k, { pe: c.pe, node: n });
  }
  return out;
}

function equalNodes(a: Node, b: Node): boolean {
  if (a.member !== b.member || a.children.size !== b.children.size) return false;
  for (const [k, c] of a.children) {
    const other = b.children.get(k);
    if (other === undefined || !equalNodes(c.node, other.node)) return false;
  }
  return true;
}

const sortedChildren = (n: Node): Child[] =>
  [...n.children.values()].sort((x, y) => comparePathElements(x.pe, y.pe));

/** FieldSet's constructor, for FieldSetWalker in this module. */
let makeSet: (root: Node) => FieldSet;

/** An immutable set of field paths. */
export class FieldSet {
  private constructor(private readonly root: Node) {}

  static {
    makeSet = (root) => new FieldSet(root);
  }

  static empty(): FieldSet {
    return EMPTY;
  }

  static fromPaths(paths: Iterable<FieldPath>): FieldSet {
    return FieldSet.build((insert) => {
      for (const p of paths) insert(p);
    });
  }

  /** Builds a set by insertion: `fill` is called once with an `insert` function. */
  static build(fill: (insert: (path: FieldPath) => void) => void): FieldSet {
    const root = newNode();
    fill((p) => insertInto(root, p));
    return new FieldSet(root);
  }

  /** Decodes a FieldsV1 document; throws FieldsV1Error when it is not one. */
  static fromFieldsV1(doc: unknown): FieldSet {
    if (!isJsonObject(doc)) throw new FieldsV1Error('FieldsV1 must be a JSON object');
    const root = newNode();
    const walk = (obj: { [k: string]: Json }, node: Node): void => {
      for (const [k, v] of Object.entries(obj)) {
        if (!isJsonObject(v))
          throw new FieldsV1Error(`FieldsV1 value under ${JSON.stringify(k)} must be an object`);
        if (k === '.') {
          node.member = true;
          continue;
        }
        const pe = decodePathElement(k);
        const ek = encodePathElement(pe);
        let child = node.children.get(ek);
        if (child === undefined) {
          child = { pe, node: newNode() };
          node.children.set(ek, child);
        }
        if (Object.keys(v).length === 0) child.node.member = true;
        else walk(v, child.node);
      }
    };
    walk(doc, root);
    prune(root);
    root.member = false;
    return new FieldSet(root);
  }

  /** The FieldsV1 document: keys in kube-apiserver's order, `"."` first where a member has children. */
  toFieldsV1(): Record<string, unknown> {
    const emit = (n: Node, self: boolean): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      if (self && n.children.size > 0) out['.'] = {};
      for (const c of sortedChildren(n)) out[encodePathElement(c.pe)] = emit(c.node, c.node.member);
      return out;
    };
    return emit(this.root, false);
  }

  isEmpty(): boolean {
    return this.root.children.size === 0;
  }

  /** How many paths the set holds. */
  get size(): number {
    const count = (n: Node): number => {
      let total = n.member ? 1 : 0;
      for (const c of n.children.values()) total += count(c.node);
      return total;
    };
    let total = 0;
    for (const c of this.root.children.values()) total += count(c.node);
    return total;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let n = this.root;
    for (const pe of path) {
      const c = n.children.get(encodePathElement(pe));
      if (c === undefined) return false;
      n = c.node;
    }
    return n.member;
  }

  /** Whether some member starts with `path` (or is `path`). */
  hasPrefix(path: FieldPath): boolean {
    let n = this.root;
    for (const pe of path) {
      const c = n.children.get(encodePathElement(pe));
      if (c === undefined) return false;
      n = c.node;
    }
    return !isEmptyNode(n);
  }

  /** The paths below `pe`, with `pe` taken off the front. */
  child(pe: PathElement): FieldSet {
    const c = this.root.children.get(encodePathElement(pe));
    // Nodes are never changed once built, so the subtree is shared; a root's own flag means nothing.
    return c === undefined ? EMPTY : new FieldSet(c.node);
  }

  /** Whether `pe` itself (a one-element path) is a member. */
  hasChildMember(pe: PathElement): boolean {
    return this.root.children.get(encodePathElement(pe))?.node.member === true;
  }

  /** The first-level elements under which there is something, in order. */
  childElements(): PathElement[] {
    return sortedChildren(this.root).map((c) => c.pe);
  }

  // Sets are immutable, so an operation with an empty set can answer one of its operands as is.
  union(other: FieldSet): FieldSet {
    if (other.isEmpty()) return this;
    if (this.isEmpty()) return other;
    return new FieldSet(unionNodes(this.root, other.root));
  }

  intersection(other: FieldSet): FieldSet {
    return new FieldSet(intersectNodes(this.root, other.root));
  }

  difference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this;
    return new FieldSet(diffNodes(this.root, other.root));
  }

  /** This set without the members of `other` and everything below them. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (this.isEmpty() || other.isEmpty()) return this;
    return new FieldSet(recursiveDiffNodes(this.root, other.root));
  }

  equals(other: FieldSet): boolean {
    if (this.root.children.size !== other.root.children.size) return false;
    for (const [k, c] of this.root.children) {
      const o = other.root.children.get(k);
      if (o === undefined || !equalNodes(c.node, o.node)) return false;
    }
    return true;
  }

  /** Every path, in kube-apiserver's order (a path before the paths below it). */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (n: Node, prefix: PathElement[]): void => {
      for (const c of sortedChildren(n)) {
        const p = [...prefix, c.pe];
        if (c.node.member) out.push(p);
        walk(c.node, p);
      }
    };
    walk(this.root, []);
    return out;
  }

  /** The paths as display strings: `.spec.replicas`. */
  toStrings(): string[] {
    return this.paths().map(pathToString);
  }
}

/**
 * Builds sets along a walk of an object: the walk pushes and pops path elements, and adds the path it
 * is at to any of `count` sets. Each element is encoded once, and no path is copied; building from
 * whole paths (fromPaths) re-encodes every prefix of every path, which made managed fields the largest
 * cost of a create.
 */
export class FieldSetWalker {
  private readonly pes: PathElement[] = [];
  private readonly keys: string[] = [];
  private readonly roots: Node[];
  /** Per set, the node of each prefix of the current path that exists in it (undefined: not yet). */
  private readonly stacks: Array<Array<Node | undefined>>;

  constructor(count: number) {
    this.roots = Array.from({ length: count }, () => newNode());
    this.stacks = this.roots.map((r) => [r]);
  }

  /** Steps into `pe`; `encoded` is encodePathElement(pe) when the caller has it already. */
  push(pe: PathElement, encoded?: string): void {
    this.pes.push(pe);
    this.keys.push(encoded ?? encodePathElement(pe));
    for (const st of this.stacks) st.push(undefined);
  }

  pop(): void {
    this.pes.pop();
    this.keys.pop();
    for (const st of this.stacks) st.pop();
  }

  /** Adds the current path (not the empty path) to set `set`. */
  add(set: number): void {
    const depth = this.pes.length;
    if (depth === 0) return;
    const st = this.stacks[set]!;
    let i = depth;
    while (st[i] === undefined) i--;
    let n = st[i]!;
    for (; i < depth; i++) {
      const k = this.keys[i]!;
      let c = n.children.get(k);
      if (c === undefined) {
        c = { pe: this.pes[i]!, node: newNode() };
        n.children.set(k, c);
      }
      n = c.node;
      st[i + 1] = n;
    }
    n.member = true;
  }

  set(set: number): FieldSet {
    return makeSet(this.roots[set]!);
  }
}

const EMPTY: FieldSet = FieldSet.fromPaths([]);

function prune(n: Node): void {
  for (const [k, c] of n.children) {
    prune(c.node);
    if (isEmptyNode(c.node)) n.children.delete(k);
  }
}

function insertInto(root: Node, path: FieldPath): void {
  if (path.length === 0) return;
  let n = root;
  for (const pe of path) {
    const k = encodePathElement(pe);
    let c = n.children.get(k);
    if (c === undefined) {
      c = { pe, node: newNode() };
      n.children.set(k, c);
    }
    n = c.node;
  }
  n.member = true;
}
