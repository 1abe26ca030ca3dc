// The dashboard's inputs: list and watch (never a write) of Nodes, Services, EndpointSlices, Endpoints
// and, when the server serves them, SuperEdge's ServiceGrids and DeploymentGrids, into the model
// (core/dashboard/world.ts); edge-health's /localinfo polled when configured. What the watches change is
// batched into one ChangeEvent at most every 100 ms for the page's event streams.
import { mustFindResource, type ResourceInfo } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import { DashboardWorld, type WorldKind } from '../core/dashboard/world.js';
import type { ChangeEvent } from '../core/dashboard/types.js';
import type { Client } from '../runtime/client.js';
import { HealthPoller } from '../runtime/health-poller.js';
import { controllerTransform, Informer } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';

const RESOURCES: readonly [WorldKind, ResourceInfo, boolean][] = [
  ['node', mustFindResource('', 'nodes'), true],
  ['service', mustFindResource('', 'services'), true],
  ['slice', mustFindResource('discovery.k8s.io', 'endpointslices'), false],
  ['endpoints', mustFindResource('', 'endpoints'), true],
  ['servicegrid', mustFindResource('superedge.io', 'servicegrids'), false],
  ['deploymentgrid', mustFindResource('superedge.io', 'deploymentgrids'), false],
];

export interface DashboardFeedOptions {
  readonly client: Client;
  readonly log: Logger;
  /** edge-health's /localinfo URL. */
  readonly edgeHealth?: string | undefined;
  /** How often edge-health is polled (default 5 s). */
  readonly healthIntervalMs?: number;
  /** The shortest time between two events (default 100 ms). */
  readonly batchMs?: number;
}

export class DashboardFeed {
  readonly world = new DashboardWorld();
  private readonly informers: Informer[] = [];
  private readonly subscribers = new Set<(e: ChangeEvent) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** When the last event went out (performance.now()). */
  private lastSent = -Infinity;
  private poller: HealthPoller | undefined;
  private stopped = false;

  constructor(private readonly o: DashboardFeedOptions) {}

  /** Starts the watches (the optional kinds only when the server serves them); resolves once all listed. */
  async start(): Promise<void> {
    const served = await Promise.all(
      RESOURCES.map(async ([, r, always]) => always || (await this.o.client.serves(r))),
    );
    if (this.stopped) return;
    RESOURCES.forEach(([kind, resource], i) => {
      if (!served[i]) return;
      const inf = new Informer(this.o.client, resource, {
        // Without managedFields: a large share of an object written by server-side apply, read by nothing here.
        transform: controllerTransform(resource),
        reflector: {
          onError: (err) =>
            this.o.log.warn('dashboard watch failed', { resource: resource.resource, error: String(err) }),
        },
      });
      const apply = (type: 'upsert' | 'delete', obj: KObject) => {
        if (this.world.apply(kind, type, obj)) this.changed();
      };
      inf.addHandlers({
        onAdd: (obj) => apply('upsert', obj),
        onUpdate: (_old, obj) => apply('upsert', obj),
        onDelete: (obj) => apply('delete', obj),
      });
      this.informers.push(inf);
    });
    if (this.o.edgeHealth !== undefined) {
      this.world.setHealth(new Map());
      this.poller = new HealthPoller({
        address: this.o.edgeHealth,
        intervalMs: this.o.healthIntervalMs ?? 5_000,
        apply: () => {},
        onAnswer: (verdicts) => {
          if (this.world.setHealth(verdicts)) this.changed();
        },
        log: this.o.log,
        // A viewer: it drops nothing from any Service, it shows the decisions the verdicts make.
        wording: {
          unhealthy: 'node reported unhealthy: the dashboard shows the decisions without its endpoints',
          back: 'node no longer reported unhealthy: the dashboard shows its endpoints again',
        },
      });
      this.poller.start();
    }
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.waitForSync()));
  }

  /** Calls `fn` with every batch of changes until the returned function is called. */
  subscribe(fn: (e: ChangeEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /**
   * Sends what changed at most every batchMs, leading edge first: a change after a quiet spell goes out on
   * the next turn of the event loop (with whatever else that turn delivered), and changes that follow
   * within batchMs of it wait for the rest of the window and go out together.
   */
  private changed(): void {
    if (this.timer !== undefined || this.stopped) return;
    const wait = Math.max(0, this.lastSent + (this.o.batchMs ?? 100) - performance.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const e = this.world.drain();
      if (e === undefined) return;
      this.lastSent = performance.now();
      for (const fn of this.subscribers) fn(e);
    }, wait);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.poller?.stop();
    this.subscribers.clear();
    await Promise.all(this.informers.map((i) => i.stop()));
  }
}
