// Medians over repetitions, the /12 ÷ /24 ratios and the goals, as the table and the JSON.
import { loadavg } from 'node:os';
import { median, type BenchResult } from '../run.js';
import { NODE_PORTS, type Sizes, type CaseId, type Backend, CASES } from './shape.js';
import { upstreamBitmapBytes } from './store-bytes.js';
import { type RepFigures } from './backend.js';

type Medians = Record<
  Backend,
  Record<CaseId, Omit<RepFigures, 'rep' | 'position' | 'roundSeconds' | 'creates' | 'loadAvg1m'>>
>;

export function summarize(
  z: Sizes,
  results: Record<Backend, Record<CaseId, RepFigures[]>>,
  loadAtStart: number[],
): BenchResult {
  const backends = ['sqlite', 'etcd'] as const;
  const metricKeys = [
    'createsPerSec',
    'createP50Ms',
    'createP99Ms',
    'createMaxMs',
    'serverCpuUsPerCreate',
    'serverCores',
    'etcdCpuUsPerCreate',
    'clientCores',
    'putsPerCreate',
    'bytesPerCreate',
    'serviceBytesPerCreate',
    'clusterIPRecordBytesPerCreate',
    'nodePortRecordBytesPerCreate',
    'otherBytesPerCreate',
    'upstreamBytesPerCreate',
  ] as const;
  const medians = Object.fromEntries(
    backends.map((b) => [
      b,
      Object.fromEntries(
        CASES.map((c) => {
          const reps = results[b][c.id];
          const m: Record<string, number> = {};
          for (const k of metricKeys) {
            const xs = reps.map((r) => r[k]).filter((x): x is number => x !== undefined);
            if (xs.length > 0) m[k] = median(xs);
          }
          return [c.id, m];
        }),
      ),
    ]),
  ) as unknown as Medians;
  /** Paired within a repetition: case ÷ /24 creates/s of the same repetition, median over repetitions. */
  const paired = (b: Backend, id: CaseId): number =>
    median(results[b][id].map((r, rep) => r.createsPerSec / results[b].ip24[rep]!.createsPerSec));
  const ratios = Object.fromEntries(
    backends.map((b) => [
      b,
      {
        ip16OverIp24Throughput: paired(b, 'ip16'),
        ip12OverIp24Throughput: paired(b, 'ip12'),
        ip12PrefilledOverIp24Throughput: paired(b, 'ip12Prefilled'),
      },
    ]),
  ) as unknown as Record<Backend, Record<string, number>>;
  const p99Met = (b: Backend): boolean => CASES.every((c) => medians[b][c.id].createP99Ms <= 50);
  const goals = {
    sqlite: {
      ip12OverIp24AtLeast0_9: ratios.sqlite.ip12OverIp24Throughput! >= 0.9,
      ip12PrefilledOverIp24AtLeast0_9: ratios.sqlite.ip12PrefilledOverIp24Throughput! >= 0.9,
      createsAtLeast2000PerSec: CASES.every((c) => medians.sqlite[c.id].createsPerSec >= 2000),
      p99AtMost50Ms: p99Met('sqlite'),
    },
    etcd: {
      ip12OverIp24AtLeast0_9: ratios.etcd.ip12OverIp24Throughput! >= 0.9,
      ip12PrefilledOverIp24AtLeast0_9: ratios.etcd.ip12PrefilledOverIp24Throughput! >= 0.9,
      p99AtMost50Ms: p99Met('etcd'),
    },
  };
  const round = (x: number | undefined): number | string =>
    x === undefined ? '' : Math.abs(x) >= 100 ? Math.round(x) : Math.round(x * 100) / 100;
  const yn = (b: boolean): string => (b ? 'yes' : 'no');
  const table: Array<Record<string, string | number>> = [];
  for (const b of backends) {
    for (const c of CASES) {
      const m = medians[b][c.id];
      table.push({
        backend: b,
        range: c.id === 'ip12Prefilled' ? `${c.cidr} + ${z.prefill}` : c.cidr,
        'creates/s': round(m.createsPerSec),
        'p50 ms': round(m.createP50Ms),
        'p99 ms': round(m.createP99Ms),
        'bytes/create': round(m.bytesPerCreate),
        'upstream bytes/create': round(m.upstreamBytesPerCreate),
        'server CPU-µs/create': round(m.serverCpuUsPerCreate),
        'etcd CPU-µs/create': round(m.etcdCpuUsPerCreate),
        'goals met':
          (b === 'sqlite' ? `≥ 2000/s: ${yn(m.createsPerSec >= 2000)}, ` : '') +
          `p99 ≤ 50 ms: ${yn(m.createP99Ms <= 50)}`,
      });
    }
  }
  for (const b of backends) {
    table.push(
      {
        backend: b,
        range: 'ratio: /12 ÷ /24 creates/s',
        'creates/s': round(ratios[b].ip12OverIp24Throughput),
        'goals met': `≥ 0.9: ${yn(goals[b].ip12OverIp24AtLeast0_9)}`,
      },
      {
        backend: b,
        range: `ratio: /12 + ${z.prefill} ÷ /24 creates/s`,
        'creates/s': round(ratios[b].ip12PrefilledOverIp24Throughput),
        'goals met': `≥ 0.9: ${yn(goals[b].ip12PrefilledOverIp24AtLeast0_9)}`,
      },
    );
  }
  return {
    table,
    data: {
      sizes: z,
      setup: {
        servers:
          'one `svcplane up` (node --import tsx src/cli/svcplane.ts) per range, all four running for the whole ' +
          'backend stage: sqlite each in its own data dir (synchronous=FULL, group commit); etcd all on one ' +
          'local etcd under their own --etcd-prefix; TLS, bearer token, AlwaysAllow',
        ranges: Object.fromEntries(CASES.map((c) => [c.id, c.cidr])),
        nodePortRange: `${NODE_PORTS.base}-${NODE_PORTS.base + NODE_PORTS.size - 1}`,
        workload:
          `rounds of ${z.roundSize} type NodePort Service creates (timed; one ClusterIP + one NodePort each) ` +
          `by ${z.clients} concurrent HTTPS clients on keep-alive connections opened before the round, then ` +
          `their deletes (untimed); ${z.rounds} rounds per case per repetition, ${z.reps} repetitions, ` +
          `${z.warmupRounds} untimed warm-up rounds per case first; case order rotated every repetition`,
        prefill: `ip12Prefilled: ${z.prefill} ClusterIP Services created (untimed) before the warm-up`,
        bytesPerCreate:
          'key + value bytes of every PUT the store holds strictly between two marker writes (an Endpoints ' +
          'create) around each timed create phase, divided by the creates; keys as the svcplane store names ' +
          'them (etcd adds its --etcd-prefix to each); "other" is what else the server wrote meanwhile ' +
          '(the kubernetes Service endpoint lease)',
        upstreamBytesPerCreate:
          "analytic, what kube-apiserver's legacy single-bitmap RangeAllocation layout writes per create: " +
          'the Service (as measured here) + the whole ClusterIP bitmap (usable addresses / 8 bytes) + the ' +
          'whole NodePort bitmap (2,768 bits) + the two range keys; RangeAllocation metadata not counted',
        upstreamBitmapBytes: Object.fromEntries(CASES.map((c) => [c.id, upstreamBitmapBytes(c.cidr)])),
        sharedCpu:
          'client worker, servers (and etcd) share the machine and its CPUs; every figure includes that',
        loadAverage: { start: loadAtStart, end: loadavg() },
      },
      medians,
      ratios,
      goals,
      repetitions: results,
    },
  };
}
