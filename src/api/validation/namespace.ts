// Namespace validation: spec.finalizers names on create, and the phase rule of a status update.
import { FieldPath, type FieldError, invalid } from '../field-errors.js';
import { In } from './json.js';
import { isQualifiedName } from './names.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** validateFinalizerName: a qualified name, and a standard one when it has no prefix. */
export function validateFinalizerName(p: FieldPath, name: string): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(p, name, m));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    errs.push(invalid(p, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return errs;
}

export function validateNamespaceCreate(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const spec = In.at(obj['spec'], FieldPath.root('spec'), errs);
  const p = FieldPath.root('spec', 'finalizers');
  for (const f of spec?.strs('finalizers') ?? []) errs.push(...validateFinalizerName(p, f));
  return errs;
}

/** ValidateNamespaceStatusUpdate: Active unless deletion has started, then Terminating. */
export function validateNamespaceStatusUpdate(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const meta = In.at(obj['metadata'], FieldPath.root('metadata'), []);
  const status = In.at(obj['status'], FieldPath.root('status'), errs);
  const phase = status?.s('phase') ?? '';
  const p = FieldPath.root('status', 'Phase');
  if (meta?.has('deletionTimestamp') !== true) {
    if (phase !== 'Active')
      errs.push(invalid(p, phase, "may only be 'Active' if `deletionTimestamp` is empty"));
  } else if (phase !== 'Terminating') {
    errs.push(invalid(p, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  return errs;
}
