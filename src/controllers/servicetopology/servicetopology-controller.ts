// The service topology controller: reports what is wrong with a Service's topology settings
// (core/topology/rules.ts: malformed topology annotations, rules that conflict) as Warning Events on the
// Service. The API accepts such Services, as a real cluster would, so these Events are the only report.
// Each problem is reported once per Service UID: a resync or an unrelated change reports nothing new, a
// problem that goes away and comes back is reported again, and so is every problem of a recreated Service.
import { mustFindResource } from '../../api/resources.js';
import { topologyProblems } from '../../core/topology/rules.js';
import type { Controller } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import type { Informer, SharedInformerFactory } from '../../runtime/informer.js';
import { keyedController, enqueueOnChange, type KeyedControllerOptions } from '../controller-wiring.js';

const SERVICES = mustFindResource('', 'services');

export interface ServiceTopologyControllerOptions extends KeyedControllerOptions {
  readonly events: Pick<ClientEventRecorder, 'record'>;
}

export class ServiceTopologyController {
  readonly controller: Controller;
  private readonly services: Informer;
  /** Per Service key: the UID last seen and the problems reported for it (`reason\0message`). */
  private readonly reported = new Map<string, { readonly uid: string; readonly problems: Set<string> }>();

  constructor(
    factory: SharedInformerFactory,
    private readonly opts: ServiceTopologyControllerOptions,
  ) {
    this.services = factory.informer(SERVICES);
    this.controller = keyedController(
      { name: 'servicetopology', workers: 1, reconcile: (key) => this.sync(key) },
      opts,
    );
    enqueueOnChange(this.services, this.controller);
  }

  async start(): Promise<void> {
    await this.services.waitForSync();
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  /** Records a Warning for each problem of the cached Service not yet reported for its UID. */
  async sync(key: string): Promise<void> {
    const svc = this.services.indexer.get(key);
    if (svc === undefined) {
      this.reported.delete(key);
      return;
    }
    const uid = svc.metadata.uid ?? '';
    const last = this.reported.get(key);
    const before = last?.uid === uid ? last.problems : new Set<string>();
    const now = new Set<string>();
    for (const p of topologyProblems(svc)) {
      const id = `${p.reason}\0${p.message}`;
      if (now.has(id)) continue;
      now.add(id);
      if (!before.has(id))
        await this.opts.events.record(regarding('Service', 'v1', svc), 'Warning', p.reason, p.message);
    }
    if (now.size === 0) this.reported.delete(key);
    else this.reported.set(key, { uid, problems: now });
  }
}
