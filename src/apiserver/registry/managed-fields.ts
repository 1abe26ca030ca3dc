// managedFields on every write, and server-side apply, through src/core/apply with each kind's schema.
// The main resource never owns status and the status subresource never owns spec (kube's reset
// fields); kinds without a status subresource own everything.
import type { KObject } from '../../api/object.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import { schemaFor } from '../../api/schema/index.js';
import { StatusError, statusErrors } from '../../api/status.js';
import {
  apply,
  applyConflictError,
  ApplyError,
  defaultIgnore,
  updateManagedFields,
  type IgnoreSpec,
} from '../../core/apply/index.js';
import { ManagedFieldsError } from '../../core/apply/managed-fields.js';
import type { WriteContext } from './types.js';

const ignoreFor = (r: ResourceInfo, subresource: string): IgnoreSpec =>
  r.hasStatus ? defaultIgnore(subresource) : [];

function asStatus(r: ResourceInfo, obj: KObject, err: unknown): unknown {
  if (err instanceof ApplyError) {
    return err.kind === 'BadRequest'
      ? statusErrors.badRequest(err.message)
      : new StatusError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `${r.kind} ${JSON.stringify(obj.metadata.name ?? '')} is invalid: ${err.message}`,
          reason: 'Invalid',
          details: { name: obj.metadata.name ?? '', kind: r.kind },
          code: 422,
        });
  }
  if (err instanceof ManagedFieldsError) return statusErrors.badRequest(err.message);
  return err;
}

/** The object with managedFields updated for a non-apply write by ctx.fieldManager. */
export function recordUpdate(
  r: ResourceInfo,
  old: KObject | undefined,
  next: KObject,
  ctx: WriteContext,
  now: string,
  subresource = '',
): KObject {
  const schema = schemaFor(r.group, r.kind);
  if (schema === undefined || ctx.fieldManager === '') return next;
  try {
    return updateManagedFields({
      old,
      updated: next,
      manager: ctx.fieldManager,
      now,
      schema,
      apiVersion: groupVersion(r),
      ...(subresource === '' ? {} : { subresource }),
      ignore: ignoreFor(r, subresource),
    });
  } catch (err) {
    throw asStatus(r, next, err);
  }
}

/** Server-side apply of `applied` over `live` (undefined: create). Throws 409 with the conflicts. */
export function serverSideApply(
  r: ResourceInfo,
  live: KObject | undefined,
  applied: KObject,
  manager: string,
  force: boolean,
  now: string,
  subresource: string,
): KObject {
  const schema = schemaFor(r.group, r.kind);
  if (schema === undefined) throw statusErrors.unsupportedMediaType(['application/merge-patch+json']);
  try {
    const res = apply({
      live,
      applied,
      manager,
      force,
      apiVersion: groupVersion(r),
      now,
      schema,
      ...(subresource === '' ? {} : { subresource }),
      ignore: ignoreFor(r, subresource),
    });
    if (!res.ok) throw applyConflictError(res.conflicts);
    return res.object;
  } catch (err) {
    throw asStatus(r, applied, err);
  }
}
