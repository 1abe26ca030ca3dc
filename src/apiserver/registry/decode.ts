// A request body as an object of one resource, as kube's decoding into typed structs behaves:
// apiVersion/kind must match the URL, unknown fields are refused (Strict), warned about (Warn) or
// dropped, and the object is pruned to the kind's schema; name and namespace must match the URL.
/**
 * A request body as an object of this resource: apiVersion/kind must match the URL when given,
 * unknown fields are refused (Strict), warned about (Warn) or dropped, and the rest is pruned to
 * the schema, as decoding into kube's typed structs does.
 */
import { type KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import { findUnknownFields, pruneUnknownFields } from '../../api/schema/unknown-fields.js';
import {
  decodeErrorText,
  findTypeMismatch,
  openAPITypeName,
  schemaTypeErrorText,
} from '../../api/schema/type-check.js';
import { invalid } from '../../api/field-errors.js';
import { statusErrors } from '../../api/status.js';
import { schemaFor } from '../../api/schema/index.js';
import type { Schema } from '../../api/schema/schema.js';
import { cloneJson, type Json } from '../../core/patch/merge-patch.js';
import type { WriteContext } from './types.js';

export const schemaOf = (r: ResourceInfo): Schema | undefined => schemaFor(r.group, r.kind);

/** Where a body comes from: a POST or PUT body, the result of a patch, or an apply configuration. */
export type BodySource = 'body' | 'patch' | 'apply';

/** Only a benchmark turns the type check off, to measure what it costs. */
export const typeCheckSwitch = { enabled: true };

/**
 * Refuses a value of the wrong JSON type anywhere in `obj`, as kube-apiserver's decoding into the Go
 * struct does: a POST/PUT body is a 400 named by transformDecodeError, a json/merge/strategic patch
 * result a 422 on the field `patch` (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go),
 * an apply configuration a 400 from the typed converter. A custom resource is validated against its
 * schema instead (422, apiextensions-apiserver's wording).
 */
export function checkBodyTypes(
  r: Pick<ResourceInfo, 'group' | 'version' | 'kind'> & { readonly custom?: boolean },
  obj: unknown,
  schema: Schema,
  source: BodySource,
): void {
  if (!typeCheckSwitch.enabled) return;
  const m = findTypeMismatch(obj, schema);
  if (m === undefined) return;
  if (r.custom === true) {
    const meta = isPlainObject(obj) && isPlainObject(obj['metadata']) ? obj['metadata'] : {};
    const name = typeof meta['name'] === 'string' ? meta['name'] : '';
    throw statusErrors.invalid({ group: r.group, kind: r.kind }, name, [
      invalid(m.path, openAPITypeName(m.value), schemaTypeErrorText(m)),
    ]);
  }
  const text = decodeErrorText(m);
  if (source === 'patch')
    throw statusErrors.invalid({ group: '', kind: '' }, '', [invalid('patch', JSON.stringify(obj), text)]);
  if (source === 'apply') {
    const gvk = `${r.group}/${r.version}, Kind=${r.kind}`;
    throw statusErrors.badRequest(`failed to create typed patch object (${gvk}): .${m.path}: ${text}`);
  }
  throw statusErrors.badRequest(
    `${r.kind} in version ${JSON.stringify(r.version)} cannot be handled as a ${r.kind}: ${text}`,
  );
}

export function decodeObjectBody(
  r: ResourceInfo,
  body: unknown,
  ctx: WriteContext,
  source: BodySource = 'patch',
): KObject {
  const wholeBody = source === 'body';
  if (!isPlainObject(body)) {
    throw statusErrors.badRequest(`the body of the request was not a ${r.kind} object`);
  }
  const gv = groupVersion(r);
  const apiVersion = body['apiVersion'];
  const kind = body['kind'];
  if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== gv) {
    throw statusErrors.badRequest(
      `the API version in the data (${String(apiVersion)}) does not match the expected API version (${gv})`,
    );
  }
  if (kind !== undefined && kind !== '' && kind !== r.kind) {
    throw statusErrors.badRequest(
      `the kind in the data (${String(kind)}) does not match the expected kind (${r.kind})`,
    );
  }
  const schema = schemaOf(r);
  if (schema !== undefined) checkBodyTypes(r, body, schema, source);
  const meta = body['metadata'];
  if (meta !== undefined && meta !== null && !isPlainObject(meta)) {
    throw statusErrors.badRequest('metadata must be an object');
  }
  // A JSON copy (the body is parsed JSON, YAML or protobuf: plain data); structuredClone is several
  // times slower on such trees.
  const obj = cloneJson(body as Json) as unknown as KObject;
  if (!isPlainObject(meta)) obj.metadata = {} as KObject['metadata'];
  if (obj.metadata.creationTimestamp === null) delete obj.metadata.creationTimestamp;
  if (schema === undefined) return obj;
  const unknown = findUnknownFields(obj, schema);
  if (unknown.length > 0) {
    if (ctx.fieldValidation === 'Strict') {
      const strict = `strict decoding error: ${unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`;
      // kube: a POST/PUT body goes through transformDecodeError, which names the kind; a patch's
      // strict errors are reported as they are.
      throw statusErrors.badRequest(
        wholeBody
          ? `${r.kind} in version ${JSON.stringify(r.version)} cannot be handled as a ${r.kind}: ${strict}`
          : strict,
      );
    }
    if (ctx.fieldValidation === 'Warn')
      for (const f of unknown) ctx.warnings.push(`unknown field ${JSON.stringify(f)}`);
  }
  return unknown.length > 0 ? pruneUnknownFields(obj, schema) : obj;
}

export function checkNamespace(r: ResourceInfo, obj: KObject, namespace: string): void {
  const ns = obj.metadata.namespace;
  if (r.namespaced && ns !== undefined && ns !== '' && ns !== namespace) {
    throw statusErrors.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
}

/** A patched or applied object may name its namespace (even as ''), but only the request's. */
export function checkPatchNamespace(r: ResourceInfo, obj: KObject, namespace: string): void {
  const ns = obj.metadata.namespace;
  if (r.namespaced && ns !== undefined && ns !== namespace) {
    throw statusErrors.badRequest('the namespace of the object does not match the namespace on the request');
  }
}

export function checkName(obj: KObject, name: string, fill = false): void {
  const n = obj.metadata.name;
  if (n === undefined || n === '') {
    if (fill) obj.metadata.name = name;
    else
      throw statusErrors.badRequest(`the name of the object () does not match the name on the URL (${name})`);
    return;
  }
  if (n !== name) {
    throw statusErrors.badRequest(
      `the name of the object (${n}) does not match the name on the URL (${name})`,
    );
  }
}
