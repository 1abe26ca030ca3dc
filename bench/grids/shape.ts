// The grids benchmark's shape: nodes in units (the last node alone in its unit), namespaces, grids, and
// the Services and Deployments they must produce.
import { SUPEREDGE_API_VERSION } from '../../src/core/grids/objects.js';
import { type Kind } from './checks.js';

/** The controllers measured; the controller-manager must know both. */
export const CONTROLLERS = ['servicegrid', 'deploymentgrid'] as const;

// The contract (docs/design/grids.md; SuperEdge's labels), as the benchmark checks it.
export const GRID_API = SUPEREDGE_API_VERSION;
/** The node label whose values are the units. */
export const UNIT_KEY = 'unit';

export interface Shape {
  readonly nodes: number;
  /** Distinct values of the unit label; the last one is on exactly one node. */
  readonly units: number;
  readonly namespaces: number;
  readonly serviceGrids: number;
  readonly deploymentGrids: number;
}

export interface Sizes {
  readonly shape: Shape;
  /** Concurrent POSTs (namespaces, nodes, grids). */
  readonly concurrency: number;
  readonly convergeTimeoutS: number;
  readonly relabelTimeoutS: number;
  /** How long grid statuses may lag their objects before the benchmark gives up. */
  readonly statusTimeoutS: number;
  /** Quiet = under 0.05 cores for this long, sampled every `quietSampleMs`; waited for at most `settleMaxSeconds`. */
  readonly quietSeconds: number;
  readonly quietSampleMs: number;
  readonly settleMaxSeconds: number;
  /** How often the watcher is asked whether the expected set is complete. */
  readonly pollMs: number;
}

export const FULL: Sizes = {
  shape: { nodes: 1000, units: 100, namespaces: 10, serviceGrids: 1000, deploymentGrids: 100 },
  concurrency: 32,
  convergeTimeoutS: 1200,
  relabelTimeoutS: 300,
  statusTimeoutS: 300,
  quietSeconds: 3,
  quietSampleMs: 500,
  settleMaxSeconds: 300,
  pollMs: 100,
};
export const QUICK: Sizes = {
  shape: { nodes: 20, units: 10, namespaces: 2, serviceGrids: 50, deploymentGrids: 10 },
  concurrency: 16,
  convergeTimeoutS: 60,
  relabelTimeoutS: 30,
  statusTimeoutS: 30,
  quietSeconds: 0.5,
  quietSampleMs: 250,
  settleMaxSeconds: 15,
  pollMs: 25,
};

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
export const unitValue = (u: number): string => `u${pad(u, 3)}`;
export const nodeName = (n: number): string => `node-${pad(n, 4)}`;
export const namespaceName = (k: number): string => `bench-grids-${pad(k, 2)}`;
export const serviceGridName = (i: number): string => `sg-${pad(i, 4)}`;
export const deploymentGridName = (j: number): string => `dg-${pad(j, 3)}`;
export const serviceGridNamespace = (shape: Shape, i: number): string => namespaceName(i % shape.namespaces);
export const deploymentGridNamespace = (shape: Shape, j: number): string =>
  namespaceName(j % shape.namespaces);

/** Node n's unit: the last node alone in the last unit, the others round-robin over the rest. */
export const unitOfNode = (shape: Shape, n: number): number =>
  n === shape.nodes - 1 ? shape.units - 1 : n % (shape.units - 1);

/** The unit values on the nodes before the relabel, sorted. */
export const initialUnits = (shape: Shape): string[] =>
  Array.from({ length: shape.units }, (_, u) => unitValue(u));

/** The relabel: the last node moves from the last unit (which vanishes) to a value no node had. */
export const relabelOf = (shape: Shape): { node: string; from: string; to: string } => ({
  node: nodeName(shape.nodes - 1),
  from: unitValue(shape.units - 1),
  to: unitValue(shape.units),
});

/** "ns/name" → the grid that must have made it (and the unit, for a Deployment). */
export interface Produced {
  readonly grid: string;
  readonly unit?: string;
}

export function expectedServices(shape: Shape): Map<string, Produced> {
  const out = new Map<string, Produced>();
  for (let i = 0; i < shape.serviceGrids; i++) {
    const grid = serviceGridName(i);
    out.set(`${serviceGridNamespace(shape, i)}/${grid}-svc`, { grid });
  }
  return out;
}

export function expectedDeployments(shape: Shape, units: readonly string[]): Map<string, Produced> {
  const out = new Map<string, Produced>();
  for (let j = 0; j < shape.deploymentGrids; j++) {
    const grid = deploymentGridName(j);
    for (const unit of units) out.set(`${deploymentGridNamespace(shape, j)}/${grid}-${unit}`, { grid, unit });
  }
  return out;
}

/** What a produced object's name says it is: `sg-NNNN-svc`, `dg-NNN-uNNN`. */
export function parseProduced(kind: Kind, name: string): Produced | undefined {
  const m = kind === 'services' ? /^(sg-\d{4})-svc$/.exec(name) : /^(dg-\d{3})-(u\d{3})$/.exec(name);
  if (m === null) return undefined;
  return m[2] === undefined ? { grid: m[1]! } : { grid: m[1]!, unit: m[2] };
}
