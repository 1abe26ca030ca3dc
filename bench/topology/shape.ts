// The topology benchmark's shape: 1,000 nodes in 100 units and 10 zones, 10,000 Services each with one
// slice of 10 endpoints, their rules drawn from a seeded PRNG (every run builds the same set).
import { HOSTNAME_LABEL, ZONE_LABEL } from '../../src/core/topology/rules.js';
import type { Labels } from '../../src/core/topology/types.js';
import { seededRandom } from '../../src/core/scheduling/schedule.js';

export const UNIT_LABEL = 'superedge.io/unit';
export const SEED = 0x70b0_1064;

export interface Sizes {
  readonly nodes: number;
  readonly units: number;
  readonly zones: number;
  readonly namespaces: number;
  readonly services: number;
  readonly endpointsPerService: number;
  /** Timed repetitions (each: aCalls × A, A2, A3, B) after `warmup` untimed ones. */
  readonly reps: number;
  readonly warmup: number;
  readonly aCalls: number;
  /** Timed passes of decide() over every Service. */
  readonly evalReps: number;
}

export const FULL: Sizes = {
  nodes: 1000,
  units: 100,
  zones: 10,
  namespaces: 10,
  services: 10_000,
  endpointsPerService: 10,
  reps: 30,
  warmup: 3,
  aCalls: 20,
  evalReps: 5,
};
export const QUICK: Sizes = { ...FULL, reps: 5, warmup: 1, aCalls: 10, evalReps: 2 };

export type RuleMix = 'superedge' | 'ordered' | 'hints' | 'none';

export const prng = seededRandom;

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
export const nodeName = (i: number): string => `node-${pad(i, 4)}`;
export const unitName = (u: number): string => `unit-${pad(u, 2)}`;

interface Shape {
  /** Node name → labels. */
  readonly nodes: Array<{ name: string; unit: number; labels: Labels }>;
  readonly services: Array<{ key: string; mix: RuleMix; svc: unknown; sliceName: string; slice: unknown }>;
  readonly mix: Record<RuleMix, number>;
}

function nodeLabels(name: string, unit: number, z: Sizes): Labels {
  const unitsPerZone = Math.max(1, Math.floor(z.units / z.zones));
  return {
    [HOSTNAME_LABEL]: name,
    [UNIT_LABEL]: unitName(unit),
    [ZONE_LABEL]: `zone-${Math.min(z.zones - 1, Math.floor(unit / unitsPerZone))}`,
  };
}

export function buildShape(z: Sizes, rand: () => number): Shape {
  const perUnit = Math.max(1, Math.floor(z.nodes / z.units));
  const nodes = Array.from({ length: z.nodes }, (_, i) => {
    const unit = Math.min(z.units - 1, Math.floor(i / perUnit));
    const name = nodeName(i);
    return { name, unit, labels: nodeLabels(name, unit, z) };
  });
  const mix: Record<RuleMix, number> = { superedge: 0, ordered: 0, hints: 0, none: 0 };
  const services: Shape['services'] = [];
  for (let s = 0; s < z.services; s++) {
    const namespace = `bench-topo-${pad(s % z.namespaces, 2)}`;
    const name = `svc-${pad(s, 5)}`;
    const r = rand();
    const kind: RuleMix = r < 0.5 ? 'superedge' : r < 0.75 ? 'ordered' : r < 0.9 ? 'hints' : 'none';
    mix[kind]++;
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name,
        namespace,
        ...(kind === 'superedge' ? { annotations: { topologyKeys: `["${UNIT_LABEL}"]` } } : {}),
      },
      spec: {
        type: 'ClusterIP',
        clusterIP: `10.${96 + (s >> 16)}.${(s >> 8) & 255}.${s & 255}`,
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        ...(kind === 'ordered' ? { topologyKeys: [HOSTNAME_LABEL, UNIT_LABEL, '*'] } : {}),
        ...(kind === 'hints' ? { trafficDistribution: 'PreferSameZone' } : {}),
      },
    };
    // distinct random nodes
    const picked = new Set<number>();
    while (picked.size < Math.min(z.endpointsPerService, z.nodes)) picked.add(Math.floor(rand() * z.nodes));
    const endpoints = [...picked].map((n, r) => {
      const k = s * z.endpointsPerService + r;
      const node = nodes[n]!;
      const zone = node.labels[ZONE_LABEL]!;
      return {
        addresses: [`10.${128 + ((k >> 16) & 127)}.${(k >> 8) & 255}.${k & 255}`],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: node.name,
        zone,
        ...(kind === 'hints' ? { hints: { forZones: [{ name: zone }] } } : {}),
      };
    });
    const sliceName = `${name}-${Math.floor(rand() * 36 ** 5)
      .toString(36)
      .padStart(5, '0')}`;
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: sliceName, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints,
    };
    services.push({ key: `${namespace}/${name}`, mix: kind, svc, sliceName, slice });
  }
  return { nodes, services, mix };
}
