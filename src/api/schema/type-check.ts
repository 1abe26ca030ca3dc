// The JSON types a typed (Go) client refuses to decode, found from a kind's structural schema: a string
// where a struct is declared (`"status": "garbage"`), an object where a list is, a fraction or an
// out-of-range number in an int32 field, a time or a quantity that does not parse. encoding/json stops
// at such a value, so one of them in a LIST makes the whole list undecodable for client-go.
//
// What Go accepts is not an error: `null` anywhere (it leaves the zero value), undeclared fields (they
// are dropped), anything below `x-kubernetes-preserve-unknown-fields`, a number or a string for an
// IntOrString (an int32) or a Quantity. Paths use the notation of unknown-fields.ts: `spec.ports[0].port`,
// map entries by their key (`status.capacity.cpu`).
import { isPlainObject } from '../json.js';
import { QUANTITY } from './build.js';
import type { Schema } from './schema.js';

export interface TypeMismatch {
  /** Where: `status.conditions[0].status`; '' for the value itself. */
  readonly path: string;
  /** What the schema declares: object, array, string, integer, number, boolean, int-or-string, quantity, date-time. */
  readonly want: string;
  /** What is there, in encoding/json's words: string, number, bool, object, array, or `number 1.5`. */
  readonly got: string;
}

const INT_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** A Quantity: a signed decimal, then a binary or decimal SI suffix or a decimal exponent. */
const QUANTITY_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** RFC 3339, as metav1.Time and metav1.MicroTime parse it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** encoding/json's name for the type of a JSON value. */
function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'object' ? 'object' : typeof v; // string, number (null never reaches here)
}

const isInt = (v: number, format: string | undefined): boolean => {
  const [lo, hi] = INT_RANGE[format ?? 'int64'] ?? INT_RANGE.int64!;
  return Number.isInteger(v) && v >= lo && v <= hi;
};

/** The mismatch of a scalar value against a scalar or int-or-string schema, if any. */
function scalarMismatch(schema: Schema, v: unknown): { want: string; got?: string } | undefined {
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (schema.name === QUANTITY) {
      const ok =
        (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && QUANTITY_TEXT.test(v));
      return ok ? undefined : { want: 'quantity', ...(typeof v === 'string' ? { got: 'string' } : {}) };
    }
    const ok = typeof v === 'string' || (typeof v === 'number' && isInt(v, 'int32'));
    return ok ? undefined : { want: 'int-or-string' };
  }
  switch (schema.type) {
    case 'string':
      if (typeof v !== 'string') return { want: 'string' };
      return schema.format === 'date-time' && !DATE_TIME.test(v) ? { want: 'date-time' } : undefined;
    case 'integer':
      return typeof v === 'number' && isInt(v, schema.format) ? undefined : { want: 'integer' };
    case 'number':
      return typeof v === 'number' ? undefined : { want: 'number' };
    case 'boolean':
      return typeof v === 'boolean' ? undefined : { want: 'boolean' };
    default:
      return undefined;
  }
}

function collect(schema: Schema, v: unknown, path: string, out: TypeMismatch[]): void {
  if (v === null || v === undefined || schema['x-kubernetes-preserve-unknown-fields'] === true) return;
  const scalar = scalarMismatch(schema, v);
  if (scalar !== undefined) {
    const got = scalar.got ?? (typeof v === 'number' ? `number ${v}` : jsonType(v));
    out.push({ path, want: scalar.want, got });
    return;
  }
  if (schema.type === 'array') {
    if (!Array.isArray(v)) return void out.push({ path, want: 'array', got: jsonType(v) });
    const items = schema.items;
    if (items !== undefined) v.forEach((e, i) => collect(items, e, `${path}[${i}]`, out));
    return;
  }
  if (schema.type === 'object') {
    if (!isPlainObject(v)) return void out.push({ path, want: 'object', got: jsonType(v) });
    for (const [key, sub] of Object.entries(v)) {
      const s =
        (schema.properties !== undefined && Object.hasOwn(schema.properties, key)
          ? schema.properties[key]
          : undefined) ?? schema.additionalProperties;
      if (s !== undefined) collect(s, sub, join(path, key), out);
    }
  }
}

/**
 * Every value in `value` that a typed client could not decode into `schema`, in document order; `path`
 * is where `value` sits ('' for a whole object).
 */
export function typeErrors(schema: Schema, value: unknown, path = ''): TypeMismatch[] {
  const out: TypeMismatch[] = [];
  collect(schema, value, path, out);
  return out;
}

/** One line for a mismatch: `status: string where an object is expected`. */
export const typeErrorText = (e: TypeMismatch): string =>
  `${e.path === '' ? '.' : e.path}: ${e.got} where ${/^[aeio]/.test(e.want) ? 'an' : 'a'} ${e.want} is expected`;
