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
import { Controller, TerminalError } from '../../runtime/controller.js';
import type { ClientEventRecorder } from '../../runtime/events.js';
import {
  objectKeyOf,
  type IndexFunc,
  type Informer,
  type SharedInformerFactory,
} from '../../runtime/informer.js';
import type { WorkqueueMetrics } from '../../runtime/workqueue.js';
import { GridWriter, nowRFC3339, warningsOf } from './grid-sync.js';

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

export interface ServiceGridControllerOptions {
  readonly workers?: number;
  readonly metrics?: WorkqueueMetrics;
  readonly events?: ClientEventRecorder;
  readonly onError?: (key: string, err: unknown) => void;
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
    this.controller = new Controller({
      name: 'servicegrid',
      workers: opts.workers ?? 5,
      maxRetries: 15,
      reconcile: (key) => this.sync(key),
      ...(opts.metrics === undefined ? {} : { queue: { metrics: opts.metrics } }),
      ...(opts.onError === undefined ? {} : { onError: (k, e) => opts.onError!(k, e) }),
    });
    const enqueue = (o: KObject): void => this.controller.enqueue(objectKeyOf(o));
    this.grids.addHandlers({ onAdd: enqueue, onUpdate: (_, o) => enqueue(o), onDelete: enqueue });
    const serviceChanged = (...objs: KObject[]): void => {
      const keys = new Set(objs.flatMap(serviceGridKeys));
      for (const key of keys) if (this.grids.indexer.get(key) !== undefined) this.controller.enqueue(key);
    };
    this.services.addHandlers({
      onAdd: (s) => serviceChanged(s),
      onUpdate: (old, s) => serviceChanged(old, s),
      onDelete: (s) => serviceChanged(s),
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
