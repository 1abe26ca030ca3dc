// The RBAC kinds' tables, as kube-apiserver prints them: Role and ClusterRole NAME, CREATED AT;
// RoleBinding and ClusterRoleBinding NAME, ROLE, AGE, and with -o wide USERS, GROUPS, SERVICEACCOUNTS.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, type BindingObject } from '../rbac.js';
import type { ResourceInfo } from '../resources.js';
import { columnsFor, formatTimestamp, rowCells } from './index.js';

const NOW = Date.UTC(2024, 4, 1, 12);
const CREATED = formatTimestamp(NOW - 3 * 24 * 3600 * 1000);

const columns = (r: ResourceInfo): [string, number][] => columnsFor(r).map((c) => [c.name, c.priority]);

const binding = (body: Pick<BindingObject, 'roleRef' | 'subjects'>, namespace?: string): BindingObject => ({
  metadata: { name: 'rb', creationTimestamp: CREATED, ...(namespace === undefined ? {} : { namespace }) },
  ...body,
});

describe('RBAC printers', () => {
  it('roles print NAME and CREATED AT (RFC 3339)', () => {
    for (const r of [ROLES, CLUSTER_ROLES]) {
      assert.deepEqual(columns(r), [
        ['Name', 0],
        ['Created At', 0],
      ]);
      const role = { metadata: { name: 'reader', creationTimestamp: CREATED }, rules: [] };
      assert.deepEqual(rowCells(r, role, NOW), ['reader', '2024-04-28T12:00:00Z']);
    }
  });

  it('bindings print ROLE as Kind/name, AGE, and the subjects by kind in wide columns', () => {
    for (const r of [ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS]) {
      assert.deepEqual(columns(r), [
        ['Name', 0],
        ['Role', 0],
        ['Age', 0],
        ['Users', 1],
        ['Groups', 1],
        ['ServiceAccounts', 1],
      ]);
    }
    const rb = binding(
      {
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [
          { kind: 'User', name: 'alice' },
          { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
          { kind: 'Group', name: 'devs' },
          { kind: 'User', name: 'bob' },
          { kind: 'ServiceAccount', name: 'local' },
        ],
      },
      'default',
    );
    assert.deepEqual(rowCells(ROLE_BINDINGS, rb, NOW), [
      'rb',
      'ClusterRole/view',
      '3d',
      'alice, bob',
      'devs',
      'ci/builder, /local',
    ]);
  });

  it('a binding without subjects has empty wide cells', () => {
    const crb = binding({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
    });
    assert.deepEqual(rowCells(CLUSTER_ROLE_BINDINGS, crb, NOW), ['rb', 'ClusterRole/edit', '3d', '', '', '']);
  });
});
