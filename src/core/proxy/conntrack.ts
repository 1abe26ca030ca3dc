// Which conntrack entries a sync must delete (behaves like kube-proxy's conntrack cleanup after
// syncProxyRules). UDP has no connection to end: a client sending from one source port keeps matching its
// conntrack entry, so its datagrams keep going to the endpoint chosen when the flow began, even after the
// rules stop naming that endpoint. So, for UDP service ports only:
// - an endpoint removed: delete the flows NATed to it, per cluster IP, external IP and node port;
// - a service port that had no endpoints and now has some: delete the flows to its addresses, which the
//   kernel may be holding from the time the traffic was REJECTed.
// TCP needs nothing: a removed endpoint's connections fail on their own, and new ones use the new rules.
// Pure.
import type { ServicePortState } from './types.js';

/** One `conntrack -D -p udp ...` call. */
export interface ConntrackDelete {
  /** `--orig-dst`: the address the client sent to (cluster or external IP). */
  readonly origDst?: string;
  /** `--dport`: the node port the client sent to. */
  readonly origPortDst?: number;
  /** `--dst-nat`: the endpoint the flow was NATed to. */
  readonly dstNat?: string;
}

const isV6 = (ip: string): boolean => ip.includes(':');

const endpointIPs = (sp: ServicePortState | undefined): Set<string> =>
  new Set(sp === undefined ? [] : [...sp.internal, ...sp.external].map((e) => e.ip));

/**
 * The deletions for the service ports in `changed`, going from `before` to `after` (either may lack a
 * key). `family` limits them to one IP family, as the rules are written per family.
 */
export function conntrackDeletes(
  before: ReadonlyMap<string, ServicePortState>,
  after: ReadonlyMap<string, ServicePortState>,
  changed: Iterable<string>,
  family: 4 | 6,
): ConntrackDelete[] {
  const out = new Map<string, ConntrackDelete>();
  const add = (d: ConntrackDelete): void => {
    out.set(`${d.origDst ?? ''}|${d.origPortDst ?? ''}|${d.dstNat ?? ''}`, d);
  };
  const mine = (ip: string): boolean => isV6(ip) === (family === 6);
  for (const key of changed) {
    const old = before.get(key);
    const now = after.get(key);
    const sp = old ?? now;
    if (sp === undefined || (old?.protocol ?? now?.protocol) !== 'UDP') continue;
    const addresses = (s: ServicePortState): string[] =>
      [...s.clusterIPs, ...s.externalIPs, ...s.loadBalancerIPs].filter(mine);
    const kept = endpointIPs(now?.protocol === 'UDP' ? now : undefined);
    for (const ip of endpointIPs(old)) {
      if (kept.has(ip) || !mine(ip)) continue;
      for (const dst of addresses(old!)) add({ origDst: dst, dstNat: ip });
      if (old!.nodePort !== undefined) add({ origPortDst: old!.nodePort, dstNat: ip });
    }
    const hadNone = old === undefined || old.internal.length + old.external.length === 0;
    if (
      now !== undefined &&
      now.protocol === 'UDP' &&
      hadNone &&
      now.internal.length + now.external.length > 0
    ) {
      for (const dst of addresses(now)) add({ origDst: dst });
      if (now.nodePort !== undefined) add({ origPortDst: now.nodePort });
    }
  }
  return [...out.values()];
}

/** The arguments of `conntrack` for one deletion. */
export function conntrackArgs(d: ConntrackDelete, family: 4 | 6): string[] {
  return [
    '-D',
    '-f',
    family === 6 ? 'ipv6' : 'ipv4',
    '-p',
    'udp',
    ...(d.origDst !== undefined ? ['--orig-dst', d.origDst] : []),
    ...(d.origPortDst !== undefined ? ['--dport', String(d.origPortDst)] : []),
    ...(d.dstNat !== undefined ? ['--dst-nat', d.dstNat] : []),
  ];
}
