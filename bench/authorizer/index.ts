// `npm run bench -- authorizer`: what RBAC costs per request. Two `svcplane up` servers in the same run,
// one with --authorization-mode RBAC holding 1,000 RoleBindings (one of which grants the benchmark's
// user, not in system:masters, `get` on Services in its namespace), one with AlwaysAllow; the same GETs
// of one Service go to each, in interleaved rounds. The figure is RBAC's cost per request as a ratio to
// AlwaysAllow's: server CPU per request (and the client's median latency), medians over the rounds.
// Both servers hold the same objects. Goal: ≤ 1.1. Method and latest figures: docs/benchmarks.md (authorizer).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatTokenFileRecord } from '../../src/apiserver/auth/token-file.js';
import { agentFor, request, type Conn } from '../lib/http.js';
import { cpuSeconds, startServer, stopServer, type Server } from '../lib/process.js';
import { median, round, tableRow, type BenchContext, type BenchResult } from '../run.js';

const FULL = { bindings: 1_000, namespaces: 100, rounds: 9, requestsPerRound: 4_000, concurrency: 8 };
const QUICK = { bindings: 100, namespaces: 10, rounds: 2, requestsPerRound: 1_000, concurrency: 4 };
type Shape = typeof FULL;

const ADMIN_TOKEN = 'bench-admin-0123456789abcdef0123';
const USER_TOKEN = 'bench-user-0123456789abcdef01234';
const TARGET_NS = 'bench-authz-target';
const G = 'rbac.authorization.k8s.io';

type Subject = 'rbac' | 'alwaysAllow';

const dataDirs: string[] = [];

async function start(mode: string): Promise<Server> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `svcplane-bench-authz-${mode}-`));
  dataDirs.push(dataDir);
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  const admin = formatTokenFileRecord(ADMIN_TOKEN, {
    name: 'admin',
    uid: 'admin',
    groups: ['system:masters'],
  });
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), `${admin}\n`, { mode: 0o600 });
  const tokens = path.join(dataDir, 'tokens.csv');
  const user = formatTokenFileRecord(USER_TOKEN, {
    name: 'bench-user',
    uid: 'bench-user',
    groups: ['bench'],
  });
  writeFileSync(tokens, `${admin}\n${user}\n`, { mode: 0o600 });
  return startServer(dataDir, ['--authorization-mode', mode, '--token-auth-file', tokens]);
}

async function must(
  agent: https.Agent,
  conn: Conn,
  method: string,
  p: string,
  body?: unknown,
): Promise<void> {
  const r = await request(agent, conn, method, p, {
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    keepText: true,
  });
  if (r.status >= 300 && r.status !== 409) throw new Error(`${method} ${p}: ${r.status} ${r.text ?? ''}`);
}

/** The policy: a ClusterRole, then `bindings` RoleBindings over `namespaces`, one of them the user's. */
async function loadPolicy(server: Server, z: Shape, log: (l: string) => void): Promise<void> {
  const agent = agentFor(server.conn, 16);
  const t0 = performance.now();
  const namespaces = [TARGET_NS, ...Array.from({ length: z.namespaces }, (_, k) => `bench-authz-${k}`)];
  for (const name of namespaces)
    await must(agent, server.conn, 'POST', '/api/v1/namespaces', { metadata: { name } });
  await must(agent, server.conn, 'POST', `/apis/${G}/v1/clusterroles`, {
    metadata: { name: 'bench-service-reader' },
    rules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['services'] }],
  });
  const binding = (ns: string, name: string, subject: string): unknown => ({
    metadata: { name, namespace: ns },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'bench-service-reader' },
    subjects: [{ kind: 'User', apiGroup: G, name: subject }],
  });
  const jobs: [string, unknown][] = [];
  for (let i = 0; i < z.bindings - 1; i++) {
    const ns = namespaces[1 + (i % z.namespaces)]!;
    jobs.push([ns, binding(ns, `other-${i}`, `someone-${i}`)]);
  }
  jobs.splice(jobs.length >> 1, 0, [TARGET_NS, binding(TARGET_NS, 'bench-user-reads', 'bench-user')]);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let j = next++; j < jobs.length; j = next++) {
        const [ns, body] = jobs[j]!;
        await must(agent, server.conn, 'POST', `/apis/${G}/v1/namespaces/${ns}/rolebindings`, body);
      }
    }),
  );
  log(`${jobs.length} RoleBindings in ${Math.round(performance.now() - t0)} ms`);
  agent.destroy();
}

/** `n` GETs of one Service as the user, `concurrency` at a time: server CPU-µs and client ms per request. */
async function round1(server: Server, z: Shape): Promise<{ cpuUsPerReq: number; latencyP50Ms: number }> {
  const conn = { ...server.conn, token: USER_TOKEN };
  const agent = agentFor(conn, z.concurrency);
  const p = `/api/v1/namespaces/${TARGET_NS}/services/bench-svc`;
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = cpuSeconds(server.pid);
  await Promise.all(
    Array.from({ length: z.concurrency }, async () => {
      while (next++ < z.requestsPerRound) {
        const t = performance.now();
        const r = await request(agent, conn, 'GET', p);
        latencies.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`GET ${p} as bench-user: ${r.status}`);
      }
    }),
  );
  const cpuUsPerReq = ((cpuSeconds(server.pid) - cpu0) * 1e6) / z.requestsPerRound;
  agent.destroy();
  return { cpuUsPerReq, latencyP50Ms: median(latencies) };
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const loadAtStart = loadavg();
  const servers: Partial<Record<Subject, Server>> = {};
  try {
    servers.rbac = await start('RBAC');
    servers.alwaysAllow = await start('AlwaysAllow');
    for (const s of [servers.rbac, servers.alwaysAllow]) {
      const agent = agentFor(s.conn, 1);
      await must(agent, s.conn, 'POST', '/api/v1/namespaces', { metadata: { name: TARGET_NS } });
      await must(agent, s.conn, 'POST', `/api/v1/namespaces/${TARGET_NS}/services`, {
        metadata: { name: 'bench-svc' },
        spec: { ports: [{ port: 80 }] },
      });
      agent.destroy();
    }
    // Both hold the same objects, so that only the authorizer differs.
    for (const s of [servers.rbac, servers.alwaysAllow]) await loadPolicy(s, z, ctx.log);
    // A warm-up round each (JIT, connections), not counted.
    for (const s of [servers.rbac, servers.alwaysAllow]) await round1(s, { ...z, requestsPerRound: 500 });
    const rounds: Record<Subject, { cpuUsPerReq: number; latencyP50Ms: number }[]> = {
      rbac: [],
      alwaysAllow: [],
    };
    for (let i = 0; i < z.rounds; i++) {
      // Interleaved, and which goes first alternates, so drift in the machine's load hits both alike.
      const order: Subject[] = i % 2 === 0 ? ['rbac', 'alwaysAllow'] : ['alwaysAllow', 'rbac'];
      for (const subject of order) rounds[subject].push(await round1(servers[subject]!, z));
      const last = (s: Subject): string => {
        const r = rounds[s][rounds[s].length - 1]!;
        return `${s} ${round(r.cpuUsPerReq)} µs CPU, p50 ${round(r.latencyP50Ms)} ms`;
      };
      ctx.log(`round ${i + 1}/${z.rounds}: ${last('rbac')}; ${last('alwaysAllow')}`);
    }
    const med = (s: Subject, k: 'cpuUsPerReq' | 'latencyP50Ms'): number => median(rounds[s].map((r) => r[k]));
    const m = {
      rbacCpuUsPerRequest: med('rbac', 'cpuUsPerReq'),
      alwaysAllowCpuUsPerRequest: med('alwaysAllow', 'cpuUsPerReq'),
      rbacLatencyP50Ms: med('rbac', 'latencyP50Ms'),
      alwaysAllowLatencyP50Ms: med('alwaysAllow', 'latencyP50Ms'),
    };
    const cpuRatio = m.rbacCpuUsPerRequest / m.alwaysAllowCpuUsPerRequest;
    const latencyRatio = m.rbacLatencyP50Ms / m.alwaysAllowLatencyP50Ms;
    const goals = { cpuRatioAtMost1_1: cpuRatio <= 1.1 };
    const table = [
      tableRow('RoleBindings (RBAC server)', z.bindings),
      tableRow('server CPU per GET, RBAC (µs)', round(m.rbacCpuUsPerRequest)),
      tableRow('server CPU per GET, AlwaysAllow (µs)', round(m.alwaysAllowCpuUsPerRequest)),
      tableRow(
        'RBAC ÷ AlwaysAllow, CPU per GET',
        round(cpuRatio),
        '≤ 1.1',
        goals.cpuRatioAtMost1_1 ? 'yes' : 'no',
      ),
      tableRow('GET p50, RBAC (ms)', round(m.rbacLatencyP50Ms)),
      tableRow('GET p50, AlwaysAllow (ms)', round(m.alwaysAllowLatencyP50Ms)),
      tableRow('RBAC ÷ AlwaysAllow, GET p50', round(latencyRatio)),
    ];
    return {
      table,
      data: {
        sizes: z,
        loadAverage: { start: loadAtStart, end: loadavg() },
        medians: m,
        ratios: { cpu: cpuRatio, latencyP50: latencyRatio },
        goals,
        rounds,
      },
    };
  } finally {
    for (const s of Object.values(servers)) await stopServer(s);
    for (const d of dataDirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}
