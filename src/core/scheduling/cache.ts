// The scheduler's cache (kube-scheduler's internal/cache): the nodes as NodeInfos and the pods counted
// on them. A pod the scheduler has chosen a node for is "assumed" onto that node at once, before the
// binding is written and long before the informer shows it bound, so the next cycles already see the
// node's capacity taken. The informer's bound pod confirms the assumption; a failed binding forgets it.
// Pods bound to a node the cache does not know yet are kept and counted when the node appears.
import { NodeInfo } from './node-info.js';
import { isTerminal, podInfoOf, type PodInfo } from './pod-info.js';
import type { SchedNode, SchedPod } from './types.js';

interface PodState {
  info: PodInfo;
  node: string;
  assumed: boolean;
}

/** What in a node matters to scheduling; heartbeats change none of it. */
function nodeSignature(node: SchedNode): string {
  const ready = (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return JSON.stringify([
    node.metadata.labels ?? {},
    node.spec?.taints ?? [],
    node.spec?.unschedulable === true,
    ready,
    node.status?.allocatable ?? {},
  ]);
}

export class SchedulerCache {
  private readonly nodes = new Map<string, { info: NodeInfo; signature: string }>();
  private order: NodeInfo[] = [];
  private readonly pods = new Map<string, PodState>();
  private readonly podsByNode = new Map<string, Set<string>>();
  private readonly zoneOwners = new Map<string, Map<string, number>>();

  /** The nodes, in a stable order (the order they were added). */
  nodeList(): readonly NodeInfo[] {
    return this.order;
  }

  get nodeCount(): number {
    return this.order.length;
  }

  node(name: string): NodeInfo | undefined {
    return this.nodes.get(name)?.info;
  }

  readonly zoneOwnerCount = (zone: string, ownerUid: string): number =>
    this.zoneOwners.get(zone)?.get(ownerUid) ?? 0;

  /**
   * Adds or updates a node. Returns whether anything scheduling reads changed (labels, taints,
   * unschedulable, readiness, allocatable): only then can a pod that did not fit fit now.
   */
  setNode(node: SchedNode): boolean {
    const name = node.metadata.name ?? '';
    const signature = nodeSignature(node);
    const old = this.nodes.get(name);
    if (old !== undefined && old.signature === signature) return false;
    const info = new NodeInfo(node);
    if (old !== undefined) {
      this.zoneAccount(old.info.zone, old.info.ownerCounts, -1);
      info.inherit(old.info);
      this.order[this.order.indexOf(old.info)] = info;
    } else {
      for (const key of this.podsByNode.get(name) ?? []) info.account(this.pods.get(key)!.info, 1);
      this.order.push(info);
    }
    this.zoneAccount(info.zone, info.ownerCounts, 1);
    this.nodes.set(name, { info, signature });
    return true;
  }

  removeNode(name: string): void {
    const old = this.nodes.get(name);
    if (old === undefined) return;
    this.zoneAccount(old.info.zone, old.info.ownerCounts, -1);
    this.nodes.delete(name);
    this.order = this.order.filter((n) => n !== old.info);
    // Its pods stay known: they count again if the node comes back (the pod GC removes them otherwise).
  }

  private zoneAccount(zone: string | undefined, owners: ReadonlyMap<string, number>, sign: 1 | -1): void {
    if (zone === undefined || owners.size === 0) return;
    let m = this.zoneOwners.get(zone);
    if (m === undefined) this.zoneOwners.set(zone, (m = new Map()));
    for (const [uid, n] of owners) {
      const v = (m.get(uid) ?? 0) + sign * n;
      if (v <= 0) m.delete(uid);
      else m.set(uid, v);
    }
    if (m.size === 0) this.zoneOwners.delete(zone);
  }

  private place(key: string, state: PodState): void {
    this.pods.set(key, state);
    let set = this.podsByNode.get(state.node);
    if (set === undefined) this.podsByNode.set(state.node, (set = new Set()));
    set.add(key);
    this.count(state, 1);
  }

  private unplace(key: string): PodState | undefined {
    const state = this.pods.get(key);
    if (state === undefined) return undefined;
    this.pods.delete(key);
    const set = this.podsByNode.get(state.node);
    set?.delete(key);
    if (set?.size === 0) this.podsByNode.delete(state.node);
    this.count(state, -1);
    return state;
  }

  private count(state: PodState, sign: 1 | -1): void {
    const node = this.nodes.get(state.node)?.info;
    if (node === undefined) return;
    node.account(state.info, sign);
    const owner = state.info.ownerUid;
    if (node.zone !== undefined && owner !== undefined)
      this.zoneAccount(node.zone, new Map([[owner, 1]]), sign);
  }

  /** Counts a pod on the node chosen for it, before its binding is written. */
  assume(info: PodInfo, nodeName: string): void {
    this.unplace(info.key);
    this.place(info.key, { info, node: nodeName, assumed: true });
  }

  /** The binding failed: the assumed pod no longer counts. */
  forget(key: string): void {
    if (this.pods.get(key)?.assumed === true) this.unplace(key);
  }

  isAssumed(key: string): boolean {
    return this.pods.get(key)?.assumed === true;
  }

  /** Where the cache counts the pod, if anywhere. */
  nodeOf(key: string): string | undefined {
    return this.pods.get(key)?.node;
  }

  /**
   * A pod as the informer shows it. A bound, non-terminal pod is counted on its node (confirming an
   * assumption); a terminal one is no longer counted; an unbound one leaves an assumption alone (the
   * informer has not caught up with the binding yet). Returns true when capacity was freed on a node.
   */
  setPod(pod: SchedPod): boolean {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
    const nodeName = pod.spec?.nodeName ?? '';
    const current = this.pods.get(key);
    if (nodeName === '') {
      if (current !== undefined && !current.assumed) this.unplace(key);
      return false;
    }
    if (isTerminal(pod)) return this.unplace(key) !== undefined;
    if (current !== undefined && current.node === nodeName && current.info.uid === (pod.metadata.uid ?? '')) {
      current.assumed = false;
      return false;
    }
    const freed = current !== undefined && !current.assumed;
    this.unplace(key);
    this.place(key, { info: podInfoOf(pod), node: nodeName, assumed: false });
    return freed;
  }

  /** The pod is gone. Returns true when it was counted on a node. */
  removePod(key: string): boolean {
    return this.unplace(key) !== undefined;
  }
}
