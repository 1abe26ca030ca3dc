// The ClusterRole aggregation controller (kube-controller-manager's clusterrole-aggregation,
// pkg/controller/clusterroleaggregation): level-based. Any change to any ClusterRole queues every
// ClusterRole that has an aggregationRule; a sync computes the union core/rbac/aggregate.ts defines and,
// only when it differs from the role's rules, writes it with a PUT whose resourceVersion is the cached
// one, so a concurrent write makes it fail with a conflict and the key is retried on fresh data.
import type { RoleObject } from '../../api/rbac.js';
import { CLUSTER_ROLES } from '../../api/rbac.js';
import { aggregatedRules, sameRules } from '../../core/rbac/aggregate.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import { keyedController, onChange, type KeyedControllerOptions } from '../controller-wiring.js';

export class ClusterRoleAggregationController {
  readonly controller: Controller;
  private readonly roles: Informer;

  constructor(
    private readonly client: Pick<Client, 'update'>,
    factory: SharedInformerFactory,
    opts: KeyedControllerOptions,
  ) {
    this.roles = factory.informer(CLUSTER_ROLES);
    // Upstream runs 5 workers on a queue of this name.
    this.controller = keyedController(
      { name: 'ClusterRoleAggregator', workers: 5, reconcile: (key) => this.sync(key) },
      opts,
    );
    onChange(this.roles, () => this.enqueueAggregating());
  }

  async start(): Promise<void> {
    await this.roles.waitForSync();
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  /** Queues every ClusterRole that aggregates: any role's change may change what it picks. */
  private enqueueAggregating(): void {
    for (const role of this.roles.indexer.list() as RoleObject[])
      if (role.aggregationRule !== undefined && role.aggregationRule !== null)
        this.controller.enqueue(objectKeyOf(role));
  }

  /** Writes the aggregated rules of one ClusterRole when they differ from its own. */
  async sync(key: string): Promise<void> {
    const role = this.roles.indexer.get(key) as RoleObject | undefined;
    if (role?.aggregationRule === undefined || role.aggregationRule === null) return;
    const rules = aggregatedRules(role, this.roles.indexer.list() as RoleObject[]);
    if (sameRules(role.rules, rules)) return;
    try {
      await this.client.update(CLUSTER_ROLES, { ...role, rules });
    } catch (err) {
      if (!isApiError(err, 404)) throw err; // deleted meanwhile: nothing left to aggregate into
    }
  }
}
