// rbac.authorization.k8s.io/v1 validation, with upstream's field paths and messages
// (pkg/apis/rbac/validation: ValidateRole, ValidateClusterRole, ValidatePolicyRule,
// ValidateRoleBinding, ValidateClusterRoleBinding, ValidateRoleBindingSubject and the update rule that
// keeps roleRef immutable). Names are path segments (ValidateRBACName), checked with the object's
// metadata; a binding may name a role that does not exist.
import { type FieldError, FieldPath, GoLiteral, invalid, notSupported, required } from '../field-errors.js';
import { RBAC_GROUP } from '../rbac.js';
import { isValidPathSegmentName } from './formats.js';
import { In } from './json.js';
import { validateLabelSelector } from './labels.js';
import { isDNS1123Subdomain } from './names.js';

const nonEmpty = (xs: readonly string[] | undefined): boolean => (xs ?? []).length > 0;

/** ValidatePolicyRule: namespaced rules (a Role's) may not name non-resource URLs. */
function validatePolicyRule(rule: In, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (!nonEmpty(rule.strs('verbs')))
    errs.push(required(rule.p('verbs'), 'verbs must contain at least one value'));
  const urls = rule.strs('nonResourceURLs') ?? [];
  const apiGroups = rule.strs('apiGroups');
  const resources = rule.strs('resources');
  if (urls.length > 0) {
    if (namespaced)
      errs.push(
        invalid(rule.p('nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'),
      );
    if (nonEmpty(apiGroups) || nonEmpty(resources) || nonEmpty(rule.strs('resourceNames')))
      errs.push(
        invalid(
          rule.p('nonResourceURLs'),
          urls,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    return errs;
  }
  if (!nonEmpty(apiGroups))
    errs.push(required(rule.p('apiGroups'), 'resource rules must supply at least one api group'));
  if (!nonEmpty(resources))
    errs.push(required(rule.p('resources'), 'resource rules must supply at least one resource'));
  return errs;
}

const rulesOf = (obj: Record<string, unknown>, errs: FieldError[], namespaced: boolean): FieldError[] =>
  In.root(obj, errs)
    .objs('rules')
    .flatMap((rule) => validatePolicyRule(rule, namespaced));

/** ValidateRole (namespaced: true) and ValidateClusterRole (false, with its aggregationRule). */
export function validateRole(obj: Record<string, unknown>, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...rulesOf(obj, errs, namespaced));
  if (namespaced) return errs;
  const agg = In.at(obj['aggregationRule'], FieldPath.root('aggregationRule'), errs);
  if (agg === undefined) return errs;
  const selectors = agg.objs('clusterRoleSelectors');
  if (selectors.length === 0)
    errs.push(
      required(
        agg.p('clusterRoleSelectors'),
        'at least one clusterRoleSelector required if aggregationRule is non-nil',
      ),
    );
  for (const sel of selectors) {
    const v = validateLabelSelector(sel, sel.path);
    errs.push(...v.errs);
    // LabelSelectorAsSelector failed: the selector it would print is nil.
    if (!v.ok) errs.push(invalid(sel.path, null, 'invalid label selector.'));
  }
  return errs;
}

/** ValidateRoleBindingSubject: User and Group in the RBAC group; a ServiceAccount in "", named as one. */
function validateSubject(s: In, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = s.s('name');
  const apiGroup = s.s('apiGroup');
  const kind = s.s('kind');
  if (name === '') errs.push(required(s.p('name'), ''));
  switch (kind) {
    case 'ServiceAccount':
      if (name !== '') for (const m of isDNS1123Subdomain(name)) errs.push(invalid(s.p('name'), name, m));
      if (apiGroup !== '') errs.push(notSupported(s.p('apiGroup'), apiGroup, ['']));
      // In a RoleBinding an empty namespace means the binding's own.
      if (!namespaced && s.s('namespace') === '') errs.push(required(s.p('namespace'), ''));
      break;
    case 'User':
    case 'Group':
      if (apiGroup !== RBAC_GROUP) errs.push(notSupported(s.p('apiGroup'), apiGroup, [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(s.p('kind'), kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

const roleRefOf = (obj: Record<string, unknown>, errs: FieldError[]): In =>
  In.root(obj, errs).obj('roleRef') ?? new In({}, FieldPath.root('roleRef'), errs);

/** ValidateRoleBinding (namespaced: true, roleRef Role or ClusterRole) and ValidateClusterRoleBinding. */
export function validateBinding(obj: Record<string, unknown>, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = roleRefOf(obj, errs);
  const apiGroup = ref.s('apiGroup');
  if (apiGroup !== RBAC_GROUP) errs.push(notSupported(ref.p('apiGroup'), apiGroup, [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  const kind = ref.s('kind');
  if (!kinds.includes(kind)) errs.push(notSupported(ref.p('kind'), kind, kinds));
  const name = ref.s('name');
  if (name === '') errs.push(required(ref.p('name'), ''));
  else for (const m of isValidPathSegmentName(name)) errs.push(invalid(ref.p('name'), name, m));
  for (const s of In.root(obj, errs).objs('subjects')) errs.push(...validateSubject(s, namespaced));
  return errs;
}

/** The update rule of both bindings: roleRef may not change (`rbac.RoleRef{…}` as Go prints it). */
export function validateBindingUpdate(
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
): FieldError[] {
  const now = roleRefOf(obj, []);
  const before = roleRefOf(old, []);
  const fields = ['apiGroup', 'kind', 'name'] as const;
  if (fields.every((f) => now.s(f) === before.s(f))) return [];
  const text = `rbac.RoleRef{APIGroup:${JSON.stringify(now.s('apiGroup'))}, Kind:${JSON.stringify(now.s('kind'))}, Name:${JSON.stringify(now.s('name'))}}`;
  return [invalid('roleRef', new GoLiteral(text), 'cannot change roleRef')];
}
