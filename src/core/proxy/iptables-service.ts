// The iptables rules of one Service port, in one address family: its dispatch rules (the lines it adds to
// KUBE-SERVICES, KUBE-NODEPORTS and the filter table's REJECT/DROP/ACCEPT chains) and its own chains
// (KUBE-SVC-, KUBE-SVL-, KUBE-EXT-, KUBE-FW-, KUBE-SEP-). Behaves like the per-service loop of kube-proxy's
// pkg/proxy/iptables/proxier.go syncProxyRules and writeServiceToEndpointRules.
import { extChain, fwChain, hostPort, sepChain, svcChain, svlChain } from './chain-names.js';
import type { ProxyEndpoint, ServicePortState } from './types.js';

export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';

export type Family = 4 | 6;

/** What the per-service rules read from the render options. */
export interface ServiceRuleOptions {
  readonly family: Family;
  readonly clusterCIDR?: string;
  readonly masqueradeAll?: boolean;
}

export const familyOf = (ip: string): Family => (ip.includes(':') ? 6 : 4);

const SAFE = /^[A-Za-z0-9_-]+$/;
const ESCAPED = /["\\']/;

/**
 * A comment (or any argument) as iptables-save prints it (xtables_save_string): bare when it is only
 * letters, digits, '_' and '-', otherwise in double quotes with '"', '\' and '\'' escaped.
 */
export function quote(s: string): string {
  if (SAFE.test(s)) return s;
  return ESCAPED.test(s) ? `"${s.replace(/["\\']/g, '\\$&')}"` : `"${s}"`;
}

/** 1/k with 10 decimals, as Go's "%0.10f" prints it (an exact tie rounds to even, where toFixed rounds up). */
function probabilityOf(k: number): string {
  const twice = 2e10 / k; // 2·10^10/k is an odd integer exactly when 10^10/k ends in .5
  if (Number.isInteger(twice) && twice % 2 === 1) {
    const q = (twice - 1) / 2;
    const even = q % 2 === 0 ? q : q + 1;
    return `0.${String(even).padStart(10, '0')}`;
  }
  return (1 / k).toFixed(10);
}

const probabilities: string[] = [];
const probability = (k: number): string => (probabilities[k] ??= probabilityOf(k));

/** A Service port's state narrowed to one family, with its chain names: everything its rules need. */
export interface Prepared {
  readonly s: ServicePortState;
  /** The protocol as iptables spells it: tcp, udp, sctp. */
  readonly p: string;
  /** `-p tcp -m tcp --dport` */
  readonly match: string;
  readonly clusterIPs: readonly string[];
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly internal: readonly ProxyEndpoint[];
  readonly external: readonly ProxyEndpoint[];
  /** spec.loadBalancerSourceRanges of this family. */
  readonly sourceRanges: readonly string[];
  readonly svc: string;
  readonly svl: string;
  readonly ext: string;
  readonly fw: string;
  /** KUBE-SVC- exists: there are internal endpoints. */
  readonly usesSvc: boolean;
  /** KUBE-SVL- exists: external traffic load-balances over endpoints other than KUBE-SVC-'s. */
  readonly usesSvl: boolean;
  /** KUBE-EXT- exists: external destinations have somewhere to go (or local traffic to short-circuit). */
  readonly usesExt: boolean;
  /** KUBE-FW- exists: load-balancer traffic is filtered by source range before KUBE-EXT-. */
  readonly usesFw: boolean;
  /** `/32` or `/128`. */
  readonly host: string;
}

const ofFamily = (ips: readonly string[], f: Family): readonly string[] =>
  ips.every((ip) => familyOf(ip) === f) ? ips : ips.filter((ip) => familyOf(ip) === f);

const compareEndpoints = (a: ProxyEndpoint, b: ProxyEndpoint): number =>
  a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : a.port - b.port;

/** The endpoints of the family, in ip-then-port order (state.ts already sorts; others may not). */
function endpointsOf(eps: readonly ProxyEndpoint[], f: Family): readonly ProxyEndpoint[] {
  let out = eps.every((e) => familyOf(e.ip) === f) ? eps : eps.filter((e) => familyOf(e.ip) === f);
  for (let i = 1; i < out.length; i++)
    if (compareEndpoints(out[i - 1]!, out[i]!) > 0) {
      out = [...out].sort(compareEndpoints);
      break;
    }
  return out;
}

function sameEndpoints(a: readonly ProxyEndpoint[], b: readonly ProxyEndpoint[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.ip !== b[i]!.ip || a[i]!.port !== b[i]!.port) return false;
  return true;
}

/**
 * The Service port in one family, or undefined when it has no cluster IP in that family (kube-proxy's
 * proxier for the other family ignores a single-stack Service entirely).
 */
export function prepare(s: ServicePortState, f: Family): Prepared | undefined {
  const clusterIPs = ofFamily(s.clusterIPs, f);
  if (clusterIPs.length === 0) return undefined;
  const p = s.protocol.toLowerCase();
  const externalIPs = ofFamily(s.externalIPs, f);
  const loadBalancerIPs = ofFamily(s.loadBalancerIPs, f);
  const internal = endpointsOf(s.internal, f);
  const external = endpointsOf(s.external, f);
  const accessible = s.nodePort !== undefined || externalIPs.length > 0 || loadBalancerIPs.length > 0;
  const usesSvc = internal.length > 0;
  const usesSvl = external.length > 0 && (s.externalLocal || !sameEndpoints(internal, external));
  const usesExt = accessible && (external.length > 0 || (s.externalLocal && usesSvc));
  // kube-proxy: only ranges of this family count; with none, the load-balancer IPs are open to all.
  const sourceRanges = (s.loadBalancerSourceRanges ?? []).filter((c) => familyOf(c) === f);
  const usesFw = usesExt && loadBalancerIPs.length > 0 && sourceRanges.length > 0;
  return {
    s,
    p,
    match: `-p ${p} -m ${p} --dport`,
    clusterIPs,
    externalIPs,
    loadBalancerIPs,
    internal,
    external,
    sourceRanges,
    svc: svcChain(s.key, s.protocol),
    svl: svlChain(s.key, s.protocol),
    ext: extChain(s.key, s.protocol),
    fw: fwChain(s.key, s.protocol),
    usesSvc,
    usesSvl,
    usesExt,
    usesFw,
    host: f === 4 ? '/32' : '/128',
  };
}

/** Where a Service port's dispatch rules go. */
export interface DispatchSinks {
  readonly natServices: string[];
  readonly natNodePorts: string[];
  readonly filterServices: string[];
  readonly filterExternal: string[];
  /** filter KUBE-NODEPORTS: health check node ports accepted. */
  readonly filterNodePorts: string[];
  /** filter KUBE-PROXY-FIREWALL: load-balancer traffic that KUBE-FW- did not pass, dropped. */
  readonly filterFirewall: string[];
}

/** The chains this Service port's dispatch rules jump to (they must exist in the kernel). */
export const dispatchTargets = (pp: Prepared): string[] => [
  ...(pp.usesSvc ? [pp.svc] : []),
  ...(pp.usesExt ? [pp.ext] : []),
  ...(pp.usesFw ? [pp.fw] : []),
];

/**
 * The Service port's lines in the dispatch chains. A side (internal: the cluster IPs; external: node port,
 * external IPs, load-balancer IPs) without endpoints is refused in the filter table: REJECT when the Service
 * port has no usable endpoint anywhere, DROP ("has no local endpoints") when it has some but this side has
 * none for this node (kube-proxy: hasEndpoints, then hasInternalEndpoints / hasExternalEndpoints).
 */
export function writeDispatch(pp: Prepared, out: DispatchSinks): void {
  const { s, match, host } = pp;
  const key = s.key;
  const any = pp.internal.length > 0 || pp.external.length > 0 || s.hasEndpoints === true;
  const refusal = any
    ? `-m comment --comment ${quote(`${key} has no local endpoints`)}`
    : `-m comment --comment ${quote(`${key} has no endpoints`)}`;
  const refuse = any ? 'DROP' : 'REJECT';
  for (const ip of pp.clusterIPs) {
    if (pp.usesSvc)
      out.natServices.push(
        `-A KUBE-SERVICES -m comment --comment ${quote(`${key} cluster IP`)} -d ${ip}${host} ${match} ${s.port} -j ${pp.svc}`,
      );
    else
      out.filterServices.push(`-A KUBE-SERVICES ${refusal} -d ${ip}${host} ${match} ${s.port} -j ${refuse}`);
  }
  const externalDest = (ips: readonly string[], what: string, target: string): void => {
    for (const ip of ips) {
      if (pp.usesExt)
        out.natServices.push(
          `-A KUBE-SERVICES -m comment --comment ${quote(`${key} ${what}`)} -d ${ip}${host} ${match} ${s.port} -j ${target}`,
        );
      if (pp.external.length === 0)
        out.filterExternal.push(
          `-A KUBE-EXTERNAL-SERVICES ${refusal} -d ${ip}${host} ${match} ${s.port} -j ${refuse}`,
        );
    }
  };
  externalDest(pp.externalIPs, 'external IP', pp.ext);
  externalDest(pp.loadBalancerIPs, 'loadbalancer IP', pp.usesFw ? pp.fw : pp.ext);
  // Load-balancer traffic that KUBE-FW- did not send on was not DNATed: its destination is still the
  // load-balancer IP when it reaches the filter table, where it is dropped.
  if (pp.usesFw)
    for (const ip of pp.loadBalancerIPs)
      out.filterFirewall.push(
        `-A KUBE-PROXY-FIREWALL -m comment --comment ${quote(`${key} traffic not accepted by ${pp.fw}`)} -d ${ip}${host} ${match} ${s.port} -j DROP`,
      );
  if (s.nodePort !== undefined) {
    if (pp.usesExt)
      out.natNodePorts.push(
        `-A KUBE-NODEPORTS -m comment --comment ${quote(key)} ${match} ${s.nodePort} -j ${pp.ext}`,
      );
    if (pp.external.length === 0)
      out.filterExternal.push(
        `-A KUBE-EXTERNAL-SERVICES ${refusal} -m addrtype --dst-type LOCAL ${match} ${s.nodePort} -j ${refuse}`,
      );
  }
  // The load balancer's health checks reach the node whether or not it has local endpoints.
  if (s.healthCheckNodePort !== undefined)
    out.filterNodePorts.push(
      `-A KUBE-NODEPORTS -m comment --comment ${quote(`${key} health check node port`)} -p tcp -m tcp --dport ${s.healthCheckNodePort} -j ACCEPT`,
    );
}

/**
 * Writes the Service port's own chains: a declaration for each into `decl`, its rules into `rules`.
 * Returns the chains written (what the Service port owns in the kernel afterwards).
 */
export function writeChains(pp: Prepared, o: ServiceRuleOptions, decl: string[], rules: string[]): string[] {
  const { s, host } = pp;
  const key = s.key;
  const owned: string[] = [];
  // One SEP chain per endpoint reachable from either side, named once.
  const seps = new Map<string, string>();
  const sepOf = (e: ProxyEndpoint): string => {
    const id = `${e.ip}|${e.port}`;
    let name = seps.get(id);
    if (name === undefined) seps.set(id, (name = sepChain(key, s.protocol, e.ip, e.port)));
    return name;
  };
  const cidr =
    o.clusterCIDR !== undefined && o.clusterCIDR !== '' && familyOf(o.clusterCIDR) === o.family
      ? o.clusterCIDR
      : undefined;

  if (pp.usesSvc) {
    owned.push(pp.svc);
    // Off-cluster traffic to the cluster IP may be bridged to another node: masquerade it.
    if (o.masqueradeAll === true || cidr !== undefined) {
      const notPods = o.masqueradeAll === true ? '' : ` ! -s ${cidr}`;
      for (const ip of pp.clusterIPs)
        rules.push(
          `-A ${pp.svc} -m comment --comment ${quote(`${key} cluster IP`)} -d ${ip}${host} ${pp.match} ${s.port}${notPods} -j KUBE-MARK-MASQ`,
        );
    }
    writeBalancing(pp, pp.svc, pp.internal, sepOf, rules);
  }
  if (pp.usesSvl) {
    owned.push(pp.svl);
    writeBalancing(pp, pp.svl, pp.external, sepOf, rules);
  }
  if (pp.usesExt) {
    owned.push(pp.ext);
    const ext = `-A ${pp.ext}`;
    if (!s.externalLocal) {
      // Cluster policy: the endpoint may be on another node, so the reply must come back through this one.
      rules.push(
        `${ext} -m comment --comment ${quote(`masquerade traffic for ${key} external destinations`)} -j KUBE-MARK-MASQ`,
      );
    } else {
      // Local policy keeps the client's address, except for traffic from pods and from the node itself,
      // which goes to the cluster chain as if it went out to a load balancer and came back.
      if (cidr !== undefined && pp.usesSvc)
        rules.push(
          `${ext} -m comment --comment ${quote(`pod traffic for ${key} external destinations`)} -s ${cidr} -j ${pp.svc}`,
        );
      rules.push(
        `${ext} -m comment --comment ${quote(`masquerade LOCAL traffic for ${key} external destinations`)} -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
      );
      if (pp.usesSvc)
        rules.push(
          `${ext} -m comment --comment ${quote(`route LOCAL traffic for ${key} external destinations`)} -m addrtype --src-type LOCAL -j ${pp.svc}`,
        );
    }
    if (pp.usesSvl) rules.push(`${ext} -j ${pp.svl}`);
    else if (pp.external.length > 0) rules.push(`${ext} -j ${pp.svc}`);
  }
  if (pp.usesFw) {
    owned.push(pp.fw);
    const fw = `-A ${pp.fw} -m comment --comment ${quote(`${key} loadbalancer IP`)}`;
    for (const cidr of pp.sourceRanges) rules.push(`${fw} -s ${cidr} -j ${pp.ext}`);
    if (s.sourceRangesHoldNode?.includes(o.family) === true)
      for (const ip of pp.loadBalancerIPs) rules.push(`${fw} -s ${ip}${host} -j ${pp.ext}`);
    // Counts what falls through: KUBE-PROXY-FIREWALL drops it in the filter table.
    rules.push(
      `-A ${pp.fw} -m comment --comment ${quote(`other traffic to ${key} will be dropped by KUBE-PROXY-FIREWALL`)}`,
    );
  }
  for (const c of owned) decl.push(`:${c} - [0:0]`);

  // The endpoint chains, in ip-then-port order over both sides.
  const all = mergeEndpoints(pp.internal, pp.external);
  const comment = `-m comment --comment ${quote(key)}`;
  const recent = s.affinityTimeoutSeconds !== undefined;
  for (const e of all) {
    const sep = sepOf(e);
    owned.push(sep);
    decl.push(`:${sep} - [0:0]`);
    // Hairpin: an endpoint reaching itself through the Service must be masqueraded to get the reply.
    rules.push(`-A ${sep} ${comment} -s ${e.ip}${host} -j KUBE-MARK-MASQ`);
    rules.push(
      `-A ${sep} ${comment}${recent ? ` -m recent --name ${sep} --set` : ''} -m ${pp.p} -p ${pp.p} -j DNAT --to-destination ${hostPort(e.ip, e.port)}`,
    );
  }
  return owned;
}

/** Both sides' endpoints, once each, in ip-then-port order (both inputs are in that order). */
function mergeEndpoints(a: readonly ProxyEndpoint[], b: readonly ProxyEndpoint[]): readonly ProxyEndpoint[] {
  if (b.length === 0 || sameEndpoints(a, b)) return a;
  if (a.length === 0) return b;
  const out: ProxyEndpoint[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    const c = x === undefined ? 1 : y === undefined ? -1 : compareEndpoints(x, y);
    if (c <= 0) out.push(x!);
    else out.push(y!);
    if (c <= 0) i++;
    if (c >= 0) j++;
  }
  return out;
}

const MASK = { 4: '255.255.255.255', 6: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' } as const;

/**
 * A policy chain's rules (kube-proxy's writeServiceToEndpointRules): with ClientIP affinity, first a rule
 * per endpoint that sends a client seen within the timeout back to its endpoint; then endpoint i of n is
 * chosen with probability 1/(n-i), and the last one unconditionally.
 */
function writeBalancing(
  pp: Prepared,
  chain: string,
  eps: readonly ProxyEndpoint[],
  sepOf: (e: ProxyEndpoint) => string,
  rules: string[],
): void {
  const key = pp.s.key;
  const timeout = pp.s.affinityTimeoutSeconds;
  // Every rule of the chain names its endpoint in a comment: `"<key> -> ip:port"`.
  const quoted = quote(`${key} -> `);
  const open = `-A ${chain} -m comment --comment ${quoted.slice(0, -1)}`;
  const comment = (e: ProxyEndpoint): string => `${open}${hostPort(e.ip, e.port)}"`;
  if (timeout !== undefined) {
    const mask = MASK[familyOf(eps[0]?.ip ?? '')];
    for (const e of eps) {
      const sep = sepOf(e);
      rules.push(
        `${comment(e)} -m recent --name ${sep} --mask ${mask} --rcheck --seconds ${timeout} --reap -j ${sep}`,
      );
    }
  }
  const n = eps.length;
  eps.forEach((e, i) => {
    const jump = `-j ${sepOf(e)}`;
    rules.push(
      i < n - 1
        ? `${comment(e)} -m statistic --mode random --probability ${probability(n - i)} ${jump}`
        : `${comment(e)} ${jump}`,
    );
  });
}
