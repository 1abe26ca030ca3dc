// One structural schema per kind, in OpenAPI v3 vocabulary, inline (no $ref). It is the single
// source for four consumers: the /openapi documents (and `kubectl explain`), strategic merge patch
// (patch strategy and merge keys), server-side apply (list types and map keys), and
// fieldValidation=Strict (unknown fields).

export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  /** int32, int64, double, date-time, byte, int-or-string … */
  format?: string;
  description?: string;
  /** Hoisting hint for the OpenAPI documents: `io.k8s.api.core.v1.ServicePort`. */
  name?: string;
  properties?: Record<string, Schema>;
  /** A map: every value has this schema. */
  additionalProperties?: Schema;
  required?: string[];
  items?: Schema;
  enum?: string[];
  default?: unknown;
  'x-kubernetes-int-or-string'?: true;
  /** Anything goes below this node (RawExtension, free-form maps). */
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-embedded-resource'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  /** Strategic merge patch: 'merge', 'retainKeys', 'merge,retainKeys' or 'replace'. */
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  /**
   * kube-apiserver always serializes this field: a Go struct value, or a field without `omitempty`. When
   * an object lacks it, responses carry its zero value (zero-values.ts): `{}` for an object (with its own
   * always-present fields), `null` for a list, map or time, `""`, `0` or `false` for a scalar. Never
   * published in the OpenAPI documents.
   */
  'x-svcplane-always'?: true;
}
