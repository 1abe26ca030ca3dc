// The bootstrap policy's reconcile plan, as kube-apiserver's `reconcile` of its default roles and
// bindings (pkg/registry/rbac/reconciliation): a missing object is created; one annotated
// rbac.authorization.kubernetes.io/autoupdate: "false" is left alone; otherwise missing labels and
// annotations, missing rules (or aggregation selectors, for an aggregated ClusterRole, whose rules its
// aggregation fills) and missing subjects are added, and nothing is ever removed. A binding whose roleRef
// differs, which cannot be changed, is deleted and created again.
import { isPlainObject, recordOf } from '../../api/json.js';
import { AUTOUPDATE_ANNOTATION } from './bootstrap-policy.js';
import { covers } from './covers.js';
import { bindingFromObject, ruleFromJson } from './from-object.js';
import type { Subject } from './types.js';

type Obj = Record<string, unknown>;

export type ReconcilePlan =
  | { readonly action: 'none' }
  | { readonly action: 'create'; readonly object: Obj }
  | { readonly action: 'update'; readonly object: Obj }
  /** Delete the existing binding, then create `object` (its roleRef changed). */
  | { readonly action: 'recreate'; readonly object: Obj };

const metaOf = (o: Obj): Obj => recordOf(o['metadata']);
const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(recordOf(v)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );

/** Existing labels and annotations, plus the desired ones it lacks (the existing value wins). */
function mergedMeta(existing: Obj, desired: Obj): { meta: Obj; changed: boolean } {
  const em = metaOf(existing);
  const dm = metaOf(desired);
  let changed = false;
  const merge = (key: 'labels' | 'annotations'): Record<string, string> => {
    const have = stringMap(em[key]);
    const out = { ...have };
    for (const [k, v] of Object.entries(stringMap(dm[key])))
      if (!(k in have)) {
        out[k] = v;
        changed = true;
      }
    return out;
  };
  const labels = merge('labels');
  const annotations = merge('annotations');
  return { meta: { ...em, labels, annotations }, changed };
}

const leftAlone = (existing: Obj): boolean =>
  stringMap(metaOf(existing)['annotations'])[AUTOUPDATE_ANNOTATION] === 'false';

const selectorsOf = (o: Obj): unknown[] => {
  const sel = recordOf(o['aggregationRule'])['clusterRoleSelectors'];
  return Array.isArray(sel) ? sel : [];
};

/** The plan for one Role or ClusterRole of the bootstrap policy. */
export function reconcileRole(desired: Obj, existing: Obj | undefined): ReconcilePlan {
  if (existing === undefined) return { action: 'create', object: desired };
  if (leftAlone(existing)) return { action: 'none' };
  const { meta, changed: metaChanged } = mergedMeta(existing, desired);
  let next: Obj = { ...existing, metadata: meta };
  let changed = metaChanged;
  if (isPlainObject(desired['aggregationRule'])) {
    const have = selectorsOf(existing);
    const seen = new Set(have.map((s) => JSON.stringify(s)));
    const missing = selectorsOf(desired).filter((s) => !seen.has(JSON.stringify(s)));
    if (missing.length > 0 || !isPlainObject(existing['aggregationRule'])) {
      next = {
        ...next,
        aggregationRule: {
          ...recordOf(existing['aggregationRule']),
          clusterRoleSelectors: [...have, ...missing],
        },
      };
      changed = true;
    }
  } else {
    const have = Array.isArray(existing['rules']) ? existing['rules'] : [];
    const want = Array.isArray(desired['rules']) ? desired['rules'].map(ruleFromJson) : [];
    const { missing } = covers(have.map(ruleFromJson), want);
    if (missing.length > 0) {
      next = { ...next, rules: [...have, ...missing] };
      changed = true;
    }
  }
  return changed ? { action: 'update', object: next } : { action: 'none' };
}

const sameSubject = (a: Subject, b: Subject): boolean =>
  a.kind === b.kind &&
  a.name === b.name &&
  (a.namespace ?? '') === (b.namespace ?? '') &&
  (a.apiGroup ?? '') === (b.apiGroup ?? '');

/** The plan for one RoleBinding or ClusterRoleBinding of the bootstrap policy. */
export function reconcileBinding(desired: Obj, existing: Obj | undefined): ReconcilePlan {
  if (existing === undefined) return { action: 'create', object: desired };
  if (leftAlone(existing)) return { action: 'none' };
  const want = bindingFromObject(desired);
  const have = bindingFromObject(existing);
  const sameRef =
    want.roleRef.kind === have.roleRef.kind &&
    want.roleRef.name === have.roleRef.name &&
    want.roleRef.apiGroup === have.roleRef.apiGroup;
  const { meta, changed: metaChanged } = mergedMeta(existing, desired);
  const haveSubjects = Array.isArray(existing['subjects']) ? existing['subjects'] : [];
  const missing = want.subjects.filter((s) => !have.subjects.some((h) => sameSubject(h, s)));
  const subjects = [...haveSubjects, ...missing];
  if (!sameRef) {
    // A new object: the server-owned metadata of the old one does not carry over.
    const { labels, annotations } = meta;
    return {
      action: 'recreate',
      object: { ...desired, metadata: { ...metaOf(desired), labels, annotations }, subjects },
    };
  }
  if (!metaChanged && missing.length === 0) return { action: 'none' };
  return { action: 'update', object: { ...existing, metadata: meta, subjects } };
}
