// The controller manager: the controllers svcplane runs against an API server, over one client and
// one set of shared informers. `svcplane up` runs it in-process against itself; `svcplane
// controller-manager --kubeconfig` runs it against any API server, optionally behind leader election.
import { Registry } from 'prom-client';
import type { Client } from '../runtime/client.js';
import { controllerTransform, SharedInformerFactory } from '../runtime/informer.js';
import { WorkqueueMetrics } from '../runtime/workqueue.js';
import { podViewOf } from './pod-view.js';
import { ClientEventRecorder } from '../runtime/events.js';
import { EndpointsController } from './endpoints/endpoints-controller.js';
import { EndpointSliceController } from './endpointslice/endpointslice-controller.js';
import { GarbageCollector } from './garbagecollector/garbage-collector.js';

export const KNOWN_CONTROLLERS = ['endpoints', 'endpointslice', 'garbagecollector'] as const;
export type ControllerName = (typeof KNOWN_CONTROLLERS)[number];

export interface ManagerLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface ControllerManagerOptions {
  readonly controllers: readonly ControllerName[];
  readonly concurrentEndpointSyncs?: number;
  /** EndpointSlice workers (kube's --concurrent-service-endpoint-syncs, default 5). */
  readonly concurrentServiceEndpointSyncs?: number;
  /** 1..1000, default 100. */
  readonly maxEndpointsPerSlice?: number;
  /** Garbage collector workers (kube's --concurrent-gc-syncs, default 20). */
  readonly concurrentGCSyncs?: number;
  readonly log: ManagerLogger;
  /** Where the workqueue metrics go (`svcplane up` passes the apiserver's /metrics registry). */
  readonly metrics?: Registry;
}

interface Runnable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class ControllerManager {
  readonly metrics: Registry;
  private readonly factory: SharedInformerFactory;
  private readonly running: Runnable[] = [];

  constructor(
    client: Client,
    private readonly o: ControllerManagerOptions,
  ) {
    this.metrics = o.metrics ?? new Registry();
    const podView = podViewOf(o.controllers);
    this.factory = new SharedInformerFactory(client, {
      transform: (r) => controllerTransform(r, podView),
      reflector: {
        onError: (err) => o.log.warn('list/watch failed; retrying', { err: String(err) }),
      },
    });
    const queueMetrics = new WorkqueueMetrics(this.metrics);
    for (const name of o.controllers) {
      if (name === 'endpoints') {
        this.running.push(
          new EndpointsController(client, this.factory, {
            workers: o.concurrentEndpointSyncs ?? 5,
            metrics: queueMetrics,
            onError: (key, err) => o.log.warn('endpoints sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'endpointslice') {
        this.running.push(
          new EndpointSliceController(client, this.factory, {
            workers: o.concurrentServiceEndpointSyncs ?? 5,
            ...(o.maxEndpointsPerSlice === undefined ? {} : { maxEndpointsPerSlice: o.maxEndpointsPerSlice }),
            metrics: queueMetrics,
            events: new ClientEventRecorder(client, {
              component: 'endpoint-slice-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('endpointslice sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'garbagecollector') {
        this.running.push(
          new GarbageCollector(client, this.factory, {
            workers: o.concurrentGCSyncs ?? 20,
            metrics: queueMetrics,
            onError: (uid, err) => o.log.warn('garbage collection failed', { uid, err: String(err) }),
            log: (msg, fields) => o.log.info(msg, fields),
          }),
        );
      }
    }
  }

  /** Starts the informers, waits for their caches, then starts every controller. */
  async start(): Promise<void> {
    this.factory.start();
    await this.factory.waitForSync();
    await Promise.all(this.running.map((c) => c.start()));
    this.o.log.info('controllers started', { controllers: this.o.controllers });
  }

  async stop(): Promise<void> {
    await Promise.all(this.running.map((c) => c.stop()));
    await this.factory.stop();
  }
}
