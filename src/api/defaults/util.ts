// Small helpers for defaulting untyped JSON in place: set a field only when it is absent (undefined
// or null, as Go sees a nil pointer or an omitted field), and never touch a value of the wrong type —
// validation reports those.
import { isPlainObject } from '../json.js';

export type Obj = Record<string, unknown>;

export const isObj = isPlainObject;

export const absent = (o: Obj, key: string): boolean => o[key] === undefined || o[key] === null;

/** Absent, or the zero value Go's defaulting treats as unset ("" or 0). */
export const unsetOrZero = (o: Obj, key: string): boolean => absent(o, key) || o[key] === '' || o[key] === 0;

export function setDefault(o: Obj, key: string, value: unknown): void {
  if (absent(o, key)) o[key] = value;
}

/** A string field that Go defaults when empty: "" counts as unset too. */
export function setDefaultString(o: Obj, key: string, value: string): void {
  if (absent(o, key) || o[key] === '') o[key] = value;
}

/** The child object at key, or undefined if it is absent or not an object. */
export const child = (o: Obj, key: string): Obj | undefined => {
  const v = o[key];
  return isObj(v) ? v : undefined;
};

/** The child object at key, created empty when absent; undefined when it holds another type. */
export function ensureChild(o: Obj, key: string): Obj | undefined {
  if (absent(o, key)) o[key] = {};
  return child(o, key);
}

/** The objects of a list field (other items are left alone). */
export const items = (o: Obj | undefined, key: string): Obj[] => {
  const v = o?.[key];
  return Array.isArray(v) ? v.filter(isObj) : [];
};
