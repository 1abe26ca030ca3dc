// Reads the four RBAC kinds from their stored JSON into what the policy index holds, leniently: a field
// of the wrong type reads as absent (validation keeps such objects out; the authorizer never throws).
import { isPlainObject, recordOf } from '../../api/json.js';
import type { PolicyRule, RbacBinding, RbacRole, RoleRef, Subject } from './types.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

function meta(obj: Record<string, unknown>): { namespace: string; name: string } {
  const m = recordOf(obj['metadata']);
  return { namespace: str(m['namespace']), name: str(m['name']) };
}

export function ruleFromJson(v: unknown): PolicyRule {
  const r = recordOf(v);
  const rule: { -readonly [K in keyof PolicyRule]: PolicyRule[K] } = { verbs: strings(r['verbs']) };
  for (const key of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
    const list = strings(r[key]);
    if (list.length > 0) rule[key] = list;
  }
  return rule;
}

/** A Role or ClusterRole (namespace '' for a ClusterRole). */
export function roleFromObject(obj: unknown): RbacRole {
  const o = recordOf(obj);
  const rules = Array.isArray(o['rules']) ? o['rules'].map(ruleFromJson) : [];
  return { ...meta(o), rules };
}

/** A RoleBinding or ClusterRoleBinding (namespace '' for a ClusterRoleBinding). */
export function bindingFromObject(obj: unknown): RbacBinding {
  const o = recordOf(obj);
  const ref = recordOf(o['roleRef']);
  const roleRef: RoleRef = { apiGroup: str(ref['apiGroup']), kind: str(ref['kind']), name: str(ref['name']) };
  const subjects: Subject[] = (Array.isArray(o['subjects']) ? o['subjects'] : [])
    .filter(isPlainObject)
    .map((s) => ({
      kind: str(s['kind']),
      name: str(s['name']),
      ...(typeof s['namespace'] === 'string' ? { namespace: s['namespace'] } : {}),
      ...(typeof s['apiGroup'] === 'string' ? { apiGroup: s['apiGroup'] } : {}),
    }));
  return { ...meta(o), subjects, roleRef };
}
