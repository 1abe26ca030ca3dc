// Which Service an EndpointSlice feeds into the topology index. A slice names its Service with the
// kubernetes.io/service-name label (discovery.LabelServiceName, which kube-proxy's EndpointSliceCache
// groups slices by), and that label can change: a slice relabelled to another Service leaves the old
// Service's view and joins the new one's. Pure.
import type { KObject } from '../../api/object.js';
import { LABEL_SERVICE_NAME } from '../endpointslices/types.js';

/** `namespace/name` of the Service a slice belongs to, or undefined when it names none. */
export function sliceService(slice: KObject): string | undefined {
  const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME];
  return svc === undefined ? undefined : `${slice.metadata.namespace ?? ''}/${svc}`;
}

/** What feeding one slice does to the Services' views. */
export interface SliceMove {
  /** The Service whose view the slice leaves (it names another Service now, or none, or it is gone). */
  readonly leave: string | undefined;
  /** The Service whose view the slice is set in (added or updated). */
  readonly join: string | undefined;
}

/**
 * `before`: the Service the slice was last fed under (undefined: none, or not fed yet); `after`: the one
 * it names now (undefined: none, or the slice is gone).
 */
export function sliceMove(before: string | undefined, after: string | undefined): SliceMove {
  return { leave: before !== undefined && before !== after ? before : undefined, join: after };
}
