// Whether one PolicyRule allows one request, as upstream's RBAC authorizer matches (RuleAllows in
// plugin/pkg/auth/authorizer/rbac/rbac.go): verbs and API groups by equality or "*"; resources by
// equality of "resource" or "resource/subresource", "*", or "*/subresource"; resourceNames empty for
// every object, else the object's name; non-resource URLs by equality, "*", or a trailing-"*" prefix.
import type { PolicyRule, RbacRequest } from './types.js';

const ALL = '*';

const hasOrAll = (list: readonly string[] | undefined, v: string): boolean =>
  list !== undefined && list.some((x) => x === ALL || x === v);

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return hasOrAll(rule.verbs, verb);
}

export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of rule.resources ?? []) {
    if (r === ALL || r === combined) return true;
    if (subresource !== '' && r.startsWith('*/') && r.slice(2) === subresource) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

export function nonResourceURLMatches(url: string, path: string): boolean {
  if (url === ALL || url === path) return true;
  return url.endsWith(ALL) && path.startsWith(url.slice(0, -1));
}

/** Whether `rule` allows `req` (its user is not looked at: the binding decides who). */
export function ruleAllows(rule: PolicyRule, req: Omit<RbacRequest, 'user'>): boolean {
  if (!verbMatches(rule, req.verb)) return false;
  if (!req.resourceRequest)
    return (rule.nonResourceURLs ?? []).some((u) => nonResourceURLMatches(u, req.path));
  return (
    hasOrAll(rule.apiGroups, req.apiGroup) &&
    resourceMatches(rule, req.resource, req.subresource) &&
    resourceNameMatches(rule, req.name)
  );
}
