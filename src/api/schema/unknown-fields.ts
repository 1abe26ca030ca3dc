// Fields a schema does not declare: found for fieldValidation=Strict and Warn, dropped for Ignore
// (which is also what kube-apiserver's decoding into typed structs does to them).
//
// Paths use kube-apiserver's notation for strict decoding errors: object keys joined by dots, list
// elements by index: `spec.foo`, `spec.ports[0].bogus`. Entries of a map are addressed by their key
// like a field (`spec.templatePool.zone-a.bogus`). Below `x-kubernetes-preserve-unknown-fields`
// every field is accepted and kept; an embedded resource always accepts apiVersion, kind and metadata.
// A value of the wrong type (an object where a list or a string is declared) is left for validation.
import { type KObject } from '../object.js';
import { isPlainObject } from '../json.js';
import type { Schema } from './schema.js';

const EMBEDDED_KEYS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** The schema for `key` inside an object of `schema`; undefined when the key is not declared. */
function fieldSchema(schema: Schema, key: string): Schema | undefined {
  const props = schema.properties;
  if (props !== undefined && Object.hasOwn(props, key)) return props[key];
  return schema.additionalProperties;
}

/** Whether an undeclared key is nonetheless allowed (and kept) in an object of `schema`. */
/** An object value where the schema wants something else: a type error, for validation to report. */
const notAnObjectSchema = (schema: Schema): boolean => schema.type !== undefined && schema.type !== 'object';

const allowsUndeclared = (schema: Schema, key: string): boolean =>
  schema['x-kubernetes-preserve-unknown-fields'] === true ||
  (schema['x-kubernetes-embedded-resource'] === true && EMBEDDED_KEYS.has(key));

function collect(value: unknown, schema: Schema, path: string, out: string[]): void {
  if (schema['x-kubernetes-int-or-string'] === true) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (items !== undefined) value.forEach((v, i) => collect(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!isPlainObject(value) || notAnObjectSchema(schema)) return;
  for (const [key, v] of Object.entries(value)) {
    const sub = fieldSchema(schema, key);
    if (sub !== undefined) collect(v, sub, join(path, key), out);
    else if (!allowsUndeclared(schema, key)) out.push(join(path, key));
  }
}

/**
 * Paths of every field of `obj` that `schema` does not declare, in document order, such as
 * `spec.foo` and `spec.ports[0].bogus`. Values of the wrong type are not this function's concern.
 */
export function findUnknownFields(obj: unknown, schema: Schema): string[] {
  const out: string[] = [];
  collect(obj, schema, '', out);
  return out;
}

/** kube-apiserver's text for each unknown field: `unknown field "spec.foo"`. */
export const unknownFieldMessages = (paths: readonly string[]): string[] =>
  paths.map((p) => `unknown field "${p}"`);

/** Set an own property, even one named `__proto__`, without touching the prototype. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function cloneJSON(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJSON);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, cloneJSON(v));
    return out;
  }
  return value;
}

/** A copy of `value` without the fields `schema` does not declare. */
export function pruneValue(value: unknown, schema: Schema): unknown {
  if (schema['x-kubernetes-int-or-string'] === true) return cloneJSON(value);
  if (Array.isArray(value)) {
    const items = schema.items;
    return items === undefined ? cloneJSON(value) : value.map((v) => pruneValue(v, items));
  }
  if (!isPlainObject(value)) return value;
  if (notAnObjectSchema(schema)) return cloneJSON(value);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const sub = fieldSchema(schema, key);
    if (sub !== undefined) setOwn(out, key, pruneValue(v, sub));
    else if (allowsUndeclared(schema, key)) setOwn(out, key, cloneJSON(v));
  }
  return out;
}

/** A copy of `obj` without the fields `schema` does not declare. `obj` is left untouched. */
export function pruneUnknownFields(obj: KObject, schema: Schema): KObject {
  return pruneValue(obj, schema) as KObject;
}
