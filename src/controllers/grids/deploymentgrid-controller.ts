// The DeploymentGrid controller (SuperEdge's application-grid-controller, deployment half): one
// Deployment per unit (a distinct value of the node label `gridUniqKey`), as core/grids/deployment-grid.ts
// plans it. Wiring:
//   - grid changes enqueue the grid;
//   - a Deployment event whose object carries the grid-selector label or a DeploymentGrid controller
//     reference (before or after the change) enqueues that grid;
//   - a node added or deleted enqueues every grid whose key is among its labels; a node whose labels
//     changed enqueues every grid whose key changed value on it (was added, removed or relabelled).
// Reconcile reads the caches, plans, carries the plan out (grid-sync.ts) and writes the status.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import {
  deploymentGridStatus,
  DEPLOYMENT_GRID_KIND,
  planDeploymentGrid,
} from '../../core/grids/deployment-grid.js';
import { clone, gridKeyOf, type Grid } from '../../core/grids/objects.js';
import { unitObjectName, unitsOf } from '../../core/grids/units.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { TerminalError, type Controller } from '../../runtime/controller.js';
import type { ClientEventRecorder } from '../../runtime/events.js';
import {
  objectKeyOf,
  type IndexFunc,
  type Informer,
  type SharedInformerFactory,
} from '../../runtime/informer.js';
import { GridWriter, nowRFC3339, warningsOf } from './grid-sync.js';
import { gridKeysOf } from './servicegrid-controller.js';
import {
  keyedController,
  enqueueOnChange,
  onChange,
  type KeyedControllerOptions,
} from '../controller-wiring.js';

export const DEPLOYMENTGRIDS = mustFindResource('superedge.io', 'deploymentgrids');
const DEPLOYMENTS = mustFindResource('apps', 'deployments');
const NODES = mustFindResource('', 'nodes');

const deploymentGridKeys: IndexFunc = (o) => gridKeysOf(o, DEPLOYMENT_GRID_KIND);
const gridsByKey: IndexFunc = (o) => [gridKeyOf(o as Grid)];
const nodesByLabelKey: IndexFunc = (o) => Object.keys(o.metadata.labels ?? {});

/** The label keys whose value differs between two label sets (added, removed or changed). */
export function changedLabelKeys(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): string[] {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].filter((k) => a?.[k] !== b?.[k]);
}

export interface DeploymentGridControllerOptions extends KeyedControllerOptions {
  readonly events?: ClientEventRecorder;
}

export class DeploymentGridController {
  readonly controller: Controller;
  private readonly grids: Informer;
  private readonly deployments: Informer;
  private readonly nodes: Informer;
  private readonly writer: GridWriter;
  /** `namespace/name` of every unit Deployment a grid wants → that grid's key, from its last sync. */
  private readonly wantedBy = new Map<string, string>();
  private readonly wants = new Map<string, string[]>();

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    opts: DeploymentGridControllerOptions = {},
  ) {
    this.grids = factory.informer(DEPLOYMENTGRIDS, { indexers: { gridKey: gridsByKey } });
    this.deployments = factory.informer(DEPLOYMENTS, { indexers: { deploymentGrid: deploymentGridKeys } });
    this.nodes = factory.informer(NODES, { indexers: { labelKey: nodesByLabelKey } });
    this.writer = new GridWriter(client, DEPLOYMENTGRIDS, DEPLOYMENTS, 'Deployment', opts.events);
    this.controller = keyedController(
      { name: 'deploymentgrid', workers: 5, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    const enqueue = enqueueOnChange(this.grids, this.controller);
    onChange(this.deployments, (old, d) => {
      const objs = old === undefined ? [d] : [old, d];
      const keys = new Set(objs.flatMap(deploymentGridKeys));
      // A Deployment with a unit's name but no tie to the grid (another controller's, which the grid
      // reports): when it goes or is released, the grid must make its own.
      for (const o of objs) {
        const wanter = this.wantedBy.get(objectKeyOf(o));
        if (wanter !== undefined) keys.add(wanter);
      }
      for (const key of keys) if (this.grids.indexer.get(key) !== undefined) this.controller.enqueue(key);
    });
    const gridsUsing = (keys: readonly string[]): void => {
      for (const k of keys) for (const g of this.grids.indexer.byIndex('gridKey', k)) enqueue(g);
    };
    this.nodes.addHandlers({
      onAdd: (n) => gridsUsing(Object.keys(n.metadata.labels ?? {})),
      onUpdate: (old, n) => gridsUsing(changedLabelKeys(old.metadata.labels, n.metadata.labels)),
      onDelete: (n) => gridsUsing(Object.keys(n.metadata.labels ?? {})),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.grids.waitForSync(), this.deployments.waitForSync(), this.nodes.waitForSync()]);
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private async sync(key: string): Promise<void> {
    const grid = this.grids.indexer.get(key) as Grid | undefined;
    for (const name of this.wants.get(key) ?? [])
      if (this.wantedBy.get(name) === key) this.wantedBy.delete(name);
    this.wants.delete(key);
    if (grid === undefined) return; // the garbage collector removes what it made
    const gridKey = gridKeyOf(grid);
    const units =
      gridKey === ''
        ? []
        : unitsOf(
            this.nodes.indexer.byIndex('labelKey', gridKey).map((n) => n.metadata.labels),
            gridKey,
          );
    const ns = grid.metadata.namespace ?? '';
    const wanted = units.map((unit) => `${ns}/${unitObjectName(grid.metadata.name ?? '', unit)}`);
    for (const name of wanted) this.wantedBy.set(name, key);
    this.wants.set(key, wanted);
    const concerned = new Map<string, KObject>();
    for (const d of this.deployments.indexer.byIndex('deploymentGrid', key))
      concerned.set(d.metadata.name ?? '', d);
    for (const name of wanted) {
      const d = this.deployments.indexer.get(name);
      if (d !== undefined) concerned.set(d.metadata.name ?? '', d);
    }
    const plan = planDeploymentGrid(grid, units, [...concerned.values()]);
    if (plan.unusedTemplates.length > 0) {
      await this.pruneTemplates(grid, plan.unusedTemplates);
      return; // the grid's update comes back as an event and requeues it
    }
    const result = await this.writer.apply(grid, plan.actions);
    const byUnit = new Map<string, KObject>();
    for (const [unit, name] of plan.names) {
      const d = result.written.get(name) ?? (result.deleted.has(name) ? undefined : concerned.get(name));
      if (d !== undefined) byUnit.set(unit, d);
    }
    const status = deploymentGridStatus(
      grid,
      units,
      plan,
      { deployments: byUnit, failures: result.failures },
      nowRFC3339(),
    );
    await this.writer.writeStatus(grid, status, warningsOf(status));
    if (plan.problem !== undefined) throw new TerminalError(`${key}: ${plan.problem.message}`);
    if (result.failures.length > 0) throw new Error(result.failures.map((f) => f.message).join('; '));
  }

  /** autoDeleteUnusedTemplate: the one write to a grid's spec, a compare-and-swap on its resourceVersion. */
  private async pruneTemplates(grid: Grid, unused: readonly string[]): Promise<void> {
    const next = clone(grid);
    const pool = next.spec?.['templatePool'] as Record<string, unknown>;
    for (const name of unused) delete pool[name];
    delete next.metadata.managedFields;
    try {
      await this.client.update(DEPLOYMENTGRIDS, next);
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  }
}
