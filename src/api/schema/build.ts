// Small constructors for writing schemas compactly. Every kind file builds its tree from these, so the
// list and map conventions (patch strategy, merge key, list type) are spelled the same way everywhere.
import type { Schema } from './schema.js';

/** Everything a field may carry besides its shape. */
export type Extra = Omit<Schema, 'type' | 'properties' | 'items' | 'additionalProperties'>;

const d = (description: string | undefined): Pick<Schema, 'description'> =>
  description === undefined ? {} : { description };

export const str = (description?: string, extra: Extra = {}): Schema => ({
  type: 'string',
  ...d(description),
  ...extra,
});

export const enumOf = (values: string[], description?: string, extra: Extra = {}): Schema =>
  str(description, { enum: values, ...extra });

export const int32 = (description?: string, extra: Extra = {}): Schema => ({
  type: 'integer',
  format: 'int32',
  ...d(description),
  ...extra,
});

export const int64 = (description?: string, extra: Extra = {}): Schema => ({
  type: 'integer',
  format: 'int64',
  ...d(description),
  ...extra,
});

export const bool = (description?: string, extra: Extra = {}): Schema => ({
  type: 'boolean',
  ...d(description),
  ...extra,
});

/** An RFC 3339 timestamp with second precision (metav1.Time). */
export const time = (description?: string): Schema => str(description, { format: 'date-time' });

/** An RFC 3339 timestamp with microsecond precision (metav1.MicroTime). */
export const microTime = (description?: string): Schema => str(description, { format: 'date-time' });

export const obj = (properties: Record<string, Schema>, extra: Extra = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
});

/** A named object type: the name is the hoisting hint for the OpenAPI documents. */
export const named = (name: string, properties: Record<string, Schema>, extra: Extra = {}): Schema =>
  obj(properties, { name, ...extra });

export const arr = (items: Schema, description?: string, extra: Extra = {}): Schema => ({
  type: 'array',
  items,
  ...d(description),
  ...extra,
});

/** A list replaced as a whole by every kind of patch. */
export const atomicList = (items: Schema, description?: string, extra: Extra = {}): Schema =>
  arr(items, description, { 'x-kubernetes-list-type': 'atomic', ...extra });

export const atomicStrings = (description?: string): Schema => atomicList({ type: 'string' }, description);

/** A list of unique scalars that patches merge element by element. */
export const setList = (items: Schema, description?: string, extra: Extra = {}): Schema =>
  arr(items, description, { 'x-kubernetes-list-type': 'set', ...extra });

/**
 * A list of objects identified by `keys`: server-side apply merges on all of them, strategic merge
 * patch (with `strategy`, unless null) on the first.
 */
export const keyedList = (
  items: Schema,
  keys: [string, ...string[]],
  description?: string,
  strategy: string | null = 'merge',
): Schema =>
  arr(items, description, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': keys,
    ...(strategy === null
      ? {}
      : { 'x-kubernetes-patch-strategy': strategy, 'x-kubernetes-patch-merge-key': keys[0] }),
  });

/** A map whose values all share one schema. */
export const mapOf = (values: Schema, description?: string, extra: Extra = {}): Schema => ({
  type: 'object',
  additionalProperties: values,
  ...d(description),
  ...extra,
});

export const strMap = (description?: string, extra: Extra = {}): Schema =>
  mapOf({ type: 'string' }, description, extra);

/** Free-form content: nothing below this node is checked or pruned. */
export const free = (description?: string, extra: Extra = {}): Schema => ({
  type: 'object',
  ...d(description),
  'x-kubernetes-preserve-unknown-fields': true,
  ...extra,
});

export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** A value that is either an integer or a string (a port number or a port name, a percentage). */
export const intOrString = (description?: string): Schema => ({
  name: INT_OR_STRING,
  'x-kubernetes-int-or-string': true,
  ...d(description),
});

/** A resource amount such as `500m`, `2Gi` or `3`: a string or a plain number. */
export const quantity = (description?: string): Schema => ({
  name: QUANTITY,
  'x-kubernetes-int-or-string': true,
  ...d(description),
});

export const quantityMap = (description?: string): Schema => mapOf(quantity(), description);

/** Reuse a shared (usually named) schema at one field, giving the field its own description. */
export const field = (schema: Schema, description: string, extra: Extra = {}): Schema => ({
  ...schema,
  description,
  ...extra,
});

/** Marks a field kube-apiserver always serializes (a struct value, or no omitempty): see zero-values.ts. */
export const always = (s: Schema): Schema => ({ ...s, 'x-svcplane-always': true });
