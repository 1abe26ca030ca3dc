// The EndpointSlice controller (kube's pkg/controller/endpointslice): keeps each selector Service's
// EndpointSlices equal to what its pods say, with nodeName, zone and hints. Wiring:
//   - Service changes enqueue the Service; pod changes enqueue every Service of the namespace that selected
//     the pod before or selects it now;
//   - slice changes enqueue the Service named by the slice's label, unless the change is this controller's
//     own write coming back (the tracker); a deleted slice is recreated that way;
//   - node changes: a node appearing or going, or changing zone, enqueues the Services of the pods on it;
//     a change of allocatable CPU or readiness enqueues the Services that use topology hints.
// Reconcile reads the caches, waits while the cache is older than this controller's last writes (see
// core/endpointslices/tracker.ts), asks core/endpointslices for the plan and applies it: creates, then
// updates, then deletes, as upstream, so a Service never goes without endpoints in between. Slices of a
// deleted Service are left to the garbage collector (they carry an ownerReference to the Service).
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { selectsPod, TriggerTimeTracker, type Pod, type Service } from '../../core/endpoints/endpoints.js';
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  ENDPOINTSLICE_CONTROLLER_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_TOPOLOGY_ZONE,
  planEndpointSlices,
  topologyHintsEnabled,
  type Node,
} from '../../core/endpointslices/endpointslices.js';
import { EndpointSliceTracker } from '../../core/endpointslices/tracker.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import { podLabelIndexers, selectedPods } from '../selected-pods.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import {
  objectKeyOf,
  type IndexFunc,
  type Informer,
  type SharedInformerFactory,
} from '../../runtime/informer.js';
import { BucketRateLimiter, ItemExponentialRateLimiter, MaxOfRateLimiter } from '../../runtime/workqueue.js';
import {
  keyedController,
  enqueueOnChange,
  onChange,
  type KeyedControllerOptions,
} from '../controller-wiring.js';

export const ENDPOINTSLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const SERVICES = mustFindResource('', 'services');
const PODS = mustFindResource('', 'pods');
const NODES = mustFindResource('', 'nodes');

/** Pods by spec.nodeName. */
export const podsByNode: IndexFunc = (o) => {
  const node = (o.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof node === 'string' && node !== '' ? [node] : [];
};

/** Slices managed by this controller, by `namespace/service`. */
const slicesByService: IndexFunc = (o) => {
  const labels = o.metadata.labels ?? {};
  const service = labels[LABEL_SERVICE_NAME];
  if (labels[LABEL_MANAGED_BY] !== ENDPOINTSLICE_CONTROLLER_NAME || service === undefined) return [];
  return [`${o.metadata.namespace ?? ''}/${service}`];
};

export interface EndpointSliceControllerOptions extends KeyedControllerOptions {
  /** 1..1000, default 100. */
  readonly maxEndpointsPerSlice?: number;
  readonly events?: ClientEventRecorder;
  readonly now?: () => number;
}

const generationOf = (o: KObject): number => Number(o.metadata.generation ?? 0);
const isNamespaceTerminating = (err: unknown): boolean =>
  isApiError(err, 403) &&
  (err.status?.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

export class EndpointSliceController {
  readonly controller: Controller;
  private readonly services: Informer;
  private readonly pods: Informer;
  private readonly nodes: Informer;
  private readonly slices: Informer;
  private readonly triggers = new TriggerTimeTracker();
  private readonly tracker = new EndpointSliceTracker();
  /** Services whose last sync found the cache stale: synced again once their expectations are met. */
  private readonly waiting = new Set<string>();
  /** Services whose last plan allocated Topology Aware Hints (upstream's topology cache keeps the same). */
  private readonly hintsPopulated = new Set<string>();
  /**
   * Pod and node events are ignored until the caches have synced: every Service is queued by its own add
   * event and each sync reads the latest pods, so matching the initial list's 100,000 pods against the
   * Services would be wasted work.
   */
  private synced = false;
  private readonly max: number;
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly opts: EndpointSliceControllerOptions = {},
  ) {
    this.max = opts.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
    this.now = opts.now ?? Date.now;
    this.services = factory.informer(SERVICES);
    this.pods = factory.informer(PODS, { indexers: { node: podsByNode, ...podLabelIndexers } });
    this.nodes = factory.informer(NODES);
    this.slices = factory.informer(ENDPOINTSLICES, { indexers: { service: slicesByService } });
    this.controller = keyedController(
      {
        name: 'endpoint_slice',
        workers: 5,
        maxRetries: 15,
        reconcile: (key) => this.sync(key),
        // Upstream retries this controller's keys from 1 s up to 1,000 s, at most 10/s overall (burst 100).
        rateLimiter: new MaxOfRateLimiter<string>(
          new ItemExponentialRateLimiter<string>(1_000, 1_000_000),
          new BucketRateLimiter<string>(10, 100),
        ),
      },
      opts,
    );
    enqueueOnChange(this.services, this.controller);
    onChange(this.pods, (old, p) => this.podChanged(old, p));
    onChange(this.nodes, (old, n) => this.nodeChanged(old, n));
    this.slices.addHandlers({
      onAdd: (s) => this.sliceChanged(s, false),
      onUpdate: (_, s) => this.sliceChanged(s, false),
      onDelete: (s) => this.sliceChanged(s, true),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.services, this.pods, this.nodes, this.slices].map((i) => i.waitForSync()));
    this.synced = true;
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private podChanged(old: KObject | undefined, pod: KObject): void {
    if (!this.synced) return;
    for (const svc of this.services.indexer.byIndex('namespace', pod.metadata.namespace ?? '')) {
      const s = svc as Service;
      if (selectsPod(s, pod as Pod) || (old !== undefined && selectsPod(s, old as Pod))) {
        this.controller.enqueue(objectKeyOf(svc));
      }
    }
  }

  private nodeChanged(old: KObject | undefined, node: KObject): void {
    if (!this.synced) return;
    const zone = (n: KObject): string | undefined => n.metadata.labels?.[LABEL_TOPOLOGY_ZONE];
    const shape = (n: KObject): string =>
      JSON.stringify([
        (n as Node).status?.allocatable?.['cpu'],
        (n as Node).status?.conditions?.find((c) => c.type === 'Ready')?.status,
        n.metadata.labels ?? {},
      ]);
    if (old === undefined || zone(old) !== zone(node)) {
      // Added, deleted (old undefined) or moved zones: the endpoints on it change.
      for (const pod of this.pods.indexer.byIndex('node', node.metadata.name ?? ''))
        this.podChanged(undefined, pod);
    }
    if (old === undefined || shape(old) !== shape(node)) {
      for (const svc of this.services.indexer.list()) {
        if (topologyHintsEnabled(svc.metadata.annotations ?? {})) this.controller.enqueue(objectKeyOf(svc));
      }
    }
  }

  private sliceChanged(slice: KObject, deleted: boolean): void {
    const [service] = slicesByService(slice);
    if (service === undefined) return;
    const uid = slice.metadata.uid ?? '';
    const seen = deleted
      ? this.tracker.observeDeletion(service, uid)
      : this.tracker.observe(service, uid, generationOf(slice));
    if (seen === 'other') this.controller.enqueue(service);
    else if (this.waiting.has(service) && !this.tracker.hasPending(service)) this.controller.enqueue(service);
  }

  private async sync(key: string): Promise<{ requeueAfterMs: number } | void> {
    const service = this.services.indexer.get(key) as Service | undefined;
    if (service === undefined) {
      this.triggers.forget(key);
      this.tracker.forget(key);
      this.waiting.delete(key);
      this.hintsPopulated.delete(key);
      return;
    }
    const cached = this.slices.indexer.byIndex('service', key);
    const now = this.now();
    const cachedIds = cached.map((s) => ({ uid: s.metadata.uid ?? '', generation: generationOf(s) }));
    if (this.tracker.stale(key, cachedIds, now)) {
      // The events of our last writes are on their way; sliceChanged() enqueues when they arrive.
      this.waiting.add(key);
      return { requeueAfterMs: 1_000 };
    }
    this.waiting.delete(key);
    const namespace = service.metadata.namespace ?? '';
    const pods = selectedPods(this.pods, service);
    // Observed once every write carrying it has landed (see TriggerTimeTracker): a retry keeps the time.
    const trigger = this.triggers.computeEndpointLastChangeTriggerTime(service, pods);
    const plan = planEndpointSlices({
      service,
      pods,
      nodes: this.nodes.indexer.list() as Node[],
      existing: cached,
      maxEndpointsPerSlice: this.max,
      triggerTime: trigger.value,
      hintsPopulated: this.hintsPopulated.has(key),
    });
    if (plan.skipped !== undefined) {
      trigger.commit();
      return;
    }
    if (plan.hintsPopulated) this.hintsPopulated.add(key);
    else this.hintsPopulated.delete(key);
    const about = regarding('Service', 'v1', service);
    for (const e of plan.events) void this.opts.events?.record(about, e.type, e.reason, e.message);
    try {
      for (const slice of plan.create) {
        try {
          const created = await this.client.create(ENDPOINTSLICES, namespace, slice);
          this.tracker.expect(key, created.metadata.uid ?? '', generationOf(created), now);
        } catch (err) {
          if (isNamespaceTerminating(err)) return; // the namespace and its slices are going anyway
          throw new Error(`failed to create EndpointSlice for Service ${key}: ${String(err)}`, {
            cause: err,
          });
        }
      }
      for (const slice of plan.update) {
        try {
          const updated = await this.client.update(ENDPOINTSLICES, slice);
          this.tracker.expect(key, updated.metadata.uid ?? '', generationOf(updated), now);
        } catch (err) {
          throw new Error(
            `failed to update ${slice.metadata.name ?? ''} EndpointSlice for Service ${key}: ${String(err)}`,
            { cause: err },
          );
        }
      }
      for (const slice of plan.delete) {
        try {
          await this.client.delete(ENDPOINTSLICES, namespace, slice.metadata.name ?? '', {
            preconditions: { uid: slice.metadata.uid ?? '' },
          });
          this.tracker.expectDeletion(key, slice.metadata.uid ?? '', now);
        } catch (err) {
          if (isApiError(err, 404)) continue;
          throw new Error(
            `failed to delete ${slice.metadata.name ?? ''} EndpointSlice for Service ${key}: ${String(err)}`,
            { cause: err },
          );
        }
      }
    } catch (err) {
      void this.opts.events?.record(
        about,
        'Warning',
        'FailedToUpdateEndpointSlices',
        `Error updating Endpoint Slices for Service ${key}: ${(err as Error).message}`,
      );
      throw err;
    }
    // Every write landed: their trigger time is observed.
    trigger.commit();
    // Pods on nodes not in the cache yet: what could be written is written; try again later.
    if (plan.errors.length > 0) throw new Error(plan.errors.join('; '));
  }
}
