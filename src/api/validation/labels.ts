// Label maps and label selectors: validation with metav1's messages, and selector matching for the
// "selector does not match template labels" rule.
import { type FieldError, type FieldPath, forbidden, invalid, required } from '../field-errors.js';
import { labelSelectorMatches } from '../label-match.js';
import { isQualifiedName, isValidLabelValue } from './names.js';
import type { In } from './json.js';

const byKey = ([a]: [string, string], [b]: [string, string]): number => (a < b ? -1 : a > b ? 1 : 0);

/** Keys are qualified names, values label values; every error is reported at the map's own path. */
export function validateLabels(labels: ReadonlyMap<string, string> | undefined, p: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of [...(labels ?? [])].sort(byKey)) {
    for (const m of isQualifiedName(k)) errs.push(invalid(p, k, m));
    for (const m of isValidLabelValue(v)) errs.push(invalid(p, v, m));
  }
  return errs;
}

/** Validate a label name (a qualified name) at a path. */
export const validateLabelName = (key: string, p: FieldPath): FieldError[] =>
  isQualifiedName(key).map((m) => invalid(p, key, m));

export interface Requirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

export interface ParsedSelector {
  readonly matchLabels: ReadonlyMap<string, string>;
  readonly matchExpressions: readonly Requirement[];
}

/**
 * Validate a metav1.LabelSelector and parse it. `ok` is false when upstream's LabelSelectorAsSelector
 * would fail on it (the caller then reports "invalid label selector" and skips the template checks).
 */
export function validateLabelSelector(
  sel: In,
  p: FieldPath,
  allowInvalidLabelValue = false,
): { errs: FieldError[]; parsed: ParsedSelector; ok: boolean } {
  const errs: FieldError[] = [];
  const matchLabels = sel.strMap('matchLabels') ?? new Map<string, string>();
  errs.push(...validateLabels(matchLabels, p.child('matchLabels')));
  let ok = errs.length === 0;
  const matchExpressions: Requirement[] = [];
  sel.objs('matchExpressions').forEach((expr, i) => {
    const ep = p.child('matchExpressions').index(i);
    const key = expr.s('key');
    const operator = expr.s('operator');
    const values = expr.strs('values') ?? [];
    const before = errs.length;
    switch (operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errs.push(required(ep.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errs.push(
            forbidden(
              ep.child('values'),
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        }
        break;
      default:
        errs.push(invalid(ep.child('operator'), operator, 'not a valid selector operator'));
    }
    errs.push(...validateLabelName(key, ep.child('key')));
    const valueErrs: FieldError[] = [];
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(v)) valueErrs.push(invalid(ep.child('values').index(j), v, m));
    });
    if (!allowInvalidLabelValue) errs.push(...valueErrs);
    if (errs.length > before || valueErrs.length > 0) ok = false;
    matchExpressions.push({ key, operator, values });
  });
  return { errs, parsed: { matchLabels, matchExpressions }, ok };
}

/** An empty selector ({}) matches everything; upstream's Selector.Empty(). */
export const selectorIsEmpty = (s: ParsedSelector): boolean =>
  s.matchLabels.size === 0 && s.matchExpressions.length === 0;

/** Whether the labels match the parsed selector (the one matcher, on these maps turned to records). */
export const selectorMatches = (s: ParsedSelector, labels: ReadonlyMap<string, string>): boolean =>
  labelSelectorMatches(
    { matchLabels: Object.fromEntries(s.matchLabels), matchExpressions: s.matchExpressions },
    Object.fromEntries(labels),
  );
