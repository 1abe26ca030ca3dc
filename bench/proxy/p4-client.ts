// P4's client process, inside the network namespace: sends the readiness flips and watches the slices upstream.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { agentFor, epochMs, request, type Conn } from '../lib/http.js';
import { namespaceOf, podName, type ClusterShape } from '../lib/preload.js';
import { serveWorker, sleep } from '../lib/process.js';
import { Watch, type WatchEventLine } from '../lib/watch.js';
import { SLICES_PATH, SERVICE_NAME_LABEL } from './shape.js';
import { statusPatch } from '../lib/pod-status.js';

export type ClientRequest =
  | { op: 'init'; conn: Conn; shape: ClusterShape }
  | { op: 'converged'; timeoutS: number }
  | { op: 'wrapperSynced'; conn: Conn; atLeast: number; timeoutS: number }
  | { op: 'flip'; s: number; r: number; ready: boolean }
  | { op: 'sliceSeen'; pod: string; ready: boolean; after: number; timeoutMs: number }
  | { op: 'stop' };

export interface FlipSent {
  sentAt: number;
  acceptedAt: number;
  status: number;
  error?: string;
}

/**
 * The client inside the node's namespace: it watches every EndpointSlice upstream (ready endpoints per
 * Service; each pod's readiness as the slices show it, with the time the event arrived), waits for the
 * wrapper to sync, and sends the flips.
 */
export function clientMain(): void {
  let conn: Conn | undefined;
  let shape: ClusterShape | undefined;
  let agent: https.Agent | undefined;
  let watch: Watch | undefined;
  const slices = new Map<string, { svc: string; ready: number }>();
  const readyBySvc = new Map<string, number>();
  let convergedServices = 0;
  const podState = new Map<string, { ready: boolean; t: number }>();
  const errors: string[] = [];

  const onSlice = (ev: WatchEventLine, t: number): void => {
    const o = ev.object as {
      metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
      endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { kind?: string; name?: string } }>;
    };
    const ns = o.metadata?.namespace ?? '';
    const key = `${ns}/${o.metadata?.name ?? ''}`;
    const svcName = o.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (svcName === undefined) return;
    const svc = `${ns}/${svcName}`;
    const eps = ev.type === 'DELETED' ? [] : (o.endpoints ?? []);
    const ready = eps.filter((e) => e.conditions?.ready === true).length;
    const before = slices.get(key);
    const total0 = readyBySvc.get(svc) ?? 0;
    const total1 = total0 - (before?.ready ?? 0) + ready;
    readyBySvc.set(svc, total1);
    if (ev.type === 'DELETED') slices.delete(key);
    else slices.set(key, { svc, ready });
    const want = shape!.podsPerService;
    if (total0 === want && total1 !== want) convergedServices--;
    if (total0 !== want && total1 === want) convergedServices++;
    for (const e of eps) {
      if (e.targetRef?.kind !== 'Pod' || e.targetRef.name === undefined) continue;
      const pod = `${ns}/${e.targetRef.name}`;
      const r = e.conditions?.ready === true;
      const known = podState.get(pod);
      if (known === undefined || known.ready !== r) podState.set(pod, { ready: r, t });
    }
  };

  serveWorker<ClientRequest>(async (msg) => {
    switch (msg.op) {
      case 'init':
        conn = msg.conn;
        shape = msg.shape;
        agent = agentFor(conn, 4);
        watch = new Watch(conn, SLICES_PATH, onSlice, {}, (err) => {
          if (errors.length < 5) errors.push(err.message);
        });
        await watch.connected();
        return process.pid;
      case 'converged': {
        const t0 = performance.now();
        let lastLog = t0;
        while (convergedServices < shape!.services) {
          if (performance.now() - t0 > msg.timeoutS * 1000)
            throw new Error(
              `slices not converged after ${msg.timeoutS} s: ${convergedServices}/${shape!.services} ` +
                `Services with ${shape!.podsPerService} ready endpoints; ${errors.join('; ')}`,
            );
          if (performance.now() - lastLog > 30_000) {
            lastLog = performance.now();
            process.stdout.write(
              `  (slices: ${convergedServices}/${shape!.services} Services with every endpoint ready)\n`,
            );
          }
          await sleep(100);
        }
        return { seconds: (performance.now() - t0) / 1000, slices: slices.size };
      }
      case 'wrapperSynced': {
        const wAgent = agentFor(msg.conn, 2);
        try {
          const t0 = performance.now();
          let last = -1;
          let stable = 0;
          for (;;) {
            if (performance.now() - t0 > msg.timeoutS * 1000)
              throw new Error(`the wrapper did not sync in ${msg.timeoutS} s (served writes ${last})`);
            const ready = (await request(wAgent, msg.conn, 'GET', '/readyz')).status === 200;
            const m = await request(wAgent, msg.conn, 'GET', '/metrics', {
              accept: 'text/plain',
              keepText: true,
            });
            const puts = Number(
              /^svcplane_wrapper_served_writes_total\{op="put"\} (\S+)$/m.exec(m.text ?? '')?.[1] ?? 0,
            );
            if (ready && puts >= msg.atLeast && puts === last) stable++;
            else stable = 0;
            last = puts;
            if (stable >= 2) return { seconds: (performance.now() - t0) / 1000, servedWrites: puts };
            await sleep(500);
          }
        } finally {
          wAgent.destroy();
        }
      }
      case 'flip': {
        const ns = namespaceOf(shape!, msg.s);
        const out: FlipSent = { sentAt: epochMs(), acceptedAt: 0, status: 0 };
        const res = await request(
          agent!,
          conn!,
          'PATCH',
          `/api/v1/namespaces/${ns}/pods/${podName(msg.s, msg.r)}/status`,
          {
            body: statusPatch(msg.ready),
            contentType: 'application/strategic-merge-patch+json',
            keepText: true,
          },
        );
        out.acceptedAt = epochMs();
        out.status = res.status;
        if (res.status !== 200) out.error = (res.text ?? '').slice(0, 300);
        return out;
      }
      case 'sliceSeen': {
        const deadline = performance.now() + msg.timeoutMs;
        for (;;) {
          const s = podState.get(msg.pod);
          if (s !== undefined && s.ready === msg.ready && s.t >= msg.after) return s.t;
          if (performance.now() > deadline) return NaN;
          await sleep(2);
        }
      }
      case 'stop':
        watch?.stop();
        agent?.destroy();
        return { errors, relists: watch?.stats.relists ?? 0 };
    }
  });
}
