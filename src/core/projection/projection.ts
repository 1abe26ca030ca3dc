// Projections: which fields of an object a reader needs, so a cache can keep only those. A projection
// maps field names to `true` (keep the field whole) or to a nested projection (keep only those fields
// of it; applied to each item when the field holds a list). Fields not named are dropped. Used by the
// controllers' informers: a pod keeps what the controllers that share its cache read (the union of
// their projections), as kube-controller-manager's transforms keep informer caches small.
import { isJsonObject as isObject, type Json, type JsonObject } from '../../api/json.js';
import { setOwn } from '../patch/merge-patch.js';

export interface Projection {
  readonly [field: string]: true | Projection;
}

/**
 * `value` with only the fields `p` names. Objects are new where something was dropped below them and
 * shared where kept whole; `value` itself is never changed. A field whose value does not have the
 * shape the projection expects (a scalar where it names sub-fields) is kept as it is.
 */
export function project<T extends Json>(value: T, p: Projection): T {
  if (Array.isArray(value)) return value.map((item) => project(item, p)) as T;
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, sub] of Object.entries(p)) {
    if (!Object.hasOwn(value, k)) continue;
    const v = value[k]!;
    setOwn(out, k, sub === true ? v : project(v, sub));
  }
  return out as T;
}

/** Keeps what either projection keeps. */
export function unionProjections(a: Projection, b: Projection): Projection {
  const out: { [field: string]: true | Projection } = { ...a };
  for (const [k, sub] of Object.entries(b)) {
    const mine = out[k];
    if (mine === undefined) out[k] = sub;
    else if (mine === true || sub === true) out[k] = true;
    else out[k] = unionProjections(mine, sub);
  }
  return out;
}
