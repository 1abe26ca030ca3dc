// Node validation (ValidateNode / ValidateNodeUpdate): taints — reported under `metadata.taints`, as
// upstream does — pod CIDRs, and the fields that may only be set once (podCIDRs, providerID).
import { FieldPath, type FieldError, duplicate, forbidden, invalid } from '../field-errors.js';
import { CIDR_MESSAGE, isDualStackCIDRs, isValidCIDR } from './ip.js';
import { In } from './json.js';
import { validateTaints } from './pod.js';

const SPEC = FieldPath.root('spec');

function specOf(obj: Record<string, unknown>, errs: FieldError[]): In {
  return In.at(obj['spec'], SPEC, errs) ?? new In({}, SPEC, errs);
}

/** Taints are checked at `metadata.taints[i]` (an upstream quirk kubectl users see). */
function validateNodeTaints(spec: In): FieldError[] {
  const taints = spec.objs('taints');
  const quirk = taints.map((t, i) => new In(t.v, FieldPath.root('metadata', 'taints').index(i), t.errs));
  return validateTaints(quirk);
}

function validatePodCIDRs(spec: In): FieldError[] {
  const errs: FieldError[] = [];
  const cidrs = spec.strs('podCIDRs') ?? [];
  const p = SPEC.child('podCIDRs');
  cidrs.forEach((c, i) => {
    if (!isValidCIDR(c)) errs.push(invalid(p.index(i), c, CIDR_MESSAGE));
  });
  if (cidrs.length > 1) {
    if (!isDualStackCIDRs(cidrs) || cidrs.length > 2) {
      errs.push(invalid(p, cidrs, 'may specify no more than one CIDR for each IP family'));
    }
    const seen = new Set<string>();
    cidrs.forEach((c, i) => {
      if (seen.has(c)) errs.push(duplicate(p.index(i), c));
      seen.add(c);
    });
  }
  return errs;
}

export function validateNodeCreate(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(obj, errs);
  errs.push(...validateNodeTaints(spec));
  errs.push(...validatePodCIDRs(spec));
  spec.bool('unschedulable');
  spec.str('providerID');
  return errs;
}

/** The update rules (the common ones are in validateNodeCreate, which the caller runs too). */
export function validateNodeUpdate(obj: Record<string, unknown>, old: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(obj, errs);
  const oldSpec = In.at(old['spec'], SPEC, []) ?? new In({}, SPEC, []);
  const oldCIDRs = oldSpec.strs('podCIDRs') ?? [];
  const cidrs = spec.strs('podCIDRs') ?? [];
  const cidrMsg = 'node updates may not change podCIDR except from "" to valid';
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== cidrs.length) errs.push(forbidden(SPEC.child('podCIDRs'), cidrMsg));
    else oldCIDRs.forEach((c, i) => c !== cidrs[i] && errs.push(forbidden(SPEC.child('podCIDRs'), cidrMsg)));
  }
  const oldProvider = oldSpec.s('providerID');
  if (oldProvider !== '' && oldProvider !== spec.s('providerID')) {
    errs.push(
      forbidden(SPEC.child('providerID'), 'node updates may not change providerID except from "" to valid'),
    );
  }
  if (spec.s('externalID') !== oldSpec.s('externalID'))
    errs.push(forbidden(SPEC.child('externalID'), 'may not be updated'));
  const status = In.at(obj['status'], FieldPath.root('status'), errs);
  const seen = new Set<string>();
  status?.objs('addresses').forEach((a) => {
    const key = `${a.s('type')}\u0000${a.s('address')}`;
    if (seen.has(key)) errs.push(duplicate(a.path, a.v));
    seen.add(key);
  });
  return errs;
}
