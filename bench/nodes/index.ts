// `npm run bench -- nodes`: 1,000 simulated kubelets in one `svcplane node` process against `svcplane up`,
// then 100 Deployments of 100 replicas: registration, scheduler binds/s, time to every pod Ready, Lease
// writes, CPU and RSS, then LIST checks. Method and latest figures: docs/benchmarks.md (nodes).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { scratchDir, startSvcplane, stopChild, svcplaneRuntime, track } from '../lib/cluster.js';
import { agentFor, epochMs, request } from '../lib/http.js';
import { sleep, startServer, stopServer, Worker } from '../lib/process.js';
import { median, percentile, type BenchContext, type BenchResult } from '../run.js';
import {
  NAMESPACE,
  CLUSTER_CIDR,
  NODE_PREFIX,
  MAX_PODS,
  FULL,
  QUICK,
  deploymentName,
  deploymentBody,
} from './shape.js';
import {
  WORKER_MODULE,
  ROLE_ENV,
  type WatcherRequest,
  type WatcherStatus,
  type WatcherReport,
} from './watcher.js';
import { type Cpu, type Procs, cpu, cpuDelta, type Mem, mem } from './usage.js';
import { requestTotals, totalsDelta } from './api-metrics.js';
import { measureWindow } from './window.js';
import { bindBins } from './bindings.js';
import { checkCluster } from './checks.js';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const total = z.deployments * z.replicas;
  const runtime = svcplaneRuntime();
  const loadAtStart = loadavg();
  ctx.log(
    `${z.nodes} nodes, ${z.deployments} Deployments × ${z.replicas} replicas = ${total} pods; svcplane from ${runtime.kind} (${runtime.why}); load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-nodes-')));
  const dataDir = path.join(root, 'up');
  mkdirSync(dataDir, { recursive: true });
  const up = await startServer(dataDir);
  track(up.child);
  const procs: Procs = { up };
  const agent = agentFor(up.conn, z.concurrency);
  let watcher: Worker<WatcherRequest> | undefined;
  const alive = (): void => {
    if (up.child.exitCode !== null || up.child.signalCode !== null)
      throw new Error(`svcplane up exited: ${up.stderrTail().slice(-3000)}`);
    const n = procs.node?.child;
    if (n !== undefined && (n.exitCode !== null || n.signalCode !== null))
      throw new Error(`svcplane node exited: ${procs.node!.stderrTail().slice(-3000)}`);
  };
  try {
    for (const deadline = performance.now() + 120_000; ;) {
      const res = await request(agent, up.conn, 'GET', '/readyz');
      if (res.status === 200) break;
      if (performance.now() > deadline) throw new Error(`svcplane up: /readyz still ${res.status}`);
      await sleep(50);
    }
    ctx.log(`svcplane up ready at ${up.url}`);

    watcher = new Worker<WatcherRequest>(WORKER_MODULE, { [ROLE_ENV]: 'watcher' }, 'watcher');
    procs.watcherPid = await watcher.call<number>({
      op: 'start',
      conn: up.conn,
      deployments: z.deployments,
      replicas: z.replicas,
    });

    // ---- nodes
    const cpuBeforeNodes = cpu(procs);
    const tNodes = performance.now();
    procs.node = await startSvcplane(
      'svcplane node',
      runtime,
      [
        'node',
        '--kubeconfig',
        path.join(dataDir, 'kubeconfig'),
        '--name',
        NODE_PREFIX,
        '--count',
        String(z.nodes),
        '--cluster-cidr',
        CLUSTER_CIDR,
        '--max-pods',
        String(MAX_PODS),
        // Checkpoints in the run's own directory; the kubelet API (1,000 TLS servers) is not what this measures.
        '--root-dir',
        path.join(dataDir, 'node'),
        '--kubelet-port',
        '0',
      ],
      /svcplane: .*running, pod CIDRs/,
      {
        timeoutMs: 300_000,
        nodeArgs: (process.env.SVCPLANE_BENCH_NODE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
      },
    );
    const registerS = (performance.now() - tNodes) / 1000;
    const registerCpu = cpuDelta(cpuBeforeNodes, cpu(procs));
    ctx.log(`${z.nodes} nodes registered and running in ${registerS.toFixed(2)} s (process start included)`);
    await sleep(z.warmupS * 1000);
    alive();
    const idle = await measureWindow(z.idleWindowS, procs, agent, up.conn, watcher);
    ctx.log(
      `idle (nodes only, ${idle.seconds.toFixed(1)} s): ${idle.leasePutsPerSec.toFixed(1)} Lease PUTs/s, node process ${idle.cpuCoresUsed.nodeS.toFixed(3)} cores`,
    );

    // ---- rollout
    const ns = await request(agent, up.conn, 'POST', '/api/v1/namespaces', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
      keepText: true,
    });
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
    const req0 = await requestTotals(agent, up.conn);
    const cpu0 = cpu(procs);
    const t0 = epochMs();
    const p0 = performance.now();
    let next = 0;
    const failed: string[] = [];
    await Promise.all(
      Array.from({ length: Math.min(z.concurrency, z.deployments) }, async () => {
        for (let d = next++; d < z.deployments; d = next++) {
          const res = await request(
            agent,
            up.conn,
            'POST',
            `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`,
            {
              body: deploymentBody(d, z.replicas),
              keepText: true,
            },
          );
          if (res.status !== 201)
            failed.push(`${deploymentName(d)}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
        }
      }),
    );
    if (failed.length > 0)
      throw new Error(`${failed.length} Deployment POSTs failed; the first: ${failed[0]}`);
    const postS = (performance.now() - p0) / 1000;
    ctx.log(`${z.deployments} Deployments POSTed in ${postS.toFixed(2)} s`);
    let st: WatcherStatus;
    let lastLog = performance.now();
    let peakDuring: Mem = mem(procs);
    for (;;) {
      st = await watcher.call<WatcherStatus>({ op: 'status' });
      if (st.ready >= total && st.deploymentsReady >= z.deployments) break;
      alive();
      const m = mem(procs);
      peakDuring = {
        nodeRssMiB: Math.max(peakDuring.nodeRssMiB, m.nodeRssMiB),
        nodePeakMiB: m.nodePeakMiB,
        upRssMiB: Math.max(peakDuring.upRssMiB, m.upRssMiB),
        upPeakMiB: m.upPeakMiB,
      };
      if ((epochMs() - t0) / 1000 > z.rolloutTimeoutS)
        throw new Error(`rollout not done after ${z.rolloutTimeoutS} s: ${JSON.stringify(st)}`);
      if (performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        ctx.log(
          `  ${((epochMs() - t0) / 1000).toFixed(1)} s: ${st.pods} pods, ${st.bound} bound, ${st.ready} Ready, ${st.deploymentsReady} Deployments ready`,
        );
      }
      await sleep(z.pollMs);
    }
    const cpu1 = cpu(procs);
    const req1 = await requestTotals(agent, up.conn);
    const rep = await watcher.call<WatcherReport>({ op: 'report' });
    const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
    const added = sorted(rep.addedAt);
    const bound = sorted(rep.boundAt);
    const ready = sorted(rep.readyAt);
    const firstBind = bound[0]!;
    const lastBind = bound[bound.length - 1]!;
    const lastReady = ready[ready.length - 1]!;
    const bins = bindBins(bound);
    const busyS = (lastBind - firstBind) / 1000;
    const bindOverallPerSec = bound.length / ((lastBind - t0) / 1000);
    const bindBusyPerSec = busyS > 0 ? bound.length / busyS : bound.length;
    const bindMedianPerSec = bins.length > 0 ? median(bins) : bindBusyPerSec;
    const createdPerSec = added.length / ((added[added.length - 1]! - t0) / 1000);
    const allReadyS = (lastReady - t0) / 1000;
    const rolloutS = (Math.max(lastReady, rep.lastDeploymentReadyAt ?? 0) - t0) / 1000;
    const rolloutCpu = cpuDelta(cpu0, cpu1);
    const rolloutDelta = totalsDelta(req0, req1);
    const rolloutRequests = Object.fromEntries(
      Object.entries(rolloutDelta).filter(([k]) => !k.startsWith('wq:')),
    );
    /** Per controller during the rollout: keys queued, reconciles and their mean time (ms, awaits included). */
    const queues: Record<string, { adds: number; reconciles: number; meanMs: number; workS: number }> = {};
    for (const [k, v] of Object.entries(rolloutDelta)) {
      const m = /^wq:(\S+) (adds|reconciles|workS)$/.exec(k);
      if (m === null) continue;
      const e = (queues[m[1]!] ??= { adds: 0, reconciles: 0, meanMs: 0, workS: 0 });
      e[m[2] as 'adds' | 'reconciles' | 'workS'] = v;
    }
    for (const e of Object.values(queues))
      e.meanMs = e.reconciles === 0 ? 0 : (e.workS / e.reconciles) * 1000;
    const fmtQueue = (name: string): string => {
      const e = queues[name];
      return e === undefined ? 'n/a' : `${e.reconciles} (${e.meanMs.toFixed(1)} ms mean)`;
    };
    const leaseDuring = rep.leaseWriteTimes.filter((t) => t >= t0 && t <= lastReady).length / allReadyS;
    ctx.log(
      `all ${total} pods Ready ${allReadyS.toFixed(2)} s after the first POST; binds/s median ${bindMedianPerSec.toFixed(0)} (busy window ${busyS.toFixed(2)} s), overall ${bindOverallPerSec.toFixed(0)}`,
    );

    // ---- steady state with every pod running
    const steady = await measureWindow(z.steadyWindowS, procs, agent, up.conn, watcher);
    ctx.log(
      `steady (${total} pods, ${steady.seconds.toFixed(1)} s): ${steady.leasePutsPerSec.toFixed(1)} Lease PUTs/s, node process ${steady.cpuCoresUsed.nodeS.toFixed(3)} cores`,
    );

    // ---- checks
    alive();
    const { nodes, notReadyNodes, oldestLeaseS, podList, spread } = await checkCluster({
      ctx,
      z,
      agent,
      conn: up.conn,
      rep,
      total,
    });
    const loadAtEnd = loadavg();
    const peak = mem(procs);

    const goals = {
      schedulerAtLeast500PodsPerSec: bindMedianPerSec >= 500,
      allReadyWithin60s: allReadyS <= 60,
    };
    const r = (x: number, d = 2): number => Number(x.toFixed(d));
    const cpuRow = (c: Cpu): Record<string, number> => ({
      nodeS: r(c.nodeS, 3),
      controllersS: r(c.controllersS, 3),
      apiserverS: r(c.apiserverS, 3),
      watcherS: r(c.watcherS, 3),
      machineS: r(c.machineS, 3),
    });
    const table = [
      { metric: 'nodes registered + running (s, node process start included)', value: r(registerS) },
      { metric: 'Deployment POSTs (s)', value: r(postS) },
      { metric: 'pods created/s (first POST → last pod seen)', value: r(createdPerSec, 0) },
      {
        metric: 'scheduler binds/s: median 1-s bin over busy window (goal ≥ 500)',
        value: `${r(bindMedianPerSec, 0)} (${goals.schedulerAtLeast500PodsPerSec ? 'met' : 'not met'})`,
      },
      {
        metric: 'scheduler binds/s: busy window / overall from first POST',
        value: `${r(bindBusyPerSec, 0)} / ${r(bindOverallPerSec, 0)}`,
      },
      {
        metric: 'bind latency after pod creation p50 / p99 (ms)',
        value: `${r(percentile(rep.bindLatencyMs, 50), 0)} / ${r(percentile(rep.bindLatencyMs, 99), 0)}`,
      },
      {
        metric: `all ${total} pods Ready after first POST (s, goal ≤ 60)`,
        value: `${r(allReadyS)} (${goals.allReadyWithin60s ? 'met' : 'not met'})`,
      },
      { metric: 'all Deployments readyReplicas = replicas (s)', value: r(rolloutS) },
      {
        metric: 'Lease PUTs/s: idle / during rollout (events) / steady with pods',
        value: `${r(idle.leasePutsPerSec, 1)} / ${r(leaseDuring, 1)} / ${r(steady.leasePutsPerSec, 1)}`,
      },
      {
        metric: 'rollout reconciles: replicaset / scheduler',
        value: `${fmtQueue('replicaset')} / ${fmtQueue('scheduler')}`,
      },
      {
        metric: 'rollout CPU-s: node / controllers / API server',
        value: `${r(rolloutCpu.nodeS)} / ${r(rolloutCpu.controllersS)} / ${r(rolloutCpu.apiserverS)}`,
      },
      {
        metric: 'idle cores: node / controllers / API server',
        value: `${r(idle.cpuCoresUsed.nodeS, 3)} / ${r(idle.cpuCoresUsed.controllersS, 3)} / ${r(idle.cpuCoresUsed.apiserverS, 3)}`,
      },
      {
        metric: 'steady cores: node / controllers / API server',
        value: `${r(steady.cpuCoresUsed.nodeS, 3)} / ${r(steady.cpuCoresUsed.controllersS, 3)} / ${r(steady.cpuCoresUsed.apiserverS, 3)}`,
      },
      {
        metric: 'RSS node process: idle / peak (MiB)',
        value: `${r(idle.memory.nodeRssMiB, 0)} / ${r(peak.nodePeakMiB, 0)}`,
      },
      {
        metric: 'RSS up (API server + controllers): idle / peak (MiB)',
        value: `${r(idle.memory.upRssMiB, 0)} / ${r(peak.upPeakMiB, 0)}`,
      },
      { metric: 'load average start / end (1 min)', value: `${r(loadAtStart[0]!)} / ${r(loadAtEnd[0]!)}` },
    ];
    return {
      table,
      data: {
        sizes: z,
        setup: {
          runtime: runtime.kind,
          server: 'svcplane up (embedded sqlite, every default controller on its worker thread)',
          node: `svcplane node --count ${z.nodes} --cluster-cidr ${CLUSTER_CIDR} --max-pods ${MAX_PODS}`,
          cpuSplit:
            "up's main thread is the API server's; every other thread (the controllers' worker, V8 and libuv helpers) counts as the controllers'",
        },
        loadAverage: { start: loadAtStart, end: loadAtEnd },
        registration: { seconds: registerS, cpu: cpuRow(registerCpu) },
        idle,
        rollout: {
          postSeconds: postS,
          podsCreatedPerSec: createdPerSec,
          firstPodS: (added[0]! - t0) / 1000,
          lastPodS: (added[added.length - 1]! - t0) / 1000,
          firstBindS: (firstBind - t0) / 1000,
          lastBindS: (lastBind - t0) / 1000,
          bindsPerSec: {
            medianBusy: bindMedianPerSec,
            busyWindow: bindBusyPerSec,
            overall: bindOverallPerSec,
            maxBin: bins.length > 0 ? Math.max(...bins) : null,
            bins,
          },
          bindLatencyMs: {
            p50: percentile(rep.bindLatencyMs, 50),
            p99: percentile(rep.bindLatencyMs, 99),
            max: Math.max(...rep.bindLatencyMs),
          },
          allReadyS,
          readyP50S: (ready[Math.floor(ready.length / 2)]! - t0) / 1000,
          deploymentsReadyS: rolloutS,
          leaseEventsPerSec: leaseDuring,
          cpu: cpuRow(rolloutCpu),
          requests: rolloutRequests,
          queues,
          peakMemory: peakDuring,
        },
        steady,
        checks: {
          nodes: nodes.length,
          nodesReady: nodes.length - notReadyNodes.length,
          oldestLeaseS,
          pods: podList.items.length,
          podsReady: podList.items.length,
          spread,
          watcher: {
            pods: rep.pods,
            bound: rep.bound,
            rebinds: rep.rebinds,
            deleted: rep.deleted,
            errors: rep.errors,
            relists: rep.relists,
          },
        },
        memory: peak,
        goals,
      },
    };
  } finally {
    if (watcher !== undefined) {
      await watcher.call({ op: 'stop' }).catch(() => {});
      watcher.stop();
    }
    agent.destroy();
    if (procs.node !== undefined) await stopChild(procs.node.child);
    await stopServer(up);
  }
}
