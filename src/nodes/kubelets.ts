// Simulated kubelets: after registerNodes, one SimulatedKubelets object runs every node of the process.
//
// Heartbeats, as the kubelet's (its node lease controller and nodeStatusUpdateFrequency /
// nodeStatusReportFrequency): each node's Lease is renewed every 10 s; the node status is
// computed every 10 s and PATCHed when it changed (the node lifecycle controller set Ready Unknown) or
// every 5 min otherwise. One 500 ms ticker drives all nodes, and node i's schedule is offset by
// i/N of the interval, so N nodes make a steady N/10 lease writes per second rather than a burst of N
// every 10 s; at most `heartbeatConcurrency` (64) writes are in flight, taken round-robin.
//
// Pods: ONE pod informer for all nodes of the process, watching pods with `spec.nodeName!=` (bound
// pods only; the API server drops unscheduled ones) — or `spec.nodeName=<name>` when the process runs a
// single node — and keeping those bound to our nodes. A field selector cannot name a set of nodes, and
// one watch per node would cost N watch streams on the API server; a process running most nodes of the
// cluster (the benchmark: 1,000 of 1,000) sees mostly its own pods anyway.
// Each pod key goes through a workqueue (one key in flight at a time, retries with backoff); the
// reconcile is planPod (core/nodes/pod-lifecycle.ts) applied through pods/status or a grace-0 DELETE.
//
// Pod IPs come from the node's PodIPPool, keyed by pod UID. Before the first pod is handled, every
// bound pod's status.podIPs is reserved (--pod-ip-on-restart keep), so a restarted process gives no pod
// a new address and no new pod an address in use; with `new`, every pod that ran before gets a new one
// (core/nodes/pod-ip-restart.ts).
//
// The node's view of its pods (what GET /pods of the kubelet API serves, and what the checkpoint under
// --root-dir keeps): each pod as the node last saw it, with the status it last reported. With a
// checkpoint the kubelets can start OFFLINE (startOffline): the checkpointed pods run again from the
// view (their containers start, their status is planned and applied to the view only); once the API
// server answers and the nodes are registered, start() switches the source to the pod informer,
// reports every pod's status (its current IPs), stops the pods the API no longer has and starts new ones.
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { parseCidrRange, type Cidr } from '../core/allocator/cidr.js';
import {
  LEASE_RENEW_INTERVAL_MS,
  NODE_STATUS_REPORT_MS,
  NODE_STATUS_UPDATE_MS,
  nodeConditions,
  nodeConditionsChanged,
  NODE_LEASE_NAMESPACE,
  rfc3339,
  microTime,
  staggerOffsetMs,
} from '../core/nodes/node-object.js';
import { NodeCidrError } from '../core/nodes/pod-cidrs.js';
import { PodIPPool } from '../core/nodes/pod-ips.js';
import { isTerminating, planPod, statusPodIPs, type PodPlan } from '../core/nodes/pod-lifecycle.js';
import { checkpointPod, encodeCheckpoint, type NodeCheckpoint } from '../core/nodes/checkpoint.js';
import { readdressPods, type PodIPOnRestart, type RestartedPod } from '../core/nodes/pod-ip-restart.js';
import { isApiError, type Client } from '../runtime/client.js';
import { Controller } from '../runtime/controller.js';
import { Informer, objectKeyOf } from '../runtime/informer.js';
import { PodContainers, isHostNetwork } from './pod-containers.js';
import { CHECKPOINT_FILE, writeNodeFileAsync } from './checkpoint-store.js';
import { forEachLimit, LEASES, NODES, type RegisteredNode } from './register.js';
import type { Logger } from '../runtime/logger.js';

const PODS = mustFindResource('', 'pods');

/** A node the kubelets run: what they need of it before (or without) registration. */
export interface KubeletNode {
  readonly name: string;
  readonly index: number;
  readonly podCIDRs: readonly string[];
  readonly internalIP: string;
}

export interface KubeletsOptions {
  readonly client: Client;
  readonly nodes: readonly KubeletNode[];
  /** --root-dir: each node's checkpoint is written to ROOT_DIR/NAME/checkpoint.json (none without it). */
  readonly rootDir?: string;
  /** The nodes' checkpoints as read at start (by node name). */
  readonly checkpoints?: ReadonlyMap<string, NodeCheckpoint>;
  /** --pod-ip-on-restart (default keep). */
  readonly podIPOnRestart?: PodIPOnRestart;
  readonly servePods?: boolean;
  readonly log: Logger;
  /** Pod workers (default 4 + one per 10 nodes, at most 64). */
  readonly podWorkers?: number;
  /** Heartbeat writes in flight at once (default 32). */
  readonly heartbeatConcurrency?: number;
  readonly now?: () => number;
}

interface NodeState {
  readonly reg: KubeletNode;
  /** The node's Lease as last written; undefined until the node is registered (offline). */
  lease: KObject | undefined;
  /** The registered Node's UID; the checkpoint's until the node is registered ('' without either). */
  uid: string;
  readonly pool: PodIPPool;
  /** The node's view of its pods: pod key → the pod as last seen, with the status last reported. */
  readonly pods: Map<string, KObject>;
  nextLeaseMs: number;
  nextStatusMs: number;
  lastReportMs: number;
  /** The Node as last seen (from the write's answer or the node informer). */
  node: KObject | undefined;
  busy: boolean;
}

interface Counters {
  leaseWrites: number;
  statusWrites: number;
  podStatusWrites: number;
  podDeletes: number;
}

export class SimulatedKubelets {
  private readonly nodes = new Map<string, NodeState>();
  private readonly pods: Informer;
  private readonly nodeInformer: Informer;
  private readonly controller: Controller;
  /** The pods' containers (their echo listeners), with --serve-pods. */
  private readonly containers: PodContainers | undefined;
  /** Pod key → the UID and node whose IPs it holds, so a vanished pod's addresses can be freed. */
  private readonly held = new Map<string, { uid: string; node: string }>();
  private ticker: NodeJS.Timeout | undefined;
  /** Whether the pods come from the API (the informer) rather than from the view (offline). */
  private online = false;
  private restored = false;
  private controllerStarted = false;
  /** Nodes whose checkpoint is to be written, and the timer that writes them. */
  private readonly dirty = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** The checkpoint writes in progress (one round at a time). */
  private flushing: Promise<void> | undefined;
  /** What was last written per node, so an unchanged checkpoint is not written again. */
  private readonly written = new Map<string, string>();
  private inFlight = 0;
  private stopped = false;
  /** The nodes in heartbeat order, and where the next walk starts. */
  private readonly order: NodeState[] = [];
  private cursor = 0;
  private readonly now: () => number;
  readonly counters: Counters = { leaseWrites: 0, statusWrites: 0, podStatusWrites: 0, podDeletes: 0 };

  constructor(private readonly o: KubeletsOptions) {
    this.now = o.now ?? Date.now;
    const count = o.nodes.length;
    const t = this.now();
    for (const reg of o.nodes) {
      const cidrs = reg.podCIDRs.map((c) => parseCidrRange(c)).filter((c): c is Cidr => c !== undefined);
      this.nodes.set(reg.name, {
        reg,
        lease: undefined,
        uid: o.checkpoints?.get(reg.name)?.nodeUID ?? '',
        pool: new PodIPPool(cidrs),
        pods: new Map(),
        nextLeaseMs: t + LEASE_RENEW_INTERVAL_MS + staggerOffsetMs(reg.index, count),
        nextStatusMs: t + NODE_STATUS_UPDATE_MS + staggerOffsetMs(reg.index, count, NODE_STATUS_UPDATE_MS),
        lastReportMs: t,
        node: undefined,
        busy: false,
      });
      this.order.push(this.nodes.get(reg.name)!);
    }
    const single = count === 1 ? o.nodes[0]!.name : undefined;
    this.pods = new Informer(o.client, PODS, {
      fieldSelector: single === undefined ? 'spec.nodeName!=' : `spec.nodeName=${single}`,
      reflector: { onError: (err) => o.log.warn('pod watch failed; retrying', { err: String(err) }) },
    });
    this.nodeInformer = new Informer(o.client, NODES, {
      ...(single === undefined ? {} : { fieldSelector: `metadata.name=${single}` }),
      reflector: { onError: (err) => o.log.warn('node watch failed; retrying', { err: String(err) }) },
    });
    this.containers = o.servePods === true ? new PodContainers(o.log) : undefined;
    this.controller = new Controller({
      name: 'kubelet-pods',
      workers: o.podWorkers ?? Math.min(64, 4 + Math.ceil(count / 10)),
      reconcile: (key) => this.syncPod(key),
      onError: (key, err, dropped) =>
        o.log.warn('pod sync failed', { pod: key, err: String(err), ...(dropped ? { dropped } : {}) }),
    });
  }

  /**
   * Runs the checkpointed pods without the API server: their IPs (kept, or new ones with
   * --pod-ip-on-restart new), their containers, their status in the view. No heartbeats: the nodes are
   * not registered yet. start() takes over once they are.
   */
  startOffline(): void {
    this.restore();
    for (const state of this.nodes.values())
      for (const key of state.pods.keys()) this.controller.enqueue(key);
    this.startController();
  }

  /**
   * With the nodes registered: starts heartbeats, waits for the pod cache, re-reserves every pod's IPs
   * (or gives them new ones), then runs pods from the API: the view's pods the API no longer has stop,
   * every other pod's status (its current IPs) is reported.
   */
  async start(registered: readonly RegisteredNode[]): Promise<void> {
    // Started online: a checkpoint of a Node that has since been deleted and created again (another
    // cluster, a reused name) is not this node's past; its pods and pool position are left alone.
    const stale = this.restored
      ? []
      : registered.filter((r) => {
          const cp = this.o.checkpoints?.get(r.name);
          return cp !== undefined && cp.nodeUID !== r.uid;
        });
    for (const r of stale)
      this.o.log.info('ignoring the checkpoint of an earlier node of the same name', { node: r.name });
    this.restore(new Set(stale.map((r) => r.name)));
    for (const reg of registered) {
      const state = this.nodes.get(reg.name);
      if (state === undefined) continue;
      if (reg.podCIDRs.join(',') !== state.reg.podCIDRs.join(','))
        throw new Error(
          `node "${reg.name}" is registered with podCIDRs ${reg.podCIDRs.join(',')}, but its pods run in ${state.reg.podCIDRs.join(',')} (its checkpoint); remove ${this.o.rootDir ?? 'the checkpoint'}/${reg.name} to start it afresh`,
        );
      state.lease = reg.lease;
      state.uid = reg.uid;
    }
    this.nodeInformer.addHandlers({
      onAdd: (n) => this.observeNode(n),
      onUpdate: (_old, n) => this.observeNode(n),
    });
    this.nodeInformer.start();
    this.ticker = setInterval(() => this.tick(), 500);
    this.pods.start();
    await this.pods.waitForSync();
    this.reserveAll(this.pods.indexer.list());
    this.online = true;
    // Pods the node ran from its checkpoint that the API no longer has (deleted meanwhile) stop.
    for (const state of this.nodes.values()) {
      for (const key of state.pods.keys())
        if (this.pods.indexer.get(key) === undefined) this.controller.enqueue(key);
      this.markDirty(state.reg.name);
    }
    this.pods.addHandlers({
      onAdd: (p) => this.enqueue(p),
      onUpdate: (_old, p) => this.enqueue(p),
      onDelete: (p) => this.controller.enqueue(objectKeyOf(p)),
    });
    this.startController();
  }

  private startController(): void {
    if (this.controllerStarted) return;
    this.controllerStarted = true;
    this.controller.start();
  }

  /** Stops heartbeats and pod work and closes the echo listeners; the nodes stay registered. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.ticker !== undefined) clearInterval(this.ticker);
    if (this.controllerStarted) await this.controller.stop();
    await Promise.all([this.pods.stop(), this.nodeInformer.stop()]);
    await this.containers?.stopAll();
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushing;
    await this.flush();
  }

  /** The pods node `name` runs, as it sees them now (the kubelet API's GET /pods). */
  podsOf(name: string): KObject[] {
    return [...(this.nodes.get(name)?.pods.values() ?? [])];
  }

  /** Pod IPs in use on a node (for tests and the benchmark). */
  podIPs(node: string): number {
    return this.nodes.get(node)?.pool.size ?? 0;
  }

  private mine(pod: KObject): NodeState | undefined {
    const nodeName = (pod as { spec?: { nodeName?: unknown } }).spec?.nodeName;
    return typeof nodeName === 'string' ? this.nodes.get(nodeName) : undefined;
  }

  private enqueue(pod: KObject): void {
    if (this.mine(pod) !== undefined || this.held.has(objectKeyOf(pod)))
      this.controller.enqueue(objectKeyOf(pod));
  }

  /**
   * Once, before any pod is handled: the checkpoint's pods enter the view, the pool continues from the
   * checkpoint's position, and the pods keep their addresses (keep) or get new ones (new).
   */
  private restore(ignore: ReadonlySet<string> = new Set()): void {
    if (this.restored) return;
    this.restored = true;
    const pods: KObject[] = [];
    for (const state of this.nodes.values()) {
      const cp = this.o.checkpoints?.get(state.reg.name);
      if (cp === undefined || ignore.has(state.reg.name)) continue;
      if (cp.podCIDRs.join(',') === state.reg.podCIDRs.join(',')) state.pool.resume(cp.poolCursors);
      for (const pod of cp.pods) {
        state.pods.set(objectKeyOf(pod), pod);
        pods.push(pod);
      }
      this.markDirty(state.reg.name);
    }
    this.reserveAll(pods);
  }

  /** Pods that ran before this process: their addresses kept, or new ones with --pod-ip-on-restart new. */
  private reserveAll(pods: readonly KObject[]): void {
    const again = new Map<NodeState, Array<RestartedPod & { readonly podKey: string }>>();
    for (const pod of pods) {
      const state = this.mine(pod);
      if (state === undefined || isHostNetwork(pod)) continue;
      const key = objectKeyOf(pod);
      const uid = pod.metadata.uid ?? '';
      if (this.held.get(key)?.uid === uid) continue;
      const ips = statusPodIPs(pod);
      if (ips.length === 0) continue;
      if (this.o.podIPOnRestart === 'new') {
        const list = again.get(state) ?? [];
        list.push({ key: uid, previous: ips, podKey: key });
        again.set(state, list);
        continue;
      }
      const problem = state.pool.reserve(uid, ips);
      if (problem === undefined) this.held.set(key, { uid, node: state.reg.name });
      else this.o.log.warn('cannot keep the pod IPs', { pod: key, ips, problem });
    }
    for (const [state, list] of again) {
      const chosen = readdressPods(state.pool, list);
      for (const p of list) {
        const ips = chosen.get(p.key);
        if (ips === undefined) continue;
        this.held.set(p.podKey, { uid: p.key, node: state.reg.name });
        this.o.log.info('pod gets a new IP on restart', { pod: p.podKey, previous: p.previous, ips });
      }
    }
  }

  private release(key: string): void {
    const h = this.held.get(key);
    if (h === undefined) return;
    this.held.delete(key);
    this.nodes.get(h.node)?.pool.release(h.uid);
  }

  /** The pod `key` as the node's view has it (offline, the only source). */
  private viewed(key: string): KObject | undefined {
    for (const state of this.nodes.values()) {
      const pod = state.pods.get(key);
      if (pod !== undefined) return pod;
    }
    return undefined;
  }

  /** Records the pod as the node now sees it (undefined: it is gone) and schedules the checkpoint. */
  private see(state: NodeState | undefined, key: string, pod: KObject | undefined): void {
    for (const s of state === undefined ? this.nodes.values() : [state]) {
      if (pod === undefined ? s.pods.delete(key) : (s.pods.set(key, checkpointPod(pod)), true))
        this.markDirty(s.reg.name);
    }
  }

  private async syncPod(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const online = this.online;
    const pod = online ? this.pods.indexer.get(key) : this.viewed(key);
    const state = pod === undefined ? undefined : this.mine(pod);
    const held = this.held.get(key);
    if (pod === undefined || state === undefined || (held !== undefined && held.uid !== pod.metadata.uid)) {
      // Gone (deleted, or confirmed by us), moved off our nodes, or replaced by a pod of the same name.
      this.release(key);
      await this.containers?.stop(key, true);
      if (pod === undefined || state === undefined) {
        this.see(undefined, key, undefined);
        return;
      }
    }
    const uid = pod.metadata.uid ?? '';
    const hostIPs = [state.reg.internalIP];
    let ips: readonly string[];
    if (isHostNetwork(pod)) ips = hostIPs;
    else {
      try {
        ips = state.pool.allocate(uid);
      } catch (err) {
        if (err instanceof NodeCidrError) {
          this.o.log.warn('no pod IP left on the node; waiting', { pod: key, node: state.reg.name });
          if (online) this.see(state, key, pod);
          return { requeueAfterMs: 5000 };
        }
        throw err;
      }
      this.held.set(key, { uid, node: state.reg.name });
    }
    const nowMs = this.now();
    const input = { pod, ips, hostIPs, nowMs, now: rfc3339(nowMs) };
    const planned = () => {
      const r = this.containers?.restarts(key, uid);
      return planPod(r === undefined ? input : { ...input, containers: r });
    };
    let plan = planned();
    if (isTerminating(pod)) await this.containers?.stop(key);
    // With --serve-pods the containers start (their listeners open) before the pod is reported running.
    else if (
      this.runs(pod, plan) &&
      (await this.containers!.start(key, pod, state.reg.name, ips, nowMs, input.now))
    )
      plan = planned();
    const backoff = this.containers?.backoffMs(key, uid, nowMs);
    if (plan.kind === 'delete') {
      // Offline the deletion cannot be confirmed: the pod stays, terminated, until the API answers.
      if (!online) return;
      try {
        await this.o.client.delete(PODS, pod.metadata.namespace ?? '', pod.metadata.name ?? '', {
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
        this.counters.podDeletes++;
      } catch (err) {
        // Gone already, or a new pod of the same name (the UID precondition): nothing of ours to delete.
        if (!isApiError(err, 404) && !isApiError(err, 409)) throw err;
      }
      return;
    }
    if (plan.kind === 'status' && !online) this.see(state, key, { ...pod, status: plan.status } as KObject);
    else if (plan.kind === 'status') {
      try {
        const written = await this.o.client.patch(
          PODS,
          pod.metadata.namespace ?? '',
          pod.metadata.name ?? '',
          'merge',
          { metadata: { resourceVersion: pod.metadata.resourceVersion }, status: plan.status },
          { sub: 'status' },
        );
        this.counters.podStatusWrites++;
        this.see(state, key, written);
      } catch (err) {
        // A newer pod is on its way through the watch (409), or the pod is gone (404): its event requeues.
        if (isApiError(err, 404)) return;
        if (!isApiError(err, 409)) throw err;
      }
    } else if (online) this.see(state, key, pod);
    const after = [plan.requeueAfterMs, backoff].filter((ms) => ms !== undefined);
    return after.length === 0 ? undefined : { requeueAfterMs: Math.min(...after) };
  }

  // ---- the checkpoint ----

  private markDirty(node: string): void {
    if (this.o.rootDir === undefined) return;
    this.dirty.add(node);
    this.scheduleFlush();
  }

  /** Changes that come together (a restart, a rollout) are written together, a moment later. */
  private scheduleFlush(): void {
    if (this.stopped || this.flushTimer !== undefined || this.flushing !== undefined) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        if (this.dirty.size > 0) this.scheduleFlush();
      });
    }, 50);
  }

  /**
   * Writes the checkpoint of every node that changed (atomically, a few files at a time, without
   * blocking the event loop; skipped when the text is the same). Changes made meanwhile wait for the
   * next round.
   */
  private async flush(): Promise<void> {
    const rootDir = this.o.rootDir;
    if (rootDir === undefined) return;
    const names = [...this.dirty];
    this.dirty.clear();
    await forEachLimit(names, 8, async (name) => {
      const state = this.nodes.get(name);
      if (state === undefined) return;
      const text = encodeCheckpoint({
        node: name,
        nodeUID: state.uid,
        podCIDRs: state.reg.podCIDRs,
        internalIP: state.reg.internalIP,
        poolCursors: state.pool.cursors,
        pods: [...state.pods.values()],
      });
      if (this.written.get(name) === text) return;
      try {
        await writeNodeFileAsync(rootDir, name, CHECKPOINT_FILE, text);
        this.written.set(name, text);
      } catch (err) {
        this.o.log.warn('cannot write the node checkpoint', { node: name, err: String(err) });
      }
    });
  }

  /** Whether the pod's containers run (or are about to be reported running) and are this process's to serve. */
  private runs(pod: KObject, plan: PodPlan): boolean {
    if (this.containers === undefined || isHostNetwork(pod)) return false;
    if (plan.kind === 'status') return plan.status.phase === 'Running';
    return plan.kind === 'wait' && (pod as { status?: { phase?: unknown } }).status?.phase === 'Running';
  }

  // ---- heartbeats ----

  private observeNode(n: KObject): void {
    const state = this.nodes.get(n.metadata.name ?? '');
    if (state === undefined) return;
    state.node = n;
    // The node lifecycle controller marked us Unknown (e.g. after a pause): report at once.
    const conds = (n as { status?: { conditions?: unknown } }).status?.conditions;
    if (nodeConditionsChanged(conds)) state.nextStatusMs = 0;
  }

  /**
   * Starts the heartbeats that are due, up to the concurrency limit. The walk resumes where the last one
   * stopped (round-robin), so under load every node gets its turn rather than the first ones in the
   * map; a finished heartbeat pumps again at once instead of waiting for the next tick. A status that
   * needs no write is settled here, without taking a slot.
   */
  private tick(): void {
    if (this.stopped) return;
    const now = this.now();
    const limit = this.o.heartbeatConcurrency ?? 64;
    const n = this.order.length;
    for (let k = 0; k < n && this.inFlight < limit; k++) {
      const state = this.order[this.cursor]!;
      this.cursor = (this.cursor + 1) % n;
      if (state.busy || state.lease === undefined) continue;
      let statusDue = now >= state.nextStatusMs;
      if (statusDue && !this.statusWriteDue(state, now)) {
        state.nextStatusMs = now + NODE_STATUS_UPDATE_MS;
        statusDue = false;
      }
      const leaseDue = now >= state.nextLeaseMs;
      if (!leaseDue && !statusDue) continue;
      state.busy = true;
      this.inFlight++;
      void this.heartbeat(state, leaseDue, statusDue).finally(() => {
        state.busy = false;
        this.inFlight--;
        this.tick();
      });
    }
  }

  /** The kubelet posts its status when its conditions differ from the stored ones, or every 5 min. */
  private statusWriteDue(state: NodeState, now: number): boolean {
    const conds = (state.node as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
    return (
      state.node === undefined ||
      nodeConditionsChanged(conds) ||
      now - state.lastReportMs >= NODE_STATUS_REPORT_MS
    );
  }

  private async heartbeat(state: NodeState, leaseDue: boolean, statusDue: boolean): Promise<void> {
    const name = state.reg.name;
    if (statusDue) {
      const now = this.now();
      state.nextStatusMs = now + NODE_STATUS_UPDATE_MS;
      const conds = (state.node as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
      try {
        state.node = await this.o.client.patch(
          NODES,
          '',
          name,
          'merge',
          { status: { conditions: nodeConditions(now, conds) } },
          { sub: 'status' },
        );
        state.lastReportMs = now;
        this.counters.statusWrites++;
      } catch (err) {
        state.nextStatusMs = now + 1000;
        this.o.log.warn('node status update failed', { node: name, err: String(err) });
      }
    }
    if (leaseDue) {
      const now = this.now();
      try {
        await this.renewLease(state, now);
        state.nextLeaseMs = now + LEASE_RENEW_INTERVAL_MS;
        this.counters.leaseWrites++;
      } catch (err) {
        // The lease controller retries at once with a short backoff.
        state.nextLeaseMs = now + 1000;
        this.o.log.warn('lease renewal failed', { node: name, err: String(err) });
      }
    }
  }

  /** A plain Update of the Lease with our last copy's resourceVersion; a conflict re-reads, a 404 recreates. */
  private async renewLease(state: NodeState, now: number): Promise<void> {
    const { client } = this.o;
    const name = state.reg.name;
    const renewed = (l: KObject): KObject =>
      ({
        ...l,
        spec: {
          ...(l as { spec?: object }).spec,
          holderIdentity: name,
          leaseDurationSeconds: 40,
          renewTime: microTime(now),
        },
      }) as KObject;
    try {
      state.lease = await client.update(LEASES, renewed(state.lease!));
    } catch (err) {
      if (isApiError(err, 409)) {
        const fresh = await client.get(LEASES, NODE_LEASE_NAMESPACE, name);
        state.lease = await client.update(LEASES, renewed(fresh));
      } else if (isApiError(err, 404)) {
        const { resourceVersion: _rv, uid: _uid, ...meta } = state.lease!.metadata;
        state.lease = await client.create(
          LEASES,
          NODE_LEASE_NAMESPACE,
          renewed({ ...state.lease!, metadata: meta } as KObject),
        );
      } else throw err;
    }
  }
}
