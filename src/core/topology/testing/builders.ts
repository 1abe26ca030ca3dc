// Test builders for the topology engine: nodes, endpoints (built directly, or as EndpointSlice / Endpoints
// JSON fed through the engine's readers), a Service read through topologyService(), and run(), which calls
// decide() and flattens the decision into sorted address lists and per-address reasons for tables.
//
// The label keys are spelled out here rather than imported from rules.ts, so a typo there shows up as a
// failing test instead of being copied into the expectation.
import { decide } from '../decide.js';
import { endpointsFromEndpoints, endpointsFromSlices } from '../endpoints.js';
import { topologyService } from '../rules.js';
import type {
  Labels,
  NodeLabels,
  Reason,
  TopologyDecision,
  TopologyEndpoint,
  TopologyProblem,
  TopologyService,
  TrafficDecision,
} from '../types.js';

export const HOSTNAME = 'kubernetes.io/hostname';
export const ZONE = 'topology.kubernetes.io/zone';
export const REGION = 'topology.kubernetes.io/region';
export const NODEPOOL = 'apps.openyurt.io/nodepool';
export const SVCPLANE_KEYS = 'service.svcplane.io/topology-keys';
export const SUPEREDGE_KEYS = 'topologyKeys';
export const OPENYURT_KEYS = 'openyurt.io/topologyKeys';
export const TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';

// ---------------------------------------------------------------------------------------------- nodes

export interface NodeSpec {
  readonly name: string;
  readonly labels: Labels;
}

export const node = (name: string, labels: Labels = {}): NodeSpec => ({ name, labels });

/** The lookup decide() takes; a name not among `nodes` is unknown. */
export function nodeLookup(nodes: readonly NodeSpec[]): NodeLabels {
  const m = new Map(nodes.map((n) => [n.name, n.labels]));
  return (name) => m.get(name);
}

// ---------------------------------------------------------------------------------------------- endpoints

export interface EpOptions {
  /** nodeName; absent means none. */
  readonly node?: string;
  readonly zone?: string;
  /** Default true. */
  readonly ready?: boolean;
  /** Default: the same as ready (a TopologyEndpoint built directly; slices read an unset one as true). */
  readonly serving?: boolean;
  /** Default false. */
  readonly terminating?: boolean;
  readonly forZones?: readonly string[];
  readonly forNodes?: readonly string[];
  /** The v1beta1 `topology` map (v1 `deprecatedTopology`). */
  readonly topology?: Labels;
  /** Default: the address family. */
  readonly pool?: string;
}

export const familyOf = (address: string): 'IPv4' | 'IPv6' => (address.includes(':') ? 'IPv6' : 'IPv4');

/** A TopologyEndpoint with one address. */
export function ep(address: string, o: EpOptions = {}): TopologyEndpoint {
  const ready = o.ready ?? true;
  const pool = o.pool ?? familyOf(address);
  return {
    id: `${pool}/${address}`,
    pool,
    addressType: familyOf(address),
    addresses: [address],
    ready,
    serving: o.serving ?? ready,
    terminating: o.terminating ?? false,
    ...(o.node !== undefined ? { nodeName: o.node } : {}),
    ...(o.zone !== undefined ? { zone: o.zone } : {}),
    ...(o.topology !== undefined ? { deprecatedTopology: o.topology } : {}),
    ...(o.forZones !== undefined ? { forZones: o.forZones } : {}),
    ...(o.forNodes !== undefined ? { forNodes: o.forNodes } : {}),
    source: 'test',
  };
}

/** One endpoint of an EndpointSlice, as JSON. */
export function sliceEndpoint(address: string, o: EpOptions = {}): Record<string, unknown> {
  const conditions: Record<string, boolean> = {};
  if (o.ready !== undefined) conditions['ready'] = o.ready;
  if (o.serving !== undefined) conditions['serving'] = o.serving;
  if (o.terminating !== undefined) conditions['terminating'] = o.terminating;
  const hints: Record<string, unknown> = {};
  if (o.forZones !== undefined) hints['forZones'] = o.forZones.map((name) => ({ name }));
  if (o.forNodes !== undefined) hints['forNodes'] = o.forNodes.map((name) => ({ name }));
  return {
    addresses: [address],
    conditions,
    ...(o.node !== undefined ? { nodeName: o.node } : {}),
    ...(o.zone !== undefined ? { zone: o.zone } : {}),
    ...(o.topology !== undefined ? { deprecatedTopology: o.topology } : {}),
    ...(Object.keys(hints).length > 0 ? { hints } : {}),
  };
}

export interface SliceOptions {
  readonly addressType?: 'IPv4' | 'IPv6' | 'FQDN';
  /** Default: one port `http` 80/TCP. */
  readonly ports?: readonly { name?: string; port: number; protocol?: string }[];
  readonly service?: string;
}

/** An EndpointSlice as JSON. */
export function slice(
  name: string,
  endpoints: readonly Record<string, unknown>[],
  o: SliceOptions = {},
): Record<string, unknown> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'default',
      labels: { 'kubernetes.io/service-name': o.service ?? 'web' },
    },
    addressType: o.addressType ?? 'IPv4',
    ports: o.ports ?? [{ name: 'http', port: 80, protocol: 'TCP' }],
    endpoints,
  };
}

/** Endpoints read from slices by the engine's own reader. */
export const fromSlices = (...slices: readonly unknown[]): TopologyEndpoint[] => endpointsFromSlices(slices);

/** A legacy Endpoints object with one subset: `ready` go to addresses, `notReady` to notReadyAddresses. */
export function legacyEndpoints(
  ready: readonly { ip: string; node?: string }[],
  notReady: readonly { ip: string; node?: string }[] = [],
): TopologyEndpoint[] {
  const addr = (a: { ip: string; node?: string }) => ({
    ip: a.ip,
    ...(a.node !== undefined ? { nodeName: a.node } : {}),
  });
  return endpointsFromEndpoints({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: 'default' },
    subsets: [
      {
        addresses: ready.map(addr),
        notReadyAddresses: notReady.map(addr),
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ],
  });
}

// ---------------------------------------------------------------------------------------------- services

export interface SvcOptions {
  readonly name?: string;
  readonly namespace?: string;
  /** Default ClusterIP. */
  readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  /** Set on the one port; NodePort and LoadBalancer default to 30080 when it is not given. */
  readonly nodePort?: number;
  readonly externalIPs?: readonly string[];
  readonly lbIngress?: readonly { ip?: string; hostname?: string }[];
  readonly topologyKeys?: readonly string[];
  /** service.svcplane.io/topology-keys: a list is JSON-encoded, a string is used verbatim. */
  readonly svcplaneKeys?: readonly string[] | string;
  /** SuperEdge's `topologyKeys`: a list is JSON-encoded, a string is used verbatim. */
  readonly superedge?: readonly string[] | string;
  /** openyurt.io/topologyKeys. */
  readonly openyurt?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly internalTrafficPolicy?: string;
  readonly externalTrafficPolicy?: string;
  readonly trafficDistribution?: string;
}

const encode = (v: readonly string[] | string): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** A Service as JSON. */
export function svcJSON(o: SvcOptions = {}): { metadata: unknown; spec: unknown; status: unknown } {
  const annotations: Record<string, string> = { ...(o.annotations ?? {}) };
  if (o.svcplaneKeys !== undefined) annotations[SVCPLANE_KEYS] = encode(o.svcplaneKeys);
  if (o.superedge !== undefined) annotations[SUPEREDGE_KEYS] = encode(o.superedge);
  if (o.openyurt !== undefined) annotations[OPENYURT_KEYS] = o.openyurt;
  const type = o.type ?? 'ClusterIP';
  const nodePort = o.nodePort ?? (type === 'ClusterIP' ? undefined : 30080);
  const spec: Record<string, unknown> = {
    type,
    clusterIP: '10.96.0.10',
    ports: [
      {
        name: 'http',
        port: 80,
        targetPort: 8080,
        protocol: 'TCP',
        ...(nodePort !== undefined ? { nodePort } : {}),
      },
    ],
    selector: { app: 'web' },
  };
  if (o.externalIPs !== undefined) spec['externalIPs'] = o.externalIPs;
  if (o.topologyKeys !== undefined) spec['topologyKeys'] = o.topologyKeys;
  if (o.internalTrafficPolicy !== undefined) spec['internalTrafficPolicy'] = o.internalTrafficPolicy;
  if (o.externalTrafficPolicy !== undefined) spec['externalTrafficPolicy'] = o.externalTrafficPolicy;
  if (o.trafficDistribution !== undefined) spec['trafficDistribution'] = o.trafficDistribution;
  return {
    metadata: {
      name: o.name ?? 'web',
      namespace: o.namespace ?? 'default',
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec,
    status: { loadBalancer: o.lbIngress !== undefined ? { ingress: o.lbIngress } : {} },
  };
}

/** A Service as the engine reads it. */
export const svc = (o: SvcOptions = {}): TopologyService => topologyService(svcJSON(o));

// ---------------------------------------------------------------------------------------------- running

export interface RunInput {
  readonly service: TopologyService;
  readonly endpoints: readonly TopologyEndpoint[];
  readonly nodes: readonly NodeSpec[];
  /** The client's node. */
  readonly node: string;
  /** Per-node health; a node not listed has no verdict (undefined). */
  readonly health?: Readonly<Record<string, boolean>>;
}

export interface RunResult {
  /** Kept first addresses for internal traffic, sorted. */
  readonly internal: string[];
  /** Kept first addresses for external traffic, sorted; absent when the decision has no `external`. */
  readonly external?: string[];
  /** Internal traffic: first address → reason. */
  readonly reasons: Record<string, Reason>;
  readonly externalReasons?: Record<string, Reason>;
  readonly problems: readonly TopologyProblem[];
  readonly decision: TopologyDecision;
}

/** The kept first addresses of one traffic decision, sorted. */
export const kept = (d: TrafficDecision): string[] =>
  d.verdicts
    .filter((v) => v.kept)
    .map((v) => v.endpoint.addresses[0] ?? '')
    .sort();

/** First address → reason, for every endpoint of one traffic decision. */
export function reasonsOf(d: TrafficDecision): Record<string, Reason> {
  const out: Record<string, Reason> = {};
  for (const v of d.verdicts) out[v.endpoint.addresses[0] ?? ''] = v.reason;
  return out;
}

/** Calls decide() and flattens the result. */
export function run(input: RunInput): RunResult {
  const health = input.health;
  const decision = decide({
    service: input.service,
    endpoints: input.endpoints,
    nodeLabels: nodeLookup(input.nodes),
    node: input.node,
    ...(health !== undefined ? { health: (name: string) => health[name] } : {}),
  });
  const ext = decision.external;
  return {
    internal: kept(decision.internal),
    ...(ext !== undefined ? { external: kept(ext), externalReasons: reasonsOf(ext) } : {}),
    reasons: reasonsOf(decision.internal),
    problems: decision.problems,
    decision,
  };
}
