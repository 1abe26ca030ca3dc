// JSON values as JSON.parse returns them, and the one test for "a JSON object": an object that is
// neither null nor an array. Stored objects are plain JSON, so every reader of an untyped field uses it.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object whose members are JSON values. */
export type JsonObject = { [key: string]: Json };

/**
 * A JSON object whose members are not checked yet (a body as decoded, a schema being built): a
 * reader looks at each member's type before using it.
 */
export type JsonRecord = Record<string, unknown>;

/** Whether v is an object that is neither null nor an array (a JSON object, or any record). */
export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** isPlainObject for JSON values: the same test, narrowing to a JsonObject. */
export const isJsonObject = (v: unknown): v is JsonObject => isPlainObject(v);

/** v when it is an object, else a new empty one: for reading optional nested fields. */
export const recordOf = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});

/** Whether two string maps (labels, annotations) hold the same keys with the same values. */
export function sameStringMap(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k]);
}
