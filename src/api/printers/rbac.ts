// Printers for RoleBindings and ClusterRoleBindings (kube's printRoleBinding and
// printClusterRoleBinding): NAME, ROLE as Kind/name, AGE; wide adds the subjects by kind, joined with
// ", ", ServiceAccounts as namespace/name. Roles and ClusterRoles print kube's default NAME, CREATED AT.
import { obj, objects, str } from './fields.js';
import { since } from './time.js';
import { AGE_COLUMN, NAME_COLUMN, column, wide, type Printer } from './types.js';

export const bindingPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Role', 'The role the binding grants, as Kind/name (roleRef).'),
    AGE_COLUMN,
    wide('Users', 'Users in the binding.'),
    wide('Groups', 'Groups in the binding.'),
    wide('ServiceAccounts', 'ServiceAccounts in the binding.'),
  ],
  cells: (binding, nowMs) => {
    const ref = obj(binding['roleRef']);
    const byKind = (kind: string, text: (s: Record<string, unknown>) => string): string =>
      objects(binding['subjects'])
        .filter((s) => s['kind'] === kind)
        .map(text)
        .join(', ');
    return [
      binding.metadata.name ?? '',
      `${str(ref['kind'])}/${str(ref['name'])}`,
      since(binding.metadata.creationTimestamp, nowMs),
      byKind('User', (s) => str(s['name'])),
      byKind('Group', (s) => str(s['name'])),
      byKind('ServiceAccount', (s) => `${str(s['namespace'])}/${str(s['name'])}`),
    ];
  },
};
