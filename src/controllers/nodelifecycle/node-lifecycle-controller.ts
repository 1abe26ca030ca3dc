// The node lifecycle controller (kube's pkg/controller/nodelifecycle; it starts the taint eviction
// controller of controllers/tainteviction when --enable-pod-eviction is set). Wiring:
// - a health pass every --node-monitor-period over every cached Node, with its Lease from
//   kube-node-lease: core/nodelifecycle decides when heartbeats are overdue, and the controller writes
//   the Unknown conditions through nodes/status, marks the node's pods not Ready through pods/status,
//   swaps or removes the NoExecute not-ready/unreachable taint, and queues new NoExecute taints in their
//   zone's rate-limited queue (drained every 100 ms by a token bucket; nothing is tainted while every
//   zone is fully disrupted);
// - a workqueue keyed by node name keeps the condition-driven NoSchedule taints current on every Node
//   change.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { assessNode, resetProbe, type NodeHealth } from '../../core/nodelifecycle/health.js';
import { notReadyPatch } from '../../core/nodelifecycle/pods.js';
import {
  noExecuteAction,
  noExecuteKeyFor,
  noScheduleTaintsUpdate,
  withNoExecuteTaint,
  withoutNoExecuteTaints,
} from '../../core/nodelifecycle/taints.js';
import {
  NODE_LEASE_NAMESPACE,
  conditionOf,
  rfc3339,
  type Node,
  type Pod,
  type Taint,
} from '../../core/nodelifecycle/types.js';
import {
  DEFAULT_ZONE_RATES,
  allFullyDisrupted,
  excludedFromDisruption,
  fullBucket,
  takeToken,
  zoneOf,
  zoneRate,
  zoneState,
  type Bucket,
  type ZoneRates,
  type ZoneState,
} from '../../core/nodelifecycle/zones.js';
import type { Projection } from '../../core/projection/projection.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { Controller } from '../../runtime/controller.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import { objectKeyOf, type Informer, type SharedInformerFactory } from '../../runtime/informer.js';
import { sleep } from '../../runtime/sleep.js';
import type { WorkqueueMetrics } from '../../runtime/workqueue.js';
import { podsByNodeIndexers, podsOnNode } from '../pods-by-node.js';
import { TaintEvictionController } from '../tainteviction/taint-eviction-controller.js';

export const NODES = mustFindResource('', 'nodes');
export const LEASES = mustFindResource('coordination.k8s.io', 'leases');
export const PODS = mustFindResource('', 'pods');

/** What this controller reads of a pod (see controllers/pod-view.ts). */
export const NODE_LIFECYCLE_POD_VIEW: Projection = {
  apiVersion: true,
  kind: true,
  metadata: true,
  spec: { nodeName: true, tolerations: true },
  status: { phase: true, conditions: true },
};

export const DEFAULT_NODE_MONITOR_PERIOD_MS = 5_000;
export const DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS = 40_000;
export const DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS = 60_000;
const TAINTER_TICK_MS = 100;

export interface NodeLifecycleOptions {
  readonly monitorPeriodMs?: number;
  readonly gracePeriodMs?: number;
  readonly startupGracePeriodMs?: number;
  /** Taint-based eviction of pods from NoExecute-tainted nodes (off by default: edge nodes flap). */
  readonly enablePodEviction?: boolean;
  readonly zoneRates?: ZoneRates;
  readonly events?: ClientEventRecorder;
  readonly metrics?: WorkqueueMetrics;
  readonly now?: () => number;
  readonly onError?: (key: string, err: unknown) => void;
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

interface ZoneQueue {
  state: ZoneState;
  bucket: Bucket;
  rate: number;
  /** Node names waiting for their NoExecute taint, in arrival order. */
  readonly pending: Set<string>;
}

export class NodeLifecycleController {
  private readonly nodes: Informer;
  private readonly leases: Informer;
  private readonly pods: Informer;
  private readonly taints: Controller;
  private readonly eviction: TaintEvictionController | undefined;
  private readonly health = new Map<string, NodeHealth>();
  private readonly retryPods = new Set<string>();
  private readonly zones = new Map<string, ZoneQueue>();
  private allDisrupted = false;
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private readonly now: () => number;
  private readonly period: number;
  private readonly timing: { gracePeriodMs: number; startupGracePeriodMs: number };
  private readonly rates: ZoneRates;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    private readonly o: NodeLifecycleOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.period = o.monitorPeriodMs ?? DEFAULT_NODE_MONITOR_PERIOD_MS;
    this.timing = {
      gracePeriodMs: o.gracePeriodMs ?? DEFAULT_NODE_MONITOR_GRACE_PERIOD_MS,
      startupGracePeriodMs: o.startupGracePeriodMs ?? DEFAULT_NODE_STARTUP_GRACE_PERIOD_MS,
    };
    this.rates = o.zoneRates ?? DEFAULT_ZONE_RATES;
    this.nodes = factory.informer(NODES);
    this.leases = factory.informer(LEASES, { namespace: NODE_LEASE_NAMESPACE });
    this.pods = factory.informer(PODS, { indexers: podsByNodeIndexers });
    const queue = o.metrics === undefined ? {} : { queue: { metrics: o.metrics } };
    const onError = o.onError === undefined ? {} : { onError: (k: string, e: unknown) => o.onError!(k, e) };
    this.taints = new Controller({
      name: 'node_lifecycle_controller',
      workers: 2,
      reconcile: (name) => this.syncNoScheduleTaints(name),
      ...queue,
      ...onError,
    });
    const enqueueNode = (n: KObject): void => this.taints.enqueue(n.metadata.name ?? '');
    this.nodes.addHandlers({ onAdd: enqueueNode, onUpdate: (_, n) => enqueueNode(n) });
    this.eviction =
      o.enablePodEviction === true
        ? new TaintEvictionController(client, factory, {
            events: o.events,
            metrics: o.metrics,
            ...(o.now === undefined ? {} : { now: o.now }),
            onError: o.onError,
            log: o.log,
          })
        : undefined;
  }

  async start(): Promise<void> {
    await Promise.all([this.nodes.waitForSync(), this.leases.waitForSync(), this.pods.waitForSync()]);
    this.taints.start();
    await this.eviction?.start();
    this.loops = [this.monitorLoop(), this.tainterLoop()];
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([this.taints.stop(), this.eviction?.stop(), ...this.loops]);
  }

  private report(key: string, err: unknown): void {
    if (!this.abort.signal.aborted) this.o.onError?.(key, err);
  }

  private async monitorLoop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.monitorPass();
      } catch (err) {
        this.report('monitor', err);
      }
      await sleep(this.period, this.abort.signal);
    }
  }

  /** One health pass over every node (monitorNodeHealth). */
  async monitorPass(): Promise<void> {
    const nodes = this.nodes.indexer.list() as Node[];
    const names = new Set(nodes.map((n) => n.metadata.name ?? ''));
    for (const n of nodes) {
      if (!this.health.has(n.metadata.name ?? ''))
        this.event(n, 'Normal', 'RegisteredNode', `Registered Node ${n.metadata.name} in Controller`);
    }
    for (const name of [...this.health.keys()]) {
      if (names.has(name)) continue;
      this.health.delete(name);
      this.retryPods.delete(name);
      for (const z of this.zones.values()) z.pending.delete(name);
      this.o.log?.('node removed', { node: name });
      void this.o.events?.record(
        { kind: 'Node', apiVersion: 'v1', name },
        'Normal',
        'RemovingNode',
        `Removing Node ${name} from Controller`,
      );
    }
    const readyByZone = new Map<string, string[]>();
    for (const cached of nodes) {
      if (this.abort.signal.aborted) return;
      const name = cached.metadata.name ?? '';
      let assessed: Awaited<ReturnType<NodeLifecycleController['updateHealth']>>;
      try {
        assessed = await this.updateHealth(cached);
      } catch (err) {
        this.report(name, err);
        continue;
      }
      const { node, observedReady, currentReady } = assessed;
      if (!excludedFromDisruption(node)) {
        const zone = zoneOf(node);
        readyByZone.set(zone, [...(readyByZone.get(zone) ?? []), currentReady]);
      }
      try {
        await this.noExecuteTainting(node, observedReady);
      } catch (err) {
        this.report(name, err);
      }
      const becameNotReady = observedReady === 'True' && currentReady !== 'True';
      if (becameNotReady) {
        this.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
        this.o.log?.('node not ready', { node: name, ready: currentReady });
      }
      if (becameNotReady || (this.retryPods.has(name) && observedReady !== 'True')) {
        const failed = await this.markPodsNotReady(name);
        if (failed) this.retryPods.add(name);
        else this.retryPods.delete(name);
      } else if (observedReady === 'True') {
        this.retryPods.delete(name);
      }
    }
    await this.handleDisruption(readyByZone);
  }

  /** Assesses one node and writes Unknown conditions when its heartbeats are overdue (retrying a conflict). */
  private async updateHealth(
    cached: Node,
  ): Promise<{ node: Node; observedReady: string; currentReady: string }> {
    const name = cached.metadata.name ?? '';
    let node = cached;
    for (let attempt = 0; ; attempt++) {
      const lease = this.leases.indexer.get(`${NODE_LEASE_NAMESPACE}/${name}`);
      const a = assessNode(this.health.get(name), node, lease, this.now(), this.timing);
      this.health.set(name, a.health);
      if (a.conditions === undefined) {
        return { node, observedReady: a.observedReady, currentReady: a.currentReady };
      }
      try {
        const written = (await this.client.update(
          NODES,
          { ...node, status: { ...node.status, conditions: a.conditions } },
          'status',
        )) as Node;
        this.o.log?.('node heartbeats overdue; conditions set Unknown', {
          node: name,
          resourceVersion: written.metadata.resourceVersion,
        });
        return { node: written, observedReady: a.observedReady, currentReady: a.currentReady };
      } catch (err) {
        if (!isApiError(err, 409) || attempt >= 4) throw err;
        node = (await this.client.get(NODES, '', name)) as Node;
      }
    }
  }

  /** processTaintBaseEviction: swap or remove now; a new taint goes through the zone's queue. */
  private async noExecuteTainting(node: Node, observedReady: string): Promise<void> {
    const name = node.metadata.name ?? '';
    const action = noExecuteAction(node, observedReady);
    const zone = this.zone(zoneOf(node));
    switch (action.kind) {
      case 'none':
        return;
      case 'cancel':
        zone.pending.delete(name);
        return;
      case 'remove':
        zone.pending.delete(name);
        await this.writeTaints(name, withoutNoExecuteTaints);
        return;
      case 'swap':
        zone.pending.delete(name);
        await this.writeTaints(name, (n) => withNoExecuteTaint(n, action.key, this.now()));
        return;
      case 'queue':
        zone.pending.add(name);
        return;
    }
  }

  private zone(key: string): ZoneQueue {
    let z = this.zones.get(key);
    if (z === undefined) {
      z = {
        state: 'Initial',
        bucket: fullBucket(1, this.now()),
        rate: this.allDisrupted ? 0 : this.rates.evictionRate,
        pending: new Set(),
      };
      this.zones.set(key, z);
    }
    return z;
  }

  /** handleDisruption: zone states, their tainting rates, and the all-zones-down rule. */
  private async handleDisruption(readyByZone: Map<string, string[]>): Promise<void> {
    const states = new Map<string, ZoneState>();
    for (const [zone, statuses] of readyByZone)
      states.set(zone, zoneState(statuses, this.rates.unhealthyZoneThreshold));
    for (const [key, z] of this.zones)
      if (!readyByZone.has(key) && z.pending.size === 0) this.zones.delete(key);
    const allNow = allFullyDisrupted(states.values());
    const allWas = this.allDisrupted;
    this.allDisrupted = allNow;
    if (allNow && !allWas) {
      this.o.log?.('every zone is fully disrupted: NoExecute tainting stops and those taints are removed');
      for (const z of this.zones.values()) {
        z.rate = 0;
        z.pending.clear();
      }
      for (const [zone, state] of states) this.zone(zone).state = state;
      for (const n of this.nodes.indexer.list()) {
        try {
          await this.writeTaints(n.metadata.name ?? '', withoutNoExecuteTaints);
        } catch (err) {
          this.report(n.metadata.name ?? '', err);
        }
      }
      return;
    }
    if (allNow) return;
    const now = this.now();
    if (allWas) {
      this.o.log?.('a zone is no longer fully disrupted: NoExecute tainting resumes');
      for (const [name, h] of this.health) this.health.set(name, resetProbe(h, now));
    }
    for (const [zone, state] of states) {
      const z = this.zone(zone);
      if (allWas || z.state !== state) {
        z.rate = zoneRate(state, readyByZone.get(zone)?.length ?? 0, this.rates);
        if (z.state !== state && z.state !== 'Initial')
          this.o.log?.('zone state changed', { zone, from: z.state, to: state });
        z.state = state;
      }
    }
  }

  private async tainterLoop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      await sleep(TAINTER_TICK_MS, this.abort.signal);
      for (const z of this.zones.values()) {
        for (const name of [...z.pending]) {
          const took = takeToken(z.bucket, this.now(), z.rate);
          z.bucket = took.bucket;
          if (!took.ok) break;
          z.pending.delete(name);
          try {
            await this.doNoExecuteTainting(name);
          } catch (err) {
            z.pending.add(name); // retried on a later tick
            this.report(name, err);
          }
        }
      }
    }
  }

  /** doNoExecuteTaintingPass for one node: the taint its current Ready status implies. */
  private async doNoExecuteTainting(name: string): Promise<void> {
    await this.writeTaints(name, (n) => {
      const key = noExecuteKeyFor(conditionOf(n.status?.conditions, 'Ready')?.status ?? 'Unknown');
      return key === undefined ? undefined : withNoExecuteTaint(n, key, this.now());
    });
  }

  /** Keeps the condition-driven NoSchedule taints current (doNoScheduleTaintingPass). */
  private async syncNoScheduleTaints(name: string): Promise<void> {
    await this.writeTaints(name, noScheduleTaintsUpdate);
  }

  /**
   * Writes `compute(node)` as the node's taints (nothing when it returns undefined), from the cache
   * first and from a live read after a conflict. A node that is gone is left alone.
   */
  private async writeTaints(name: string, compute: (n: Node) => Taint[] | undefined): Promise<void> {
    let node = this.nodes.indexer.get(name) as Node | undefined;
    for (let attempt = 0; node !== undefined; attempt++) {
      const taints = compute(node);
      if (taints === undefined) return;
      try {
        await this.client.update(NODES, { ...node, spec: { ...node.spec, taints } });
        return;
      } catch (err) {
        if (isApiError(err, 404)) return;
        if (!isApiError(err, 409) || attempt >= 4) throw err;
      }
      try {
        node = (await this.client.get(NODES, '', name)) as Node;
      } catch (err) {
        if (isApiError(err, 404)) return;
        throw err;
      }
    }
  }

  /** MarkPodsNotReady: every pod on the node gets Ready=False. True when some write failed. */
  private async markPodsNotReady(name: string): Promise<boolean> {
    let failed = false;
    const now = rfc3339(this.now());
    for (const p of podsOnNode(this.pods, name) as Pod[]) {
      const patch = notReadyPatch(p, now);
      if (patch === undefined) continue;
      try {
        await this.client.patch(PODS, p.metadata.namespace ?? '', p.metadata.name ?? '', 'strategic', patch, {
          sub: 'status',
        });
        void this.o.events?.record(regarding('Pod', 'v1', p), 'Warning', 'NodeNotReady', 'Node is not ready');
      } catch (err) {
        if (isApiError(err, 404)) continue;
        failed = true;
        this.report(objectKeyOf(p), err);
      }
    }
    return failed;
  }

  private event(node: Node, type: 'Normal' | 'Warning', reason: string, message: string): void {
    void this.o.events?.record(regarding('Node', 'v1', node), type, reason, message);
  }
}
