// Where the userspace proxy listens for each Service port. Without root the proxy cannot capture traffic
// sent to a ClusterIP, so it listens on a loopback address that stands for it: the `--userspace-cidr`
// base with the cluster IP's host bits (10.96.3.7 with 127.1.0.0/16 → 127.1.3.7). Without a CIDR it
// listens on the cluster IP itself, which works where that address is local (a network namespace with
// a local route). Pure: the data plane (src/proxy/userspace.ts) opens what this plans.
// Kube-proxy's removed userspace mode opened one "portal" per Service port the same way: cluster IP,
// node ports, external IPs and load-balancer ingress IPs (pkg/proxy/userspace/proxier.go, by behaviour).
import { cidrContains, cidrSize, formatAddress, parseAddress, parseCidrRange } from '../allocator/cidr.js';
import type { Protocol, ProxyEndpoint, ProxyState, ServicePortState } from './types.js';

export interface Listener {
  /** The service port key (kube-proxy's ServicePortName) this listener serves. */
  readonly key: string;
  /** Which traffic it takes: cluster listeners use the internal endpoints, the others the external ones. */
  readonly kind: 'cluster' | 'nodePort' | 'external';
  readonly protocol: Protocol;
  /** Canonical address text. */
  readonly address: string;
  readonly port: number;
  /**
   * A load-balancer IP's listener of a Service with loadBalancerSourceRanges: the CIDRs its clients must
   * come from (iptables mode's KUBE-FW- chain). Absent: every client.
   */
  readonly sourceRanges?: readonly string[];
}

export interface ListenerConflict {
  /** The listener that was not planned. */
  readonly listener: Listener;
  /** The key of the service port that holds the same address:port/protocol. */
  readonly with: string;
}

/**
 * The address standing for `clusterIP`: the CIDR's network with the cluster IP's host bits below the
 * CIDR's prefix, or the cluster IP itself (canonical) when there is no CIDR. undefined when either text
 * is invalid or the families differ (an IPv6 cluster IP with an IPv4 CIDR).
 */
export function listenAddress(clusterIP: string, cidr: string | undefined): string | undefined {
  const ip = parseAddress(clusterIP);
  if (ip === undefined) return undefined;
  if (cidr === undefined) return formatAddress(ip);
  const c = parseCidrRange(cidr);
  if (c === undefined || c.family !== ip.family) return undefined;
  const hostMask = cidrSize(c) - 1n;
  return formatAddress({ family: c.family, value: c.network | (ip.value & hostMask) });
}

/** One spelling per socket: `TCP/127.1.3.7:80`, `UDP/[fd00::1]:53`. */
export function listenerId(l: Pick<Listener, 'protocol' | 'address' | 'port'>): string {
  const host = l.address.includes(':') ? `[${l.address}]` : l.address;
  return `${l.protocol}/${host}:${l.port}`;
}

export interface ListenOptions {
  /** `--userspace-cidr`; absent means "listen on the cluster IP itself". */
  readonly cidr?: string;
  /** Addresses that take NodePort traffic (one listener each per node port). */
  readonly nodePortAddresses: readonly string[];
  /**
   * `--userspace-port-offset`: added to the Service port of cluster and external listeners, for a
   * process that may not bind ports below 1024 (10080 stands for port 80). Node ports keep theirs.
   */
  readonly portOffset?: number;
}

/** The port a cluster or external listener uses for a Service port; undefined past 65535. */
export function listenPort(port: number, offset = 0): number | undefined {
  const p = port + offset;
  return Number.isInteger(p) && p >= 1 && p <= 65535 ? p : undefined;
}

/**
 * Every listener the state asks for, in service-port key order. A cluster listener per cluster IP that
 * maps to a listen address (with an IPv4 CIDR: the IPv4 cluster IPs), a nodePort listener per node-port
 * address, an external listener per external IP and load-balancer IP. When two service ports map to the
 * same address:port/protocol, the first by key order keeps it and the other is reported as a conflict;
 * a service port asking twice for one socket in the same role (an IP listed as external and as
 * load-balancer, two cluster IPs with the same host bits) gets it once, silently; in two roles, the
 * first role (cluster, nodePort, external) keeps it and the other is reported.
 */
export function plannedListeners(
  state: ProxyState,
  o: ListenOptions,
): { listeners: Listener[]; conflicts: ListenerConflict[] } {
  const listeners: Listener[] = [];
  const conflicts: ListenerConflict[] = [];
  const taken = new Map<string, Listener>();
  const nodePortAddresses = canonicalAll(o.nodePortAddresses);
  const keys = [...state.keys()].sort();
  for (const key of keys) {
    const sp = state.get(key);
    if (sp === undefined) continue;
    // Keyed by role and socket, so one role asking twice for a socket counts once.
    const wanted = new Map<string, Listener>();
    const add = (kind: Listener['kind'], address: string, port: number, ranges?: string[]): void => {
      const l: Listener = {
        key,
        kind,
        protocol: sp.protocol,
        address,
        port,
        ...(ranges !== undefined ? { sourceRanges: ranges } : {}),
      };
      const id = `${kind} ${listenerId(l)}`;
      if (!wanted.has(id)) wanted.set(id, l);
    };
    const port = listenPort(sp.port, o.portOffset);
    for (const ip of sp.clusterIPs) {
      const address = listenAddress(ip, o.cidr);
      if (address !== undefined && port !== undefined) add('cluster', address, port);
    }
    if (sp.nodePort !== undefined && sp.nodePort > 0) {
      for (const address of nodePortAddresses) add('nodePort', address, sp.nodePort);
    }
    // External IPs first: an address that is also a load-balancer IP is not firewalled (in iptables mode
    // its external-IP rule matches first, before KUBE-FW-).
    for (const address of canonicalAll(sp.externalIPs)) {
      if (port !== undefined) add('external', address, port);
    }
    for (const address of canonicalAll(sp.loadBalancerIPs)) {
      if (port !== undefined) add('external', address, port, firewallOf(sp, address));
    }
    for (const l of wanted.values()) {
      const id = listenerId(l);
      const holder = taken.get(id);
      if (holder === undefined) {
        taken.set(id, l);
        listeners.push(l);
      } else {
        conflicts.push({ listener: l, with: holder.key });
      }
    }
  }
  return { listeners, conflicts };
}

/**
 * The source ranges a load-balancer IP's clients must come from: the Service's ranges of the address's
 * family, plus its load-balancer IPs of that family when a range holds the node (kube-proxy's
 * allowFromNode). undefined when the family has no ranges (every client may connect).
 */
function firewallOf(sp: ServicePortState, address: string): string[] | undefined {
  const v6 = address.includes(':');
  const ranges = (sp.loadBalancerSourceRanges ?? []).filter((c) => c.includes(':') === v6);
  if (ranges.length === 0) return undefined;
  if (sp.sourceRangesHoldNode?.includes(v6 ? 6 : 4) === true)
    for (const ip of canonicalAll(sp.loadBalancerIPs))
      if (ip.includes(':') === v6) ranges.push(`${ip}/${v6 ? 128 : 32}`);
  return ranges;
}

/**
 * Whether a client address may use the listener: always without source ranges, else when a range holds
 * it (an IPv4-mapped IPv6 address counts as IPv4). An unknown address is refused.
 */
export function sourceFilter(l: Listener): (address: string | undefined) => boolean {
  if (l.sourceRanges === undefined) return () => true;
  const ranges = l.sourceRanges.map(parseCidrRange).filter((c) => c !== undefined);
  return (address) => {
    const a = address === undefined ? undefined : parseAddress(address);
    return a !== undefined && ranges.some((c) => cidrContains(c, a));
  };
}

/** Canonical spellings, invalid ones dropped, duplicates once, order kept. */
function canonicalAll(ips: readonly string[]): string[] {
  const out = new Set<string>();
  for (const ip of ips) {
    const a = parseAddress(ip);
    if (a !== undefined) out.add(formatAddress(a));
  }
  return [...out];
}

/**
 * The endpoints a listener forwards to: the internal ones for cluster listeners, the external ones for
 * node-port and external listeners; the ready ones, or the serving-terminating ones when none is ready.
 */
export function listenerEndpoints(sp: ServicePortState, kind: Listener['kind']): readonly ProxyEndpoint[] {
  const all = kind === 'cluster' ? sp.internal : sp.external;
  const ready = all.filter((e) => e.ready);
  return ready.length > 0 ? ready : all;
}
