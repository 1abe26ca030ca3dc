// Small readings of upstream objects that the wrapper's sync needs. Pure.
import type { KObject } from '../api/object.js';
import { LABEL_SERVICE_NAME } from '../core/endpointslices/types.js';

/** The Service with its traffic policies left out: kube-proxy applies those itself, from the Service. */
export function withoutPolicies(svc: KObject): KObject {
  const spec = (svc as { spec?: Record<string, unknown> }).spec;
  if (spec === undefined) return svc;
  const { internalTrafficPolicy: _i, externalTrafficPolicy: _e, ...rest } = spec;
  return { ...svc, spec: rest };
}

/** `namespace/name` of the Service a slice belongs to, or undefined when it names none. */
export function sliceService(o: KObject): string | undefined {
  const svc = o.metadata.labels?.[LABEL_SERVICE_NAME];
  return svc === undefined ? undefined : `${o.metadata.namespace ?? ''}/${svc}`;
}

/** `namespace/name` → [namespace, name]. */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
