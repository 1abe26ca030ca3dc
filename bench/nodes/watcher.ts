// The watcher process (this file, forked with SVCPLANE_NODES_BENCH_ROLE=watcher): the benchmark's pods,
// Deployments and the Leases in kube-node-lease, each event stamped with its arrival time.
import { fileURLToPath } from 'node:url';
import { type Conn } from '../lib/http.js';
import { serveWorker } from '../lib/process.js';
import { Watch } from '../lib/watch.js';
import { NAMESPACE, BENCH_LABEL } from './shape.js';

export const WORKER_MODULE = fileURLToPath(import.meta.url);
export const ROLE_ENV = 'SVCPLANE_NODES_BENCH_ROLE';

interface PodRecord {
  addedAt: number;
  boundAt?: number;
  node?: string;
  readyAt?: number;
  rebinds: number;
}

export type WatcherRequest =
  | { op: 'start'; conn: Conn; deployments: number; replicas: number }
  | { op: 'status' }
  | { op: 'report' }
  | { op: 'stop' };

export interface WatcherStatus {
  pods: number;
  bound: number;
  ready: number;
  deploymentsReady: number;
  deleted: number;
  rebinds: number;
  leaseWrites: number;
  errors: number;
  lastError?: string;
  relists: number;
}

export interface WatcherReport extends WatcherStatus {
  addedAt: number[];
  boundAt: number[];
  readyAt: number[];
  /** Per pod (bound ones): binding time − creation time (ms, both at the watcher). */
  bindLatencyMs: number[];
  lastDeploymentReadyAt: number | null;
  leaseWriteTimes: number[];
}

const isReady = (obj: Record<string, unknown>): boolean => {
  const conds = (obj['status'] as { conditions?: Array<{ type?: string; status?: string }> } | undefined)
    ?.conditions;
  return conds?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
};

function watcherMain(): void {
  let watches: Watch[] = [];
  const pods = new Map<string, PodRecord>();
  const deploymentsReady = new Map<string, number>();
  const leaseWriteTimes: number[] = [];
  let replicas = 0;
  let deleted = 0;
  let errors = 0;
  let lastError: string | undefined;
  const onError = (err: Error): void => {
    errors++;
    lastError = err.message.slice(0, 300);
  };
  const status = (): WatcherStatus => {
    let bound = 0;
    let ready = 0;
    let rebinds = 0;
    for (const p of pods.values()) {
      if (p.boundAt !== undefined) bound++;
      if (p.readyAt !== undefined) ready++;
      rebinds += p.rebinds;
    }
    let dReady = 0;
    for (const r of deploymentsReady.values()) if (r >= replicas) dReady++;
    return {
      pods: pods.size,
      bound,
      ready,
      deploymentsReady: dReady,
      deleted,
      rebinds,
      leaseWrites: leaseWriteTimes.length,
      errors,
      relists: watches.reduce((n, w) => n + w.stats.relists, 0),
      ...(lastError === undefined ? {} : { lastError }),
    };
  };
  let lastDeploymentReadyAt: number | null = null;
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        replicas = msg.replicas;
        const wantDeployments = msg.deployments;
        watches = [
          new Watch(
            msg.conn,
            `/api/v1/namespaces/${NAMESPACE}/pods`,
            (ev, t) => {
              const name = ev.object.metadata?.name ?? '';
              if (ev.type === 'DELETED') {
                deleted++;
                return;
              }
              let p = pods.get(name);
              if (p === undefined) pods.set(name, (p = { addedAt: t, rebinds: 0 }));
              const node = (ev.object['spec'] as { nodeName?: string } | undefined)?.nodeName;
              if (node !== undefined && node !== '') {
                if (p.node === undefined) {
                  p.node = node;
                  p.boundAt = t;
                } else if (p.node !== node) p.rebinds++;
              }
              if (p.readyAt === undefined && isReady(ev.object)) p.readyAt = t;
            },
            { labelSelector: `${BENCH_LABEL}=nodes` },
            onError,
          ),
          new Watch(
            msg.conn,
            `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
            (ev, t) => {
              const name = ev.object.metadata?.name ?? '';
              const r = (ev.object['status'] as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0;
              deploymentsReady.set(name, r);
              if (lastDeploymentReadyAt === null && status().deploymentsReady === wantDeployments)
                lastDeploymentReadyAt = t;
            },
            {},
            onError,
          ),
          new Watch(
            msg.conn,
            '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
            (ev, t) => {
              if (ev.type === 'MODIFIED') leaseWriteTimes.push(t);
            },
            {},
            onError,
          ),
        ];
        await Promise.all(watches.map((w) => w.connected()));
        return process.pid;
      }
      case 'status':
        return status();
      case 'report': {
        const recs = [...pods.values()];
        const out: WatcherReport = {
          ...status(),
          addedAt: recs.map((p) => p.addedAt),
          boundAt: recs.flatMap((p) => (p.boundAt === undefined ? [] : [p.boundAt])),
          readyAt: recs.flatMap((p) => (p.readyAt === undefined ? [] : [p.readyAt])),
          bindLatencyMs: recs.flatMap((p) => (p.boundAt === undefined ? [] : [p.boundAt - p.addedAt])),
          lastDeploymentReadyAt,
          leaseWriteTimes: [...leaseWriteTimes],
        };
        return out;
      }
      case 'stop':
        for (const w of watches) w.stop();
        watches = [];
        return null;
    }
  });
}

if (process.env[ROLE_ENV] === 'watcher') watcherMain();
