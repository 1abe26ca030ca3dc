// The schema-driven walks server-side apply is built from: which fields an object sets, how two
// versions of an object differ, how an applied configuration merges into a live object, and how
// paths are removed from an object. Each walk reads a node's shape from the schema: a scalar (or an
// atomic list or map, a leaf as a whole), a granular map or struct, or a list of type set or map.
// Where the schema says nothing (x-kubernetes-preserve-unknown-fields, free-form objects, fields it
// does not declare), the shape is deduced from the value: objects are granular maps, lists atomic.
import { isJsonObject as isObj, type JsonObject } from '../../api/json.js';
import type { Schema } from '../../api/schema/schema.js';
import { setOwn, type Json } from '../patch/merge-patch.js';
import { ApplyError } from './errors.js';
import {
  // The FieldSet's own key for an element: two elements name the same item exactly when these are equal.
  encodePathElement as peKey,
  FieldSet,
  FieldSetWalker,
  field,
  key,
  pathToString,
  value,
  type FieldPath,
  type PathElement,
} from './fieldset.js';

export type { JsonObject };
export { isObj };

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Sets an own property ("__proto__" included) without touching the prototype. */
export { setOwn };

/** A deep copy; keys holding `undefined` (which JSON does not have) are left out. */
export function clone<T extends Json>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => clone(x)) as T;
  if (isObj(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) setOwn(out, k, clone(x));
    return out as T;
  }
  return v;
}

export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObj(a)) {
    if (!isObj(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const own = (o: JsonObject, k: string): Json | undefined => (hasOwn(o, k) ? o[k] : undefined);

// ---------------------------------------------------------------------------------------------------
// Shapes.

export type Shape =
  | { readonly t: 'scalar' }
  | {
      readonly t: 'list';
      readonly rel: 'atomic' | 'set' | 'map';
      readonly keys: readonly string[];
      readonly item: Schema | undefined;
    }
  | {
      readonly t: 'map';
      readonly atomic: boolean;
      /** Struct fields; their names are "named fields" (not map keys). */
      readonly props: Readonly<Record<string, Schema>> | undefined;
      /** Schema of every other key; undefined means deduced. */
      readonly elem: Schema | undefined;
    };

const SCALAR: Shape = { t: 'scalar' };
const ATOMIC_LIST: Shape = { t: 'list', rel: 'atomic', keys: [], item: undefined };
const DEDUCED_MAP: MapShape = { t: 'map', atomic: false, props: undefined, elem: undefined };

const deduced = (v: unknown): Shape => (Array.isArray(v) ? ATOMIC_LIST : isObj(v) ? DEDUCED_MAP : SCALAR);

function listShape(s: Schema): Shape {
  const declared = s['x-kubernetes-list-type'];
  const strategy = s['x-kubernetes-patch-strategy'] ?? '';
  const mergeKey = s['x-kubernetes-patch-merge-key'];
  // Without a list type, a strategic-merge "merge" list is treated the way kube-openapi converts it.
  const rel = declared ?? (strategy.split(',').includes('merge') ? (mergeKey ? 'map' : 'set') : 'atomic');
  const keys = s['x-kubernetes-list-map-keys'] ?? (declared === undefined && mergeKey ? [mergeKey] : []);
  if (rel === 'map' && keys.length === 0) return { t: 'list', rel: 'set', keys: [], item: s.items };
  return { t: 'list', rel, keys: rel === 'map' ? keys : [], item: s.items };
}

/** The shape of a node with schema `schema` holding `v`. */
export function shapeOf(schema: Schema | undefined, v: unknown): Shape {
  if (schema === undefined) return deduced(v);
  if (schema['x-kubernetes-int-or-string']) return SCALAR;
  if (schema.type === 'array' || (schema.type === undefined && schema.items !== undefined))
    return listShape(schema);
  const structured = schema.properties !== undefined || schema.additionalProperties !== undefined;
  if (schema.type === 'object' || (schema.type === undefined && structured)) {
    if (!structured) return deduced(v);
    return {
      t: 'map',
      atomic: schema['x-kubernetes-map-type'] === 'atomic',
      props: schema.properties,
      elem: schema.additionalProperties,
    };
  }
  if (schema.type === undefined) return deduced(v);
  return SCALAR;
}

type MapShape = Extract<Shape, { t: 'map' }>;

/** The root of an object is always walked as a map. */
function rootShape(schema: Schema | undefined, obj: Json | undefined): MapShape {
  const s = shapeOf(schema, obj ?? {});
  return s.t === 'map' ? s : DEDUCED_MAP;
}
type ListShape = Extract<Shape, { t: 'list' }>;

const isNamedField = (s: MapShape, k: string): boolean => s.props !== undefined && hasOwn(s.props, k);
const fieldSchema = (s: MapShape, k: string): Schema | undefined =>
  s.props !== undefined && hasOwn(s.props, k) ? s.props[k] : s.elem;

/** The schema of what is below `pe` in a node with schema `schema` (no value needed). */
export function childSchema(schema: Schema | undefined, pe: PathElement): Schema | undefined {
  if (schema === undefined) return undefined;
  if (pe.kind === 'field') {
    if (schema.properties !== undefined && hasOwn(schema.properties, pe.name))
      return schema.properties[pe.name];
    return schema.additionalProperties;
  }
  return schema.items;
}

/** Where a walk is, for error messages. */
interface Ctx {
  readonly path: PathElement[];
  /** The applied configuration is checked strictly; live objects are read leniently. */
  readonly strict: boolean;
}

const at = (path: FieldPath): string => (path.length === 0 ? '' : `${pathToString(path)}: `);

/** The path element naming item `i` of a list, or undefined if it has none (lenient walks only). */
function itemElement(s: ListShape, item: Json, i: number, ctx: Ctx): PathElement | undefined {
  if (s.rel === 'set') return value(item);
  if (!isObj(item)) {
    if (ctx.strict)
      throw new ApplyError(
        `${at(ctx.path)}element ${i}: associative list with keys has an element that is not a map`,
      );
    return undefined;
  }
  const fields: Array<readonly [string, Json]> = [];
  for (const k of s.keys) {
    const v = own(item, k);
    if (v !== undefined) {
      fields.push([k, v]);
      continue;
    }
    const props = s.item?.properties;
    const def = props !== undefined && hasOwn(props, k) ? props[k]?.default : undefined;
    if (def !== undefined) {
      fields.push([k, def as Json]);
      continue;
    }
    if (ctx.strict)
      throw new ApplyError(
        `${at(ctx.path)}element ${i}: associative list with keys has an element that omits key field ` +
          `${JSON.stringify(k)} (and doesn't have default value)`,
      );
    return undefined;
  }
  return key(fields);
}

/** The items of a list with their path elements; duplicates are an error when strict, else dropped. */
function indexItems(
  s: ListShape,
  list: readonly Json[],
  ctx: Ctx,
): Array<{ pe: PathElement | undefined; k: string | undefined; item: Json }> {
  const seen = new Set<string>();
  const out: Array<{ pe: PathElement | undefined; k: string | undefined; item: Json }> = [];
  list.forEach((item, i) => {
    const pe = itemElement(s, item, i, ctx);
    if (pe === undefined) {
      out.push({ pe, k: undefined, item });
      return;
    }
    const k = peKey(pe);
    if (seen.has(k)) {
      if (ctx.strict) throw new ApplyError(`${at(ctx.path)}duplicate entries for key ${pathToString([pe])}`);
      out.push({ pe: undefined, k: undefined, item });
      return;
    }
    seen.add(k);
    out.push({ pe, k, item });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------
// fieldsOf: the paths an object sets.

/**
 * The set of fields `obj` sets: every scalar, atomic list or map, list item (list items are members
 * themselves, so an item is owned along with its fields), map key, and every struct field whose
 * value is null or `{}`. A struct holding fields is not a member itself. With `strict`, list-map
 * items missing a key (without a schema default) and duplicate items throw ApplyError.
 */
export function collectFields(obj: JsonObject, schema: Schema | undefined, strict: boolean): FieldSet {
  const sets = new FieldSetWalker(1);
  const ctx: Ctx = { path: [], strict };
  const enter = (pe: PathElement, encoded: string): void => {
    ctx.path.push(pe);
    sets.push(pe, encoded);
  };
  const leave = (): void => {
    ctx.path.pop();
    sets.pop();
  };
  const visit = (v: Json, sch: Schema | undefined): void => {
    const s = shapeOf(sch, v);
    if (s.t === 'list' && Array.isArray(v) && s.rel !== 'atomic') {
      for (const { pe, k, item } of indexItems(s, v, ctx)) {
        if (pe === undefined || k === undefined) continue;
        enter(pe, k);
        visit(item, s.item);
        sets.add(0);
        leave();
      }
      return;
    }
    if (s.t === 'map' && isObj(v) && !s.atomic) {
      visitMap(v, s);
      return;
    }
    sets.add(0);
  };
  const visitMap = (m: JsonObject, s: MapShape): void => {
    for (const [k, child] of Object.entries(m)) {
      enter(field(k), `f:${k}`);
      visit(child, fieldSchema(s, k));
      if (!isNamedField(s, k) || child === null || (isObj(child) && Object.keys(child).length === 0))
        sets.add(0);
      leave();
    }
  };
  visitMap(obj, rootShape(schema, obj));
  return sets.set(0);
}

// ---------------------------------------------------------------------------------------------------
// compare: what changed between two versions.

export interface Comparison {
  /** Present in the new version only: leaves, list items, map keys and the containers holding them. */
  readonly added: FieldSet;
  /** Leaves (scalars, atomic values) whose value changed. */
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

const isEmptyContainer = (v: Json | undefined): boolean =>
  v === undefined ||
  v === null ||
  (Array.isArray(v) && v.length === 0) ||
  (isObj(v) && Object.keys(v).length === 0);

/** Compares two versions of an object (undefined: it did not exist). */
export function compare(
  oldObj: JsonObject | undefined,
  newObj: JsonObject | undefined,
  schema: Schema | undefined,
): Comparison {
  const [ADDED, MODIFIED, REMOVED] = [0, 1, 2];
  const sets = new FieldSetWalker(3);
  const ctx: Ctx = { path: [], strict: false };
  const enter = (pe: PathElement, encoded?: string): void => {
    ctx.path.push(pe);
    sets.push(pe, encoded);
  };
  const leave = (): void => {
    ctx.path.pop();
    sets.pop();
  };
  const leaf = (l: Json | undefined, r: Json | undefined): void => {
    if (l === undefined) sets.add(ADDED);
    else if (r === undefined) sets.add(REMOVED);
    else if (!deepEqual(l, r)) sets.add(MODIFIED);
  };
  const visit = (l: Json | undefined, r: Json | undefined, sch: Schema | undefined): void => {
    const ref = r !== undefined ? r : l;
    const s = shapeOf(sch, ref);
    // A container empty (or absent) on both sides is a leaf, so `{}` versus absent is still a change.
    const bothEmpty = isEmptyContainer(l) && isEmptyContainer(r);
    if (s.t === 'list' && s.rel !== 'atomic' && !bothEmpty && isListOrAbsent(l) && isListOrAbsent(r)) {
      const li = indexItems(s, l ?? [], ctx);
      const ri = indexItems(s, r ?? [], ctx);
      const lm = new Map<string, Json>();
      for (const x of li) if (x.k !== undefined) lm.set(x.k, x.item);
      const rm = new Map<string, Json>();
      for (const x of ri) if (x.k !== undefined) rm.set(x.k, x.item);
      for (const x of li) {
        if (x.pe === undefined || x.k === undefined) continue;
        enter(x.pe, x.k);
        visit(x.item, rm.get(x.k), s.item);
        leave();
      }
      for (const x of ri) {
        if (x.pe === undefined || x.k === undefined || lm.has(x.k)) continue;
        enter(x.pe, x.k);
        visit(undefined, x.item, s.item);
        leave();
      }
      container(l, r);
      return;
    }
    if (s.t === 'map' && !s.atomic && !bothEmpty && isMapOrAbsent(l) && isMapOrAbsent(r)) {
      visitMap(l, r, s);
      container(l, r);
      return;
    }
    leaf(l, r);
  };
  const container = (l: Json | undefined, r: Json | undefined): void => {
    if (l === undefined) sets.add(ADDED);
    else if (r === undefined) sets.add(REMOVED);
  };
  const visitMap = (l: JsonObject | undefined, r: JsonObject | undefined, s: MapShape): void => {
    const keys = new Set([...Object.keys(l ?? {}), ...Object.keys(r ?? {})]);
    for (const k of keys) {
      enter(field(k), `f:${k}`);
      visit(
        l === undefined ? undefined : own(l, k),
        r === undefined ? undefined : own(r, k),
        fieldSchema(s, k),
      );
      leave();
    }
  };
  visitMap(oldObj, newObj, rootShape(schema, newObj ?? oldObj));
  return { added: sets.set(ADDED), modified: sets.set(MODIFIED), removed: sets.set(REMOVED) };
}

const isListOrAbsent = (v: Json | undefined): v is Json[] | undefined => v === undefined || Array.isArray(v);
const isMapOrAbsent = (v: Json | undefined): v is JsonObject | undefined => v === undefined || isObj(v);

// ---------------------------------------------------------------------------------------------------
// merge: an applied configuration into a live object.

/**
 * Merges `applied` into `live`: maps and structs key by key, lists of type map item by item (matched
 * on their keys), set lists by value; scalars and atomic values are replaced. Items of the live list
 * the configuration does not name keep their place; named ones follow the configuration's order.
 * Nulls in the configuration are kept (see dropAppliedNulls). Neither input is modified.
 */
export function mergeObjects(live: JsonObject, applied: JsonObject, schema: Schema | undefined): JsonObject {
  const ctx: Ctx = { path: [], strict: false };
  return mergeMap(live, applied, rootShape(schema, applied), ctx);
}

function mergeMap(l: JsonObject, r: JsonObject, s: MapShape, ctx: Ctx): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(l)) setOwn(out, k, v);
  for (const [k, v] of Object.entries(r)) {
    ctx.path.push(field(k));
    setOwn(out, k, mergeValue(own(l, k), v, fieldSchema(s, k), ctx));
    ctx.path.pop();
  }
  return out;
}

function mergeValue(l: Json | undefined, r: Json, sch: Schema | undefined, ctx: Ctx): Json {
  if (l === undefined) return clone(r);
  const s = shapeOf(sch, r);
  if (isEmptyContainer(l) && isEmptyContainer(r)) return clone(r);
  if (s.t === 'map' && !s.atomic && isObj(l) && isObj(r)) return mergeMap(l, r, s, ctx);
  if (s.t === 'list' && s.rel !== 'atomic' && Array.isArray(l) && Array.isArray(r))
    return mergeList(l, r, s, ctx);
  return clone(r);
}

function mergeList(l: readonly Json[], r: readonly Json[], s: ListShape, ctx: Ctx): Json[] {
  const li = indexItems(s, l, ctx);
  const ri = indexItems(s, r, ctx);
  const inRight = new Map<string, Json>();
  for (const x of ri) if (x.k !== undefined) inRight.set(x.k, x.item);
  const inLeft = new Map<string, Json>();
  for (const x of li) if (x.k !== undefined && !inLeft.has(x.k)) inLeft.set(x.k, x.item);
  // The items both sides name, in the configuration's order: the live copy of the next one of these
  // is where the merged run of configuration items is placed.
  const shared = ri.filter((x) => x.k !== undefined && inLeft.has(x.k)).map((x) => x.k as string);
  let nextShared = 0;
  const merged = new Set<string>();
  const out: Json[] = [];
  const emitRight = (k: string, item: Json, pe: PathElement): void => {
    ctx.path.push(pe);
    const lv = inLeft.get(k);
    out.push(lv === undefined ? clone(item) : mergeValue(lv, item, s.item, ctx));
    ctx.path.pop();
    merged.add(k);
    if (shared[nextShared] === k) nextShared++;
  };
  let i = 0;
  let j = 0;
  while (i < li.length || j < ri.length) {
    const lx = li[i];
    const rx = ri[j];
    if (lx !== undefined && rx !== undefined && lx.k !== undefined && lx.k === rx.k) {
      emitRight(rx.k, rx.item, rx.pe as PathElement);
      i++;
      j++;
      continue;
    }
    if (lx !== undefined) {
      if (lx.k === undefined || !inRight.has(lx.k)) {
        out.push(lx.item);
        i++;
        continue;
      }
      if (merged.has(lx.k)) {
        i++;
        continue;
      }
      // Named by the configuration, but not the next shared item: it is placed when its turn comes.
      if (rx !== undefined && shared[nextShared] !== undefined && shared[nextShared] !== lx.k) {
        i++;
        continue;
      }
    }
    if (rx !== undefined) {
      if (rx.k !== undefined) emitRight(rx.k, rx.item, rx.pe as PathElement);
      j++;
    }
  }
  return out;
}

/** Removes the keys the configuration set to null (after ownership of them has been worked out). */
export function dropAppliedNulls(
  merged: JsonObject,
  applied: JsonObject,
  schema: Schema | undefined,
): JsonObject {
  const ctx: Ctx = { path: [], strict: false };
  const walkMap = (m: JsonObject, a: JsonObject, s: MapShape): JsonObject => {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(m)) {
      if (!hasOwn(a, k)) {
        setOwn(out, k, v);
        continue;
      }
      const av = a[k] as Json;
      if (av === null) continue;
      setOwn(out, k, walk(v, av, fieldSchema(s, k)));
    }
    return out;
  };
  const walk = (v: Json, a: Json, sch: Schema | undefined): Json => {
    const s = shapeOf(sch, a);
    if (s.t === 'map' && !s.atomic && isObj(v) && isObj(a)) return walkMap(v, a, s);
    if (s.t === 'list' && s.rel === 'map' && Array.isArray(v) && Array.isArray(a)) {
      const byKey = new Map<string, Json>();
      for (const x of indexItems(s, a, ctx)) if (x.k !== undefined) byKey.set(x.k, x.item);
      return indexItems(s, v, ctx).map((x) => {
        const ai = x.k === undefined ? undefined : byKey.get(x.k);
        return ai === undefined ? x.item : walk(x.item, ai, s.item);
      });
    }
    return v;
  };
  return walkMap(merged, applied, rootShape(schema, applied));
}

// ---------------------------------------------------------------------------------------------------
// Removing paths.

/**
 * `obj` without the paths in `toRemove` (a member removes the whole subtree). A map or list left
 * empty by the removal is dropped too, unless `keep` holds it as a member.
 */
export function removePaths(
  obj: JsonObject,
  toRemove: FieldSet,
  schema: Schema | undefined,
  keep: FieldSet = FieldSet.empty(),
): JsonObject {
  if (toRemove.isEmpty()) return obj;
  const ctx: Ctx = { path: [], strict: false };
  // Each walk returns the new value, or EMPTIED when removal left a non-empty container with nothing.
  const EMPTIED = Symbol('emptied');
  const walkMap = (m: JsonObject, rm: FieldSet, kp: FieldSet, s: MapShape): JsonObject => {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(m)) {
      const pe = field(k);
      if (rm.hasChildMember(pe)) continue;
      const sub = rm.child(pe);
      if (sub.isEmpty()) {
        setOwn(out, k, v);
        continue;
      }
      ctx.path.push(pe);
      const nv = walk(v, sub, kp.child(pe), fieldSchema(s, k));
      ctx.path.pop();
      if (nv !== EMPTIED) setOwn(out, k, nv);
      else if (kp.hasChildMember(pe)) setOwn(out, k, Array.isArray(v) ? [] : {});
    }
    return out;
  };
  const walk = (v: Json, rm: FieldSet, kp: FieldSet, sch: Schema | undefined): Json | typeof EMPTIED => {
    const s = shapeOf(sch, v);
    if (s.t === 'map' && !s.atomic && isObj(v)) {
      const out = walkMap(v, rm, kp, s);
      return Object.keys(out).length === 0 && Object.keys(v).length > 0 ? EMPTIED : out;
    }
    if (s.t === 'list' && s.rel !== 'atomic' && Array.isArray(v)) {
      const out: Json[] = [];
      for (const x of indexItems(s, v, ctx)) {
        const sub = x.pe === undefined ? FieldSet.empty() : rm.child(x.pe);
        if (x.pe !== undefined && rm.hasChildMember(x.pe)) continue;
        if (x.pe === undefined || sub.isEmpty()) {
          out.push(x.item);
          continue;
        }
        ctx.path.push(x.pe);
        const nv = walk(x.item, sub, kp.child(x.pe), s.item);
        ctx.path.pop();
        // An item stays while only some of what is in it goes.
        out.push(nv === EMPTIED ? {} : nv);
      }
      return out.length === 0 && v.length > 0 ? EMPTIED : out;
    }
    return v;
  };
  return walkMap(obj, toRemove, keep, rootShape(schema, obj));
}

/**
 * The set with every struct field that has members below it made a member too (map keys and list
 * items are not). Pruning compares sets in this form, so that a struct the applier alone had fields
 * in goes away with them.
 */
export function withNamedFieldsAsMembers(set: FieldSet, schema: Schema | undefined): FieldSet {
  const paths: FieldPath[] = [];
  const walk = (s: FieldSet, sch: Schema | undefined, prefix: PathElement[]): void => {
    for (const pe of s.childElements()) {
      const p = [...prefix, pe];
      if (pe.kind === 'field' && sch?.properties !== undefined && hasOwn(sch.properties, pe.name))
        paths.push(p);
      walk(s.child(pe), childSchema(sch, pe), p);
    }
  };
  walk(set, schema, []);
  return set.union(FieldSet.fromPaths(paths));
}
