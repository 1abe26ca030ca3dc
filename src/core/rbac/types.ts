// The RBAC objects of rbac.authorization.k8s.io/v1 as the authorizer reads them (Role, ClusterRole,
// RoleBinding, ClusterRoleBinding), and what it is asked: kube-apiserver's authorizer attributes, in the
// shape the API server's RequestAttributes already has.

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** One rule of a Role or ClusterRole (upstream's PolicyRule). */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  /** Empty or absent: every object. */
  readonly resourceNames?: readonly string[];
  /** ClusterRoles only; a trailing "*" is a prefix match. */
  readonly nonResourceURLs?: readonly string[];
}

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

export interface RbacUser {
  readonly name: string;
  readonly groups: readonly string[];
}

/** What a request asks (kube-apiserver's authorizer.Attributes). */
export interface RbacRequest {
  readonly user: RbacUser;
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly apiGroup: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly path: string;
}
