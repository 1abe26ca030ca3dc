// Test builders: a Service, a Pod or an Endpoints object from the few fields a test cares about.
import type {
  Container,
  EndpointAddress,
  EndpointPort,
  EndpointSubset,
  Endpoints,
  Pod,
  Service,
  ServicePort,
} from '../types.js';

export interface ServiceOptions {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  /** null: selectorless. Default { app: 'web' }. */
  selector?: Record<string, string> | null;
  type?: string;
  /** "" for none; default 10.0.0.1. */
  clusterIP?: string;
  ipFamilies?: string[];
  /** Default: one port `http` 80 → 8080/TCP. */
  ports?: ServicePort[];
  publishNotReadyAddresses?: boolean;
  creationTimestamp?: string;
}

export function service(o: ServiceOptions = {}): Service {
  const spec: Record<string, unknown> = {
    type: o.type ?? 'ClusterIP',
    ports: o.ports ?? [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
  };
  if (o.selector !== null) spec['selector'] = o.selector ?? { app: 'web' };
  const clusterIP = o.clusterIP ?? '10.0.0.1';
  if (clusterIP !== '') spec['clusterIP'] = clusterIP;
  if (o.ipFamilies !== undefined) spec['ipFamilies'] = o.ipFamilies;
  if (o.publishNotReadyAddresses !== undefined) spec['publishNotReadyAddresses'] = o.publishNotReadyAddresses;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: o.name ?? 'foo',
      namespace: o.namespace ?? 'default',
      uid: `svc-uid-${o.name ?? 'foo'}`,
      ...(o.labels === undefined ? {} : { labels: o.labels }),
      ...(o.creationTimestamp === undefined ? {} : { creationTimestamp: o.creationTimestamp }),
    },
    spec,
  };
}

export interface PodOptions {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  /** status.podIPs (status.podIP is the first); "" or [] for none. Default 1.2.3.4. */
  ip?: string | string[];
  /** Set status.podIP only, leaving status.podIPs out. */
  podIPOnly?: boolean;
  phase?: string;
  /** The Ready condition's status ("True" / "False"); default true. */
  ready?: boolean;
  /** The Ready condition's lastTransitionTime. */
  readyAt?: string;
  /** Without a Ready condition at all. */
  noReadyCondition?: boolean;
  terminating?: boolean;
  nodeName?: string;
  hostname?: string;
  subdomain?: string;
  /** Default: one container `c` with port `http` 8080/TCP. */
  containers?: Container[];
  initContainers?: Container[];
}

export function pod(o: PodOptions = {}): Pod {
  const name = o.name ?? 'pod0';
  const ips =
    o.ip === undefined ? ['1.2.3.4'] : typeof o.ip === 'string' ? (o.ip === '' ? [] : [o.ip]) : o.ip;
  const status: Record<string, unknown> = { phase: o.phase ?? 'Running' };
  if (ips.length > 0) {
    status['podIP'] = ips[0];
    if (o.podIPOnly !== true) status['podIPs'] = ips.map((ip) => ({ ip }));
  }
  if (o.noReadyCondition !== true) {
    status['conditions'] = [
      {
        type: 'Ready',
        status: (o.ready ?? true) ? 'True' : 'False',
        ...(o.readyAt === undefined ? {} : { lastTransitionTime: o.readyAt }),
      },
    ];
  }
  const spec: Record<string, unknown> = {
    containers: o.containers ?? [
      { name: 'c', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] },
    ],
  };
  if (o.initContainers !== undefined) spec['initContainers'] = o.initContainers;
  if (o.nodeName !== undefined) spec['nodeName'] = o.nodeName;
  if (o.hostname !== undefined) spec['hostname'] = o.hostname;
  if (o.subdomain !== undefined) spec['subdomain'] = o.subdomain;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.terminating === true ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
    spec,
    status,
  };
}

/** The address a pod named `name` in `namespace` publishes (targetRef uid `uid-<name>`). */
export function addr(
  ip: string,
  name?: string,
  namespace = 'default',
  extra: Partial<EndpointAddress> = {},
): EndpointAddress {
  const out: EndpointAddress = { ip, ...extra };
  if (name !== undefined) {
    if (extra.nodeName !== undefined && extra.nodeName !== '') out.nodeName = extra.nodeName;
    out.targetRef = { kind: 'Pod', namespace, name, uid: `uid-${name}` };
  }
  return out;
}

export const port = (p: number, name?: string, protocol = 'TCP'): EndpointPort => ({
  ...(name === undefined ? {} : { name }),
  port: p,
  protocol,
});

export const subset = (
  addresses: EndpointAddress[],
  ports?: EndpointPort[],
  notReadyAddresses?: EndpointAddress[],
): EndpointSubset => ({
  ...(addresses.length > 0 ? { addresses } : {}),
  ...(notReadyAddresses === undefined || notReadyAddresses.length === 0 ? {} : { notReadyAddresses }),
  ...(ports === undefined ? {} : { ports }),
});

export interface EndpointsOptions {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  subsets?: EndpointSubset[];
}

export function endpoints(o: EndpointsOptions = {}): Endpoints {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name: o.name ?? 'foo',
      namespace: o.namespace ?? 'default',
      uid: 'ep-uid',
      resourceVersion: o.resourceVersion ?? '1',
      creationTimestamp: '2020-01-01T00:00:00Z',
      ...(o.labels === undefined ? {} : { labels: o.labels }),
      ...(o.annotations === undefined ? {} : { annotations: o.annotations }),
    },
    ...(o.subsets === undefined ? {} : { subsets: o.subsets }),
  };
}

/** A distinct IPv4 address for index i (10.<i/65536>.<i/256>.<i%256>). */
export const nthIP = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
