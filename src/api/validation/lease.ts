// Lease validation (coordination.k8s.io/v1 ValidateLeaseSpec).
import { FieldPath, type FieldError, forbidden, invalid, notSupported } from '../field-errors.js';
import { In } from './json.js';
import { isQualifiedName } from './names.js';
import { MICRO_TIME_MESSAGE, isMicroTime } from './time.js';

const STRATEGIES = ['OldestEmulationVersion'];

export function validateLeaseSpec(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const spec = In.at(obj['spec'], FieldPath.root('spec'), errs);
  if (spec === undefined) return errs;
  const duration = spec.int('leaseDurationSeconds');
  if (duration !== undefined && duration <= 0) {
    errs.push(invalid(spec.p('leaseDurationSeconds'), duration, 'must be greater than 0'));
  }
  const transitions = spec.int('leaseTransitions');
  if (transitions !== undefined && transitions < 0) {
    errs.push(invalid(spec.p('leaseTransitions'), transitions, 'must be greater than or equal to 0'));
  }
  const strategy = spec.str('strategy');
  if (strategy !== undefined) {
    if (strategy.includes('/')) {
      for (const m of isQualifiedName(strategy)) errs.push(invalid(spec.p('strategy'), strategy, m));
    } else if (!STRATEGIES.includes(strategy)) {
      errs.push(notSupported(spec.p('strategy'), strategy, STRATEGIES));
    }
  }
  const preferred = spec.s('preferredHolder');
  if (preferred !== '' && (strategy ?? '') === '') {
    errs.push(forbidden(spec.p('preferredHolder'), 'may only be specified if `strategy` is defined'));
  }
  spec.str('holderIdentity');
  for (const key of ['acquireTime', 'renewTime']) {
    const t = spec.s(key);
    if (t !== '' && !isMicroTime(t)) errs.push(invalid(spec.p(key), t, MICRO_TIME_MESSAGE));
  }
  return errs;
}
