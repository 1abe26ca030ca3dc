// authentication/v1 TokenRequest validation (kube's ValidateTokenRequest) and the checks its REST
// storage makes of the body against the URL: a name or namespace in the body must match the URL's.
import { invalid, type FieldError } from '../field-errors.js';

/** kube's MinTokenAgeSec: a TokenRequest for less than 10 minutes is refused. */
const MIN_TOKEN_SECONDS = 600;
/** The upper bound of spec.expirationSeconds (2^32 seconds). */
const MAX_TOKEN_SECONDS = 2 ** 32;
/** spec.expirationSeconds when the request names none (SetDefaults_TokenRequestSpec). */
export const DEFAULT_TOKEN_SECONDS = 3600;

export function validateTokenRequestSpec(expirationSeconds: number): FieldError[] {
  const errs: FieldError[] = [];
  if (expirationSeconds < MIN_TOKEN_SECONDS) {
    errs.push(
      invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'),
    );
  }
  if (expirationSeconds > MAX_TOKEN_SECONDS) {
    errs.push(
      invalid(
        'spec.expirationSeconds',
        expirationSeconds,
        'may not specify a duration larger than 2^32 seconds',
      ),
    );
  }
  return errs;
}

/** The body's metadata.name and metadata.namespace, when given, must be the URL's. */
export function validateTokenRequestTarget(
  meta: { readonly name?: unknown; readonly namespace?: unknown },
  name: string,
  namespace: string,
): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name) {
    errs.push(invalid('metadata.name', meta.name, 'must match the service account name if specified'));
  }
  if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== namespace) {
    errs.push(
      invalid('metadata.namespace', meta.namespace, 'must match the service account namespace if specified'),
    );
  }
  return errs;
}
