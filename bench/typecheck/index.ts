// `npm run bench -- typecheck`: what the type check of request bodies costs on a create. One API server
// in this process (memory store, in-process transport: no network, no disk, so the check is as large a
// share of a create as it can be); the same Pod creates run in interleaved rounds with the check on and
// off (typeCheckSwitch, which only this benchmark touches). The figure is the server-side cost of a
// create with the check as a ratio to the same create without it: CPU per create and wall time per
// create, medians over the rounds. Goal: ≤ 1.05. Method and latest figures: docs/benchmarks.md (typecheck).
import { performance } from 'node:perf_hooks';
import { findTypeMismatch } from '../../src/api/schema/type-check.js';
import { schemaFor } from '../../src/api/schema/index.js';
import { typeCheckSwitch } from '../../src/apiserver/registry/decode.js';
import { startInProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { median, round, tableRow, type BenchContext, type BenchResult } from '../run.js';

const FULL = { rounds: 12, createsPerRound: 1_500, concurrency: 8 };
const QUICK = { rounds: 2, createsPerRound: 100, concurrency: 4 };

/** A Pod as a Deployment's template makes it: two containers, ports, env, resources, probes, labels. */
const pod = (name: string): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '5d8f7c9b6' },
    annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
  },
  spec: {
    containers: ['web', 'sidecar'].map((c, i) => ({
      name: c,
      image: `registry.example/${c}:1.2.${i}`,
      ports: [
        { name: 'http', containerPort: 8080 + i, protocol: 'TCP' },
        { name: 'metrics', containerPort: 9090 + i },
      ],
      env: [
        { name: 'MODE', value: 'production' },
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: 1, memory: '256Mi' } },
      readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    })),
    volumes: [{ name: 'data', emptyDir: {} }],
    nodeSelector: { 'topology.kubernetes.io/zone': 'zone-a' },
    tolerations: [{ key: 'edge', operator: 'Exists', effect: 'NoSchedule' }],
  },
});

type Subject = 'on' | 'off';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const api = await startInProcessApiServer();
  const send = async (method: 'POST', path: string, body: object): Promise<number> => {
    const res = await api.transport(api.token).send({ method, path, body: JSON.stringify(body) });
    res.body.resume();
    await new Promise((resolve) => res.body.on('end', resolve));
    return res.status;
  };
  try {
    if ((await send('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } })) !== 201)
      throw new Error('could not create the namespace');
    let n = 0;
    const creates = async (count: number): Promise<void> => {
      const worker = async (): Promise<void> => {
        while (count-- > 0) {
          const status = await send('POST', '/api/v1/namespaces/bench/pods', pod(`p-${n++}`));
          if (status !== 201) throw new Error(`create answered ${status}`);
        }
      };
      await Promise.all(Array.from({ length: z.concurrency }, worker));
    };
    await creates(z.createsPerRound); // warm-up, check on
    const cpu: Record<Subject, number[]> = { on: [], off: [] };
    const wall: Record<Subject, number[]> = { on: [], off: [] };
    for (let i = 0; i < z.rounds; i++) {
      // ABBA order, so neither subject always runs first.
      const order: Subject[] = i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const s of order) {
        typeCheckSwitch.enabled = s === 'on';
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await creates(z.createsPerRound);
        const t1 = performance.now();
        const c = process.cpuUsage(c0);
        cpu[s].push((c.user + c.system) / z.createsPerRound);
        wall[s].push(((t1 - t0) * 1000) / z.createsPerRound);
      }
      ctx.log(
        `round ${i + 1}/${z.rounds}: CPU µs/create on ${round(cpu.on.at(-1)!)} off ${round(cpu.off.at(-1)!)}`,
      );
    }
    typeCheckSwitch.enabled = true;
    // The check alone on the same Pod body, for scale.
    const schema = schemaFor('', 'Pod')!;
    const body = pod('x');
    const reps = ctx.quick ? 2_000 : 50_000;
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) if (findTypeMismatch(body, schema) !== undefined) throw new Error('typed');
    const checkUs = ((performance.now() - t0) * 1000) / reps;
    const m = {
      cpuUsPerCreateOn: median(cpu.on),
      cpuUsPerCreateOff: median(cpu.off),
      wallUsPerCreateOn: median(wall.on),
      wallUsPerCreateOff: median(wall.off),
      checkAloneUsPerPod: checkUs,
    };
    const cpuRatio = m.cpuUsPerCreateOn / m.cpuUsPerCreateOff;
    const wallRatio = m.wallUsPerCreateOn / m.wallUsPerCreateOff;
    // Each round's on ÷ off (the two halves of a round ran back to back), and their median.
    const pairedCpuRatio = median(cpu.on.map((x, i) => x / cpu.off[i]!));
    const goals = { cpuRatioAtMost105: cpuRatio <= 1.05 };
    return {
      table: [
        tableRow(
          'CPU per create, check on ÷ off (median of rounds)',
          round(cpuRatio),
          '≤ 1.05',
          goals.cpuRatioAtMost105 ? 'yes' : 'no',
        ),
        tableRow("CPU per create, median of each round's on ÷ off", round(pairedCpuRatio), '', ''),
        tableRow('wall time per create, check on ÷ off (median of rounds)', round(wallRatio), '', ''),
        tableRow('CPU µs per create, check on', round(m.cpuUsPerCreateOn), '', ''),
        tableRow('CPU µs per create, check off', round(m.cpuUsPerCreateOff), '', ''),
        tableRow('the check alone on the Pod body, µs', round(m.checkAloneUsPerPod), '', ''),
      ],
      data: { shape: z, ...m, cpuRatio, pairedCpuRatio, wallRatio, goals, rounds: { cpu, wall } },
    };
  } finally {
    typeCheckSwitch.enabled = true;
    await api.stop();
  }
}
