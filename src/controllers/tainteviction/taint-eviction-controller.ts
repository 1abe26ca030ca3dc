// The taint eviction controller (kube's pkg/controller/tainteviction), started by the node lifecycle
// controller when --enable-pod-eviction is set: a workqueue keyed by pod deletes the pods that do not
// tolerate their node's NoExecute taints, after the tolerationSeconds of the tolerations they use
// (core/nodelifecycle/eviction.ts decides): a DisruptionTarget status condition, then a graceful DELETE.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { evictionDecision } from '../../core/nodelifecycle/eviction.js';
import { rfc3339, type Node, type Pod, type Taint } from '../../core/nodelifecycle/types.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { Controller } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import type { WorkqueueMetrics } from '../../runtime/workqueue.js';
import { podsByNodeIndexers, podsOnNode } from '../pods-by-node.js';

const NODES = mustFindResource('', 'nodes');
const PODS = mustFindResource('', 'pods');

export interface TaintEvictionOptions {
  readonly events?: ClientEventRecorder | undefined;
  readonly metrics?: WorkqueueMetrics | undefined;
  readonly now?: () => number;
  readonly onError?: ((key: string, err: unknown) => void) | undefined;
  readonly log?: ((msg: string, fields?: Record<string, unknown>) => void) | undefined;
}

export class TaintEvictionController {
  private readonly nodes: Informer;
  private readonly pods: Informer;
  private readonly queue: Controller;
  /** Pod key → when it was first seen on a node with NoExecute taints. */
  private readonly taintedSince = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly o: TaintEvictionOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.nodes = factory.informer(NODES);
    this.pods = factory.informer(PODS, { indexers: podsByNodeIndexers });
    const eviction = new Controller({
      name: 'taint_eviction_controller',
      workers: 4,
      reconcile: (key) => this.syncEviction(key),
      ...(o.metrics === undefined ? {} : { queue: { metrics: o.metrics } }),
      ...(o.onError === undefined ? {} : { onError: (k: string, e: unknown) => o.onError!(k, e) }),
    });
    this.queue = eviction;
    const enqueuePod = (p: KObject): void => {
      if ((p as Pod).spec?.nodeName) eviction.enqueue(objectKeyOf(p));
    };
    this.pods.addHandlers({
      onAdd: enqueuePod,
      onUpdate: (_, p) => enqueuePod(p),
      onDelete: (p) => this.taintedSince.delete(objectKeyOf(p)),
    });
    const podsOf = (n: KObject): void => {
      for (const p of podsOnNode(this.pods, n.metadata.name ?? '')) enqueuePod(p);
    };
    this.nodes.addHandlers({
      onUpdate: (old, n) => {
        if (JSON.stringify(noExecute(old as Node)) !== JSON.stringify(noExecute(n as Node))) podsOf(n);
      },
      onDelete: podsOf,
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.nodes.waitForSync(), this.pods.waitForSync()]);
    this.queue.start();
  }

  async stop(): Promise<void> {
    await this.queue.stop();
  }

  /** Taint-based eviction of one pod (the taint eviction controller's processPodOnNode). */
  private async syncEviction(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const pod = this.pods.indexer.get(key) as Pod | undefined;
    const node =
      pod === undefined ? undefined : (this.nodes.indexer.get(pod.spec?.nodeName ?? '') as Node | undefined);
    const taints = node === undefined ? [] : noExecute(node);
    if (pod === undefined || taints.length === 0 || pod.metadata.deletionTimestamp) {
      if (this.taintedSince.delete(key) && pod !== undefined && !pod.metadata.deletionTimestamp)
        void this.o.events?.record(
          regarding('Pod', 'v1', pod),
          'Normal',
          'TaintManagerEviction',
          `Cancelling deletion of Pod ${key}`,
        );
      return;
    }
    const now = this.now();
    let since = this.taintedSince.get(key);
    if (since === undefined) this.taintedSince.set(key, (since = now));
    const decision = evictionDecision(pod.spec?.tolerations ?? [], taints, since, now);
    if (decision.kind === 'keep') return;
    if (decision.kind === 'evictAt') return { requeueAfterMs: Math.max(1, decision.atMs - now) };
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    void this.o.events?.record(
      regarding('Pod', 'v1', pod),
      'Normal',
      'TaintManagerEviction',
      `Marking for deletion Pod ${key}`,
    );
    try {
      await this.client.patch(
        PODS,
        ns,
        name,
        'strategic',
        {
          status: {
            conditions: [
              {
                type: 'DisruptionTarget',
                status: 'True',
                reason: 'DeletionByTaintManager',
                message: 'Taint manager: deleting due to NoExecute taint',
                lastTransitionTime: rfc3339(now),
              },
            ],
          },
        },
        { sub: 'status' },
      );
      await this.client.delete(PODS, ns, name, {
        ...(pod.metadata.uid === undefined ? {} : { preconditions: { uid: pod.metadata.uid } }),
      });
      this.o.log?.('pod evicted from a NoExecute-tainted node', { pod: key, node: pod.spec?.nodeName });
    } catch (err) {
      if (isApiError(err, 404)) return;
      throw err;
    }
    this.taintedSince.delete(key);
  }
}

const noExecute = (n: Node): Taint[] => (n.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
