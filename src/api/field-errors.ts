// Field errors: what validation produces, and what a 422 Invalid Status carries as details.causes.
// The text of each matches kube-apiserver's (`spec.ports: Required value`,
// `spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: …`), because kubectl prints it verbatim.

export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueNotFound'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

export interface FieldError {
  readonly type: FieldErrorType;
  /** Path in Kubernetes' notation: `spec.ports[0].port`, `metadata.labels[app]`. */
  readonly field: string;
  /** The offending value; absent for Required and Forbidden. */
  readonly badValue?: unknown;
  readonly detail: string;
  /** For NotSupported: the values that would have been accepted. */
  readonly supported?: readonly string[];
}

/** A field path builder: path('spec').child('ports').index(0).child('port').toString(). */
export class FieldPath {
  private constructor(private readonly s: string) {}
  static root(name: string, ...more: string[]): FieldPath {
    return more.reduce((p, m) => p.child(m), new FieldPath(name));
  }
  child(name: string, ...more: string[]): FieldPath {
    return [name, ...more].reduce<FieldPath>((p, m) => new FieldPath(p.s === '' ? m : `${p.s}.${m}`), this);
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.s}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.s}[${k}]`);
  }
  toString(): string {
    return this.s;
  }
}

const at = (p: FieldPath | string): string => p.toString();

export const required = (p: FieldPath | string, detail = ''): FieldError => ({
  type: 'FieldValueRequired',
  field: at(p),
  detail,
});
export const invalid = (p: FieldPath | string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field: at(p),
  badValue: value,
  detail,
});
export const notSupported = (
  p: FieldPath | string,
  value: unknown,
  supported: readonly string[],
): FieldError => ({
  type: 'FieldValueNotSupported',
  field: at(p),
  badValue: value,
  detail: '',
  supported,
});
export const duplicate = (p: FieldPath | string, value: unknown): FieldError => ({
  type: 'FieldValueDuplicate',
  field: at(p),
  badValue: value,
  detail: '',
});
export const forbidden = (p: FieldPath | string, detail: string): FieldError => ({
  type: 'FieldValueForbidden',
  field: at(p),
  detail,
});
export const notFound = (p: FieldPath | string, value: unknown): FieldError => ({
  type: 'FieldValueNotFound',
  field: at(p),
  badValue: value,
  detail: '',
});

/** `<field>: Too long: must have at most <max> bytes` (kube: field.TooLong with an unprinted value). */
export const tooLong = (p: FieldPath | string, max: number): FieldError => ({
  type: 'FieldValueTooLong',
  field: at(p),
  detail: `must have at most ${max} bytes`,
});
/** `<field>: Too many: <actual>: must have at most <max> items` (kube: field.TooMany). */
export const tooMany = (p: FieldPath | string, actual: number, max: number): FieldError => ({
  type: 'FieldValueTooMany',
  field: at(p),
  badValue: actual,
  detail: `must have at most ${max} items`,
});

/** A bad value printed as given: a Go struct as %#v shows it (`rbac.RoleRef{APIGroup:"…", …}`). */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/**
 * A value as Go's validation prints it: strings %q-quoted, numbers and booleans bare, string lists as
 * []string{"a", "b"}, number lists as []int{1, 2}; nil as the string "null", quoted (field.Error turns a
 * nil value into "null" before printing it with %q); anything else as JSON.
 */
export function formatValue(v: unknown): string {
  if (v instanceof GoLiteral) return v.text;
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string'))
      return `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}`;
    if (v.every((x) => typeof x === 'number' && Number.isInteger(x))) return `[]int{${v.join(', ')}}`;
  }
  return JSON.stringify(v);
}

/** The error without its field: what a Status cause carries as `message`. */
export function errorBody(e: FieldError): string {
  const withDetail = (head: string): string => (e.detail === '' ? head : `${head}: ${e.detail}`);
  switch (e.type) {
    case 'FieldValueRequired':
      return withDetail('Required value');
    case 'FieldValueInvalid':
      return withDetail(`Invalid value: ${formatValue(e.badValue)}`);
    case 'FieldValueNotSupported': {
      const head = `Unsupported value: ${formatValue(e.badValue)}`;
      const list = e.supported ?? [];
      return list.length === 0
        ? head
        : `${head}: supported values: ${list.map((s) => JSON.stringify(s)).join(', ')}`;
    }
    case 'FieldValueDuplicate':
      return withDetail(`Duplicate value: ${formatValue(e.badValue)}`);
    case 'FieldValueForbidden':
      return withDetail('Forbidden');
    case 'FieldValueNotFound':
      return withDetail(`Not found: ${formatValue(e.badValue)}`);
    case 'FieldValueTooLong':
      return withDetail('Too long');
    case 'FieldValueTooMany':
      return withDetail(`Too many: ${formatValue(e.badValue)}`);
    case 'InternalError':
      return withDetail('Internal error');
  }
}

export const fieldErrorString = (e: FieldError): string => `${e.field}: ${errorBody(e)}`;

/** Several errors as Go's aggregate prints them: one bare, several as "[a, b]", duplicates once. */
export function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
