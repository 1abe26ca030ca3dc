// The dashboard's Service view, pure: a Service's endpoints by unit (the layout's group value) and node,
// those on no known node, and the flows: for each unit holding nodes, how many of its nodes may use no
// endpoint, and how many may reach each unit. The decisions come in as each node's kept endpoints.
import { compareBytes } from '../endpoints/read.js';
import type { TopologyEndpoint } from '../topology/types.js';
import { compareGroups } from './layout.js';
import type { ServiceAnswer, ServiceEndpoint } from './types.js';

export interface ServiceViewInput {
  readonly key: string;
  /** explain's one-line text of the internal rule. */
  readonly rule: string;
  readonly groupKey: string;
  /** Every endpoint of the Service, in the order `keptOf`'s indices refer to. */
  readonly endpoints: readonly TopologyEndpoint[];
  /** Every known node. */
  readonly nodes: Iterable<string>;
  /** A known node's unit (null: it has no value for the key); undefined for a node that is not known. */
  readonly unitOf: (node: string) => string | null | undefined;
  /** The indices into `endpoints` of what the node's internal traffic may use. */
  readonly keptOf: (node: string) => readonly number[];
}

const endpointView = (e: TopologyEndpoint): ServiceEndpoint => ({
  address: e.addresses[0] ?? '',
  pod: e.targetRef?.kind === 'Pod' ? (e.targetRef.name ?? null) : null,
  ready: e.ready,
  serving: e.serving,
  terminating: e.terminating,
});

export function serviceView(input: ServiceViewInput): ServiceAnswer {
  const units = new Map<string | null, Map<string, ServiceEndpoint[]>>();
  const unplaced: ServiceEndpoint[] = [];
  const epUnit: (string | null | undefined)[] = [];
  for (const ep of input.endpoints) {
    const u = ep.nodeName === undefined ? undefined : input.unitOf(ep.nodeName);
    epUnit.push(u);
    if (u === undefined) {
      unplaced.push(endpointView(ep));
      continue;
    }
    let byNode = units.get(u);
    if (byNode === undefined) units.set(u, (byNode = new Map()));
    let eps = byNode.get(ep.nodeName!);
    if (eps === undefined) byNode.set(ep.nodeName!, (eps = []));
    eps.push(endpointView(ep));
  }
  const flows = new Map<string | null, { nodes: number; none: number; to: Map<string | null, number> }>();
  for (const node of input.nodes) {
    const from = input.unitOf(node) ?? null;
    let f = flows.get(from);
    if (f === undefined) flows.set(from, (f = { nodes: 0, none: 0, to: new Map() }));
    f.nodes++;
    const kept = input.keptOf(node);
    if (kept.length === 0) f.none++;
    const reached = new Set<string | null>();
    for (const i of kept) {
      const u = epUnit[i];
      if (u !== undefined) reached.add(u);
    }
    for (const u of reached) f.to.set(u, (f.to.get(u) ?? 0) + 1);
  }
  const byGroup = <T>(m: Map<string | null, T>) => [...m].sort(([a], [b]) => compareGroups(a, b));
  return {
    key: input.key,
    rule: input.rule,
    groupKey: input.groupKey,
    units: byGroup(units).map(([value, byNode]) => ({
      value,
      nodes: [...byNode]
        .sort(([a], [b]) => compareBytes(a, b))
        .map(([node, endpoints]) => ({ node, endpoints })),
    })),
    unplaced,
    flows: byGroup(flows).map(([from, f]) => ({
      from,
      nodes: f.nodes,
      none: f.none,
      to: byGroup(f.to).map(([value, nodes]) => ({ value, nodes })),
    })),
  };
}
