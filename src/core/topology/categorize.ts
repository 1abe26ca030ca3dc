// kube-proxy's endpoint selection (pkg/proxy/topology.go CategorizeEndpoints, 1.33+ with the
// PreferSameTrafficDistribution gate on, its default since 1.34), reproduced in behaviour over the engine's
// endpoint type. Cluster endpoints follow the hints in the slices; local endpoints follow a traffic policy
// of Local; both fall back to serving-terminating endpoints when nothing is ready.
import type { TopologyEndpoint } from './types.js';

export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode';

export interface CategorizeService {
  /** Not internalTrafficPolicy=Local, or externally accessible (kube-proxy's UsesClusterEndpoints). */
  readonly usesCluster: boolean;
  /** internalTrafficPolicy=Local, or externally accessible with externalTrafficPolicy=Local. */
  readonly usesLocal: boolean;
}

export interface Categorized {
  /** Absent when the Service never uses cluster endpoints. */
  readonly cluster?: readonly TopologyEndpoint[];
  /** Absent when the Service never uses local endpoints; empty (not absent) when it does and has none. */
  readonly local?: readonly TopologyEndpoint[];
  readonly all: readonly TopologyEndpoint[];
  /** Whether any endpoint is usable at all (kube-proxy's hasAnyEndpoints: REJECT versus DROP). */
  readonly hasAny: boolean;
  readonly mode: TopologyMode;
  /** The cluster list fell back to serving-terminating endpoints. */
  readonly servingTerminating: boolean;
}

const has = (hints: readonly string[] | undefined, v: string): boolean =>
  hints !== undefined && hints.includes(v);
const hinted = (hints: readonly string[] | undefined): boolean => hints !== undefined && hints.length > 0;

/** The topology mode the ready endpoints' hints allow for this node (kube-proxy's topologyModeFromHints). */
export function topologyMode(eps: readonly TopologyEndpoint[], node: string, zone: string): TopologyMode {
  let allNode = true;
  let forNode = false;
  let allZone = true;
  let forZone = false;
  for (const e of eps) {
    if (!e.ready) continue;
    if (!hinted(e.forNodes)) allNode = false;
    else if (has(e.forNodes, node)) forNode = true;
    if (!hinted(e.forZones)) allZone = false;
    else if (has(e.forZones, zone)) forZone = true;
  }
  if (allNode && forNode) return 'PreferSameNode';
  if (allZone && forZone) return 'PreferSameZone';
  return '';
}

const available = (e: TopologyEndpoint, mode: TopologyMode, node: string, zone: string): boolean =>
  mode === '' ? true : mode === 'PreferSameNode' ? has(e.forNodes, node) : has(e.forZones, zone);

/** CategorizeEndpoints: `zone` is the node's topology.kubernetes.io/zone label, "" when it has none. */
export function categorizeEndpoints(
  eps: readonly TopologyEndpoint[],
  svc: CategorizeService,
  node: string,
  zone: string,
): Categorized {
  let cluster: TopologyEndpoint[] | undefined;
  let mode: TopologyMode = '';
  let hasAny = false;
  let servingTerminating = false;
  if (svc.usesCluster) {
    mode = topologyMode(eps, node, zone);
    cluster = eps.filter((e) => e.ready && available(e, mode, node, zone));
    if (cluster.length === 0) {
      cluster = eps.filter((e) => e.serving && e.terminating);
      servingTerminating = cluster.length > 0;
    }
    hasAny = cluster.length > 0;
  }
  const base = { ...(cluster !== undefined ? { cluster } : {}), mode, servingTerminating };
  if (!svc.usesLocal) return { ...base, all: cluster ?? [], hasAny };

  const isLocal = (e: TopologyEndpoint) => e.nodeName === node;
  let localReady = false;
  let localServingTerminating = false;
  for (const e of eps) {
    if (e.ready) {
      hasAny = true;
      if (isLocal(e)) localReady = true;
    } else if (e.serving && e.terminating) {
      hasAny = true;
      if (isLocal(e)) localServingTerminating = true;
    }
  }
  let local: TopologyEndpoint[] = [];
  let useServingTerminating = false;
  if (localReady) local = eps.filter((e) => e.ready && isLocal(e));
  else if (localServingTerminating) {
    useServingTerminating = true;
    local = eps.filter((e) => e.serving && e.terminating && isLocal(e));
  }
  if (cluster === undefined) return { ...base, local, all: local, hasAny };
  if (mode === '' && !useServingTerminating) return { ...base, local, all: cluster, hasAny };
  const seen = new Set<string>();
  const all: TopologyEndpoint[] = [];
  for (const e of [...cluster, ...local]) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    all.push(e);
  }
  return { ...base, local, all, hasAny };
}
