// Small readings of upstream objects that the wrapper's sync needs. Pure.
import type { KObject } from '../api/object.js';

/** The Service with its traffic policies left out: kube-proxy applies those itself, from the Service. */
export function withoutPolicies(svc: KObject): KObject {
  const spec = (svc as { spec?: Record<string, unknown> }).spec;
  if (spec === undefined) return svc;
  const { internalTrafficPolicy: _i, externalTrafficPolicy: _e, ...rest } = spec;
  return { ...svc, spec: rest };
}

/** `namespace/name` → [namespace, name]. */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}
