// Every step against one subject: namespaces and nodes, the grids until converged, quiet, the relabel.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { agentFor, epochMs, request } from '../lib/http.js';
import type { Worker } from '../lib/process.js';
import { cpuSeconds, sleep } from '../lib/process.js';
import { percentile, type BenchContext } from '../run.js';
import { UNIT_KEY, type Sizes, namespaceName, initialUnits, relabelOf } from './shape.js';
import { namespaceBody, nodeBody, gridBodies } from './bodies.js';
import { type Kind, KINDS, GRID_KINDS } from './checks.js';
import { type PhaseStatus, type WatcherRequest, type WatcherStatus } from './watcher.js';
import { postAll, mustAllSucceed, apiRequests, type RequestCounts, apiDelta, fmtRequests } from './api.js';
import { type CpuReading, type MemoryReading } from './usage.js';
import { type Subject, queueCounts, type QueueFigures, queueDelta, fmtQueues } from './subjects.js';
import { type Settle, cpuDelta, waitQuiet } from './settle.js';
import { type Warnings, gridWarnings, fmtWarnings, listCheck } from './list-check.js';

/** The watcher's pid, once it runs. */
let watcherPid: number | undefined;

/** CPU seconds of the benchmark's own processes: this one and the watcher. */
export function benchCpuSeconds(): number {
  const own = process.cpuUsage();
  let watcher = 0;
  try {
    if (watcherPid !== undefined) watcher = cpuSeconds(watcherPid);
  } catch {
    /* exited */
  }
  return (own.user + own.system) / 1e6 + watcher;
}

export interface SubjectFigures {
  setup: string;
  /** 1-, 5- and 15-minute load averages when this subject's steps began. */
  loadAtStart: number[];
  /** Before the grids: nodes created and the controllers quiet. */
  before: { nodesS: number; memory: MemoryReading };
  create: { grids: number; seconds: number; postP50Ms: number; postP99Ms: number };
  convergence: {
    seconds: number;
    servicesS: number;
    deploymentsS: number;
    firstServiceS: number;
    firstDeploymentS: number;
    statusesS: { servicegrids: number; deploymentgrids: number };
    cpu: CpuReading;
    memory: MemoryReading;
    watchEvents: Record<Kind, PhaseStatus['events']>;
    apiserverRequests: RequestCounts;
    /** The grid controllers' reconciles (workqueue metrics), until the statuses were current. */
    queues: QueueFigures;
    /** Services and Deployments that became as expected in each second from just before the first POST. */
    servicesPerSecond: number[];
    deploymentsPerSecond: number[];
    /** Services there when the last Deployment arrived. */
    servicesWhenDeploymentsDone: number;
    listCheck: { services: number; deployments: number; listMs: number };
    /** Warning Events about grids, since the start. */
    warnings: Warnings;
  };
  settle: Settle & { memory: MemoryReading };
  relabel: {
    node: string;
    from: string;
    to: string;
    patchMs: number;
    seconds: number;
    firstEventS: number;
    newUnitCreatedS: number;
    oldUnitDeletedS: number;
    deploymentGridStatusesS: number;
    cpuToSettle: CpuReading;
    watchEvents: Record<Kind, PhaseStatus['events']>;
    apiserverRequests: RequestCounts;
    /** Until the controllers were quiet again. */
    queues: QueueFigures;
    listCheck: { services: number; deployments: number; listMs: number };
    /** Warning Events about grids, since the start. */
    warnings: Warnings;
  };
  settleAfterRelabel: Settle & { memory: MemoryReading };
  /** Over the whole subject: the processes' peak RSS. */
  peak: MemoryReading;
  watchHealth: WatcherStatus['health'];
  timeline: Array<{
    t: number;
    controllersCpuS: number;
    apiserverCpuS: number;
    controllersRssMiB: number | null;
    serverRssMiB: number;
  }>;
}

const progress = (st: WatcherStatus): string =>
  KINDS.map((k) => {
    const p = st.produced[k];
    return `${k} ${p.good}/${p.expected}${p.stray > 0 ? ` +${p.stray} unexpected` : ''}${p.wrong > 0 ? ` ${p.wrong} wrong` : ''}`;
  }).join(', ');

/** Polls the watcher until `done`, throwing a precise account when `timeoutS` passes first. */
async function waitWatcher(
  watcher: Worker<WatcherRequest>,
  s: Subject,
  z: Sizes,
  what: string,
  since: number,
  timeoutS: number,
  done: (st: WatcherStatus) => boolean,
  log: (l: string) => void,
): Promise<WatcherStatus> {
  let lastLog = performance.now();
  for (;;) {
    const st = await watcher.call<WatcherStatus>({ op: 'status' });
    if (done(st)) return st;
    s.alive();
    const elapsed = (epochMs() - since) / 1000;
    if (elapsed > timeoutS) {
      const problems = [
        ...KINDS.flatMap((k) => st.produced[k].problems),
        ...GRID_KINDS.flatMap((k) => st.grids[k].problems),
      ];
      throw new Error(
        `${what}: not done after ${timeoutS} s: ${progress(st)}; statuses current: ` +
          GRID_KINDS.map((k) => `${k} ${st.grids[k].current}/${st.grids[k].grids}`).join(', ') +
          (problems.length > 0 ? `; e.g. ${problems.slice(0, 6).join(' | ')}` : ''),
      );
    }
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      const c = s.cpu();
      log(`  ${elapsed.toFixed(0)} s: ${progress(st)}; controllers ${c.controllersS.toFixed(1)} CPU-s`);
    }
    await sleep(z.pollMs);
  }
}

export async function measure(
  ctx: BenchContext,
  z: Sizes,
  s: Subject,
  watcher: Worker<WatcherRequest>,
): Promise<SubjectFigures> {
  const shape = z.shape;
  const log = (l: string): void => ctx.log(`${s.name}: ${l}`);
  const agent = agentFor(s.conn, z.concurrency);
  const timeline: SubjectFigures['timeline'] = [];
  const loadAtStart = loadavg();
  const t0 = performance.now();
  const sample = (): void => {
    try {
      const c = s.cpu();
      const m = s.memory();
      timeline.push({
        t: Math.round((performance.now() - t0) / 100) / 10,
        controllersCpuS: Math.round(c.controllersS * 100) / 100,
        apiserverCpuS: Math.round(c.apiserverS * 100) / 100,
        controllersRssMiB: m.controllersRssMiB === null ? null : Math.round(m.controllersRssMiB),
        serverRssMiB: Math.round(m.serverRssMiB),
      });
    } catch {
      /* exited: alive() reports it */
    }
  };
  const sampler = setInterval(sample, 1000);
  try {
    // ---- namespaces and nodes, then quiet
    const tn = performance.now();
    const nss = Array.from({ length: shape.namespaces }, (_, k) => ({
      path: '/api/v1/namespaces',
      body: namespaceBody(namespaceName(k)),
    }));
    mustAllSucceed('namespace', await postAll(agent, s.conn, nss, z.concurrency));
    const nodes = Array.from({ length: shape.nodes }, (_, n) => ({
      path: '/api/v1/nodes',
      body: nodeBody(shape, n),
    }));
    mustAllSucceed('node', await postAll(agent, s.conn, nodes, z.concurrency));
    const nodesS = (performance.now() - tn) / 1000;
    await waitQuiet(s, z);
    const memBefore = s.memory();
    log(
      `${shape.nodes} nodes in ${shape.units} units in ${nodesS.toFixed(1)} s; server RSS ${memBefore.serverRssMiB.toFixed(0)} MiB`,
    );

    // ---- the grids, and convergence
    const units = initialUnits(shape);
    watcherPid = await watcher.call<number>({ op: 'start', conn: s.conn, shape });
    await watcher.call({ op: 'expect', units });
    const api0 = await apiRequests(agent, s.conn);
    const q0 = queueCounts(await s.controllerMetrics());
    const cpu0 = s.cpu();
    const grids = gridBodies(shape);
    const gridsAt = epochMs();
    const posted = await postAll(agent, s.conn, grids, z.concurrency);
    mustAllSucceed('grid', posted);
    const create = {
      grids: grids.length,
      seconds: posted.seconds,
      postP50Ms: percentile(posted.ms, 50),
      postP99Ms: percentile(posted.ms, 99),
    };
    const nDeployments = shape.deploymentGrids * shape.units;
    log(
      `${shape.serviceGrids} ServiceGrids + ${shape.deploymentGrids} DeploymentGrids created in ${create.seconds.toFixed(1)} s ` +
        `(POST p50 ${create.postP50Ms.toFixed(1)} ms, p99 ${create.postP99Ms.toFixed(1)} ms); waiting for ` +
        `${shape.serviceGrids} Services and ${nDeployments} Deployments`,
    );
    const st = await waitWatcher(
      watcher,
      s,
      z,
      'convergence',
      gridsAt,
      z.convergeTimeoutS,
      (w) => KINDS.every((k) => w.produced[k].doneAt !== undefined),
      log,
    );
    const cpu1 = s.cpu();
    const mem1 = s.memory();
    const sec = (at1: number | undefined): number => (at1 === undefined ? NaN : (at1 - gridsAt) / 1000);
    const servicesS = sec(st.produced.services.doneAt);
    const deploymentsS = sec(st.produced.deployments.doneAt);
    log(
      `converged in ${Math.max(servicesS, deploymentsS).toFixed(1)} s (Services ${servicesS.toFixed(1)} s, ` +
        `Deployments ${deploymentsS.toFixed(1)} s, when ${st.produced.services.servicesWhenDeploymentsDone ?? '?'} ` +
        `Services were there); controllers ${cpuDelta(cpu0, cpu1).controllersS.toFixed(1)} CPU-s, ` +
        `API server ${cpuDelta(cpu0, cpu1).apiserverS.toFixed(1)} CPU-s`,
    );
    const stStatus = await waitWatcher(
      watcher,
      s,
      z,
      'grid statuses',
      gridsAt,
      z.convergeTimeoutS + z.statusTimeoutS,
      (w) => GRID_KINDS.every((k) => w.grids[k].doneAt !== undefined),
      log,
    );
    const api1 = await apiRequests(agent, s.conn);
    const queues = queueDelta(q0, queueCounts(await s.controllerMetrics()));
    log(`controllers: ${fmtQueues(queues)}`);
    const apiserverRequests = apiDelta(api0, api1);
    log(`API server served (mean server time): ${fmtRequests(apiserverRequests)}`);
    const list1 = await listCheck(agent, s.conn, shape, units);
    const warnings1 = await gridWarnings(agent, s.conn);
    if (Object.keys(warnings1).length > 0) log(`note: Warning Events about grids: ${fmtWarnings(warnings1)}`);
    const convergence: SubjectFigures['convergence'] = {
      seconds: Math.max(servicesS, deploymentsS),
      servicesS,
      deploymentsS,
      firstServiceS: sec(st.produced.services.firstEventAt),
      firstDeploymentS: sec(st.produced.deployments.firstEventAt),
      statusesS: {
        servicegrids: sec(stStatus.grids.servicegrids.doneAt),
        deploymentgrids: sec(stStatus.grids.deploymentgrids.doneAt),
      },
      cpu: cpuDelta(cpu0, cpu1),
      memory: mem1,
      watchEvents: { services: st.produced.services.events, deployments: st.produced.deployments.events },
      apiserverRequests,
      queues,
      servicesPerSecond: st.produced.services.perSecond,
      deploymentsPerSecond: st.produced.deployments.perSecond,
      servicesWhenDeploymentsDone: st.produced.services.servicesWhenDeploymentsDone ?? NaN,
      listCheck: list1,
      warnings: warnings1,
    };

    // ---- settle
    const settle0 = await waitQuiet(s, z);
    const settle = { ...settle0, memory: s.memory() };
    log(
      `then busy ${settle.busyS.toFixed(1)} s${settle.quiet ? '' : ' (never quiet)'} (controllers ` +
        `${settle.cpu.controllersS.toFixed(1)} CPU-s); RSS ${fmtMem(settle.memory)}`,
    );

    // ---- relabel
    const r = relabelOf(shape);
    const newUnits = [...units.filter((u) => u !== r.from), r.to].sort();
    await watcher.call({ op: 'expect', units: newUnits, appear: r.to, vanish: r.from });
    const api2 = await apiRequests(agent, s.conn);
    const q2 = queueCounts(await s.controllerMetrics());
    const rCpu0 = s.cpu();
    const sentAt = epochMs();
    const res = await request(agent, s.conn, 'PATCH', `/api/v1/nodes/${r.node}`, {
      body: JSON.stringify({ metadata: { labels: { [UNIT_KEY]: r.to } } }),
      contentType: 'application/merge-patch+json',
      keepText: true,
    });
    const acceptedAt = epochMs();
    if (res.status !== 200)
      throw new Error(`PATCH node ${r.node}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
    const rst = await waitWatcher(
      watcher,
      s,
      z,
      'relabel',
      acceptedAt,
      z.relabelTimeoutS,
      (w) => KINDS.every((k) => w.produced[k].doneAt !== undefined),
      log,
    );
    const rCpu1 = s.cpu();
    const rsec = (at1: number | undefined): number => (at1 === undefined ? NaN : (at1 - acceptedAt) / 1000);
    const rStatus = await waitWatcher(
      watcher,
      s,
      z,
      'DeploymentGrid statuses after the relabel',
      acceptedAt,
      z.relabelTimeoutS + z.statusTimeoutS,
      (w) => w.grids.deploymentgrids.doneAt !== undefined,
      log,
    );
    const list2 = await listCheck(agent, s.conn, shape, newUnits);
    const warnings2 = await gridWarnings(agent, s.conn);
    const settle1 = await waitQuiet(s, z);
    const api3 = await apiRequests(agent, s.conn);
    const rQueues = queueDelta(q2, queueCounts(await s.controllerMetrics()));
    const settleAfterRelabel = { ...settle1, memory: s.memory() };
    const relabel: SubjectFigures['relabel'] = {
      ...r,
      patchMs: acceptedAt - sentAt,
      seconds: rsec(rst.produced.deployments.doneAt),
      firstEventS: rsec(rst.produced.deployments.firstEventAt),
      newUnitCreatedS: rsec(rst.produced.deployments.appearDoneAt),
      oldUnitDeletedS: rsec(rst.produced.deployments.vanishDoneAt),
      deploymentGridStatusesS: rsec(rStatus.grids.deploymentgrids.doneAt),
      cpuToSettle: cpuDelta(rCpu0, rCpu1),
      watchEvents: { services: rst.produced.services.events, deployments: rst.produced.deployments.events },
      apiserverRequests: apiDelta(api2, api3),
      queues: rQueues,
      listCheck: list2,
      warnings: warnings2,
    };
    log(
      `relabel ${r.node} ${UNIT_KEY}=${r.from}→${r.to}: settled in ${relabel.seconds.toFixed(2)} s (${r.to}'s ` +
        `${shape.deploymentGrids} Deployments created at ${relabel.newUnitCreatedS.toFixed(2)} s, ${r.from}'s deleted at ` +
        `${relabel.oldUnitDeletedS.toFixed(2)} s, statuses at ${relabel.deploymentGridStatusesS.toFixed(2)} s); ` +
        `controllers ${relabel.cpuToSettle.controllersS.toFixed(2)} CPU-s to settle, ` +
        `${settleAfterRelabel.cpu.controllersS.toFixed(2)} more until quiet`,
    );
    log(`API server served for the relabel: ${fmtRequests(relabel.apiserverRequests)}`);
    log(`controllers, for the relabel: ${fmtQueues(rQueues)}`);
    const end = await watcher.call<WatcherStatus>({ op: 'status' });
    await watcher.call({ op: 'stop' });
    sample();
    return {
      setup: s.setup,
      loadAtStart,
      before: { nodesS, memory: memBefore },
      create,
      convergence,
      settle,
      relabel,
      settleAfterRelabel,
      peak: s.memory(),
      watchHealth: end.health,
      timeline,
    };
  } catch (err) {
    ctx.log(s.tails());
    throw err;
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
}

const fmtMem = (m: MemoryReading): string =>
  m.controllersRssMiB === null
    ? `${m.serverRssMiB.toFixed(0)} MiB (process)`
    : `controller-manager ${m.controllersRssMiB.toFixed(0)} MiB, apiserver ${m.serverRssMiB.toFixed(0)} MiB`;
