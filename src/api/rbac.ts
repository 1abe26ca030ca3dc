// The rbac.authorization.k8s.io/v1 kinds as typed shapes, and their resource rows: what the RBAC
// validation, printers, aggregation and authorizer read. Objects are stored as sent, so a reader that
// takes one of these shapes from storage still checks the JSON types (validation does).
import type { KObject } from './object.js';
import type { LabelSelectorObject } from './label-match.js';
import { mustFindResource } from './resources.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export const ROLES = mustFindResource(RBAC_GROUP, 'roles');
export const CLUSTER_ROLES = mustFindResource(RBAC_GROUP, 'clusterroles');
export const ROLE_BINDINGS = mustFindResource(RBAC_GROUP, 'rolebindings');
export const CLUSTER_ROLE_BINDINGS = mustFindResource(RBAC_GROUP, 'clusterrolebindings');

/** One rule: resource rules name apiGroups and resources; non-resource rules name nonResourceURLs. */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export interface AggregationRule {
  readonly clusterRoleSelectors?: readonly LabelSelectorObject[];
}

/** A Role or a ClusterRole (only a ClusterRole has an aggregationRule). */
export interface RoleObject extends KObject {
  rules?: PolicyRule[] | null;
  aggregationRule?: AggregationRule;
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface Subject {
  readonly kind: SubjectKind;
  /** rbac.authorization.k8s.io for User and Group, "" (or absent) for ServiceAccount. */
  readonly apiGroup?: string;
  readonly name: string;
  /** A ServiceAccount's namespace; in a RoleBinding it defaults to the binding's own namespace. */
  readonly namespace?: string;
}

export interface RoleRef {
  readonly apiGroup: string;
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
}

/** A RoleBinding or a ClusterRoleBinding. */
export interface BindingObject extends KObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}
