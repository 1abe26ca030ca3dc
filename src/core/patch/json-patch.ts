// JSON patch (RFC 6902), what `application/json-patch+json` means: a list of add, remove, replace,
// move, copy and test operations applied in order, all or nothing. The operations themselves are
// applied by fast-json-patch; this module decides what is malformed, what does not apply, and the
// operation limit kube-apiserver enforces.
import jsonpatch from 'fast-json-patch';
import { cloneJson, type Json } from './merge-patch.js';
import { PatchError } from './patch-error.js';

/** kube-apiserver refuses JSON patches with more operations than this (413). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * Failures of the document itself rather than of applying it: only a document that is not a list of
 * objects. kube-apiserver decodes the list without looking at the operations (jsonpatch.DecodePatch, 400)
 * and reports a bad op, path, from or value when applying it (patchObj.Apply, 422) — see
 * k8s.io/apiserver/pkg/endpoints/handlers/patch.go.
 */
const MALFORMED = new Set(['SEQUENCE_NOT_AN_ARRAY', 'OPERATION_NOT_AN_OBJECT']);

/** Applies a parsed JSON patch document to a copy of `doc`. Throws PatchError. */
export function applyJsonPatch(doc: Json, patch: unknown): Json {
  if (!Array.isArray(patch)) {
    throw new PatchError('Malformed', 'json patch must be a JSON array of operations');
  }
  if (patch.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(
      'TooLarge',
      `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${patch.length}`,
    );
  }
  try {
    const result = jsonpatch.applyPatch(cloneJson(doc), patch as jsonpatch.Operation[], true, true, true);
    return result.newDocument;
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    const index = (err as { index?: number }).index;
    const where = index === undefined ? '' : `operation ${index}: `;
    const what = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    throw new PatchError(MALFORMED.has(name) ? 'Malformed' : 'NotApplicable', `${where}${what}`, {
      cause: err,
    });
  }
}
