// The escalation relation of RBAC: whether the rules a requester holds cover the rules of a role it
// writes or binds, and the ones they miss, as kube-apiserver's ConfirmNoEscalation
// (pkg/registry/rbac/validation) answers it. A requested rule is broken down into one rule per API
// group, resource, verb and name (or URL and verb); each piece must be covered by one held rule. The
// missing pieces are compacted (the verbs of one group and resource together) and named in the 403:
//   user "u" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//   {APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}
import { goQuote, goQuoteList } from '../../api/go-quote.js';
import { nonResourceURLMatches } from './rule-match.js';
import type { PolicyRule, RbacUser } from './types.js';

const ALL = '*';
const has = (list: readonly string[] | undefined, v: string): boolean => (list ?? []).includes(v);
const hasOrAll = (list: readonly string[] | undefined, v: string): boolean => has(list, ALL) || has(list, v);

/** One rule per API group × resource × verb (× name), or per URL × verb. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        else
          for (const name of names)
            out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

// Whether `owner` covers every resource of `wanted`: "*", the resource itself, or "*/sub" for "x/sub".
function resourcesCovered(owner: readonly string[], wanted: readonly string[]): boolean {
  if (owner.includes(ALL)) return true;
  return wanted.every((r) => {
    if (owner.includes(r)) return true;
    const slash = r.indexOf('/');
    return slash >= 0 && owner.includes(`*/${r.slice(slash + 1)}`);
  });
}

/** Whether one held rule covers all of `wanted` (upstream's ruleCovers). */
export function ruleCovers(owner: PolicyRule, wanted: PolicyRule): boolean {
  if (!wanted.verbs.every((v) => hasOrAll(owner.verbs, v))) return false;
  const urls = wanted.nonResourceURLs ?? [];
  if (!urls.every((u) => (owner.nonResourceURLs ?? []).some((o) => nonResourceURLMatches(o, u))))
    return false;
  if (!(wanted.apiGroups ?? []).every((g) => hasOrAll(owner.apiGroups, g))) return false;
  if (!resourcesCovered(owner.resources ?? [], wanted.resources ?? [])) return false;
  const ownerNames = owner.resourceNames ?? [];
  if (ownerNames.length === 0) return true;
  const wantedNames = wanted.resourceNames ?? [];
  return wantedNames.length > 0 && wantedNames.every((n) => ownerNames.includes(n));
}

/** Whether `held` covers every rule of `wanted`, and the pieces it does not cover (compacted, sorted). */
export function covers(
  held: readonly PolicyRule[],
  wanted: readonly PolicyRule[],
): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const rule of wanted)
    for (const piece of breakdownRule(rule)) if (!held.some((h) => ruleCovers(h, piece))) missing.push(piece);
  return { covered: missing.length === 0, missing: sortRules(compactRules(missing)) };
}

const isSimple = (r: PolicyRule): boolean =>
  (r.apiGroups ?? []).length === 1 &&
  (r.resources ?? []).length === 1 &&
  (r.resourceNames ?? []).length === 0 &&
  (r.nonResourceURLs ?? []).length === 0;

/** Upstream's CompactRules: rules of one API group and one resource, without names, share one verb list. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, { apiGroups: string[]; resources: string[]; verbs: string[] }>();
  for (const r of rules) {
    if (!isSimple(r)) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0]]);
    const existing = simple.get(key);
    if (existing === undefined) {
      const fresh = { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...r.verbs] };
      simple.set(key, fresh);
      out.push(fresh);
    } else existing.verbs.push(...r.verbs.filter((v) => !existing.verbs.includes(v)));
  }
  return out;
}

const sortRules = (rules: PolicyRule[]): PolicyRule[] =>
  rules
    .map((r) => ({ r, s: compactString(r) }))
    .sort((a, b) => (a.s < b.s ? -1 : a.s > b.s ? 1 : 0))
    .map((x) => x.r);

/** Upstream's CompactString: the rule's non-empty lists, `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  const add = (label: string, list: readonly string[] | undefined): void => {
    if (list !== undefined && list.length > 0) parts.push(`${label}:${goQuoteList(list)}`);
  };
  add('APIGroups', rule.apiGroups);
  add('Resources', rule.resources);
  add('NonResourceURLs', rule.nonResourceURLs);
  add('ResourceNames', rule.resourceNames);
  add('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}

/** The reason of the 403 an escalation gets (after "<resource> "<name>" is forbidden: "). */
export function escalationMessage(user: RbacUser, missing: readonly PolicyRule[]): string {
  const head = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:`;
  return [head, ...missing.map(compactString)].join('\n');
}
