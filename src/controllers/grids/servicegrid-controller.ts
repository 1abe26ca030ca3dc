// The ServiceGrid controller (SuperEdge's application-grid-controller, service half): keeps each
// ServiceGrid's Service `<sg>-svc` equal to what the grid says (core/grids/service-grid.ts).
// Wiring: grid changes enqueue the grid; any Service event whose object carries the grid-selector label
// (before or after the change), is named `<sg>-svc`, or is controlled by a ServiceGrid enqueues that
// grid. Reconcile reads the caches, asks core for the plan, carries it out (grid-sync.ts) and writes the
// status. A deleted grid needs nothing: its Service carries an ownerReference and the garbage collector
// removes it.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { GRID_SELECTOR_LABEL, controllerOf, type Grid } from '../../core/grids/objects.js';
import { planServiceGrid, serviceGridStatus, SERVICE_GRID_KIND } from '../../core/grids/service-grid.js';
import type { Client } from '../../runtime/client.js';
import { TerminalError, type Controller } from '../../runtime/controller.js';
import type { ClientEventRecorder } from '../../runtime/events.js';
import type { IndexFunc, Informer, SharedInformerFactory } from '../../runtime/informer.js';
import { GridWriter, nowRFC3339, warningsOf } from './grid-sync.js';
import {
  keyedController,
  enqueueOnChange,
  onChange,
  type KeyedControllerOptions,
} from '../controller-wiring.js';

export const SERVICEGRIDS = mustFindResource('superedge.io', 'servicegrids');
const SERVICES = mustFindResource('', 'services');

/** The grids an object may belong to, as `namespace/name` keys: by label, by controller, by name. */
export function gridKeysOf(o: KObject, kind: string, nameSuffix?: string): string[] {
  const ns = o.metadata.namespace ?? '';
  const keys = new Set<string>();
  const label = o.metadata.labels?.[GRID_SELECTOR_LABEL];
  if (label !== undefined && label !== '') keys.add(`${ns}/${label}`);
  const ref = controllerOf(o.metadata);
  if (ref !== undefined && ref.kind === kind && ref.apiVersion.startsWith('superedge.io/'))
    keys.add(`${ns}/${ref.name}`);
  const name = o.metadata.name ?? '';
  if (nameSuffix !== undefined && name.endsWith(nameSuffix) && name.length > nameSuffix.length)
    keys.add(`${ns}/${name.slice(0, -nameSuffix.length)}`);
  return [...keys];
}

const serviceGridKeys: IndexFunc = (o) => gridKeysOf(o, SERVICE_GRID_KIND, '-svc');

export interface ServiceGridControllerOptions extends KeyedControllerOptions {
  readonly events?: ClientEventRecorder;
}

export class ServiceGridController {
  readonly controller: Controller;
  private readonly grids: Informer;
  private readonly services: Informer;
  private readonly writer: GridWriter;

  constructor(client: Client, factory: SharedInformerFactory, opts: ServiceGridControllerOptions = {}) {
    this.grids = factory.informer(SERVICEGRIDS);
    this.services = factory.informer(SERVICES, { indexers: { serviceGrid: serviceGridKeys } });
    this.writer = new GridWriter(client, SERVICEGRIDS, SERVICES, 'Service', opts.events);
    this.controller = keyedController(
      { name: 'servicegrid', workers: 5, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    enqueueOnChange(this.grids, this.controller);
    onChange(this.services, (old, s) => {
      const keys = new Set((old === undefined ? [s] : [old, s]).flatMap(serviceGridKeys));
      for (const key of keys) if (this.grids.indexer.get(key) !== undefined) this.controller.enqueue(key);
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.grids.waitForSync(), this.services.waitForSync()]);
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private async sync(key: string): Promise<void> {
    const grid = this.grids.indexer.get(key) as Grid | undefined;
    if (grid === undefined) return; // the garbage collector removes what it made
    const services = this.services.indexer.byIndex('serviceGrid', key);
    const plan = planServiceGrid(grid, services);
    const result = await this.writer.apply(grid, plan.actions);
    const service =
      result.written.get(plan.serviceName) ??
      (result.deleted.has(plan.serviceName) ? undefined : plan.current);
    const status = serviceGridStatus(
      grid,
      plan,
      { ...(service === undefined ? {} : { service }), failures: result.failures },
      nowRFC3339(),
    );
    await this.writer.writeStatus(grid, status, warningsOf(status));
    if (plan.problem !== undefined) throw new TerminalError(`${key}: ${plan.problem.message}`);
    if (result.failures.length > 0) throw new Error(result.failures.map((f) => f.message).join('; '));
  }
}
