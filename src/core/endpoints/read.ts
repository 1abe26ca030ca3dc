// Defensive readers for JSON-shaped input: a field of the wrong type reads as absent, never throws.
import { isPlainObject } from '../../api/json.js';
import type { ObjectReference } from './types.js';

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) ? v : undefined;

export const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);

export { recordOf as rec } from '../../api/json.js';

/** A string map (labels, annotations, selector); entries whose value is not a string are dropped. */
export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** Byte order of the UTF-8 encodings, which is code point order (Go's string `<` and bytes.Compare). */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1; // one is a prefix of the other
}

const REF_FIELDS = [
  'kind',
  'namespace',
  'name',
  'uid',
  'apiVersion',
  'resourceVersion',
  'fieldPath',
] as const;

/** A clean copy of an object reference read from JSON (a targetRef): only its known string fields. */
export function copyObjectReference(r: Record<string, unknown>): ObjectReference {
  const out: ObjectReference = {};
  for (const f of REF_FIELDS) {
    const x = optStr(r[f]);
    if (x !== undefined) out[f] = x;
  }
  return out;
}
