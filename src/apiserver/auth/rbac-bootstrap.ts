// Applies the bootstrap RBAC policy (core/rbac/bootstrap-policy.ts) at every start of a server that
// authorizes with RBAC, through the registry without a requester (no escalation check, as upstream's
// own post-start hook): each object is read, planned (core/rbac/reconcile.ts) and written with
// compare-and-swap on the resourceVersion it was read at; a lost race (409 Conflict, 409 AlreadyExists)
// is read and planned again.
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { isStatusError } from '../../api/status.js';
import {
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  BOOTSTRAP_CLUSTER_ROLES,
  clusterRoleBindingObject,
  clusterRoleObject,
} from '../../core/rbac/bootstrap-policy.js';
import { reconcileBinding, reconcileRole, type ReconcilePlan } from '../../core/rbac/reconcile.js';
import type { Logger } from '../../runtime/logger.js';
import type { Registry, WriteContext } from '../registry/registry.js';
import { servedRbacResource, type RbacResourceLookup } from './rbac-authorizer.js';

const CTX = (): WriteContext => ({
  dryRun: false,
  fieldManager: 'kube-apiserver',
  fieldValidation: 'Ignore',
  warnings: [],
});

const ATTEMPTS = 5;

export type BootstrapRegistry = Pick<Registry, 'get' | 'create' | 'update' | 'delete'>;

export interface BootstrapResult {
  readonly created: number;
  readonly updated: number;
}

async function reconcileOne(
  registry: BootstrapRegistry,
  r: ResourceInfo,
  desired: Record<string, unknown>,
  plan: (desired: Record<string, unknown>, existing: Record<string, unknown> | undefined) => ReconcilePlan,
): Promise<ReconcilePlan['action']> {
  const name = String((desired['metadata'] as { name: string }).name);
  for (let attempt = 1; ; attempt++) {
    let existing: KObject | undefined;
    try {
      existing = await registry.get(r, '', name);
    } catch (err) {
      if (!isStatusError(err, 'NotFound')) throw err;
    }
    const p = plan(desired, existing as Record<string, unknown> | undefined);
    try {
      if (p.action === 'create') await registry.create(r, '', p.object, CTX());
      else if (p.action === 'update') await registry.update(r, '', name, p.object, CTX());
      else if (p.action === 'recreate') {
        const rv = existing?.metadata.resourceVersion;
        await registry.delete(
          r,
          '',
          name,
          rv === undefined ? {} : { preconditions: { resourceVersion: rv } },
          CTX(),
        );
        await registry.create(r, '', p.object, CTX());
      }
      return p.action;
    } catch (err) {
      const lost =
        isStatusError(err, 'Conflict') ||
        isStatusError(err, 'AlreadyExists') ||
        isStatusError(err, 'NotFound');
      if (!lost || attempt >= ATTEMPTS) throw err;
    }
  }
}

/** Reconciles every bootstrap ClusterRole and ClusterRoleBinding; nothing when the kinds are not served. */
export async function applyBootstrapPolicy(
  registry: BootstrapRegistry,
  log: Logger,
  lookup: RbacResourceLookup = servedRbacResource,
): Promise<BootstrapResult> {
  const roles = lookup('clusterroles');
  const bindings = lookup('clusterrolebindings');
  if (roles === undefined || bindings === undefined) return { created: 0, updated: 0 };
  const counts = { created: 0, updated: 0 };
  const count = (a: ReconcilePlan['action']): void => {
    if (a === 'create') counts.created++;
    else if (a !== 'none') counts.updated++;
  };
  for (const role of BOOTSTRAP_CLUSTER_ROLES)
    count(await reconcileOne(registry, roles, clusterRoleObject(role), reconcileRole));
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS)
    count(await reconcileOne(registry, bindings, clusterRoleBindingObject(b), reconcileBinding));
  if (counts.created + counts.updated > 0) log.info('bootstrap RBAC policy reconciled', counts);
  return counts;
}
