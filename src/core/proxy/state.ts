// The node proxy's desired state: each Service port with the endpoints this node may use for it. Behaves
// like kube-proxy's ServiceChangeTracker (pkg/proxy/servicechangetracker.go, serviceinfo.go: which Services
// are proxied and what is read from them) and EndpointsMap (pkg/proxy/endpointslicecache.go: slice ports
// matched to Service ports by name), except that the endpoints come from the topology engine's view of the
// Service for this node, so topology rules and traffic policies are already applied.
import { cidrContains, formatCidr, parseAddress, parseCidrRange } from '../allocator/cidr.js';
import { int, list, optStr, rec } from '../endpoints/read.js';
import { poolPorts } from '../topology/endpoints.js';
import type { TopologyView } from '../topology/view.js';
import type { TopologyEndpoint } from '../topology/types.js';
import type { Protocol, ProxyEndpoint, ServicePortState } from './types.js';

/** A Service with this label is proxied by another proxy (kube-proxy skips it). */
export const SERVICE_PROXY_NAME_LABEL = 'service.kubernetes.io/service-proxy-name';
/** A Service with this label is headless for proxies (kube-proxy skips it). */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** kube-proxy's default ClientIP affinity timeout (v1.DefaultClientIPServiceAffinitySeconds). */
export const DEFAULT_AFFINITY_SECONDS = 10800;
/** The longest ClientIP affinity timeout the API accepts (v1.MaxClientIPServiceAffinitySeconds). */
const MAX_AFFINITY_SECONDS = 86400;

const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'SCTP']);

const strings = (v: unknown): string[] =>
  list(v).filter((x): x is string => typeof x === 'string' && x !== '');

/** Whether kube-proxy would leave the Service alone (its ShouldSkipService). */
function skipped(svc: Record<string, unknown>, spec: Record<string, unknown>): boolean {
  const labels = rec(rec(svc['metadata'])['labels']);
  if (SERVICE_PROXY_NAME_LABEL in labels || HEADLESS_LABEL in labels) return true;
  if (spec['type'] === 'ExternalName') return true;
  const clusterIP = optStr(spec['clusterIP']) ?? '';
  return clusterIP === '' || clusterIP === 'None';
}

/** The ClientIP affinity timeout, or undefined for no affinity. */
function affinity(spec: Record<string, unknown>): number | undefined {
  if (spec['sessionAffinity'] !== 'ClientIP') return undefined;
  const t = int(rec(rec(spec['sessionAffinityConfig'])['clientIP'])['timeoutSeconds']);
  return t !== undefined && t > 0 && t <= MAX_AFFINITY_SECONDS ? t : DEFAULT_AFFINITY_SECONDS;
}

/**
 * spec.loadBalancerSourceRanges as network CIDRs (kube-proxy trims the spaces validation lets through and
 * skips what does not parse), and the families in which one of them holds an address of this node.
 */
function sourceRanges(
  spec: Record<string, unknown>,
  nodeIPs: readonly string[],
): { ranges: string[]; holdNode: (4 | 6)[] } {
  const parsed = strings(spec['loadBalancerSourceRanges'])
    .map((r) => parseCidrRange(r.trim()))
    .filter((c) => c !== undefined);
  const node = nodeIPs.map(parseAddress).filter((a) => a !== undefined);
  const holdNode = new Set<4 | 6>();
  for (const c of parsed) if (node.some((a) => cidrContains(c, a))) holdNode.add(c.family === 'IPv4' ? 4 : 6);
  return { ranges: [...new Set(parsed.map(formatCidr))], holdNode: [...holdNode].sort() };
}

/** The service port's number in each pool, parsed once per pool for all the endpoints in it. */
type PortInPool = (pool: string) => number;

function portMatcher(portName: string, protocol: string): PortInPool {
  const memo = new Map<string, number>();
  return (pool) => {
    let n = memo.get(pool);
    if (n === undefined) {
      n = poolPorts(pool).find((p) => p.name === portName && p.protocol === protocol)?.port ?? 0;
      memo.set(pool, n);
    }
    return n;
  };
}

const compareEndpoints = (a: ProxyEndpoint, b: ProxyEndpoint): number =>
  a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : a.port - b.port;

/**
 * The endpoints of one Service port, from the view's endpoints: one per ip:port (a pod listed in two slices
 * counts once, ready and local if any copy is), sorted by ip then port.
 */
function proxyEndpoints(eps: readonly TopologyEndpoint[], portIn: PortInPool, node: string): ProxyEndpoint[] {
  const byAddr = new Map<string, ProxyEndpoint>();
  for (const e of eps) {
    if (e.addressType === 'FQDN') continue; // kube-proxy ignores FQDN slices
    const ip = e.addresses[0];
    if (typeof ip !== 'string' || ip === '') continue;
    const port = portIn(e.pool);
    if (port <= 0) continue;
    const id = `${ip}|${port}`;
    const local = e.nodeName === node;
    const known = byAddr.get(id);
    if (known === undefined) byAddr.set(id, { ip, port, local, ready: e.ready });
    else byAddr.set(id, { ip, port, local: known.local || local, ready: known.ready || e.ready });
  }
  // Exactly as long as it needs (a spread keeps room to grow): the state holds one per Service port.
  const out = new Array<ProxyEndpoint>(byAddr.size);
  let i = 0;
  for (const ep of byAddr.values()) out[i++] = ep;
  return out.sort(compareEndpoints);
}

/**
 * The states of one Service's ports as seen from `node`, with the endpoints of `view` (the topology engine's
 * view of the Service for this node; undefined when it has no slices yet). Services kube-proxy does not
 * proxy give none. Never throws: a field of the wrong type reads as absent.
 */
export function servicePortStates(
  svc: unknown,
  view: TopologyView | undefined,
  node: string,
  nodeIPs: readonly string[] = [],
): ServicePortState[] {
  const s = rec(svc);
  const meta = rec(s['metadata']);
  const spec = rec(s['spec']);
  if (skipped(s, spec)) return [];
  const namespace = optStr(meta['namespace']) ?? '';
  const name = optStr(meta['name']) ?? '';
  const clusterIP = optStr(spec['clusterIP']) ?? '';
  // Copies of exactly their length: filter()'s result keeps room to grow, and every Service port holds these.
  const listed = strings(spec['clusterIPs']).filter((ip) => ip !== 'None');
  const clusterIPs = listed.length > 0 ? listed.slice() : [clusterIP];
  const externalIPs = strings(spec['externalIPs']).slice();
  // A load-balancer ingress in Proxy mode is not a VIP this node answers for (kube-proxy's LoadBalancerVIPs).
  const loadBalancerIPs = list(rec(rec(s['status'])['loadBalancer'])['ingress'])
    .map(rec)
    .filter((i) => i['ipMode'] !== 'Proxy')
    .map((i) => optStr(i['ip']) ?? '')
    .filter((ip) => ip !== '');
  const firewall = sourceRanges(spec, nodeIPs);
  // kube-proxy's NeedsHealthCheck: a LoadBalancer Service with externalTrafficPolicy Local.
  const healthCheck =
    spec['type'] === 'LoadBalancer' && spec['externalTrafficPolicy'] === 'Local'
      ? (int(spec['healthCheckNodePort']) ?? 0)
      : 0;
  const affinityTimeoutSeconds = affinity(spec);
  const internalLocal = spec['internalTrafficPolicy'] === 'Local';
  const out: ServicePortState[] = [];
  const ports = list(spec['ports']).map(rec);
  const externallyAccessible =
    externalIPs.length > 0 || loadBalancerIPs.length > 0 || ports.some((p) => (int(p['nodePort']) ?? 0) > 0);
  // kube-proxy's ExternalPolicyLocal: only a Service reachable from outside has an external policy.
  const externalLocal = externallyAccessible && spec['externalTrafficPolicy'] === 'Local';
  // A view unpacks its endpoints on each read: once per Service, not per port.
  const internalEps = view?.internal ?? [];
  const externalEps = view?.external;
  for (const p of ports) {
    const portName = optStr(p['name']) ?? '';
    const protocol = optStr(p['protocol']) ?? 'TCP';
    const port = int(p['port']) ?? 0;
    if (!PROTOCOLS.has(protocol) || port <= 0 || port > 65535) continue;
    const nodePort = int(p['nodePort']) ?? 0;
    const portIn = portMatcher(portName, protocol);
    out.push({
      key: portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`,
      namespace,
      name,
      portName,
      protocol: protocol as Protocol,
      clusterIPs,
      port,
      ...(nodePort > 0 ? { nodePort } : {}),
      externalIPs,
      loadBalancerIPs,
      ...(firewall.ranges.length > 0 ? { loadBalancerSourceRanges: firewall.ranges } : {}),
      ...(firewall.holdNode.length > 0 ? { sourceRangesHoldNode: firewall.holdNode } : {}),
      ...(healthCheck > 0 && healthCheck <= 65535 ? { healthCheckNodePort: healthCheck } : {}),
      ...(affinityTimeoutSeconds !== undefined ? { affinityTimeoutSeconds } : {}),
      internal: proxyEndpoints(internalEps, portIn, node),
      external: externalEps === undefined ? [] : proxyEndpoints(externalEps, portIn, node),
      ...(view?.usablePools !== undefined
        ? { hasEndpoints: view.usablePools.some((pool) => portIn(pool) > 0) }
        : {}),
      externalLocal,
      internalLocal,
    });
  }
  return out;
}

/**
 * The whole desired state of `node`'s proxy: every proxied Service port by key, each with its view's
 * endpoints (`view` looks a view up by `namespace/name`). When two ports share a key (an invalid Service)
 * the first one wins.
 */
export function proxyState(
  services: Iterable<unknown>,
  view: (key: string) => TopologyView | undefined,
  node: string,
  nodeIPs: readonly string[] = [],
): Map<string, ServicePortState> {
  const out = new Map<string, ServicePortState>();
  for (const svc of services) {
    const meta = rec(rec(svc)['metadata']);
    const key = `${optStr(meta['namespace']) ?? ''}/${optStr(meta['name']) ?? ''}`;
    for (const st of servicePortStates(svc, view(key), node, nodeIPs))
      if (!out.has(st.key)) out.set(st.key, st);
  }
  return out;
}
