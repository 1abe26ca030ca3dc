// Reading untyped JSON safely. Objects are stored as sent, so every field a validator reads may have
// any JSON type; a reader checks the type once, reports a mismatch as a field error, and hands back
// a typed value (or undefined) so the rules themselves never see the wrong type and never throw.
import { FieldPath, invalid, type FieldError } from '../field-errors.js';
import { isPlainObject, type JsonRecord } from '../json.js';

export const isObj = isPlainObject;

/** A value of the wrong JSON type. kube-apiserver rejects these while decoding; we report the field. */
export const typeError = (p: FieldPath | string, v: unknown, want: string): FieldError =>
  invalid(p, v, `must be of type ${want}`);

/** Go's len() of a string: its UTF-8 byte length. */
export function byteLength(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

/** Structural equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * A JSON object being validated, with its field path. Each getter returns the field if it has the
 * expected type, undefined if it is absent or null, and reports a type error otherwise.
 */
const reported = new WeakMap<FieldError[], Set<string>>();

/** Report a type error once per list, however many rules read the same field. */
function reportOnce(errs: FieldError[], e: FieldError): void {
  let seen = reported.get(errs);
  if (seen === undefined) reported.set(errs, (seen = new Set()));
  if (seen.has(e.field)) return;
  seen.add(e.field);
  errs.push(e);
}

export class In {
  constructor(
    readonly v: JsonRecord,
    readonly path: FieldPath,
    readonly errs: FieldError[],
  ) {}

  /** The root reader: `In.root(obj, errs)` reads `spec`, `addressType` … with bare paths. */
  static root(obj: unknown, errs: FieldError[]): In {
    return new In(isObj(obj) ? obj : {}, FieldPath.root(''), errs);
  }

  /** Wrap a value at a path; a non-object reports a type error and gives undefined. */
  static at(v: unknown, p: FieldPath, errs: FieldError[]): In | undefined {
    if (v === undefined || v === null) return undefined;
    if (isObj(v)) return new In(v, p, errs);
    reportOnce(errs, typeError(p, v, 'object'));
    return undefined;
  }

  p(key: string): FieldPath {
    return this.path.child(key);
  }

  raw(key: string): unknown {
    return Object.hasOwn(this.v, key) ? this.v[key] : undefined;
  }

  has(key: string): boolean {
    const v = this.raw(key);
    return v !== undefined && v !== null;
  }

  private typed<T>(key: string, ok: (v: unknown) => v is T, want: string): T | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    if (ok(v)) return v;
    reportOnce(this.errs, typeError(this.p(key), v, want));
    return undefined;
  }

  str(key: string): string | undefined {
    return this.typed(key, (v): v is string => typeof v === 'string', 'string');
  }

  /** A string field as Go decodes it: absent and null read as "". */
  s(key: string): string {
    return this.str(key) ?? '';
  }

  int(key: string): number | undefined {
    return this.typed(key, (v): v is number => typeof v === 'number' && Number.isInteger(v), 'integer');
  }

  bool(key: string): boolean | undefined {
    return this.typed(key, (v): v is boolean => typeof v === 'boolean', 'boolean');
  }

  /** An int-or-string field (targetPort, maxSurge). */
  intOrStr(key: string): number | string | undefined {
    return this.typed(
      key,
      (v): v is number | string => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)),
      'integer or string',
    );
  }

  obj(key: string): In | undefined {
    return In.at(this.raw(key), this.p(key), this.errs);
  }

  arr(key: string): unknown[] | undefined {
    return this.typed(key, (v): v is unknown[] => Array.isArray(v), 'array');
  }

  /** A list of objects; items of another type are reported and skipped. Absent reads as []. */
  objs(key: string): In[] {
    const list = this.arr(key) ?? [];
    const out: In[] = [];
    list.forEach((item, i) => {
      const p = this.p(key).index(i);
      if (isObj(item)) out.push(new In(item, p, this.errs));
      else reportOnce(this.errs, typeError(p, item, 'object'));
    });
    return out;
  }

  /** A list of strings; items of another type are reported and read as "". Absent reads as undefined. */
  strs(key: string): string[] | undefined {
    const list = this.arr(key);
    if (list === undefined) return undefined;
    return list.map((item, i) => {
      if (typeof item === 'string') return item;
      reportOnce(this.errs, typeError(this.p(key).index(i), item, 'string'));
      return '';
    });
  }

  /** A map of string to string (labels, selectors); bad values are reported and dropped. */
  strMap(key: string): Map<string, string> | undefined {
    const v = this.raw(key);
    if (v === undefined || v === null) return undefined;
    if (!isObj(v)) {
      reportOnce(this.errs, typeError(this.p(key), v, 'object'));
      return undefined;
    }
    return stringMap(v, this.p(key), this.errs);
  }
}

/** An object's string-valued entries as a Map (no prototype surprises); others are reported. */
export function stringMap(v: JsonRecord, p: FieldPath, errs: FieldError[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string') out.set(k, val);
    else if (val !== null && val !== undefined) reportOnce(errs, typeError(p.key(k), val, 'string'));
  }
  return out;
}

/** A map as a plain object with sorted keys, for printing as a bad value. */
export const mapValue = (m: ReadonlyMap<string, string> | undefined): Record<string, string> =>
  Object.fromEntries([...(m ?? new Map<string, string>())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
