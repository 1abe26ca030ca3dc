// ClusterRole aggregation (upstream's clusterrole-aggregation controller, pkg/controller/clusterroleaggregation):
// a ClusterRole with aggregationRule.clusterRoleSelectors gets as its rules the union of the rules of
// the ClusterRoles its selectors pick. Order is stable: selector by selector, the picked roles by name,
// each role's rules in its own order; a rule equal to one already taken is skipped (an absent list and
// an empty one are equal, as Go's semantic equality has it). The aggregating role never picks itself.
import { labelSelectorMatches } from '../../api/label-match.js';
import type { PolicyRule, RoleObject } from '../../api/rbac.js';

const LISTS = ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const;

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** The rule with its lists read as strings and empty lists dropped (verbs always kept), in Go's field order. */
function normalRule(rule: PolicyRule): PolicyRule {
  const out: Record<string, string[]> = { verbs: strings(rule.verbs) };
  for (const k of LISTS) {
    const xs = strings(rule[k]);
    if (xs.length > 0) out[k] = xs;
  }
  return out as unknown as PolicyRule;
}

/** A key equal for two rules exactly when they are semantically equal. */
const ruleKey = (rule: PolicyRule): string =>
  JSON.stringify([strings(rule.verbs), ...LISTS.map((k) => strings(rule[k]))]);

const rulesOf = (role: RoleObject): PolicyRule[] =>
  (Array.isArray(role.rules) ? role.rules : []).filter((r) => typeof r === 'object' && r !== null);

const byName = (a: RoleObject, b: RoleObject): number => {
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};

/** The rules `role`'s aggregationRule gives it, from `clusterRoles` (which may include `role` itself). */
export function aggregatedRules(role: RoleObject, clusterRoles: readonly RoleObject[]): PolicyRule[] {
  const self = role.metadata.name ?? '';
  const others = clusterRoles.filter((c) => (c.metadata.name ?? '') !== self).sort(byName);
  const seen = new Set<string>();
  const out: PolicyRule[] = [];
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    for (const c of others) {
      if (!labelSelectorMatches(selector, c.metadata.labels)) continue;
      for (const rule of rulesOf(c)) {
        const key = ruleKey(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(normalRule(rule));
      }
    }
  }
  return out;
}

/** Whether two rule lists are semantically equal, in order (what decides that a write is needed). */
export function sameRules(
  a: readonly PolicyRule[] | null | undefined,
  b: readonly PolicyRule[] | null | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => ruleKey(r) === ruleKey(y[i]!));
}
