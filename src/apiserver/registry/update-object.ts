// What the body of a PUT or PATCH becomes before defaulting and validation: the part of it the
// subresource takes (kube's per-kind PrepareForUpdate: the main resource leaves status as stored, the
// status subresource takes only status, namespaces/finalize only spec.finalizers), with the
// server-owned metadata carried over from the stored object (FillObjectMetaSystemFields).
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { statusSubresourceMetadata } from './kind-rules.js';
import { carryOverMetadata } from './object-meta.js';
import { prepareCsrUpdate } from './certificate-signing-request.js';
import type { Subresource } from './types.js';

/** `incoming` as an update of `old` through `subresource`: a new object; neither argument changes. */
export function objectForUpdate(
  r: ResourceInfo,
  old: KObject,
  incoming: KObject,
  subresource: Subresource,
): KObject {
  let next: KObject;
  if (subresource === 'finalize') {
    // namespaces/{name}/finalize takes only spec.finalizers.
    next = structuredClone(old);
    const want = (incoming.spec as { finalizers?: unknown } | undefined)?.finalizers;
    next.spec = {
      ...((old.spec as object | undefined) ?? {}),
      finalizers: Array.isArray(want) ? want : [],
    };
  } else if (subresource === 'status' || subresource === 'approval') {
    // The status subresource takes only status; spec and metadata stay as they are.
    next = { ...structuredClone(old), status: structuredClone(incoming.status) };
    if (incoming.status === undefined) delete next.status;
    statusSubresourceMetadata(r, next, incoming);
  } else {
    next = structuredClone(incoming);
    if (r.hasStatus) {
      if (old.status === undefined) delete next.status;
      else next.status = structuredClone(old.status);
    }
  }
  prepareCsrUpdate(r, next, old, subresource);
  carryOverMetadata(r, next, old);
  return next;
}
