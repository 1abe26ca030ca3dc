// The Endpoints controller (kube's pkg/controller/endpoint): keeps each selector Service's Endpoints
// equal to what its pods say. Wiring: Service and Endpoints changes enqueue the Service key; a pod
// change enqueues every Service in its namespace that selected it before or selects it now. Reconcile
// reads the informer caches, asks core/endpoints for the plan and writes it; a vanished Service's
// Endpoints are deleted. On start every existing Endpoints key is enqueued so orphans go too.
import { mustFindResource } from '../../api/resources.js';
import {
  planEndpoints,
  selectsPod,
  TriggerTimeTracker,
  type Endpoints,
  type Pod,
  type Service,
} from '../../core/endpoints/endpoints.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import { podLabelIndexers, selectedPods } from '../selected-pods.js';
import {
  keyedController,
  enqueueOnChange,
  onChange,
  type KeyedControllerOptions,
} from '../controller-wiring.js';

export const SERVICES = mustFindResource('', 'services');
export const PODS = mustFindResource('', 'pods');
export const ENDPOINTS = mustFindResource('', 'endpoints');
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

export type EndpointsControllerOptions = KeyedControllerOptions;

export class EndpointsController {
  readonly controller: Controller;
  private readonly services: Informer;
  private readonly pods: Informer;
  private readonly endpoints: Informer;
  private readonly triggers = new TriggerTimeTracker();
  /** Pod events are ignored until the caches have synced: every Service is queued by its own add. */
  private synced = false;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    opts: EndpointsControllerOptions = {},
  ) {
    this.services = factory.informer(SERVICES);
    this.pods = factory.informer(PODS, { indexers: podLabelIndexers });
    this.endpoints = factory.informer(ENDPOINTS);
    this.controller = keyedController(
      { name: 'endpoint', workers: 5, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    const enqueue = enqueueOnChange(this.services, this.controller);
    this.endpoints.addHandlers({ onDelete: enqueue });
    onChange(this.pods, (old, pod) => {
      if (!this.synced) return;
      for (const svc of this.services.indexer.byIndex('namespace', pod.metadata.namespace ?? '')) {
        const s = svc as Service;
        if (selectsPod(s, pod as Pod) || (old !== undefined && selectsPod(s, old as Pod))) enqueue(svc);
      }
    });
  }

  /** Starts the workers once the caches are synced; enqueues every existing Endpoints (checkLeftoverEndpoints). */
  async start(): Promise<void> {
    await Promise.all([this.services.waitForSync(), this.pods.waitForSync(), this.endpoints.waitForSync()]);
    this.synced = true;
    for (const ep of this.endpoints.indexer.list()) {
      if (ep.metadata.annotations?.[LEADER_ANNOTATION] !== undefined) continue;
      this.controller.enqueue(objectKeyOf(ep));
    }
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.includes('/') ? (key.split('/', 2) as [string, string]) : ['', key];
    const service = this.services.indexer.get(key) as Service | undefined;
    if (service === undefined) {
      this.triggers.forget(key);
      try {
        await this.client.delete(ENDPOINTS, namespace, name);
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
      }
      return;
    }
    const pods = selectedPods(this.pods, service);
    const current = this.endpoints.indexer.get(key) as Endpoints | undefined;
    // The trigger times count as observed once the write carrying them has landed: a write refused on a
    // stale cache (409) is retried with the same annotation, not without it.
    const trigger = this.triggers.computeEndpointLastChangeTriggerTime(service, pods);
    const plan = planEndpoints({ service, pods, current, triggerTime: trigger.value });
    if (plan.kind === 'create') {
      try {
        await this.client.create(ENDPOINTS, namespace, plan.endpoints);
      } catch (err) {
        // A namespace being deleted refuses creates; its Endpoints are going anyway (nothing written).
        if (
          isApiError(err, 403) &&
          err.status?.details?.causes?.some((c) => c.reason === 'NamespaceTerminating') === true
        )
          return;
        throw err;
      }
    } else if (plan.kind === 'update') {
      await this.client.update(ENDPOINTS, plan.endpoints);
    }
    trigger.commit();
  }
}
