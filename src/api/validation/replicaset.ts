// ReplicaSet validation (pkg/apis/apps/validation ValidateReplicaSetSpec / ...Status) and the Scale
// subresource's (pkg/apis/autoscaling/validation ValidateScale).
import { FieldPath, type FieldError, invalid } from '../field-errors.js';
import { nonNegative, validateSelectorAndTemplate } from './deployment.js';
import { In } from './json.js';

/** Every rule of a ReplicaSetSpec: replicas and minReadySeconds ≥ 0, selector and template. */
export function validateReplicaSetSpec(spec: In): FieldError[] {
  const errs: FieldError[] = [];
  nonNegative(spec.p('replicas'), spec.int('replicas') ?? 0, errs);
  nonNegative(spec.p('minReadySeconds'), spec.int('minReadySeconds') ?? 0, errs);
  validateSelectorAndTemplate(spec, errs);
  return errs;
}

/** ValidateReplicaSetStatus. */
export function validateReplicaSetStatus(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const status = In.at(obj['status'], FieldPath.root('status'), errs);
  if (status === undefined) return errs;
  const n = (k: string): number => status.int(k) ?? 0;
  for (const k of [
    'replicas',
    'fullyLabeledReplicas',
    'readyReplicas',
    'availableReplicas',
    'observedGeneration',
  ]) {
    nonNegative(status.p(k), n(k), errs);
  }
  const msg = 'cannot be greater than status.replicas';
  for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas']) {
    if (n(k) > n('replicas')) errs.push(invalid(status.p(k), n(k), msg));
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push(
      invalid(status.p('availableReplicas'), n('availableReplicas'), 'cannot be greater than readyReplicas'),
    );
  }
  return errs;
}

/** ValidateScale: `spec.replicas` must not be negative (the object's own rules follow on the update). */
export function validateScale(scale: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const spec = In.root(scale, errs).obj('spec');
  if (spec === undefined) return errs;
  nonNegative(spec.p('replicas'), spec.int('replicas') ?? 0, errs);
  return errs;
}
