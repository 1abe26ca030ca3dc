// The default scheduler (kube-scheduler's default profile, reduced to what svcplane needs): pods with
// `spec.schedulerName` default-scheduler (or none), no node, not being deleted, are filtered and scored
// against the nodes (core/scheduling) and bound through `pods/binding`.
//
// Wiring: the shared pod informer and a node informer feed a SchedulerCache (core/scheduling/cache.ts);
// pods that need a node are queued by key. A reconcile runs one scheduling cycle synchronously, then
// "assumes" the pod onto the chosen node in the cache before it awaits the binding, so the next cycles
// (other workers' keys) already see that capacity taken even though the informer has not caught up.
// `parallelism` workers means that many bindings in flight.
//
// Unschedulable pods (kube-scheduler's unschedulablePods): they get a FailedScheduling event and the
// PodScheduled=False condition, and wait until a cluster event could make them fit — a node added, a node
// whose labels, taints, unschedulable flag, readiness or allocatable changed, or a pod on a node deleted
// or finished — and then go back to the queue once their backoff (1 s doubling to 10 s per attempt) is
// over. Without such an event they are retried after 5 minutes.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { SchedulerCache } from '../../core/scheduling/cache.js';
import { truncateEventMessage } from '../../core/scheduling/fit-error.js';
import { needsScheduling, podInfoOf } from '../../core/scheduling/pod-info.js';
import { schedulePod } from '../../core/scheduling/schedule.js';
import { DEFAULT_SCHEDULER_NAME, type SchedNode, type SchedPod } from '../../core/scheduling/types.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { Controller } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import { ItemExponentialRateLimiter, type WorkqueueMetrics } from '../../runtime/workqueue.js';
import { BackgroundWriter } from './background.js';

export const PODS = mustFindResource('', 'pods');
export const NODES = mustFindResource('', 'nodes');

export interface SchedulerOptions {
  readonly schedulerName?: string;
  /** Workers, and so bindings in flight (kube-scheduler's parallelism, default 16). */
  readonly parallelism?: number;
  readonly metrics?: WorkqueueMetrics;
  readonly events: ClientEventRecorder;
  /** Uniform in [0, 1): breaks score ties (tests pass a seeded one). */
  readonly random?: () => number;
  /** First retry backoff and its cap (default 1 s and 10 s). */
  readonly backoffMs?: readonly [number, number];
  /** How long an unschedulable pod waits without a cluster event (default 5 min). */
  readonly maxUnschedulableMs?: number;
  readonly onError?: (key: string, err: unknown) => void;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

interface Unschedulable {
  attempts: number;
  lastTried: number;
}

/** Whether an update of an unbound pod can change where it fits (status writes cannot). */
const specOrLabelsChanged = (a: KObject, b: KObject): boolean =>
  JSON.stringify(a['spec']) !== JSON.stringify(b['spec']) ||
  JSON.stringify(a.metadata.labels ?? {}) !== JSON.stringify(b.metadata.labels ?? {});

export class Scheduler {
  readonly controller: Controller;
  readonly cache = new SchedulerCache();
  private readonly pods: Informer;
  private readonly nodes: Informer;
  private readonly schedulerName: string;
  private readonly unschedulable = new Map<string, Unschedulable>();
  private readonly writes: BackgroundWriter;
  private readonly random: () => number;
  private readonly backoff: readonly [number, number];
  private nextStart = 0;
  /** Pods bound by this scheduler (for logs and tests). */
  scheduled = 0;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly o: SchedulerOptions,
  ) {
    this.schedulerName = o.schedulerName ?? DEFAULT_SCHEDULER_NAME;
    this.random = o.random ?? Math.random;
    this.backoff = o.backoffMs ?? [1000, 10_000];
    this.writes = new BackgroundWriter(8, 10_000, (err) =>
      o.onError?.('', new Error(`could not record scheduling status: ${String(err)}`, { cause: err })),
    );
    this.pods = factory.informer(PODS);
    this.nodes = factory.informer(NODES);
    this.controller = new Controller({
      name: 'scheduler',
      workers: o.parallelism ?? 16,
      maxRetries: Number.POSITIVE_INFINITY,
      reconcile: (key) => this.scheduleOne(key),
      queue: {
        rateLimiter: new ItemExponentialRateLimiter<string>(this.backoff[0], this.backoff[1]),
        ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
      },
      ...(o.onError === undefined ? {} : { onError: (k, e) => o.onError!(k, e) }),
    });

    this.nodes.addHandlers({
      onAdd: (n) => {
        this.cache.setNode(n as SchedNode);
        this.moveUnschedulable();
      },
      onUpdate: (_, n) => {
        if (this.cache.setNode(n as SchedNode)) this.moveUnschedulable();
      },
      onDelete: (n) => this.cache.removeNode(n.metadata.name ?? ''),
    });
    this.pods.addHandlers({
      onAdd: (p) => this.podChanged(undefined, p),
      onUpdate: (old, p) => this.podChanged(old, p),
      onDelete: (p) => {
        const key = objectKeyOf(p);
        this.unschedulable.delete(key);
        if (this.cache.removePod(key)) this.moveUnschedulable();
      },
    });
  }

  private podChanged(old: KObject | undefined, obj: KObject): void {
    const pod = obj as SchedPod;
    const key = objectKeyOf(obj);
    if ((pod.spec?.nodeName ?? '') !== '') {
      this.unschedulable.delete(key);
      if (this.cache.setPod(pod)) this.moveUnschedulable();
      return;
    }
    this.cache.setPod(pod); // an unbound pod drops a stale binding, never an assumption
    if (!needsScheduling(pod, this.schedulerName)) {
      this.unschedulable.delete(key);
      return;
    }
    // A pod waiting for a cluster event is not retried for its own status writes (our condition).
    if (old !== undefined && this.unschedulable.has(key) && !specOrLabelsChanged(old, obj)) return;
    this.controller.enqueue(key);
  }

  /** Cluster event: every unschedulable pod goes back to the queue once its backoff is over. */
  private moveUnschedulable(): void {
    if (this.unschedulable.size === 0) return;
    const now = performance.now();
    for (const [key, u] of this.unschedulable) {
      const wait = this.backoffMs(u.attempts) - (now - u.lastTried);
      this.controller.enqueueAfter(key, Math.max(0, wait));
    }
  }

  private backoffMs(attempts: number): number {
    const [first, cap] = this.backoff;
    return Math.min(cap, first * 2 ** Math.max(0, attempts - 1));
  }

  async start(): Promise<void> {
    await Promise.all([this.pods.waitForSync(), this.nodes.waitForSync()]);
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await Promise.race([this.writes.idle(), new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  /** One scheduling cycle, then the binding. */
  private async scheduleOne(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const obj = this.pods.indexer.get(key);
    if (obj === undefined) {
      this.unschedulable.delete(key);
      return;
    }
    const pod = obj as SchedPod;
    if (!needsScheduling(pod, this.schedulerName) || this.cache.isAssumed(key)) return;
    const info = podInfoOf(pod);
    const result = schedulePod({
      pod: info,
      nodes: this.cache.nodeList(),
      start: this.nextStart,
      random: this.random,
      zoneCount: this.cache.zoneOwnerCount,
    });
    this.nextStart = result.nextStart;
    if (result.kind === 'Unschedulable') {
      const prev = this.unschedulable.get(key);
      this.unschedulable.set(key, { attempts: (prev?.attempts ?? 0) + 1, lastTried: performance.now() });
      this.reportUnschedulable(obj, result.message);
      return { requeueAfterMs: this.o.maxUnschedulableMs ?? 5 * 60_000 };
    }
    const nodeName = result.node.name;
    this.unschedulable.delete(key);
    this.cache.assume(info, nodeName);
    try {
      await this.client.createSubresource(PODS, info.namespace, info.name, 'binding', {
        kind: 'Binding',
        apiVersion: 'v1',
        metadata: {
          name: info.name,
          namespace: info.namespace,
          ...(info.uid === '' ? {} : { uid: info.uid }),
        },
        target: { kind: 'Node', name: nodeName },
      });
    } catch (err) {
      this.cache.forget(key);
      // Gone, already bound (by another scheduler, or a retry of a binding that did land), being
      // deleted, or replaced by a new pod of the same name (UID precondition): the informer brings the
      // truth. Any other conflict (the store's compare-and-swap lost too often) is retried.
      if (isApiError(err, 404)) return;
      if (isApiError(err, 409) && /already assigned|being deleted|UID|[Pp]recondition/.test(err.message))
        return;
      throw err;
    }
    this.scheduled++;
    this.writes.run(() =>
      this.o.events.record(
        regarding('Pod', 'v1', obj),
        'Normal',
        'Scheduled',
        `Successfully assigned ${info.namespace}/${info.name} to ${nodeName}`,
      ),
    );
  }

  /** The FailedScheduling event, and PodScheduled=False/Unschedulable with the full message. */
  private reportUnschedulable(obj: KObject, message: string): void {
    const pod = obj as SchedPod;
    this.writes.run(() =>
      this.o.events.record(
        regarding('Pod', 'v1', obj),
        'Warning',
        'FailedScheduling',
        truncateEventMessage(message),
      ),
    );
    const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (cond?.status === 'False' && cond.reason === 'Unschedulable' && cond.message === message) return;
    const now = `${new Date().toISOString().slice(0, 19)}Z`;
    this.writes.run(async () => {
      try {
        await this.client.patch(
          PODS,
          pod.metadata.namespace ?? '',
          pod.metadata.name ?? '',
          'strategic',
          {
            status: {
              conditions: [
                {
                  type: 'PodScheduled',
                  status: 'False',
                  reason: 'Unschedulable',
                  message,
                  lastProbeTime: null,
                  lastTransitionTime: cond?.status === 'False' ? undefined : now,
                },
              ],
            },
          },
          { sub: 'status' },
        );
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
      }
    });
  }
}
