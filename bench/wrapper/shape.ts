// The wrapper benchmark's shape (SVCPLANE_BENCH_WRAPPER_SERVICES changes the number of Services): 1,000
// nodes in 100 units, selector-less Services each with one slice of 10 endpoints, rules drawn seeded.
import { seededRandom } from '../../src/core/scheduling/schedule.js';
import { HOSTNAME_LABEL, ZONE_LABEL } from '../../src/core/topology/rules.js';
import type { Labels } from '../../src/core/topology/types.js';

export const UNIT_LABEL = 'superedge.io/unit';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const SEQ_ANNOTATION = 'bench.svcplane.io/seq';
export const CHURN_ANNOTATION = 'bench.svcplane.io/churn';
export const SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
export const SEED = 0x3a11_0015;
export const MiB = 2 ** 20;

export interface Sizes {
  readonly nodes: number;
  readonly units: number;
  readonly zones: number;
  readonly namespaces: number;
  readonly services: number;
  readonly endpointsPerService: number;
  /** Requests in flight while loading. */
  readonly concurrency: number;
  /** P5: timed relabels (alternating directions) after `warmup` untimed ones. */
  readonly reps: number;
  readonly warmup: number;
  /** P5/P7: an event not seen this long after its write counts as missing. */
  readonly eventTimeoutMs: number;
  /** P6: RSS samples, this far apart. */
  readonly rssSamples: number;
  readonly rssSampleMs: number;
  /** P7. */
  readonly watchers: number;
  readonly watchWorkers: number;
  readonly writes: number;
  readonly writeSpacingMs: number;
  readonly syncTimeoutS: number;
  /** Offline: timed pod IP changes after `offlineWarmup` untimed ones, one Service each. */
  readonly offlineChanges: number;
  readonly offlineWarmup: number;
}

const FULL: Sizes = {
  nodes: 1000,
  units: 100,
  zones: 10,
  namespaces: 10,
  services: 10_000,
  endpointsPerService: 10,
  concurrency: 64,
  reps: 15,
  warmup: 2,
  eventTimeoutMs: 15_000,
  rssSamples: 5,
  rssSampleMs: 1000,
  watchers: 1000,
  watchWorkers: Number(process.env.SVCPLANE_BENCH_WRAPPER_WATCH_WORKERS ?? 4),
  writes: 20,
  writeSpacingMs: 500,
  syncTimeoutS: 300,
  offlineChanges: 20,
  offlineWarmup: 2,
};
const QUICK: Sizes = {
  nodes: 20,
  units: 4,
  zones: 2,
  namespaces: 2,
  services: 200,
  endpointsPerService: 5,
  concurrency: 32,
  reps: 4,
  warmup: 1,
  eventTimeoutMs: 5000,
  rssSamples: 2,
  rssSampleMs: 200,
  watchers: 40,
  watchWorkers: 2,
  writes: 4,
  writeSpacingMs: 150,
  syncTimeoutS: 30,
  offlineChanges: 4,
  offlineWarmup: 1,
};

type RuleMix = 'superedge' | 'ordered' | 'none';

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const nodeName = (i: number): string => `node-${pad(i, 4)}`;
export const unitName = (u: number): string => `unit-${pad(u, 2)}`;

export interface ShapeNode {
  readonly name: string;
  readonly unit: number;
  readonly labels: Labels;
}
export interface ShapeService {
  readonly namespace: string;
  readonly name: string;
  readonly mix: RuleMix;
  readonly service: Record<string, unknown>;
  readonly sliceName: string;
  readonly slice: Record<string, unknown>;
  /** Node index of each endpoint, in slice order. */
  readonly endpointNodes: readonly number[];
}
export interface Shape {
  readonly nodes: ShapeNode[];
  readonly services: ShapeService[];
  readonly namespaces: string[];
  readonly mix: Record<RuleMix, number>;
}

export function buildShape(z: Sizes): Shape {
  const rand = seededRandom(SEED);
  const perUnit = Math.max(1, Math.floor(z.nodes / z.units));
  const unitsPerZone = Math.max(1, Math.floor(z.units / z.zones));
  const nodes = Array.from({ length: z.nodes }, (_, i): ShapeNode => {
    const unit = Math.min(z.units - 1, Math.floor(i / perUnit));
    const name = nodeName(i);
    return {
      name,
      unit,
      labels: {
        [HOSTNAME_LABEL]: name,
        [UNIT_LABEL]: unitName(unit),
        [ZONE_LABEL]: `zone-${Math.min(z.zones - 1, Math.floor(unit / unitsPerZone))}`,
      },
    };
  });
  const namespaces = Array.from({ length: z.namespaces }, (_, k) => `bench-wrap-${pad(k, 2)}`);
  const mix: Record<RuleMix, number> = { superedge: 0, ordered: 0, none: 0 };
  const services: ShapeService[] = [];
  for (let s = 0; s < z.services; s++) {
    const namespace = namespaces[s % z.namespaces]!;
    const name = `svc-${pad(s, 5)}`;
    const r = rand();
    const kind: RuleMix = r < 0.7 ? 'superedge' : r < 0.9 ? 'ordered' : 'none';
    mix[kind]++;
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name,
        namespace,
        ...(kind === 'superedge' ? { annotations: { topologyKeys: `["${UNIT_LABEL}"]` } } : {}),
      },
      spec: {
        type: 'ClusterIP',
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        ...(kind === 'ordered' ? { topologyKeys: [HOSTNAME_LABEL, UNIT_LABEL, '*'] } : {}),
      },
    };
    const picked = new Set<number>();
    while (picked.size < Math.min(z.endpointsPerService, z.nodes)) picked.add(Math.floor(rand() * z.nodes));
    const endpointNodes = [...picked];
    const endpoints = endpointNodes.map((n, e) => {
      const k = s * z.endpointsPerService + e;
      const node = nodes[n]!;
      return {
        addresses: [`10.${128 + ((k >> 16) & 127)}.${(k >> 8) & 255}.${k & 255}`],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: node.name,
        zone: node.labels[ZONE_LABEL]!,
      };
    });
    const sliceName = `${name}-bench`;
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: sliceName,
        namespace,
        labels: { [SERVICE_NAME_LABEL]: name, 'endpointslice.kubernetes.io/managed-by': 'bench.svcplane.io' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints,
    };
    services.push({ namespace, name, mix: kind, service, sliceName, slice, endpointNodes });
  }
  return { nodes, services, namespaces, mix };
}

/** The sizes, with SVCPLANE_BENCH_WRAPPER_SERVICES applied; `atGoalShape` when they are the full shape's. */
export function sizes(quick: boolean): { z: Sizes; atGoalShape: boolean } {
  const base = quick ? QUICK : FULL;
  const raw = process.env.SVCPLANE_BENCH_WRAPPER_SERVICES;
  if (raw === undefined || raw === '') return { z: base, atGoalShape: !quick };
  const services = Number(raw);
  if (!Number.isInteger(services) || services < base.namespaces || services > 100_000)
    throw new Error(
      `SVCPLANE_BENCH_WRAPPER_SERVICES=${raw}: want a whole number from ${base.namespaces} to 100000`,
    );
  return { z: { ...base, services }, atGoalShape: !quick && services === FULL.services };
}
