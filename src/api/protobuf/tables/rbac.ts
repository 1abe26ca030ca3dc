// k8s.io/api/rbac/v1 Role, ClusterRole, RoleBinding and ClusterRoleBinding (field numbers from its
// generated.proto): kubectl's typed clients (`kubectl create role`, `kubectl auth reconcile`) send
// these as protobuf.
import { message, type MessageType } from '../decode.js';
import { labelSelector, objectMeta } from './meta.js';

const RBAC = 'k8s.io.api.rbac.v1';

const policyRule = message(`${RBAC}.PolicyRule`, {
  1: ['verbs', 'string', 'repeated'],
  2: ['apiGroups', 'string', 'repeated'],
  3: ['resources', 'string', 'repeated'],
  4: ['resourceNames', 'string', 'repeated'],
  5: ['nonResourceURLs', 'string', 'repeated'],
});

const aggregationRule = message(`${RBAC}.AggregationRule`, {
  1: ['clusterRoleSelectors', labelSelector, 'repeated'],
});

const subject = message(`${RBAC}.Subject`, {
  1: ['kind', 'string', 'keep'],
  2: ['apiGroup', 'string'],
  3: ['name', 'string', 'keep'],
  4: ['namespace', 'string'],
});

const roleRef = message(`${RBAC}.RoleRef`, {
  1: ['apiGroup', 'string', 'keep'],
  2: ['kind', 'string', 'keep'],
  3: ['name', 'string', 'keep'],
});

export const role = message(`${RBAC}.Role`, {
  1: ['metadata', objectMeta],
  2: ['rules', policyRule, 'repeated'],
});

export const clusterRole = message(`${RBAC}.ClusterRole`, {
  1: ['metadata', objectMeta],
  2: ['rules', policyRule, 'repeated'],
  3: ['aggregationRule', aggregationRule],
});

const binding = (kind: string): MessageType =>
  message(`${RBAC}.${kind}`, {
    1: ['metadata', objectMeta],
    2: ['subjects', subject, 'repeated'],
    3: ['roleRef', roleRef],
  });

export const roleBinding = binding('RoleBinding');
export const clusterRoleBinding = binding('ClusterRoleBinding');
