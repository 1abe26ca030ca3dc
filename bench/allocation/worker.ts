// The client worker: this file, forked with SVCPLANE_ALLOCATION_BENCH_WORKER=1, serves the orchestrator's
// requests (parallel Service creates and deletes over HTTPS keep-alive connections).
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { agentFor, epochMs, request, type Conn } from '../lib/http.js';
import { serveWorker } from '../lib/process.js';

export const WORKER_MODULE = fileURLToPath(import.meta.url);
export const WORKER_ENV = 'SVCPLANE_ALLOCATION_BENCH_WORKER';

type ServiceType = 'NodePort' | 'ClusterIP';

export type WorkerRequest =
  | { op: 'begin'; conn: Conn; clients: number }
  | {
      op: 'create';
      namespace: string;
      prefix: string;
      from: number;
      to: number;
      type: ServiceType;
      clients: number;
    }
  | { op: 'delete'; namespace: string; prefix: string; from: number; to: number; clients: number }
  | { op: 'post'; path: string; body: string }
  | { op: 'end' };

export interface CreateReply {
  t0: number;
  t1: number;
  latencies: Float64Array;
  errors: number;
  firstError?: string;
  /** spec.clusterIP and spec.ports[0].nodePort of each created Service ('' and 0 when missing). */
  clusterIPs: string[];
  nodePorts: number[];
  clientCpuMs: number;
}
export interface DeleteReply {
  errors: number;
  firstError?: string;
}
export interface PostReply {
  status: number;
  text: string;
}

function serviceBody(namespace: string, name: string, i: number, type: ServiceType): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels: { app: `app-${i % 50}`, tier: 'frontend' } },
    spec: {
      type,
      selector: { app: `app-${i % 50}` },
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  });
}

/** `clients` loops share indices from..to-1 and call `op` for each, on one keep-alive connection each. */
async function inParallel(
  from: number,
  to: number,
  clients: number,
  op: (i: number) => Promise<void>,
): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < to; i = next++) await op(i);
    }),
  );
}

async function workerMain(): Promise<void> {
  let session: { conn: Conn; agent: https.Agent } | undefined;
  const current = (): { conn: Conn; agent: https.Agent } => {
    if (session === undefined) throw new Error('no session: begin first');
    return session;
  };
  const handle = async (msg: WorkerRequest): Promise<unknown> => {
    switch (msg.op) {
      case 'begin': {
        session?.agent.destroy();
        const agent = agentFor(msg.conn, msg.clients);
        session = { conn: msg.conn, agent };
        // Opens every connection (TLS handshake) now, so no timed request pays for one.
        const got = await Promise.all(
          Array.from({ length: msg.clients }, () => request(agent, msg.conn, 'GET', '/version')),
        );
        if (got.some((r) => r.status !== 200)) throw new Error(`GET /version: ${got.map((r) => r.status)}`);
        return got.length;
      }
      case 'create': {
        const { conn, agent } = current();
        const n = msg.to - msg.from;
        const latencies = new Float64Array(n);
        const clusterIPs: string[] = new Array<string>(n).fill('');
        const nodePorts: number[] = new Array<number>(n).fill(0);
        let errors = 0;
        let firstError: string | undefined;
        const p = `/api/v1/namespaces/${msg.namespace}/services`;
        const cpu0 = process.cpuUsage();
        const t0 = epochMs();
        await inParallel(msg.from, msg.to, msg.clients, async (i) => {
          const k = i - msg.from;
          const body = serviceBody(msg.namespace, `${msg.prefix}${i}`, i, msg.type);
          const s = performance.now();
          try {
            const res = await request(agent, conn, 'POST', p, { body, keepText: true });
            latencies[k] = performance.now() - s;
            if (res.status !== 201) {
              errors++;
              firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
              return;
            }
            const spec = (
              JSON.parse(res.text ?? '{}') as {
                spec?: { clusterIP?: string; ports?: Array<{ nodePort?: number }> };
              }
            ).spec;
            clusterIPs[k] = spec?.clusterIP ?? '';
            nodePorts[k] = spec?.ports?.[0]?.nodePort ?? 0;
          } catch (err) {
            latencies[k] = performance.now() - s;
            errors++;
            firstError ??= String(err);
          }
        });
        const t1 = epochMs();
        const cpu = process.cpuUsage(cpu0);
        return {
          t0,
          t1,
          latencies,
          errors,
          ...(firstError === undefined ? {} : { firstError }),
          clusterIPs,
          nodePorts,
          clientCpuMs: (cpu.user + cpu.system) / 1000,
        } satisfies CreateReply;
      }
      case 'delete': {
        const { conn, agent } = current();
        let errors = 0;
        let firstError: string | undefined;
        await inParallel(msg.from, msg.to, msg.clients, async (i) => {
          const p = `/api/v1/namespaces/${msg.namespace}/services/${msg.prefix}${i}`;
          try {
            const res = await request(agent, conn, 'DELETE', p, { keepText: true });
            if (res.status !== 200 && res.status !== 202) {
              errors++;
              firstError ??= `${res.status} ${res.text?.slice(0, 300) ?? ''}`;
            }
          } catch (err) {
            errors++;
            firstError ??= String(err);
          }
        });
        return { errors, ...(firstError === undefined ? {} : { firstError }) } satisfies DeleteReply;
      }
      case 'post': {
        const { conn, agent } = current();
        const res = await request(agent, conn, 'POST', msg.path, { body: msg.body, keepText: true });
        return { status: res.status, text: res.text ?? '' } satisfies PostReply;
      }
      case 'end':
        session?.agent.destroy();
        session = undefined;
        return null;
    }
  };
  serveWorker(handle);
}

if (process.env[WORKER_ENV] === '1') void workerMain();
