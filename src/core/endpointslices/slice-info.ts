// The three groups of slices that hint logic works on, and the removal of every hint. In behaviour like
// SliceInfo and RemoveHintsFromSlices in kubernetes' staging/src/k8s.io/endpointslice/topologycache/.
import type { EndpointSlice } from './types.js';

/**
 * Slices of one address type of one Service: those about to be created, those about to be updated, and
 * the existing ones nothing has touched yet. Hint functions may move an unchanged slice to toUpdate (as a
 * copy); they never modify the objects they are given.
 */
export interface SliceInfo {
  readonly toCreate: readonly EndpointSlice[];
  readonly toUpdate: readonly EndpointSlice[];
  readonly unchanged: readonly EndpointSlice[];
}

/** A deep copy of a slice (plain JSON). */
export const copySlice = (slice: EndpointSlice): EndpointSlice => structuredClone(slice);

/**
 * Removes every hint: from all endpoints of slices being created or updated, and from unchanged slices,
 * which move to toUpdate when they carried any hints object (even an empty one).
 */
export function removeHintsFromSlices(si: SliceInfo): SliceInfo {
  const strip = (slice: EndpointSlice): EndpointSlice => {
    const copy = copySlice(slice);
    for (const e of copy.endpoints) delete e.hints;
    return copy;
  };
  const toUpdate = si.toUpdate.map(strip);
  const unchanged: EndpointSlice[] = [];
  for (const slice of si.unchanged) {
    if (slice.endpoints.some((e) => e.hints !== undefined)) toUpdate.push(strip(slice));
    else unchanged.push(slice);
  }
  return { toCreate: si.toCreate.map(strip), toUpdate, unchanged };
}
