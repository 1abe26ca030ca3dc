// What kube-apiserver always writes: it decodes every object into Go structs and encodes it back, so a
// struct-valued field, or a field without `omitempty`, appears in every response even when the client
// never sent it (encoding/json writes every field that has no `omitempty`). The schemas mark those fields
// (`x-svcplane-always`); withZeroValues adds the missing ones to an object on its way out. Stored objects
// are never rewritten, so objects stored before a field was marked read back the same way.
import { isJsonObject as isObject, type Json, type JsonObject } from '../json.js';
import type { Schema } from './schema.js';
import { setOwn } from './unknown-fields.js';

/** Whether a schema node, or anything below it, marks an always-present field (cached per node). */
const marks = new WeakMap<Schema, boolean>();
function hasMarks(s: Schema): boolean {
  let m = marks.get(s);
  if (m === undefined) {
    marks.set(s, false); // a cycle (none today) counts as unmarked
    m =
      Object.values(s.properties ?? {}).some((p) => p['x-svcplane-always'] === true || hasMarks(p)) ||
      (s.items !== undefined && hasMarks(s.items)) ||
      (s.additionalProperties !== undefined && hasMarks(s.additionalProperties));
    marks.set(s, m);
  }
  return m;
}

/** The zero value Go's encoder writes for an absent field of this schema. */
export function zeroValue(s: Schema): Json {
  if (s.type === 'object' && s.additionalProperties === undefined) {
    return fill({}, s) ?? {};
  }
  if (s.type === 'object' || s.type === 'array') return null; // a nil map or slice
  if (s.type === 'string') return s.format === 'date-time' ? null : ''; // metav1.Time's zero is null
  if (s.type === 'integer' || s.type === 'number') return 0;
  if (s.type === 'boolean') return false;
  return null;
}

/**
 * `value` with every always-present field it lacks, at any depth, set to its zero value. Objects are
 * copied only along the paths where something was added; `value` itself is never changed, and is
 * returned as it is when nothing is missing.
 */
export function withZeroValues<T>(value: T, schema: Schema | undefined): T {
  if (schema === undefined || !hasMarks(schema)) return value;
  return (fill(value as unknown as Json, schema) ?? value) as T;
}

/** The filled value, or undefined when nothing was missing. */
function fill(v: Json, s: Schema): Json | undefined {
  if (Array.isArray(v)) {
    if (s.items === undefined || !hasMarks(s.items)) return undefined;
    let out: Json[] | undefined;
    v.forEach((item, i) => {
      const f = fill(item, s.items!);
      if (f !== undefined) (out ??= [...v])[i] = f;
    });
    return out;
  }
  if (!isObject(v)) return undefined;
  let out: JsonObject | undefined;
  const set = (k: string, x: Json): void => {
    out ??= { ...v };
    setOwn(out, k, x);
  };
  if (s.properties !== undefined) {
    for (const [k, p] of Object.entries(s.properties)) {
      const present = Object.hasOwn(v, k);
      if (!present) {
        if (p['x-svcplane-always'] === true) set(k, zeroValue(p));
        continue;
      }
      if (!hasMarks(p)) continue;
      const f = fill(v[k]!, p);
      if (f !== undefined) set(k, f);
    }
  } else if (s.additionalProperties !== undefined && hasMarks(s.additionalProperties)) {
    for (const [k, x] of Object.entries(v)) {
      const f = fill(x, s.additionalProperties);
      if (f !== undefined) set(k, f);
    }
  }
  return out;
}
