// Whether labels match a label selector, as Kubernetes' labels.Requirement.Matches decides: for the
// selectors parsed from a labelSelector query (core/selectors/labels.ts) and for metav1.LabelSelector
// objects (metav1.LabelSelectorAsSelector, then Matches). The API's validation, the workload
// controllers and the watch cache all match through here.

/** A requirement as matched: its key, its operator (labels.Operator's names), its values. */
export interface MatchRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

const INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The value as a 64-bit integer (what Go's strconv.ParseInt(v, 10, 64) accepts), or undefined. */
export function int64(v: string): bigint | undefined {
  if (!INTEGER.test(v)) return undefined;
  const n = BigInt(v);
  return n >= INT64_MIN && n <= INT64_MAX ? n : undefined;
}

/**
 * A label's value, or undefined when the object does not carry the key. Labels are parsed JSON, so a key
 * such as `constructor` or `__proto__` would otherwise read what every object inherits; label values are
 * always strings, so anything else is no value.
 */
export function labelValue(
  labels: Readonly<Record<string, string>> | undefined,
  key: string,
): string | undefined {
  const v: unknown = labels?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** Whether one requirement holds for `labels`; an operator it does not know never holds. */
export function matchesRequirement(r: MatchRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Equals':
    case 'DoubleEquals':
    case 'In':
      return v !== undefined && r.values.includes(v);
    case 'NotEquals':
    case 'NotIn':
      return v === undefined || !r.values.includes(v);
    case 'GreaterThan':
    case 'LessThan': {
      const have = v === undefined ? undefined : int64(v);
      const want = r.values[0] === undefined ? undefined : int64(r.values[0]);
      if (have === undefined || want === undefined) return false;
      return r.operator === 'GreaterThan' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** True when every requirement holds for `labels` (no requirements match everything). */
export function matchesLabels(
  sel: { readonly requirements: readonly MatchRequirement[] },
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  const l = labels ?? {};
  return sel.requirements.every((r) => matchesRequirement(r, l));
}

/** metav1.LabelSelector as JSON, as far as matching reads it. */
export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>> | null;
  readonly matchExpressions?:
    | readonly {
        readonly key: string;
        readonly operator: string;
        readonly values?: readonly string[] | null;
      }[]
    | null;
}

/** The operators a metav1.LabelSelector may use; any other matches nothing. */
const SELECTOR_OPERATORS: ReadonlySet<string> = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/**
 * Whether `labels` match a metav1.LabelSelector: matchLabels are Equals requirements, matchExpressions
 * their own. A missing selector matches nothing, `{}` everything, an unknown operator nothing.
 */
export function labelSelectorMatches(
  sel: LabelSelectorObject | null | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (sel === undefined || sel === null) return false;
  const l = labels ?? {};
  for (const [key, value] of Object.entries(sel.matchLabels ?? {}))
    if (!matchesRequirement({ key, operator: 'Equals', values: [value] }, l)) return false;
  for (const e of sel.matchExpressions ?? []) {
    if (!SELECTOR_OPERATORS.has(e.operator)) return false;
    if (!matchesRequirement({ key: e.key, operator: e.operator, values: e.values ?? [] }, l)) return false;
  }
  return true;
}
