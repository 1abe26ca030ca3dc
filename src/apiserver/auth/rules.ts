// What a user may do in a namespace, as a list of rules: the answer to a SelfSubjectRulesReview
// (`kubectl auth can-i --list`), kube-apiserver's RuleResolver. Each authorization mode has its own:
// AlwaysAllow allows everything; ABAC the policy lines whose subject matches the user and whose namespace
// is "*" or the one asked about, each line one rule (readonly: get, list, watch; else every verb), as
// kube's ABAC RulesFor lists them; RBAC the rules of the roles bound to the user. The modes' rules are
// concatenated, in the order the authorizers are asked. As in kube-apiserver, the system:masters group, which may do anything whatever the modes say,
// adds no rule of its own: its members see the rules the modes give them.
import { ruleMatchesSubject, type AbacPolicy } from './abac.js';
import type { UserInfo } from './types.js';
import { aggregate } from '../../api/field-errors.js';
import type { RbacPolicyIndex } from '../../core/rbac/policy-index.js';

export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames?: readonly string[];
}

export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

export interface SubjectRules {
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
  /** Whether some mode could not list its rules (the list may then miss what the user may do). */
  readonly incomplete: boolean;
  /** Why (upstream's evaluationError), when a mode says. */
  readonly evaluationError?: string;
}

export type RuleResolver = (user: UserInfo, namespace: string) => SubjectRules;

const EVERYTHING: SubjectRules = {
  resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
  nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  incomplete: false,
};

/** --authorization-mode=AlwaysAllow. */
export const allowAllRules: RuleResolver = () => EVERYTHING;

const verbsOf = (readonly: boolean): string[] => (readonly ? ['get', 'list', 'watch'] : ['*']);

/** --authorization-mode=ABAC: one rule per matching policy line. */
export function abacRules(policy: AbacPolicy): RuleResolver {
  return (user, namespace) => {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    for (const rule of policy.rules) {
      if (!ruleMatchesSubject(rule, user)) continue;
      if (rule.namespace !== '*' && rule.namespace !== namespace) continue;
      if (rule.resource !== '')
        resourceRules.push({
          verbs: verbsOf(rule.readonly),
          apiGroups: [rule.apiGroup],
          resources: [rule.resource],
        });
      if (rule.nonResourcePath !== '')
        nonResourceRules.push({ verbs: verbsOf(rule.readonly), nonResourceURLs: [rule.nonResourcePath] });
    }
    return { resourceRules, nonResourceRules, incomplete: false };
  };
}

/**
 * --authorization-mode=RBAC: the rules of the roles the user's bindings reference (the cluster's, and the
 * namespace's), as upstream's RBAC RulesFor lists them; a binding to a missing role makes the answer
 * incomplete, with the lookup errors as its evaluationError.
 */
export function rbacRules(index: RbacPolicyIndex): RuleResolver {
  return (user, namespace) => {
    const { rules, errors } = index.rulesFor(user, namespace);
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    for (const r of rules) {
      if ((r.resources ?? []).length > 0)
        resourceRules.push({
          verbs: r.verbs,
          apiGroups: r.apiGroups ?? [],
          resources: r.resources ?? [],
          ...((r.resourceNames ?? []).length > 0 ? { resourceNames: r.resourceNames! } : {}),
        });
      if ((r.nonResourceURLs ?? []).length > 0)
        nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs! });
    }
    return {
      resourceRules,
      nonResourceRules,
      incomplete: errors.length > 0,
      ...(errors.length > 0 ? { evaluationError: aggregate(errors) } : {}),
    };
  };
}

/** Every mode's rules, in order; incomplete when one of them is. */
export function unionRules(resolvers: readonly RuleResolver[]): RuleResolver {
  return (user, namespace) => {
    const all = resolvers.map((r) => r(user, namespace));
    const errors = all.flatMap((r) => (r.evaluationError === undefined ? [] : [r.evaluationError]));
    return {
      resourceRules: all.flatMap((r) => r.resourceRules),
      nonResourceRules: all.flatMap((r) => r.nonResourceRules),
      incomplete: all.some((r) => r.incomplete),
      ...(errors.length > 0 ? { evaluationError: aggregate(errors) } : {}),
    };
  };
}

/** The rules of buildAuthorizer's chain: each mode's, in order (system:masters adds none, as upstream). */
export const buildRules = (modes: readonly RuleResolver[]): RuleResolver => unionRules(modes);
