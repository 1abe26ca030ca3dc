// Test builders for the proxy core: Service JSON, topology views built directly, and ServicePortStates for
// the renderers.
import type { TopologyView } from '../../topology/view.js';
import type { Rule, TopologyEndpoint } from '../../topology/types.js';
import type { ProxyEndpoint, ServicePortState } from '../types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// ---------------------------------------------------------------------------------------------- Services

export interface PortSpec {
  readonly name?: string;
  readonly port?: number;
  readonly protocol?: string;
  readonly nodePort?: number;
}

export interface ServiceSpec {
  readonly namespace?: string;
  readonly name?: string;
  readonly type?: string;
  readonly clusterIP?: string;
  readonly clusterIPs?: readonly string[];
  /** Default one port `http` 80/TCP. */
  readonly ports?: readonly PortSpec[] | unknown;
  readonly labels?: Readonly<Record<string, string>>;
  readonly externalIPs?: readonly string[];
  readonly lbIngress?: readonly Record<string, unknown>[];
  readonly sessionAffinity?: string;
  readonly affinityTimeout?: number;
  readonly externalTrafficPolicy?: string;
  readonly internalTrafficPolicy?: string;
  readonly loadBalancerSourceRanges?: readonly string[];
  readonly healthCheckNodePort?: number;
}

/** A v1 Service as JSON. */
export function service(o: ServiceSpec = {}): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    type: o.type ?? 'ClusterIP',
    clusterIP: o.clusterIP ?? '10.96.0.10',
    ports: o.ports ?? [{ name: 'http', port: 80, protocol: 'TCP' }],
  };
  if (o.clusterIPs !== undefined) spec['clusterIPs'] = o.clusterIPs;
  if (o.externalIPs !== undefined) spec['externalIPs'] = o.externalIPs;
  if (o.sessionAffinity !== undefined) spec['sessionAffinity'] = o.sessionAffinity;
  if (o.affinityTimeout !== undefined)
    spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: o.affinityTimeout } };
  if (o.externalTrafficPolicy !== undefined) spec['externalTrafficPolicy'] = o.externalTrafficPolicy;
  if (o.internalTrafficPolicy !== undefined) spec['internalTrafficPolicy'] = o.internalTrafficPolicy;
  if (o.loadBalancerSourceRanges !== undefined) spec['loadBalancerSourceRanges'] = o.loadBalancerSourceRanges;
  if (o.healthCheckNodePort !== undefined) spec['healthCheckNodePort'] = o.healthCheckNodePort;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      namespace: o.namespace ?? 'default',
      name: o.name ?? 'web',
      ...(o.labels !== undefined ? { labels: o.labels } : {}),
    },
    spec,
    status: { loadBalancer: o.lbIngress !== undefined ? { ingress: o.lbIngress } : {} },
  };
}

// ---------------------------------------------------------------------------------------------- views

export interface TopoEpSpec {
  /** Default `IPv4|http:TCP:8080`. */
  readonly pool?: string;
  readonly node?: string;
  readonly ready?: boolean;
}

const familyOf = (ip: string): string => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** A topology endpoint with one address, in a pool (`addressType|name:protocol:port,...`). */
export function topoEp(ip: string, o: TopoEpSpec = {}): TopologyEndpoint {
  const pool = o.pool ?? `${familyOf(ip)}|http:TCP:8080`;
  const ready = o.ready ?? true;
  return {
    id: `${pool}/${ip}`,
    pool,
    addressType: pool.slice(0, pool.indexOf('|')),
    addresses: [ip],
    ready,
    serving: true,
    terminating: !ready,
    ...(o.node !== undefined ? { nodeName: o.node } : {}),
    source: 'test',
  };
}

const NO_RULE: Rule = { kind: 'none', source: 'none', keys: [] };

/** A view with these endpoints; `external` absent means the Service is not externally accessible. */
export function view(
  internal: readonly TopologyEndpoint[],
  external?: readonly TopologyEndpoint[],
  key = 'default/web',
): TopologyView {
  return {
    key,
    internal,
    internalRule: NO_RULE,
    ...(external !== undefined ? { external, externalRule: NO_RULE } : {}),
  };
}

// ---------------------------------------------------------------------------------------------- states

/** A proxy endpoint (port 8080 unless given). */
export const ep = (ip: string, port = 8080, local = false, ready = true): ProxyEndpoint => ({
  ip,
  port,
  local,
  ready,
});

/** A Service port state keyed `key` (`ns/name[:port]`): ClusterIP 10.96.0.10, port 80/TCP, no endpoints. */
export function portState(key: string, o: Partial<Mutable<ServicePortState>> = {}): ServicePortState {
  const [namespace = '', rest = ''] = key.split('/');
  const [name = '', portName = ''] = rest.split(':');
  return {
    key,
    namespace,
    name,
    portName,
    protocol: 'TCP',
    clusterIPs: ['10.96.0.10'],
    port: 80,
    externalIPs: [],
    loadBalancerIPs: [],
    internal: [],
    external: [],
    externalLocal: false,
    internalLocal: false,
    ...o,
  };
}

/** A proxy state from port states. */
export const stateOf = (...states: readonly ServicePortState[]): Map<string, ServicePortState> =>
  new Map(states.map((s) => [s.key, s]));
