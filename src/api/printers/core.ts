// Printers for the core/v1 kinds other than pods and events: services, endpoints, nodes, namespaces.
import type { KObject } from '../object.js';
import {
  firstWithMore,
  formatLabels,
  int,
  joinHostPort,
  obj,
  objects,
  sortedStrings,
  str,
  strings,
  type Json,
} from './fields.js';
import { since } from './time.js';
import { AGE_COLUMN, NAME_COLUMN, column, wide, type Printer } from './types.js';

// ---- services ---------------------------------------------------------------------------------

/** Load-balancer ingress points, IP preferred over hostname, de-duplicated and sorted. */
function loadBalancerIngress(status: Json): string[] {
  const points = new Set<string>();
  for (const ing of objects(obj(status['loadBalancer'])['ingress'])) {
    const point = str(ing['ip']) || str(ing['hostname']);
    if (point !== '') points.add(point);
  }
  return sortedStrings(points);
}

function serviceExternalIP(type: string, spec: Json, status: Json): string {
  const externalIPs = strings(spec['externalIPs']);
  switch (type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      // The server prints as for `-o wide`, so the ingress list is never clipped.
      const all = [...loadBalancerIngress(status), ...externalIPs];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec['externalName']);
    default:
      return '<unknown>';
  }
}

/** `80/TCP,443:30443/TCP`, or `<none>`. */
function servicePorts(ports: unknown): string {
  const text = objects(ports)
    .map((p) => {
      const protocol = str(p['protocol']) || 'TCP';
      const nodePort = int(p['nodePort']);
      return nodePort > 0 ? `${int(p['port'])}:${nodePort}/${protocol}` : `${int(p['port'])}/${protocol}`;
    })
    .join(',');
  return text === '' ? '<none>' : text;
}

function serviceCells(svc: KObject, nowMs: number): unknown[] {
  const spec = obj(svc['spec']);
  const status = obj(svc['status']);
  const type = str(spec['type']) || 'ClusterIP';
  const clusterIPs = strings(spec['clusterIPs']);
  const clusterIP = clusterIPs[0] ?? (str(spec['clusterIP']) || '<none>');
  return [
    svc.metadata.name ?? '',
    type,
    clusterIP,
    serviceExternalIP(type, spec, status),
    servicePorts(spec['ports']),
    since(svc.metadata.creationTimestamp, nowMs),
    formatLabels(spec['selector']),
  ];
}

export const servicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Type', 'How the service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.'),
    column('Cluster-IP', 'The virtual IP address of the service inside the cluster.'),
    column('External-IP', 'Addresses outside the cluster at which the service is reachable.'),
    column('Port(s)', 'The ports the service exposes, with node ports, and their protocols.'),
    AGE_COLUMN,
    wide('Selector', 'The pod labels that select the backends of the service.'),
  ],
  cells: serviceCells,
};

// ---- endpoints --------------------------------------------------------------------------------

/** Up to three `ip:port` pairs over every subset, then `+ N more...`; `<none>` without subsets. */
function formatEndpoints(subsets: unknown): string {
  const all = objects(subsets);
  if (all.length === 0) return '<none>';
  const items: string[] = [];
  for (const subset of all) {
    const ips = objects(subset['addresses']).map((a) => str(a['ip']));
    const ports = objects(subset['ports']);
    // A headless service may have endpoints without ports: list the bare addresses.
    if (ports.length === 0) items.push(...ips);
    for (const port of ports) items.push(...ips.map((ip) => joinHostPort(ip, int(port['port']))));
  }
  return firstWithMore(items);
}

export const endpointsPrinter: Printer = {
  columns: [NAME_COLUMN, column('Endpoints', 'The ready addresses and ports of the endpoints.'), AGE_COLUMN],
  cells: (ep, nowMs) => [
    ep.metadata.name ?? '',
    formatEndpoints(ep['subsets']),
    since(ep.metadata.creationTimestamp, nowMs),
  ],
};

// ---- nodes ------------------------------------------------------------------------------------

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from `node-role.kubernetes.io/<role>` keys and the value of `kubernetes.io/role`, sorted. */
function nodeRoles(labels: Record<string, string> | undefined): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(labels ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX)) {
      const role = key.slice(ROLE_LABEL_PREFIX.length);
      if (role !== '') roles.add(role);
    } else if (key === LEGACY_ROLE_LABEL && typeof value === 'string' && value !== '') {
      roles.add(value);
    }
  }
  return roles.size === 0 ? '<none>' : sortedStrings(roles).join(',');
}

function nodeStatus(node: KObject, status: Json): string {
  // The last Ready condition wins, as kube's condition map keeps the last one of each type.
  const readyCondition = objects(status['conditions'])
    .filter((c) => c['type'] === 'Ready')
    .at(-1);
  const parts = [
    readyCondition === undefined ? 'Unknown' : readyCondition['status'] === 'True' ? 'Ready' : 'NotReady',
  ];
  if (obj(node['spec'])['unschedulable'] === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

const nodeAddress = (status: Json, type: string): string =>
  str(objects(status['addresses']).find((a) => a['type'] === type)?.['address']) || '<none>';

function nodeCells(node: KObject, nowMs: number): unknown[] {
  const status = obj(node['status']);
  const info = obj(status['nodeInfo']);
  return [
    node.metadata.name ?? '',
    nodeStatus(node, status),
    nodeRoles(node.metadata.labels),
    since(node.metadata.creationTimestamp, nowMs),
    str(info['kubeletVersion']),
    nodeAddress(status, 'InternalIP'),
    nodeAddress(status, 'ExternalIP'),
    str(info['osImage']) || '<unknown>',
    str(info['kernelVersion']) || '<unknown>',
    str(info['containerRuntimeVersion']) || '<unknown>',
  ];
}

export const nodePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'Whether the node is ready, and whether scheduling onto it is disabled.'),
    column('Roles', 'The roles of the node, from its node-role.kubernetes.io/* labels.'),
    AGE_COLUMN,
    column('Version', 'The version of the kubelet on the node.'),
    wide('Internal-IP', 'The first internal IP address of the node.'),
    wide('External-IP', 'The first external IP address of the node.'),
    wide('OS-Image', 'The operating system image the node reports.'),
    wide('Kernel-Version', 'The kernel version the node reports.'),
    wide('Container-Runtime', 'The container runtime and version the node reports.'),
  ],
  cells: nodeCells,
};

// ---- namespaces -------------------------------------------------------------------------------

export const namespacePrinter: Printer = {
  columns: [NAME_COLUMN, column('Status', 'The phase of the namespace: Active or Terminating.'), AGE_COLUMN],
  cells: (ns, nowMs) => [
    ns.metadata.name ?? '',
    str(obj(ns['status'])['phase']),
    since(ns.metadata.creationTimestamp, nowMs),
  ],
};

// ---- serviceaccounts --------------------------------------------------------------------------

export const serviceAccountPrinter: Printer = {
  columns: [NAME_COLUMN, column('Secrets', 'The number of Secrets the account lists.'), AGE_COLUMN],
  cells: (sa, nowMs) => [
    sa.metadata.name ?? '',
    objects(sa['secrets']).length,
    since(sa.metadata.creationTimestamp, nowMs),
  ],
};
