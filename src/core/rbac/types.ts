// The RBAC objects of rbac.authorization.k8s.io/v1 as the authorizer reads them (Role, ClusterRole,
// RoleBinding, ClusterRoleBinding), and what it is asked: kube-apiserver's authorizer attributes, in the
// shape the API server's RequestAttributes already has.

import type { AccessRequest, AccessUser } from '../authz/access-request.js';
import type { PolicyRule } from '../../api/rbac.js';

export { RBAC_GROUP, type PolicyRule } from '../../api/rbac.js';

export interface Subject {
  readonly kind: string;
  readonly name: string;
  /** ServiceAccount subjects; a RoleBinding's defaults to the binding's namespace. */
  readonly namespace?: string;
  readonly apiGroup?: string;
}

export interface RoleRef {
  readonly apiGroup: string;
  readonly kind: string;
  readonly name: string;
}

/** A Role (namespace non-empty) or a ClusterRole (namespace ''). */
export interface RbacRole {
  readonly namespace: string;
  readonly name: string;
  readonly rules: readonly PolicyRule[];
}

/** A RoleBinding (namespace non-empty) or a ClusterRoleBinding (namespace ''). */
export interface RbacBinding {
  readonly namespace: string;
  readonly name: string;
  readonly subjects: readonly Subject[];
  readonly roleRef: RoleRef;
}

export type RbacUser = AccessUser;

/** What a request asks (kube-apiserver's authorizer.Attributes). */
export type RbacRequest = AccessRequest;
