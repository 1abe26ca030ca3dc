// Values of the wrong JSON type, found by walking a body against the kind's structural schema (the
// same tree the OpenAPI documents are built from, so the check cannot drift from what is published).
//
// kube-apiserver decodes a built-in kind into its Go struct (encoding/json semantics): a string where
// the struct has an object, a list or a number cannot be decoded, and the request fails before anything
// is validated or stored. Go's decoder keeps going after a mismatch but reports only the first one, in
// document order, naming the innermost struct and the JSON keys from the root (no list indices, no map
// keys): `json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type
// []v1.NodeCondition`. null is accepted everywhere (a no-op, or a nil pointer, slice or map).
// Custom resources are validated against their OpenAPI schema instead (apiextensions-apiserver):
// `spec.replicas in body must be of type integer: "string"`.
//
// The same walk serves `svcplane store check` and the API server's start-up scan (api/undecodable.ts):
// there it lists every such value (typeErrors), and also the strings a Go decoder cannot parse: a time
// that is not RFC 3339, a Quantity that does not parse.
import { isPlainObject } from '../json.js';
import type { Schema } from './schema.js';
import { QUANTITY } from './build.js';

export interface TypeMismatch {
  /** Path in Kubernetes' field notation, with list indices: `status.conditions[0]`. */
  readonly path: string;
  /** The JSON keys from the root, as Go's decoder names the field: `status.conditions`. */
  readonly goField: string;
  /** The innermost Go struct holding the field: `NodeStatus`. */
  readonly goStruct: string;
  /** The Go type of the value the decoder was filling: `[]v1.NodeCondition`, `int32`. */
  readonly goType: string;
  /** The schema's type there (`object`, `integer`, …), as OpenAPI validation names it. */
  readonly want: string;
  /** The value found. */
  readonly value: unknown;
  /** A resource.Quantity given something other than a string or a number: its parser answers instead. */
  readonly quantity: boolean;
  /** What a decoder wanted, in words: object, array, string, integer, int-or-string, quantity, date-time, … */
  readonly expected: string;
}

/** How far a walk goes: the first mismatch (a request body), or all of them and string formats too. */
interface WalkOptions {
  readonly all?: TypeMismatch[];
  readonly formats?: boolean;
}

/** A Quantity: a signed decimal, then a binary or decimal SI suffix or a decimal exponent. */
const QUANTITY_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** RFC 3339, as metav1.Time and metav1.MicroTime parse it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Where the walk is, kept as parallel stacks of primitives (pushed and popped, no allocation per node):
 * the step taken at each depth and how (a struct field, a map entry, a list index), and the innermost
 * struct's name. Paths are only spelled out for a mismatch.
 */
class Trail {
  readonly steps: Array<string | number> = [];
  readonly how: Array<'field' | 'entry' | 'index'> = [];
  readonly structs: string[];
  constructor(root: string) {
    this.structs = [root];
  }
  push(step: string | number, how: 'field' | 'entry' | 'index'): void {
    this.steps.push(step);
    this.how.push(how);
  }
  pop(): void {
    this.steps.pop();
    this.how.pop();
  }
  /** `status.conditions[0]`, `spec.templatePool.zone-a`. */
  path(): string {
    let out = '';
    this.steps.forEach((st, i) => {
      out += this.how[i] === 'index' ? `[${String(st)}]` : out === '' ? String(st) : `.${String(st)}`;
    });
    return out;
  }
  /** Go's field name: the struct fields' JSON keys only. */
  goField(): string {
    return this.steps.filter((_, i) => this.how[i] === 'field').join('.');
  }
}

/** `io.k8s.api.core.v1.NodeStatus` → `v1.NodeStatus`, as Go prints a named type. */
function goTypeName(name: string): string {
  const parts = name.split('.');
  return parts.length < 2 ? name : `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

const structName = (name: string): string => name.slice(name.lastIndexOf('.') + 1);

/** The Go type a schema node decodes into. */
export function goType(s: Schema): string {
  if (s['x-kubernetes-int-or-string'] === true) return s.name === QUANTITY ? 'resource.Quantity' : 'int32';
  switch (s.type) {
    case 'object':
      if (s.name !== undefined) return goTypeName(s.name);
      if (s.additionalProperties !== undefined) return `map[string]${goType(s.additionalProperties)}`;
      return 'map[string]interface {}';
    case 'array':
      return `[]${s.items === undefined ? 'interface {}' : goType(s.items)}`;
    case 'integer':
      return s.format === 'int32' ? 'int32' : s.format === 'int64' ? 'int64' : 'int';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    default:
      return 'interface {}';
  }
}

const INT32 = 2 ** 31;

function integerFits(v: number, format: string | undefined): boolean {
  if (!Number.isInteger(v)) return false;
  return format !== 'int32' || (v >= -INT32 && v < INT32);
}

function typeFits(v: unknown, s: Schema): boolean {
  switch (s.type) {
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && integerFits(v, s.format);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

/** A node below which anything is kept as sent (RawExtension, FieldsV1, free-form maps). */
const isFree = (s: Schema): boolean =>
  s['x-kubernetes-preserve-unknown-fields'] === true &&
  s.properties === undefined &&
  s.additionalProperties === undefined;

function mismatch(v: unknown, s: Schema, at: Trail, quantity = false, expected?: string): TypeMismatch {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const want = intOrString ? 'integer' : (s.type ?? 'object');
  return {
    expected:
      expected ?? (intOrString ? (s.name === QUANTITY ? 'quantity' : 'int-or-string') : (s.type ?? 'object')),
    path: at.path(),
    goField: at.goField(),
    goStruct: at.structs[at.structs.length - 1]!,
    goType: goType(s),
    want,
    value: v,
    quantity,
  };
}

function intOrStringMismatch(v: unknown, s: Schema, at: Trail, formats: boolean): TypeMismatch | undefined {
  const quantity = s.name === QUANTITY;
  if (typeof v === 'string')
    return formats && quantity && !QUANTITY_TEXT.test(v) ? mismatch(v, s, at, false, 'quantity') : undefined;
  // A Quantity parses any number; an IntOrString decodes a number into its int32.
  if (typeof v === 'number' && (quantity || integerFits(v, 'int32'))) return undefined;
  return mismatch(v, s, at, quantity);
}

/** A mismatch found: the walk's answer (first only), or one more in `o.all` (and the walk goes on). */
function found(m: TypeMismatch | undefined, o: WalkOptions): TypeMismatch | undefined {
  if (m === undefined || o.all === undefined) return m;
  o.all.push(m);
  return undefined;
}

function walk(v: unknown, s: Schema, at: Trail, o: WalkOptions): TypeMismatch | undefined {
  if (v === null || v === undefined || isFree(s)) return undefined;
  if (s['x-kubernetes-int-or-string'] === true)
    return found(intOrStringMismatch(v, s, at, o.formats === true), o);
  if (!typeFits(v, s)) return found(mismatch(v, s, at), o);
  if (o.formats === true && s.format === 'date-time' && typeof v === 'string' && !DATE_TIME.test(v))
    return found(mismatch(v, s, at, false, 'date-time'), o);
  if (Array.isArray(v)) {
    const items = s.items;
    if (items === undefined) return undefined;
    for (let i = 0; i < v.length; i++) {
      at.push(i, 'index');
      const m = walk(v[i], items, at, o);
      at.pop();
      if (m !== undefined) return m;
    }
    return undefined;
  }
  if (s.type !== 'object') return undefined;
  const obj = v as Record<string, unknown>;
  const props = s.properties;
  const struct = s.name !== undefined && props !== undefined;
  if (struct) at.structs.push(structName(s.name!));
  let m: TypeMismatch | undefined;
  for (const key in obj) {
    // Go names struct fields by their JSON key; entries of a map add nothing to the field's name.
    const declared = props !== undefined && Object.hasOwn(props, key);
    const sub = declared ? props[key] : s.additionalProperties;
    if (sub === undefined) continue; // an unknown field: unknown-fields.ts reports or drops it
    at.push(key, declared ? 'field' : 'entry');
    m = walk(obj[key], sub, at, o);
    at.pop();
    if (m !== undefined) break;
  }
  if (struct) at.structs.pop();
  return m;
}

/** The first value of `obj` (in document order) whose JSON type `schema` does not allow, if any. */
export function findTypeMismatch(obj: unknown, schema: Schema): TypeMismatch | undefined {
  return walk(obj, schema, new Trail(structName(schema.name ?? '')), {});
}

/**
 * Every value in `value` a typed client could not decode into `schema` (wrong JSON types, and times and
 * quantities that do not parse), in document order; `path` is where `value` sits ('' for a whole object).
 */
export function typeErrors(schema: Schema, value: unknown, path = ''): TypeMismatch[] {
  const all: TypeMismatch[] = [];
  walk(value, schema, new Trail(structName(schema.name ?? '')), { all, formats: true });
  if (path === '') return all;
  return all.map((m) => ({
    ...m,
    path: m.path === '' ? path : m.path.startsWith('[') ? `${path}${m.path}` : `${path}.${m.path}`,
  }));
}

/** encoding/json's word for what was found: string, bool, object, array, `number 1.5`. */
function foundWord(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v === 'number' ? `number ${String(v)}` : 'string';
}

/** One line for a mismatch: `status: string where an object is expected`. */
export const typeErrorText = (m: TypeMismatch): string =>
  `${m.path === '' ? '.' : m.path}: ${foundWord(m.value)} where ${/^[aeio]/.test(m.expected) ? 'an' : 'a'} ${m.expected} is expected`;

/** Go's name for the JSON type of a value that could not be decoded: `string`, `number 1.5`, `bool`. */
function goValueWord(v: unknown, want: string): string {
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return want === 'integer' ? `number ${String(v)}` : 'number';
  return 'string';
}

/** resource.ParseQuantity's answer to anything that is not a quantity. */
const QUANTITY_FORMAT =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** What kube's JSON decoder says: `json: cannot unmarshal string into Go struct field … of type …`. */
export function decodeErrorText(m: TypeMismatch): string {
  if (m.quantity) return QUANTITY_FORMAT;
  const word = goValueWord(m.value, m.want);
  const where = m.goField === '' ? 'Go value' : `Go struct field ${m.goStruct}.${m.goField}`;
  return `json: cannot unmarshal ${word} into ${where} of type ${m.goType}`;
}

/** OpenAPI's name for a value's type, as custom resource validation reports it. */
export function openAPITypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** apiextensions-apiserver's detail for a custom resource field of the wrong type. */
export const schemaTypeErrorText = (m: TypeMismatch): string =>
  `${m.path} in body must be of type ${m.want}: ${JSON.stringify(openAPITypeName(m.value))}`;
