// The RBAC policy as the authorizer holds it: roles by name, and bindings indexed by subject (user name,
// group; a ServiceAccount subject is the user system:serviceaccount:NS:NAME), per scope (the cluster's
// ClusterRoleBindings, each namespace's RoleBindings). A request reads the bindings of its user and of
// each of its groups, at the cluster scope and in its namespace: a few map lookups however many bindings
// exist. Matching is upstream's (plugin/pkg/auth/authorizer/rbac/rbac.go): ClusterRoleBindings first,
// then the namespace's RoleBindings; a RoleBinding that references a ClusterRole grants it in the
// binding's namespace only; a binding to a role that does not exist grants nothing, and names the missing
// role in the reason of a refusal. RBAC never denies: it allows or has no opinion.
import { serviceAccountUsername } from '../serviceaccount/token-claims.js';
import { aggregate } from '../../api/field-errors.js';
import { goQuote } from '../../api/go-quote.js';
import { ruleAllows } from './rule-match.js';
import {
  type PolicyRule,
  type RbacBinding,
  type RbacRequest,
  type RbacRole,
  type RbacUser,
  type Subject,
} from './types.js';

export interface RbacDecision {
  readonly allowed: boolean;
  /** Allowed: which binding allowed it. Otherwise "" or "RBAC: " and the roles that could not be found. */
  readonly reason: string;
}

/** What a user may do in a namespace (the cluster's bindings, and the namespace's when one is named). */
export interface RbacRules {
  readonly rules: readonly PolicyRule[];
  /** The bindings whose role could not be found ("clusterrole.rbac.authorization.k8s.io "x" not found"). */
  readonly errors: readonly string[];
}

interface IndexedBinding {
  readonly binding: RbacBinding;
  /** The index keys it is filed under, with the reason of an allow through each (written once, here). */
  readonly keys: ReadonlyMap<string, string>;
}

type SubjectIndex = Map<string, Set<IndexedBinding>>;

const userKey = (name: string): string => `u:${name}`;
const groupKey = (name: string): string => `g:${name}`;
const objKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The index key a subject matches under (undefined for a kind RBAC does not know). */
export function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return userKey(s.name);
    case 'Group':
      return groupKey(s.name);
    case 'ServiceAccount':
      return userKey(serviceAccountUsername(s.namespace || bindingNamespace, s.name));
    default:
      return undefined;
  }
}

/** Whether a binding's subject names the user (upstream's appliesToUser). */
export function subjectMatches(s: Subject, user: RbacUser, bindingNamespace: string): boolean {
  const key = subjectKey(s, bindingNamespace);
  return key === userKey(user.name) || user.groups.some((g) => key === groupKey(g));
}

/** Upstream's describeSubject, for the reason of an allow. */
function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount')
    return `${s.kind} ${goQuote(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${goQuote(s.name)}`;
}

function describeBinding(b: RbacBinding, s: Subject): string {
  const which =
    b.namespace === ''
      ? `ClusterRoleBinding ${goQuote(b.name)}`
      : `RoleBinding ${goQuote(`${b.name}/${b.namespace}`)}`;
  return `${which} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${describeSubject(s, b.namespace)}`;
}

export class RbacPolicyIndex {
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>();
  private readonly roles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, IndexedBinding>();
  /** Scope ('' for ClusterRoleBindings, else the namespace) → subject key → bindings. */
  private readonly bySubject = new Map<string, SubjectIndex>();

  putRole(role: RbacRole): void {
    if (role.namespace === '') this.clusterRoles.set(role.name, role.rules);
    else this.roles.set(objKey(role.namespace, role.name), role.rules);
  }

  deleteRole(namespace: string, name: string): void {
    if (namespace === '') this.clusterRoles.delete(name);
    else this.roles.delete(objKey(namespace, name));
  }

  putBinding(binding: RbacBinding): void {
    this.deleteBinding(binding.namespace, binding.name);
    const keys = new Map<string, string>();
    for (const s of binding.subjects) {
      const key = subjectKey(s, binding.namespace);
      if (key !== undefined && !keys.has(key))
        keys.set(key, `RBAC: allowed by ${describeBinding(binding, s)}`);
    }
    const indexed: IndexedBinding = { binding, keys };
    this.bindings.set(objKey(binding.namespace, binding.name), indexed);
    if (keys.size === 0) return;
    let scope = this.bySubject.get(binding.namespace);
    if (scope === undefined) this.bySubject.set(binding.namespace, (scope = new Map()));
    for (const key of keys.keys()) {
      let set = scope.get(key);
      if (set === undefined) scope.set(key, (set = new Set()));
      set.add(indexed);
    }
  }

  deleteBinding(namespace: string, name: string): void {
    const k = objKey(namespace, name);
    const old = this.bindings.get(k);
    if (old === undefined) return;
    this.bindings.delete(k);
    const scope = this.bySubject.get(namespace);
    if (scope === undefined) return;
    for (const key of old.keys.keys()) {
      const set = scope.get(key)!;
      set.delete(old);
      if (set.size === 0) scope.delete(key);
    }
    if (scope.size === 0) this.bySubject.delete(namespace);
  }

  /** Forgets everything (before a reload). */
  clear(): void {
    this.clusterRoles.clear();
    this.roles.clear();
    this.bindings.clear();
    this.bySubject.clear();
  }

  /** The rules a role reference grants, or the error upstream's lister gives for a missing role. */
  roleRules(
    ref: { readonly kind: string; readonly name: string },
    namespace: string,
  ): readonly PolicyRule[] | string {
    if (ref.kind === 'ClusterRole') {
      return (
        this.clusterRoles.get(ref.name) ??
        `clusterrole.rbac.authorization.k8s.io ${goQuote(ref.name)} not found`
      );
    }
    if (ref.kind === 'Role') {
      return (
        this.roles.get(objKey(namespace, ref.name)) ??
        `role.rbac.authorization.k8s.io ${goQuote(ref.name)} not found`
      );
    }
    return `unsupported role reference kind: ${goQuote(ref.kind)}`;
  }

  /**
   * Calls `visit` for each binding that applies to the user, cluster scope first, each once; stops when
   * it returns false. Allocation-free unless a binding names the user under two keys.
   */
  private visitBindings(
    user: RbacUser,
    namespace: string,
    visit: (b: RbacBinding, allowReason: string) => boolean,
  ): void {
    let seen: Set<IndexedBinding> | undefined;
    for (let s = 0; s < (namespace === '' ? 1 : 2); s++) {
      const scope = this.bySubject.get(s === 0 ? '' : namespace);
      if (scope === undefined) continue;
      for (let g = -1; g < user.groups.length; g++) {
        const key = g < 0 ? userKey(user.name) : groupKey(user.groups[g]!);
        const bindings = scope.get(key);
        if (bindings === undefined) continue;
        for (const indexed of bindings) {
          if (indexed.keys.size > 1) {
            seen ??= new Set();
            if (seen.has(indexed)) continue;
            seen.add(indexed);
          }
          if (!visit(indexed.binding, indexed.keys.get(key)!)) return;
        }
      }
    }
  }

  authorize(req: RbacRequest): RbacDecision {
    let allowedBy: string | undefined;
    let errors: string[] | undefined;
    this.visitBindings(req.user, req.namespace, (b, allowReason) => {
      const rules = this.roleRules(b.roleRef, b.namespace);
      if (typeof rules === 'string') {
        (errors ??= []).push(rules);
        return true;
      }
      for (const r of rules) {
        if (!ruleAllows(r, req)) continue;
        allowedBy = allowReason;
        return false;
      }
      return true;
    });
    if (allowedBy !== undefined) return { allowed: true, reason: allowedBy };
    return { allowed: false, reason: errors === undefined ? '' : `RBAC: ${aggregate(errors)}` };
  }

  rulesFor(user: RbacUser, namespace: string): RbacRules {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitBindings(user, namespace, (b) => {
      const granted = this.roleRules(b.roleRef, b.namespace);
      if (typeof granted === 'string') errors.push(granted);
      else rules.push(...granted);
      return true;
    });
    return { rules, errors };
  }
}
