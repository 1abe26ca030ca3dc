// Every step of the benchmark against one server: creates, LISTs, 100,000 pods, watches, RSS.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startApiServer, svcplaneRuntime } from '../lib/cluster.js';
import { epochMs, type HttpResult } from '../lib/http.js';
import type { Worker } from '../lib/process.js';
import { cpuSeconds, memory, sleep, startServer, stopServer, type Server } from '../lib/process.js';
import { median, pctSorted, percentile, type BenchContext } from '../run.js';
import { SENT, TABLE_ACCEPT, type Sizes, type CreateJob, podBody } from './shape.js';
import {
  type WorkerRequest,
  type ListReply,
  type WriteReply,
  type WatchOpenReply,
  type WatchFinishReply,
  clientWorker,
} from './worker.js';
import { createAcross, nsJobs } from './creates.js';
import type { Turns } from './turns.js';

type Subject = 'apiserver' | 'up';

/** What one server measured: its figures, goals and table rows, and everything for the JSON file. */
interface Measured {
  readonly m: Record<string, number>;
  readonly goals: Record<string, boolean>;
  readonly table: Array<Record<string, string | number>>;
  readonly data: Record<string, unknown>;
}

/** Every step of the benchmark against one server: `svcplane apiserver` alone, or `svcplane up`. */
export async function measure(
  outer: BenchContext,
  z: Sizes,
  subject: Subject,
  turns?: Turns,
): Promise<Measured> {
  const begin = (name: string): Promise<void> => turns?.turn(`${subject}:${name}`) ?? Promise.resolve();
  const end = (name: string): void => turns?.done(`${subject}:${name}`);
  const ctx = { ...outer, log: (l: string) => outer.log(`${subject.padEnd(9)} ${l}`) };
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-bench-apiserver-'));
  let server: Server | undefined;
  const workers: Worker<WorkerRequest>[] = [];
  try {
    await begin('setup');
    const loadAtStart = loadavg();
    if (loadAtStart[0]! > 1) {
      ctx.log(
        `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes ` +
          'compete for the CPUs, so rates and latencies are pessimistic; CPU-µs per request is less affected',
      );
    }
    const tStart = performance.now();
    server = subject === 'up' ? await startServer(dataDir) : await startApiServer(svcplaneRuntime(), dataDir);
    const pid = server.pid;
    ctx.log(`server pid ${pid} at ${server.url} (started in ${Math.round(performance.now() - tStart)} ms)`);
    const main = clientWorker(server.conn, 'client');
    workers.push(main);
    const watchWorkers = Array.from({ length: z.watchWorkers }, (_, k) =>
      clientWorker(server!.conn, `watch${k}`),
    );
    workers.push(...watchWorkers);

    const bigNamespaces = Math.ceil(z.bigPods / z.bigNamespaceSize);
    const namespaces = [
      'bench-warm',
      'bench-watch',
      ...Array.from({ length: z.createReps }, (_, k) => `bench-create-${k}`),
      ...Array.from({ length: bigNamespaces }, (_, k) => `bench-ns-${String(k).padStart(3, '0')}`),
    ];
    const nsRes = await createAcross([main], nsJobs(namespaces), 8, pid);
    if (nsRes.errors > 0) throw new Error(`creating namespaces: ${nsRes.firstError}`);
    await sleep(z.settleMs / 3);
    const memEmpty = memory(pid);
    ctx.log(`server RSS with an empty store: ${memEmpty.rssMiB.toFixed(0)} MiB`);

    // ---- pod creates, 32 clients
    const warm = await createAcross(
      [main],
      [{ kind: 'pod', namespace: 'bench-warm', prefix: 'warm-', from: 0, to: z.warmupPods }],
      z.createClients,
      pid,
    );
    if (warm.errors > 0) throw new Error(`warm-up creates failed: ${warm.firstError}`);
    end('setup');
    let podsStored = z.warmupPods;
    const creates: Array<Awaited<ReturnType<typeof createAcross>>> = [];
    for (let rep = 0; rep < z.createReps; rep++) {
      await begin(`create${rep}`);
      const r = await createAcross(
        [main],
        [
          {
            kind: 'pod',
            namespace: `bench-create-${rep}`,
            prefix: 'web-7c9f8d6b5-',
            from: 0,
            to: z.createPods,
          },
        ],
        z.createClients,
        pid,
      );
      if (r.errors > 0) throw new Error(`pod creates failed (${r.errors}): ${r.firstError}`);
      podsStored += z.createPods;
      creates.push(r);
      ctx.log(
        `creates rep ${rep + 1}/${z.createReps}: ${Math.round(r.perSec)}/s, p50 ${r.p50.toFixed(1)} ms, ` +
          `p99 ${r.p99.toFixed(1)} ms; server ${r.serverCores.toFixed(2)} cores (${Math.round(r.serverCpuUsPerCreate)} CPU-µs/create), ` +
          `client ${r.clientCores.toFixed(2)} cores; load average ${r.loadAvg1m.toFixed(1)}`,
      );
      end(`create${rep}`);
    }

    // ---- 10k services, LIST as JSON and as Table
    await begin('rest');
    const svc = await createAcross(
      [main],
      [{ kind: 'service', namespace: 'default', prefix: 'svc-', from: 0, to: z.services }],
      64,
      pid,
    );
    if (svc.errors > 0) throw new Error(`service creates failed: ${svc.firstError}`);
    ctx.log(`created ${z.services} services at ${Math.round(svc.perSec)}/s`);
    const svcPath = '/api/v1/namespaces/default/services';
    const cpuL0 = cpuSeconds(pid);
    const tL0 = performance.now();
    const listJson = await main.call<ListReply>({
      op: 'list',
      path: svcPath,
      accept: 'application/json',
      reps: z.listReps,
      marker: '"kind":"Service",',
    });
    const listServerCoreMs = ((cpuSeconds(pid) - cpuL0) * 1000) / (z.listReps + 1);
    const listWallMs = (performance.now() - tL0) / (z.listReps + 1);
    const listTable = await main.call<ListReply>({
      op: 'list',
      path: svcPath,
      accept: TABLE_ACCEPT,
      reps: z.tableReps,
      marker: '"cells":[',
    });
    for (const [what, l] of [
      ['JSON', listJson],
      ['Table', listTable],
    ] as const) {
      // default/kubernetes is there too.
      if (l.statuses.some((s) => s !== 200) || l.counts.some((c) => c !== z.services + 1)) {
        throw new Error(`LIST services (${what}): statuses ${l.statuses}, items ${l.counts}`);
      }
    }
    ctx.log(
      `LIST ${z.services} services: JSON p50 ${median(listJson.times).toFixed(1)} ms ` +
        `(${(median(listJson.bytes) / 2 ** 20).toFixed(1)} MiB; server ${listServerCoreMs.toFixed(1)} CPU-ms ` +
        `per list of ${listWallMs.toFixed(1)} ms wall), Table p50 ${median(listTable.times).toFixed(1)} ms`,
    );

    // ---- load to bigPods pods across namespaces, 64 in flight; RSS; LIST all pods
    const bigJobs: CreateJob[] = [];
    for (let k = 0, left = z.bigPods - podsStored; left > 0; k++) {
      const n = Math.min(left, z.bigNamespaceSize);
      bigJobs.push({
        kind: 'pod',
        namespace: `bench-ns-${String(k).padStart(3, '0')}`,
        prefix: 'app-7c9f8d6b5-',
        from: 0,
        to: n,
      });
      left -= n;
    }
    const load = await createAcross([main], bigJobs, z.bigLoadClients, pid);
    if (load.errors > 0) throw new Error(`bulk pod creates failed (${load.errors}): ${load.firstError}`);
    podsStored = z.bigPods;
    ctx.log(
      `loaded to ${z.bigPods} pods: ${z.bigPods - z.warmupPods - z.createReps * z.createPods} creates at ` +
        `${Math.round(load.perSec)}/s (${z.bigLoadClients} in flight), p99 ${load.p99.toFixed(1)} ms`,
    );
    await sleep(z.settleMs);
    const memBig = memory(pid);
    ctx.log(
      `server RSS with ${z.bigPods} pods: ${memBig.rssMiB.toFixed(0)} MiB (peak ${memBig.hwmMiB.toFixed(0)})`,
    );
    const cpuB0 = cpuSeconds(pid);
    const bigList = await main.call<ListReply>({
      op: 'list',
      path: '/api/v1/pods',
      accept: 'application/json',
      reps: z.bigListReps,
      marker: `"${SENT}":`,
    });
    const bigListServerCoreMs = ((cpuSeconds(pid) - cpuB0) * 1000) / (z.bigListReps + 1);
    if (bigList.statuses.some((s) => s !== 200) || bigList.counts.some((c) => c !== z.bigPods)) {
      throw new Error(`LIST pods: statuses ${bigList.statuses}, items ${bigList.counts} (want ${z.bigPods})`);
    }
    const memAfterList = memory(pid);
    ctx.log(
      `LIST ${z.bigPods} pods: p50 ${median(bigList.times).toFixed(0)} ms, ` +
        `${(median(bigList.bytes) / 2 ** 20).toFixed(0)} MiB; server RSS after ${memAfterList.rssMiB.toFixed(0)} MiB, ` +
        `peak ${memAfterList.hwmMiB.toFixed(0)} MiB`,
    );

    // ---- watchers: 50 writes/s to 1,000 watch streams
    const writes = Math.round(z.writesPerSec * z.watchSeconds);
    const watchReps: Array<{
      p50: number;
      p99: number;
      max: number;
      events: number;
      expectedEvents: number;
      lost: number;
      duplicates: number;
      unexpected: number;
      errorEvents: number;
      endedEarly: number;
      writeErrors: number;
      writeP50: number;
      writeP99: number;
      achievedWritesPerSec: number;
      serverCores: number;
      clientCores: number;
      openSeconds: number;
      loadAvg1m: number;
    }> = [];
    for (let rep = 0; rep < z.watchReps; rep++) {
      const prefix = `wr${rep}-`;
      const got = await main.call<HttpResult>({ op: 'get', path: '/api/v1/namespaces/bench-watch/pods' });
      const rv = (JSON.parse(got.text ?? '{}') as { metadata?: { resourceVersion?: string } }).metadata
        ?.resourceVersion;
      if (got.status !== 200 || rv === undefined) throw new Error(`list for watch: ${got.status}`);
      const per = Math.ceil(z.watchers / watchWorkers.length);
      const tOpen = performance.now();
      const opened = await Promise.all(
        watchWorkers.map((w, k) =>
          w.call<WatchOpenReply>({
            op: 'watchOpen',
            path: `/api/v1/pods?watch=true&resourceVersion=${rv}`,
            count: Math.min(per, z.watchers - k * per),
            prefix,
            maxWrites: writes,
          }),
        ),
      );
      const openSeconds = (performance.now() - tOpen) / 1000;
      const failed = opened.reduce((n, o) => n + o.failed, 0);
      if (failed > 0)
        throw new Error(`${failed} watches failed to open: ${opened.find((o) => o.failed)?.firstError}`);
      await sleep(500);
      const cpu0 = cpuSeconds(pid);
      const wr = await main.call<WriteReply>({
        op: 'write',
        namespace: 'bench-watch',
        prefix,
        count: writes,
        perSec: z.writesPerSec,
      });
      const finished = await Promise.all(
        watchWorkers.map((w) => w.call<WatchFinishReply>({ op: 'watchFinish', ok: wr.ok, graceMs: 15_000 })),
      );
      const seconds = wr.spanMs / 1000;
      const serverCores = (cpuSeconds(pid) - cpu0) / seconds;
      const n = finished.reduce((s, f) => s + f.latencies.length, 0);
      const lat = new Float64Array(n);
      let off = 0;
      for (const f of finished) {
        lat.set(f.latencies, off);
        off += f.latencies.length;
      }
      lat.sort();
      const wlat = Float64Array.from(wr.latencies).sort();
      const sum = (f: (x: WatchFinishReply) => number): number => finished.reduce((s, x) => s + f(x), 0);
      const r = {
        p50: pctSorted(lat, 50),
        p99: pctSorted(lat, 99),
        max: lat[lat.length - 1] ?? NaN,
        events: sum((f) => f.events),
        expectedEvents: wr.ok.length * sum((f) => f.watchers),
        lost: sum((f) => f.lost),
        duplicates: sum((f) => f.duplicates),
        unexpected: sum((f) => f.unexpected),
        errorEvents: sum((f) => f.errorEvents),
        endedEarly: sum((f) => f.endedEarly),
        writeErrors: wr.errors,
        writeP50: pctSorted(wlat, 50),
        writeP99: pctSorted(wlat, 99),
        achievedWritesPerSec: writes / seconds,
        serverCores,
        loadAvg1m: loadavg()[0]!,
        clientCores: sum((f) => f.clientCpuMs) / 1000 / seconds,
        openSeconds,
      };
      watchReps.push(r);
      if (wr.errors > 0) ctx.log(`watch writer: ${wr.errors} writes failed: ${wr.firstError}`);
      podsStored += wr.ok.length;
      ctx.log(
        `watch rep ${rep + 1}/${z.watchReps}: ${z.watchers} watchers, ${wr.ok.length} writes at ` +
          `${r.achievedWritesPerSec.toFixed(1)}/s: delivery p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
          `max ${r.max.toFixed(0)} ms; events ${r.events}/${r.expectedEvents}, lost ${r.lost}, dup ${r.duplicates}; ` +
          `server ${serverCores.toFixed(2)} cores, watch clients ${r.clientCores.toFixed(2)} cores`,
      );
    }
    const memEnd = memory(pid);

    // ---- summary
    const medOf = <T>(xs: T[], f: (x: T) => number): number => median(xs.map(f));
    const round = (x: number): number => (Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100);
    const m = {
      createsPerSec: medOf(creates, (c) => c.perSec),
      createP50Ms: medOf(creates, (c) => c.p50),
      createP99Ms: medOf(creates, (c) => c.p99),
      createServerCores: medOf(creates, (c) => c.serverCores),
      createClientCores: medOf(creates, (c) => c.clientCores),
      createServerCpuUsPerPod: medOf(creates, (c) => c.serverCpuUsPerCreate),
      listServicesJsonP50Ms: median(listJson.times),
      listServicesJsonP99Ms: percentile(listJson.times, 99),
      listServicesJsonBytes: median(listJson.bytes),
      listServicesServerCpuMsPerList: listServerCoreMs,
      listServicesTableP50Ms: median(listTable.times),
      listServicesTableP99Ms: percentile(listTable.times, 99),
      listServicesTableBytes: median(listTable.bytes),
      bulkLoadCreatesPerSec: load.perSec,
      listPodsP50Ms: median(bigList.times),
      listPodsMaxMs: Math.max(...bigList.times),
      listPodsBytes: median(bigList.bytes),
      listPodsServerCpuMsPerList: bigListServerCoreMs,
      watchP50Ms: medOf(watchReps, (w) => w.p50),
      watchP99Ms: medOf(watchReps, (w) => w.p99),
      watchLostEvents: watchReps.reduce((n, w) => n + w.lost, 0),
      watchDuplicateEvents: watchReps.reduce((n, w) => n + w.duplicates, 0),
      watchServerCores: medOf(watchReps, (w) => w.serverCores),
      rssEmptyMiB: memEmpty.rssMiB,
      rssBigMiB: memBig.rssMiB,
      rssAfterListsMiB: memAfterList.rssMiB,
      rssPeakMiB: memEnd.hwmMiB,
    };
    const goals = {
      createsAtLeast2000PerSec: m.createsPerSec >= 2000,
      listServicesJsonP50AtMost50Ms: m.listServicesJsonP50Ms <= 50,
      watchP99AtMost50Ms: m.watchP99Ms <= 50,
      watchNoEventLost: m.watchLostEvents === 0 && m.watchDuplicateEvents === 0,
    };
    const yn = (b: boolean): string => (b ? 'yes' : 'no');
    const mib = (b: number): number => round(b / 2 ** 20);
    const table: Array<Record<string, string | number>> = [
      {
        metric: `pod creates/s, ${z.createClients} HTTPS clients, ${z.createPods} pods`,
        value: round(m.createsPerSec),
        goal: '≥ 2000',
        met: yn(goals.createsAtLeast2000PerSec),
      },
      { metric: 'pod create latency p50 (ms)', value: round(m.createP50Ms), goal: '', met: '' },
      { metric: 'pod create latency p99 (ms)', value: round(m.createP99Ms), goal: '', met: '' },
      {
        metric: 'server CPU per pod create (µs, all threads)',
        value: round(m.createServerCpuUsPerPod),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services JSON p50 (ms)`,
        value: round(m.listServicesJsonP50Ms),
        goal: '≤ 50',
        met: yn(goals.listServicesJsonP50AtMost50Ms),
      },
      {
        metric: `LIST ${z.services} services JSON p99 (ms)`,
        value: round(m.listServicesJsonP99Ms),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services JSON (MiB)`,
        value: mib(m.listServicesJsonBytes),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.services} services Table p50 (ms)`,
        value: round(m.listServicesTableP50Ms),
        goal: '',
        met: '',
      },
      {
        metric: `pod creates/s, ${z.bigLoadClients} clients (bulk load)`,
        value: round(m.bulkLoadCreatesPerSec),
        goal: '',
        met: '',
      },
      {
        metric: `LIST ${z.bigPods} pods, all namespaces, p50 (ms)`,
        value: round(m.listPodsP50Ms),
        goal: '',
        met: '',
      },
      { metric: `LIST ${z.bigPods} pods (MiB)`, value: mib(m.listPodsBytes), goal: '', met: '' },
      {
        metric: `watch delivery p50 (ms), ${z.watchers} watchers, ${z.writesPerSec} writes/s`,
        value: round(m.watchP50Ms),
        goal: '',
        met: '',
      },
      {
        metric: `watch delivery p99 (ms), ${z.watchers} watchers, ${z.writesPerSec} writes/s`,
        value: round(m.watchP99Ms),
        goal: '≤ 50',
        met: yn(goals.watchP99AtMost50Ms),
      },
      {
        metric: 'watch events lost + duplicated (all reps)',
        value: m.watchLostEvents + m.watchDuplicateEvents,
        goal: '0',
        met: yn(goals.watchNoEventLost),
      },
      { metric: 'server RSS, empty store (MiB)', value: round(m.rssEmptyMiB), goal: '', met: '' },
      { metric: `server RSS, ${z.bigPods} pods stored (MiB)`, value: round(m.rssBigMiB), goal: '', met: '' },
      { metric: 'server peak RSS, whole run (MiB)', value: round(m.rssPeakMiB), goal: '', met: '' },
    ];
    end('rest');
    return {
      m,
      goals,
      table,
      data: {
        setup: {
          server:
            (subject === 'up'
              ? 'svcplane up (the API server with its controllers on a worker thread)'
              : 'svcplane apiserver (the API server alone)') +
            ' in a child process: durable SQLite store (synchronous=FULL, group commit), TLS, bearer token, AlwaysAllow',
          clients:
            `${1 + z.watchWorkers} client worker processes; requests through node:https keep-alive agents, ` +
            'watches as raw HTTP/1.1 on one TLS connection each (cheaper per event); the orchestrator only coordinates',
          sharedCpu:
            'client workers and server share the same machine and its CPUs; every figure includes that',
          loadAverage: { start: loadAtStart, end: loadavg() },
          podLoad: `all ${z.bigPods} pods created through the HTTPS API (no direct store writes)`,
          watchOrder: `watch reps run with ${z.bigPods}+ pods and ${z.services} services stored`,
          podBodyBytes: Buffer.byteLength(podBody('bench-ns-000', 'app-7c9f8d6b5-0', 0, epochMs())),
          storedPodBytes: Math.round(m.listPodsBytes / z.bigPods),
        },
        medians: m,
        goals,
        creates,
        warmup: warm,
        serviceCreates: svc,
        listServices: { json: listJson, table: listTable },
        bulkLoad: load,
        listPods: bigList,
        watch: watchReps,
        memory: { empty: memEmpty, bigPods: memBig, afterPodLists: memAfterList, end: memEnd },
      },
    };
  } catch (err) {
    turns?.fail(err);
    if (server !== undefined) ctx.log(`server stderr tail: ${server.stderrTail().slice(-2000)}`);
    throw err;
  } finally {
    for (const w of workers) w.stop();
    if (server !== undefined) await stopServer(server);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
