// The wiring the keyed controllers share: a runtime Controller built from the options each of them
// takes (workers, workqueue metrics, an error callback), and informer handlers that turn an add, update
// or delete into keys for its queue, as upstream controllers register their ResourceEventHandlerFuncs.
import type { KObject } from '../api/object.js';
import { Controller, type Reconcile } from '../runtime/controller.js';
import { objectKeyOf, type Informer } from '../runtime/informer.js';
import type { RateLimiter, WorkqueueMetrics } from '../runtime/workqueue.js';

/** The options every keyed controller accepts for its queue and workers. */
export interface KeyedControllerOptions {
  readonly workers?: number;
  readonly metrics?: WorkqueueMetrics;
  readonly onError?: (key: string, err: unknown) => void;
}

export interface KeyedControllerSpec {
  /** The workqueue's name (upstream's, so the metrics read alike). */
  readonly name: string;
  /** Workers when the options name none. */
  readonly workers: number;
  readonly reconcile: Reconcile;
  /** Retries before a key is dropped (kube's controllers: 15). */
  readonly maxRetries?: number;
  /** The queue's rate limiter when not the default controller limiter. */
  readonly rateLimiter?: RateLimiter<string>;
}

/** A Controller with the spec's name, reconcile and limiter and the caller's workers, metrics and onError. */
export function keyedController(spec: KeyedControllerSpec, opts: KeyedControllerOptions): Controller {
  const { onError, metrics } = opts;
  const queue = {
    ...(spec.rateLimiter === undefined ? {} : { rateLimiter: spec.rateLimiter }),
    ...(metrics === undefined ? {} : { metrics }),
  };
  return new Controller({
    name: spec.name,
    workers: opts.workers ?? spec.workers,
    ...(spec.maxRetries === undefined ? {} : { maxRetries: spec.maxRetries }),
    reconcile: spec.reconcile,
    ...(Object.keys(queue).length === 0 ? {} : { queue }),
    ...(onError === undefined ? {} : { onError: (k, e) => onError(k, e) }),
  });
}

/** Enqueues an object's own `namespace/name` key. */
export function enqueuerOf(controller: Controller): (o: KObject) => void {
  return (o) => controller.enqueue(objectKeyOf(o));
}

/** Every add, update and delete the informer sees enqueues the object's own key; returns the enqueuer. */
export function enqueueOnChange(informer: Informer, controller: Controller): (o: KObject) => void {
  const enqueue = enqueuerOf(controller);
  informer.addHandlers({ onAdd: enqueue, onUpdate: (_, o) => enqueue(o), onDelete: enqueue });
  return enqueue;
}

/**
 * Every add, update and delete the informer sees calls `changed(old, obj)`: `old` is the previous
 * version on an update and undefined on an add or a delete (the handler then looks at `obj` alone).
 */
export function onChange(
  informer: Informer,
  changed: (old: KObject | undefined, obj: KObject) => void,
): void {
  informer.addHandlers({
    onAdd: (o) => changed(undefined, o),
    onUpdate: (old, o) => changed(old, o),
    onDelete: (o) => changed(undefined, o),
  });
}
