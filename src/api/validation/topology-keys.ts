// Service topology keys: the rules kube-apiserver 1.17–1.21 applied to `spec.topologyKeys` in
// ValidateService, before the field was removed. Kept standalone (arguments only) so that the same
// list given elsewhere, such as in an annotation, can be checked with the same messages.
import { type FieldError, type FieldPath, duplicate, forbidden, invalid, tooMany } from '../field-errors.js';
import { isQualifiedName } from './names.js';

/** At most this many keys (core.MaxServiceTopologyKeys). */
export const MAX_SERVICE_TOPOLOGY_KEYS = 16;
/** The key that matches any topology; only allowed last (v1.TopologyKeyAny). */
export const TOPOLOGY_KEY_ANY = '*';

/**
 * The problems of a topology key list at `path`, in upstream's order. `externalTrafficPolicy` is
 * the Service's (a non-empty list may not be combined with Local).
 */
export function validateTopologyKeys(
  keys: readonly string[],
  path: FieldPath,
  externalTrafficPolicy: string | undefined,
): FieldError[] {
  const errs: FieldError[] = [];
  if (keys.length === 0) return errs;
  if (externalTrafficPolicy === 'Local') {
    errs.push(forbidden(path, 'may not be specified when `externalTrafficPolicy=Local`'));
  }
  if (keys.length > MAX_SERVICE_TOPOLOGY_KEYS) {
    errs.push(tooMany(path, keys.length, MAX_SERVICE_TOPOLOGY_KEYS));
  }
  // Upstream reports a bad key with the whole list as the value; a copy keeps the error detached.
  const whole = [...keys];
  const seen = new Set<string>();
  keys.forEach((key, i) => {
    const keyPath = path.index(i);
    if (seen.has(key)) errs.push(duplicate(keyPath, key));
    seen.add(key);
    if (key === TOPOLOGY_KEY_ANY) {
      if (i !== keys.length - 1) errs.push(invalid(keyPath, key, '"*" must be the last value specified'));
    } else {
      for (const m of isQualifiedName(key)) errs.push(invalid(keyPath, whole, m));
    }
  });
  return errs;
}
