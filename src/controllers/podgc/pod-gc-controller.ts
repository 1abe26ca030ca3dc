// The pod garbage collector (kube's pkg/controller/podgc): every --pod-gc-period (20 s upstream) a pass
// over the cached pods and nodes. core/nodelifecycle/pod-gc.ts decides; this file reads the caches,
// re-checks a quarantined node with a live GET before declaring it gone, and writes: a status patch
// marking the pod Failed (with DisruptionTarget/DeletionByPodGC for orphans), then a DELETE with
// gracePeriodSeconds 0, since no kubelet is left to confirm a graceful one.
import { mustFindResource } from '../../api/resources.js';
import {
  DEFAULT_ORPHAN_QUARANTINE_MS,
  DEFAULT_POD_GC_PERIOD_MS,
  DEFAULT_TERMINATED_POD_GC_THRESHOLD,
  DISRUPTION_MESSAGE_POD_GC,
  DISRUPTION_REASON_POD_GC,
  failedStatusPatch,
  orphanPass,
  outOfServiceTerminating,
  podsOnNodes,
  terminatedExcess,
  unscheduledTerminating,
} from '../../core/nodelifecycle/pod-gc.js';
import { rfc3339, type Node, type Pod } from '../../core/nodelifecycle/types.js';
import type { Projection } from '../../core/projection/projection.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import { sleep } from '../../runtime/sleep.js';

const NODES = mustFindResource('', 'nodes');
const PODS = mustFindResource('', 'pods');

/** What the pod GC reads of a pod (see controllers/pod-view.ts). */
export const POD_GC_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  spec: { nodeName: true },
  status: { phase: true, reason: true },
};

export interface PodGCOptions {
  /** How often a pass runs (upstream's gcCheckPeriod, 20 s). */
  readonly periodMs?: number;
  /** How long a pod's node must be missing from the cache before it is looked up (40 s). */
  readonly quarantineMs?: number;
  /** --terminated-pod-gc-threshold (12500; ≤ 0 disables that part). */
  readonly terminatedPodThreshold?: number;
  readonly now?: () => number;
  readonly onError?: (key: string, err: unknown) => void;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export class PodGCController {
  private readonly pods: Informer;
  private readonly nodes: Informer;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private missingSince = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly o: PodGCOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.pods = factory.informer(PODS);
    this.nodes = factory.informer(NODES);
  }

  async start(): Promise<void> {
    await Promise.all([this.pods.waitForSync(), this.nodes.waitForSync()]);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.gc();
      } catch (err) {
        if (!this.abort.signal.aborted) this.o.onError?.('podgc', err);
      }
      await sleep(this.o.periodMs ?? DEFAULT_POD_GC_PERIOD_MS, this.abort.signal);
    }
  }

  /** One pass (gcc.gc). */
  async gc(): Promise<void> {
    const pods = this.pods.indexer.list() as Pod[];
    const nodes = new Map((this.nodes.indexer.list() as Node[]).map((n) => [n.metadata.name ?? '', n]));
    const threshold = this.o.terminatedPodThreshold ?? DEFAULT_TERMINATED_POD_GC_THRESHOLD;
    for (const p of terminatedExcess(pods, threshold)) await this.forceDelete(p, undefined, 'terminated');
    for (const p of outOfServiceTerminating(pods, nodes))
      await this.forceDelete(p, undefined, 'out-of-service');
    await this.gcOrphans(pods);
    for (const p of unscheduledTerminating(pods)) await this.forceDelete(p, undefined, 'unscheduled');
  }

  private async gcOrphans(pods: Pod[]): Promise<void> {
    const pass = orphanPass(
      pods,
      (n) => this.nodes.indexer.get(n) !== undefined,
      this.missingSince,
      this.o.quarantineMs ?? DEFAULT_ORPHAN_QUARANTINE_MS,
      this.now(),
    );
    this.missingSince = pass.missingSince;
    const gone = new Set<string>();
    for (const name of pass.toCheck) {
      try {
        await this.client.get(NODES, '', name, this.abort.signal);
        this.missingSince.delete(name); // it exists after all: a new quarantine if it goes missing again
      } catch (err) {
        if (isApiError(err, 404)) gone.add(name);
        else this.o.onError?.(name, err);
      }
    }
    const condition = { reason: DISRUPTION_REASON_POD_GC, message: DISRUPTION_MESSAGE_POD_GC };
    for (const p of podsOnNodes(pods, gone)) await this.forceDelete(p, condition, 'orphaned');
  }

  /** Marks the pod Failed (unless terminal) and deletes it with grace 0; errors are reported, not thrown. */
  private async forceDelete(
    pod: Pod,
    condition: { reason: string; message: string } | undefined,
    why: string,
  ): Promise<void> {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    try {
      const patch = failedStatusPatch(pod, condition, rfc3339(this.now()));
      if (patch !== undefined)
        await this.client.patch(PODS, ns, name, 'strategic', patch, { sub: 'status', fieldManager: 'PodGC' });
      await this.client.delete(PODS, ns, name, {
        gracePeriodSeconds: 0,
        ...(pod.metadata.uid === undefined ? {} : { preconditions: { uid: pod.metadata.uid } }),
      });
      this.o.log?.('pod garbage-collected', { pod: objectKeyOf(pod), node: pod.spec?.nodeName, why });
    } catch (err) {
      if (isApiError(err, 404) || isApiError(err, 409)) return; // gone, or replaced by a newer pod
      this.o.onError?.(objectKeyOf(pod), err);
    }
  }
}
