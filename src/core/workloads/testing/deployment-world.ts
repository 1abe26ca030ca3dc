// A small in-memory world for Deployment tests: it applies a sync plan as the API server would, plays
// the ReplicaSet controller (pods follow spec at once, unavailable ones deleted first) and lets pods
// become available one at a time.
import { formatTime, type Deployment, type ReplicaSet } from '../deployment-util.js';
import { planDeploymentSync, type DeploymentSyncPlan } from '../deployment-sync.js';

export interface DeploymentOptions {
  readonly name?: string;
  readonly replicas?: number;
  readonly image?: string;
  readonly strategy?: 'RollingUpdate' | 'Recreate';
  readonly maxSurge?: number | string;
  readonly maxUnavailable?: number | string;
  readonly revisionHistoryLimit?: number;
  readonly progressDeadlineSeconds?: number | null;
  readonly paused?: boolean;
  readonly annotations?: Record<string, string>;
}

/** A Deployment as the API server stores it (defaulted), labelled app=<name>. */
export function deployment(o: DeploymentOptions = {}): Deployment {
  const name = o.name ?? 'web';
  const strategy = o.strategy ?? 'RollingUpdate';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: formatTime(0),
      ...(o.annotations === undefined ? {} : { annotations: { ...o.annotations } }),
    },
    spec: {
      replicas: o.replicas ?? 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: o.image ?? 'nginx:1' }] },
      },
      strategy:
        strategy === 'Recreate'
          ? { type: 'Recreate' }
          : {
              type: 'RollingUpdate',
              rollingUpdate: { maxSurge: o.maxSurge ?? '25%', maxUnavailable: o.maxUnavailable ?? '25%' },
            },
      revisionHistoryLimit: o.revisionHistoryLimit ?? 10,
      ...(o.progressDeadlineSeconds === null
        ? {}
        : { progressDeadlineSeconds: o.progressDeadlineSeconds ?? 600 }),
      ...(o.paused === undefined ? {} : { paused: o.paused }),
    },
  };
}

interface Pods {
  available: number;
  unavailable: number;
}

export class World {
  d: Deployment;
  readonly rss = new Map<string, ReplicaSet>();
  readonly pods = new Map<string, Pods>();
  nowMs = 10_000;
  private uid = 0;
  readonly events: string[] = [];

  constructor(d: Deployment) {
    this.d = structuredClone(d);
  }

  replicaSets(): ReplicaSet[] {
    return [...this.rss.values()];
  }

  /** One Deployment sync, applied. */
  sync(): DeploymentSyncPlan {
    this.nowMs += 1000;
    const plan = planDeploymentSync({
      deployment: this.d,
      replicaSets: this.replicaSets(),
      pods: this.podPhases(),
      nowMs: this.nowMs,
    });
    for (const w of plan.writes) {
      const rs = structuredClone(w.replicaSet);
      const name = rs.metadata.name!;
      if (w.op === 'create') {
        if (this.rss.has(name)) throw new Error(`create of existing ${name}`);
        rs.metadata.uid = `rs-${++this.uid}`;
        rs.metadata.creationTimestamp = formatTime(this.nowMs);
        rs.metadata.generation = 1;
        rs.status = {};
        this.pods.set(name, { available: 0, unavailable: 0 });
      } else {
        const old = this.rss.get(name)!;
        if (JSON.stringify(old.spec) !== JSON.stringify(rs.spec))
          rs.metadata.generation = (old.metadata.generation ?? 1) + 1;
        rs.status = old.status!;
      }
      this.rss.set(name, rs);
      for (const e of w.events) this.events.push(e.message);
    }
    for (const rs of plan.deletes) {
      this.rss.delete(rs.metadata.name!);
      this.pods.delete(rs.metadata.name!);
    }
    if (plan.deployment !== undefined) {
      this.d.status = structuredClone(plan.deployment.status!);
      this.d.metadata.annotations = structuredClone(plan.deployment.metadata.annotations ?? {});
    }
    this.reconcileReplicaSets();
    return plan;
  }

  private podPhases(): { ownerUid: string; phase: string }[] {
    const out: { ownerUid: string; phase: string }[] = [];
    for (const [name, p] of this.pods) {
      const uid = this.rss.get(name)?.metadata.uid ?? '';
      for (let i = 0; i < p.available + p.unavailable; i++) out.push({ ownerUid: uid, phase: 'Running' });
    }
    return out;
  }

  /** The ReplicaSet controller, everywhere at once: pods follow spec, unavailable ones go first. */
  reconcileReplicaSets(): void {
    for (const [name, rs] of this.rss) {
      const p = this.pods.get(name)!;
      const want = rs.spec.replicas ?? 1;
      let excess = p.available + p.unavailable - want;
      if (excess > 0) {
        const u = Math.min(excess, p.unavailable);
        p.unavailable -= u;
        excess -= u;
        p.available -= excess;
      } else if (excess < 0) p.unavailable += -excess;
      this.writeStatus(rs);
    }
  }

  private writeStatus(rs: ReplicaSet): void {
    const p = this.pods.get(rs.metadata.name!)!;
    rs.status = {
      replicas: p.available + p.unavailable,
      readyReplicas: p.available,
      availableReplicas: p.available,
      observedGeneration: rs.metadata.generation ?? 1,
    };
  }

  /** The RS names with pods not yet available. */
  pending(): string[] {
    return [...this.pods].filter(([, p]) => p.unavailable > 0).map(([n]) => n);
  }

  /** One pod of `name` becomes available. */
  becomeAvailable(name: string): void {
    const p = this.pods.get(name)!;
    if (p.unavailable === 0) return;
    p.unavailable--;
    p.available++;
    this.writeStatus(this.rss.get(name)!);
  }

  allAvailable(): void {
    for (const name of this.pending())
      while (this.pods.get(name)!.unavailable > 0) this.becomeAvailable(name);
  }

  totalPods(): number {
    let n = 0;
    for (const p of this.pods.values()) n += p.available + p.unavailable;
    return n;
  }

  availablePods(): number {
    let n = 0;
    for (const p of this.pods.values()) n += p.available;
    return n;
  }

  /** A spec change as the API server makes it: generation bumps. */
  edit(f: (d: Deployment) => void): void {
    f(this.d);
    this.d.metadata.generation = (this.d.metadata.generation ?? 1) + 1;
  }

  /** Syncs and makes everything available until nothing changes (at most `limit` rounds). */
  settle(limit = 200): void {
    for (let i = 0; i < limit; i++) {
      const plan = this.sync();
      const before = this.pending().length;
      this.allAvailable();
      if (
        plan.writes.length === 0 &&
        plan.deletes.length === 0 &&
        plan.deployment === undefined &&
        before === 0
      )
        return;
    }
    throw new Error('did not settle');
  }
}
