// JSON merge patch (RFC 7386), what `application/merge-patch+json` means: objects merge key by key,
// null deletes a key, and anything else (arrays included) replaces the target wholesale.

import { isJsonObject as isObject, type Json } from '../../api/json.js';

export type { Json };

/**
 * Sets an own property. Plain assignment to "__proto__" (a key JSON.parse happily produces) would set
 * the object's prototype instead of adding a member; every other key is assigned as usual, which is
 * several times faster than defineProperty and keeps the object's fast shape.
 */
export function setOwn(o: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** A deep copy of a JSON value, so a result never shares structure with the patch. */
export function cloneJson<T extends Json>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => cloneJson(x)) as T;
  if (isObject(v)) {
    const out: { [key: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, cloneJson(x));
    return out as T;
  }
  return v;
}

/** Applies `patch` to `target` without modifying either. */
export function applyMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return cloneJson(patch);
  const result: { [key: string]: Json } = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwn(result, key, applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}
