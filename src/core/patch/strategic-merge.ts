// Strategic merge patch, what `application/strategic-merge-patch+json` means: `kubectl apply`
// (client-side), `kubectl patch` without --type and client-go's event recorder send it. It is JSON
// merge patch (maps merge key by key, null deletes a key) except that the schema decides how lists
// combine: a list whose `x-kubernetes-patch-strategy` contains `merge` merges element by element
// (objects by their `x-kubernetes-patch-merge-key`, scalars as an ordered set), any other list is
// replaced wholesale. Where the schema says nothing (no schema, or free-form content) maps still merge
// and lists are replaced.
//
// Directives the patch may carry, none of which ever reaches the result:
//   "$patch": "replace" | "delete" | "merge"   in a map: replace it by the rest of the patch map,
//                                               delete it, or merge it (the default);
//                                               as a list element: {"$patch":"replace"} replaces the
//                                               whole list by the other elements, {"<key>": v,
//                                               "$patch":"delete"} removes every element with that key
//   "$retainKeys": [...]                        drop the map's keys that are not listed (union types)
//   "$setElementOrder/<field>": [...]           the order the merged list should end up in
//   "$deleteFromPrimitiveList/<field>": [...]   values to remove from a merged list of scalars
//
// Ordering follows kube-apiserver: elements named by the patch (or by $setElementOrder) come in the
// patch's order; elements only the server has keep their relative order and are interleaved where
// they stood relative to the patched elements. So an element the patch adds without a
// $setElementOrder lands in front of the existing ones, as it does upstream.
//
// Status codes follow kube-apiserver where it has a deliberate answer: a malformed directive is 400,
// a list of lists and a patch that contradicts its own $retainKeys are 422. Upstream answers 500 for
// an unknown `$patch` value and for a list element without its merge key; both are defects of the
// patch document that the client can fix, so they are Malformed (400) here, with upstream's message.
import { isJsonObject as isObject, type JsonObject } from '../../api/json.js';
import type { Schema } from '../../api/schema/schema.js';
import { cloneJson, setOwn, type Json } from './merge-patch.js';
import { PatchError } from './patch-error.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

/**
 * How deeply a patch may nest. kube-apiserver's JSON decoder stops at 10000 levels; the merge here
 * recurses a few frames per level, so it stops earlier to stay well inside the default stack. Real
 * objects are a few dozen levels deep.
 */
export const MAX_STRATEGIC_MERGE_PATCH_DEPTH = 1000;

/** What merging a map yields when the patch says `"$patch": "delete"`. */
const DELETED: unique symbol = Symbol('deleted');
type Merged = JsonObject | typeof DELETED;

/** An own member only: `o["__proto__"]` or `o["constructor"]` must not reach Object.prototype. */
const getOwn = (o: JsonObject, key: string): Json | undefined => (Object.hasOwn(o, key) ? o[key] : undefined);

function without(o: JsonObject, key: string): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (k !== key) setOwn(out, k, v);
  return out;
}

/**
 * Applies a strategic merge patch to a copy of `original`, guided by the schema of its kind. Throws
 * PatchError: Malformed (400) for a patch that is not a JSON object or carries a bad directive,
 * NotApplicable (422) where the patch does not fit the object.
 */
export function applyStrategicMergePatch(original: Json, patch: Json, schema: Schema | undefined): Json {
  const target: JsonObject = isObject(original) ? cloneJson(original) : {};
  // kube-apiserver decodes the body into a Go map; `null` decodes to an empty map and changes nothing.
  if (patch === null) return target;
  if (!isObject(patch)) {
    throw new PatchError(
      'Malformed',
      `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
    );
  }
  checkDepth(patch);
  const merged = mergeMap(target, patch, schema);
  return merged === DELETED ? {} : merged;
}

function checkDepth(root: Json): void {
  const stack: Array<[Json, number]> = [[root, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, depth] = next;
    if (depth > MAX_STRATEGIC_MERGE_PATCH_DEPTH) {
      throw new PatchError(
        'Malformed',
        `strategic merge patch is nested deeper than ${MAX_STRATEGIC_MERGE_PATCH_DEPTH} levels`,
      );
    }
    const children = Array.isArray(value) ? value : isObject(value) ? Object.values(value) : [];
    for (const child of children) stack.push([child, depth + 1]);
  }
}

// ---------------------------------------------------------------------------------------------------
// Schema lookups

function fieldSchema(schema: Schema | undefined, key: string): Schema | undefined {
  if (schema === undefined) return undefined;
  if (schema.properties !== undefined && Object.hasOwn(schema.properties, key)) return schema.properties[key];
  return schema.additionalProperties;
}

interface Strategy {
  merge: boolean;
  replace: boolean;
  mergeKey: string | undefined;
}

function strategyOf(schema: Schema | undefined): Strategy {
  const parts = (schema?.['x-kubernetes-patch-strategy'] ?? '').split(',').map((s) => s.trim());
  const mergeKey = schema?.['x-kubernetes-patch-merge-key'];
  return {
    merge: parts.includes('merge'),
    replace: parts.includes('replace'),
    mergeKey: mergeKey === '' ? undefined : mergeKey,
  };
}

// ---------------------------------------------------------------------------------------------------
// Maps

/**
 * Merges `patch` into `target`, which this module owns (a copy of the original or a fresh object) and
 * modifies in place. Returns the merged map, a different map for `$patch: replace`, or DELETED.
 */
function mergeMap(target: JsonObject, patch: JsonObject, schema: Schema | undefined): Merged {
  let body = patch;
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'delete') return DELETED;
    if (directive !== 'replace' && directive !== 'merge') throw unknownPatchType(directive, patch);
    body = without(patch, DIRECTIVE);
    if (directive === 'replace') target = {};
  }

  applyRetainKeys(target, body);
  const ordered = applySetElementOrder(target, body, schema);

  const deletions: Array<[string, Json[]]> = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || ordered.has(key)) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      const field = directiveField(key, DELETE_FROM_PRIMITIVE_LIST, PRIMITIVE_LIST_FORMAT);
      if (!Array.isArray(value)) throw new PatchError('Malformed', PRIMITIVE_LIST_FORMAT);
      deletions.push([field, value]);
      continue;
    }
    mergeField(target, key, value, fieldSchema(schema, key));
  }
  // After the merge: a value both added and deleted by one patch ends up deleted.
  for (const [field, values] of deletions) deleteFromPrimitiveList(target, field, values);
  return target;
}

function mergeField(target: JsonObject, key: string, value: Json, schema: Schema | undefined): void {
  if (value === null) {
    delete target[key];
    return;
  }
  const current = getOwn(target, key);
  let next: Json | typeof DELETED;
  if (isObject(value)) {
    next =
      isObject(current) && !strategyOf(schema).replace
        ? mergeMap(current, value, schema)
        : mergeMap({}, value, schema);
  } else if (Array.isArray(value)) {
    next = Array.isArray(current) ? mergeList(current, value, schema) : materializeList(value, schema?.items);
  } else {
    next = value;
  }
  if (next === DELETED) delete target[key];
  else setOwn(target, key, next);
}

/** A patch value taken as it is (nothing to merge it into), with its directives carried out. */
function materialize(value: Json, schema: Schema | undefined): Json | typeof DELETED {
  if (isObject(value)) return mergeMap({}, value, schema);
  if (Array.isArray(value)) return materializeList(value, schema?.items);
  return value;
}

/**
 * The elements of a list that replaces whatever was there: a `{"$patch":"replace"}` marker is
 * dropped, as is an element that deletes itself (there is nothing to delete it from).
 */
function materializeList(list: Json[], items: Schema | undefined): Json[] {
  const out: Json[] = [];
  for (const element of list) {
    if (isObject(element) && Object.hasOwn(element, DIRECTIVE)) {
      const directive = element[DIRECTIVE];
      if (directive === 'replace' || directive === 'delete') continue;
      if (directive !== 'merge') throw unknownPatchType(directive, element);
    }
    const value = materialize(element, items);
    if (value !== DELETED) out.push(value);
  }
  return out;
}

const RETAIN_KEYS_FORMAT = 'invalid patch format of retainKeys';

function applyRetainKeys(target: JsonObject, body: JsonObject): void {
  if (!Object.hasOwn(body, RETAIN_KEYS)) return;
  const listed = body[RETAIN_KEYS];
  if (!Array.isArray(listed)) throw new PatchError('Malformed', RETAIN_KEYS_FORMAT);
  const retained = new Set(listed.filter((k): k is string => typeof k === 'string'));
  for (const [key, value] of Object.entries(body)) {
    if (key === RETAIN_KEYS || value === null) continue;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST) || key.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained.has(key)) {
      throw new PatchError('NotApplicable', "patch content doesn't match retainKeys list");
    }
  }
  for (const key of Object.keys(target)) if (!retained.has(key)) delete target[key];
}

const PRIMITIVE_LIST_FORMAT = 'invalid patch format of primitive list';
const SET_ELEMENT_ORDER_FORMAT = 'invalid patch format of setElementOrder list';

/** The field a `$prefix/<field>` directive key is about. */
function directiveField(key: string, prefix: string, message: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) throw new PatchError('Malformed', message);
  return key.slice(slash + 1);
}

function deleteFromPrimitiveList(target: JsonObject, field: string, values: Json[]): void {
  const current = getOwn(target, field);
  if (!Array.isArray(current)) return;
  const doomed = new Set(values.map(identity));
  setOwn(
    target,
    field,
    current.filter((v) => isObject(v) || Array.isArray(v) || !doomed.has(identity(v))),
  );
}

// ---------------------------------------------------------------------------------------------------
// Lists

/** How elements are told apart: the merge key's value for objects, the value itself for scalars. */
function identity(value: Json): string {
  return typeof value === 'string' ? `s:${value}` : `j:${JSON.stringify(value)}`;
}

function elementId(element: Json, mergeKey: string | undefined): string | undefined {
  if (isObject(element)) {
    return mergeKey !== undefined && Object.hasOwn(element, mergeKey)
      ? identity(element[mergeKey]!)
      : undefined;
  }
  return Array.isArray(element) ? undefined : identity(element);
}

/** The first position of every identity in `list`. */
function positions(list: Json[], mergeKey: string | undefined): Map<string, number> {
  const at = new Map<string, number>();
  list.forEach((element, i) => {
    const id = elementId(element, mergeKey);
    if (id !== undefined && !at.has(id)) at.set(id, i);
  });
  return at;
}

/** Merges a patch list into a current list, by the field's patch strategy. */
function mergeList(current: Json[], patch: Json[], schema: Schema | undefined): Json[] {
  const strategy = strategyOf(schema);
  if (!strategy.merge) return materializeList(patch, schema?.items);
  if (patch.length === 0) return current;

  const patchKinds = kinds(patch);
  const currentKinds = kinds(current);
  if (patchKinds.has('array') || currentKinds.has('array')) {
    throw new PatchError('NotApplicable', 'lists of lists are not supported');
  }
  if (patchKinds.size > 1) {
    throw new PatchError('Malformed', `list element types are not identical: ${goFormat(patch)}`);
  }
  if (currentKinds.size > 0 && [...patchKinds][0] !== [...currentKinds][0]) {
    throw new PatchError(
      'NotApplicable',
      `list element types are not identical: ${goFormat(current)}, ${goFormat(patch)}`,
    );
  }
  if (patchKinds.has('scalar')) return mergeScalars(current, patch);
  if (strategy.mergeKey === undefined) {
    throw new PatchError(
      'NotApplicable',
      `cannot merge lists without merge key for ${schema?.items?.name ?? 'type map'}`,
    );
  }
  return mergeObjects(current, patch as JsonObject[], strategy.mergeKey, schema?.items);
}

function kinds(list: Json[]): Set<'object' | 'array' | 'scalar'> {
  return new Set(list.map((v) => (Array.isArray(v) ? 'array' : isObject(v) ? 'object' : 'scalar')));
}

/** A list of scalars with merge strategy is an ordered set: the union, without duplicates. */
function mergeScalars(current: Json[], patch: Json[]): Json[] {
  const seen = new Set<string>();
  const union: Json[] = [];
  for (const value of [...current, ...patch]) {
    const id = identity(value);
    if (!seen.has(id)) {
      seen.add(id);
      union.push(value);
    }
  }
  return interleave(union, undefined, positions(patch, undefined), positions(current, undefined));
}

function mergeObjects(
  current: Json[],
  patch: JsonObject[],
  mergeKey: string,
  items: Schema | undefined,
): Json[] {
  let base = current;
  let replace = false;
  const entries: JsonObject[] = [];
  for (const element of patch) {
    if (Object.hasOwn(element, DIRECTIVE)) {
      const directive = element[DIRECTIVE];
      if (directive === 'delete') {
        if (!Object.hasOwn(element, mergeKey)) throw noMergeKey(element, mergeKey);
        const doomed = identity(element[mergeKey]!);
        base = base.filter((e) => elementId(e, mergeKey) !== doomed);
        continue;
      }
      if (directive === 'replace') {
        replace = true;
        continue;
      }
      if (directive !== 'merge') throw unknownPatchType(directive, element);
    }
    entries.push(element);
  }
  if (replace) return materializeList(entries, items);

  const merged = base.slice();
  const at = positions(merged, mergeKey);
  for (const entry of entries) {
    if (!Object.hasOwn(entry, mergeKey)) throw noMergeKey(entry, mergeKey);
    const id = identity(entry[mergeKey]!);
    const i = at.get(id);
    const existing = i === undefined ? undefined : merged[i];
    const value = mergeMap(isObject(existing) ? existing : {}, entry, items);
    if (value === DELETED) continue; // unreachable: deleting entries were taken out above
    if (i === undefined) {
      at.set(id, merged.length);
      merged.push(value);
    } else {
      merged[i] = value;
    }
  }
  return interleave(merged, mergeKey, positions(entries, mergeKey), positions(base, mergeKey));
}

/**
 * Puts a merged list in order the way kube-apiserver does. Elements named in `wanted` (the patch
 * list, or a $setElementOrder list) come in that order; the others keep the order they had on the
 * server (`server`). The two runs are then interleaved: a server-only element goes before a wanted
 * element only if both were on the server and it stood before it there.
 */
function interleave(
  list: Json[],
  mergeKey: string | undefined,
  wanted: Map<string, number>,
  server: Map<string, number>,
): Json[] {
  const ids = new Map<Json, string | undefined>();
  const idOf = (e: Json): string | undefined => {
    if (!ids.has(e)) ids.set(e, elementId(e, mergeKey));
    return ids.get(e);
  };
  const rank = (e: Json, order: Map<string, number>): number => {
    const id = idOf(e);
    return (id === undefined ? undefined : order.get(id)) ?? Number.POSITIVE_INFINITY;
  };
  const chosen: Json[] = [];
  const serverOnly: Json[] = [];
  for (const element of list) {
    const id = idOf(element);
    if (id !== undefined && wanted.has(id)) chosen.push(element);
    else serverOnly.push(element);
  }
  // Array.prototype.sort is stable: equal ranks (duplicates, unknown elements) keep their order.
  chosen.sort((a, b) => rank(a, wanted) - rank(b, wanted));
  serverOnly.sort((a, b) => {
    const d = rank(a, server) - rank(b, server);
    return Number.isNaN(d) ? 0 : d;
  });

  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length && j < chosen.length) {
    const left = rank(serverOnly[i]!, server);
    const right = rank(chosen[j]!, server);
    if (Number.isFinite(left) && Number.isFinite(right) && left < right) out.push(serverOnly[i++]!);
    else out.push(chosen[j++]!);
  }
  while (i < serverOnly.length) out.push(serverOnly[i++]!);
  while (j < chosen.length) out.push(chosen[j++]!);
  return out;
}

/**
 * Carries out every `$setElementOrder/<field>` of a map: merges the field's patch list (if any) into
 * the current list and puts the result in the requested order. Returns the fields it handled, which
 * the ordinary merge then skips. Lists that are replaced anyway take the patch's order and ignore the
 * directive.
 */
function applySetElementOrder(target: JsonObject, body: JsonObject, schema: Schema | undefined): Set<string> {
  const handled = new Set<string>();
  for (const [key, order] of Object.entries(body)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const field = directiveField(key, SET_ELEMENT_ORDER, SET_ELEMENT_ORDER_FORMAT);
    if (!Array.isArray(order)) throw new PatchError('Malformed', SET_ELEMENT_ORDER_FORMAT);
    const listSchema = fieldSchema(schema, field);
    const { merge, mergeKey } = strategyOf(listSchema);
    if (!merge) continue;
    const patchList = getOwn(body, field);
    if (patchList !== undefined && !Array.isArray(patchList)) continue; // null or a non-list: merged as usual
    const existing = getOwn(target, field);
    const currentList = Array.isArray(existing) ? existing : undefined;
    if (patchList === undefined && currentList === undefined) continue;

    const orderIds = order.map((o) => {
      if (mergeKey === undefined) return identity(o);
      if (!isObject(o)) throw new PatchError('Malformed', SET_ELEMENT_ORDER_FORMAT);
      if (!Object.hasOwn(o, mergeKey)) throw noMergeKey(o, mergeKey);
      return identity(o[mergeKey]!);
    });
    if (patchList !== undefined) checkPatchFollowsOrder(patchList, orderIds, mergeKey, order);

    const merged =
      patchList === undefined
        ? currentList!
        : currentList === undefined
          ? materializeList(patchList, listSchema?.items)
          : mergeList(currentList, patchList, listSchema);
    const wanted = new Map<string, number>();
    orderIds.forEach((id, i) => {
      if (!wanted.has(id)) wanted.set(id, i);
    });
    setOwn(target, field, interleave(merged, mergeKey, wanted, positions(currentList ?? [], mergeKey)));
    handled.add(field);
  }
  return handled;
}

/**
 * The patch list must name its elements in the relative order of the $setElementOrder list, and only
 * elements the order list names (deletions and list markers aside).
 */
function checkPatchFollowsOrder(
  patchList: Json[],
  orderIds: string[],
  mergeKey: string | undefined,
  order: Json[],
): void {
  let o = 0;
  for (const element of patchList) {
    if (isObject(element) && Object.hasOwn(element, DIRECTIVE)) continue;
    if (mergeKey !== undefined && isObject(element) && !Object.hasOwn(element, mergeKey)) {
      throw noMergeKey(element, mergeKey);
    }
    const id = elementId(element, mergeKey);
    while (o < orderIds.length && orderIds[o] !== id) o++;
    if (o === orderIds.length) {
      throw new PatchError(
        'Malformed',
        `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(order)}\n`,
      );
    }
    o++;
  }
}

// ---------------------------------------------------------------------------------------------------
// Errors, worded as upstream words them (Go's %v rendering of maps and lists)

function unknownPatchType(directive: Json | undefined, m: JsonObject): PatchError {
  return new PatchError(
    'Malformed',
    `unknown patch type: ${goFormat(directive ?? null)} in map: ${goFormat(m)}`,
  );
}

function noMergeKey(m: JsonObject, mergeKey: string): PatchError {
  return new PatchError('Malformed', `map: ${goFormat(m)} does not contain declared merge key: ${mergeKey}`);
}

function goFormat(value: Json, depth = 0): string {
  if (value === null) return '<nil>';
  if (typeof value !== 'object') return String(value);
  if (depth >= 8) return '...';
  if (Array.isArray(value)) return `[${value.map((v) => goFormat(v, depth + 1)).join(' ')}]`;
  const keys = Object.keys(value).sort();
  return `map[${keys.map((k) => `${k}:${goFormat(value[k]!, depth + 1)}`).join(' ')}]`;
}
