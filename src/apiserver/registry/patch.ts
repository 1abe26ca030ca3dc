// The four patch types kube-apiserver accepts, applied to the live object's JSON.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import type { Schema } from '../../api/schema/schema.js';
import { StatusError, statusErrors } from '../../api/status.js';
import { applyJsonPatch } from '../../core/patch/json-patch.js';
import { applyMergePatch, type Json } from '../../core/patch/merge-patch.js';
import { PatchError } from '../../core/patch/patch-error.js';
import { applyStrategicMergePatch } from '../../core/patch/strategic-merge.js';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

export function applyPatch(
  type: Exclude<PatchType, 'apply'>,
  live: KObject,
  patch: unknown,
  schema: Schema | undefined,
): Json {
  const doc = live as unknown as Json;
  try {
    switch (type) {
      case 'json':
        return applyJsonPatch(doc, patch);
      case 'merge':
        return applyMergePatch(doc, patch as Json);
      case 'strategic':
        return applyStrategicMergePatch(doc, patch as Json, schema);
    }
  } catch (err) {
    if (err instanceof PatchError) {
      if (err.kind === 'Malformed') throw statusErrors.badRequest(err.message);
      const code = err.kind === 'TooLarge' ? 413 : 422;
      throw new StatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: err.message,
        reason: err.kind === 'TooLarge' ? 'RequestEntityTooLarge' : 'Invalid',
        code,
      });
    }
    throw err;
  }
}

/** `patch` applied to `old`: an object (with metadata) for the registry to decode, or a BadRequest. */
export function patchedObject(
  type: Exclude<PatchType, 'apply'>,
  old: KObject,
  patch: unknown,
  schema: Schema | undefined,
): KObject {
  const patched = applyPatch(type, old, patch, schema);
  if (!isPlainObject(patched)) throw statusErrors.badRequest('the patch did not produce an object');
  const obj = patched as unknown as KObject;
  if (!isPlainObject(obj.metadata)) obj.metadata = {};
  return obj;
}
