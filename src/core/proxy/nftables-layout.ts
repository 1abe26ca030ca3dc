// A node's Service rules for the nftables proxy mode, in the layout of kube-proxy's nftables mode
// (KEP-3866, pkg/proxy/nftables/proxier.go), in svcplane's own table: `ip svcplane` for IPv4 and
// `ip6 svcplane` for IPv6 (one table per family, as kube-proxy's `ip kube-proxy` / `ip6 kube-proxy`,
// because address matches differ by family; a dual-stack node renders both). See docs/proxy.md.
//
//   nat-prerouting, nat-output → services: ip daddr . meta l4proto . th dport vmap @service-ips
//                                          (local address | @nodeport-ips) . l4proto . dport vmap @service-nodeports
//   service-… (cluster IP) / external-… (node port, external IP, load-balancer IP) / local-…
//       → one rule per endpoint, `numgen random mod K == 0`, each dnat to its endpoint (with ClientIP
//         affinity: goto endpoint-…, which records the client in its set, then dnat)
//   nat-postrouting → masquerading (hairpin pairs in @hairpin-endpoints, and what mark-for-masquerade marked)
//   filter-prerouting, filter-output-pre-dnat → firewall-check: vmap @firewall-ips → firewall-… (source ranges)
//   filter-input, filter-forward, filter-output → service-endpoints-check (vmap @no-endpoint-services:
//       reject / drop), nodeport-endpoints-check (vmap @no-endpoint-nodeports); health check node ports accepted
//
// The desired state is the iptables mode's (types.ts, narrowed per family by iptables-service.ts prepare),
// so both modes decide the same things: which side has endpoints, when to masquerade, REJECT or DROP.
//
// This file is the layout: the fixed chains and sets, and what each Service port writes. nftables.ts turns
// it into full, partial and resync transactions.
import { hash16, hostPort } from './chain-names.js';
import { familyOf, type Family, type Prepared } from './iptables-service.js';
import type { RenderOptions } from './iptables.js';
import type { NftChain, NftSet } from './nftables-model.js';
import {
  ENDPOINT_MAPS,
  MIN_RANGE,
  emptySlots,
  endpointMapOf,
  findSlots,
  takeSlots,
  type RecordUndo,
  type SlotRange,
  type SlotSpace,
} from './nftables-slots.js';
import type { ProxyEndpoint } from './types.js';

/** svcplane's table, in each family. */
export const NFT_TABLE = 'svcplane';

/** The mark mark-for-masquerade sets (the iptables mode's, kube-proxy's default masquerade bit 14). */
const MASQ_MARK = '0x00004000';

export const nftFamily = (f: Family): 'ip' | 'ip6' => (f === 4 ? 'ip' : 'ip6');

/** What one Service port put in the table: its chains and sets, and its elements in the shared maps. */
export interface NftOwned {
  readonly chains: string[];
  readonly sets: string[];
  /**
   * Its elements in the order written, flat: set or map, key, value ('' in a set), then the next one
   * (one array per port, not one per element: a table holds hundreds of thousands). Read with eachElement.
   */
  readonly elements: string[];
}

/** Calls `f` with each element `own` wrote, in order. */
export function eachElement(own: NftOwned, f: (set: string, key: string, value: string) => void): void {
  const e = own.elements;
  for (let i = 0; i < e.length; i += 3) f(e[i]!, e[i + 1]!, e[i + 2]!);
}

export const elementId = (set: string, key: string): string => `${set} ${key}`;

export const ownNothing = (): NftOwned => ({ chains: [], sets: [], elements: [] });

/** Builds chains and sets, recording what the Service port being written owns. */
export class Table {
  readonly chains = new Map<string, NftChain>();
  readonly sets = new Map<string, NftSet>();
  private readonly elements = new Map<string, Map<string, string>>();
  owner: NftOwned = ownNothing();
  /** The chains given an endpoint range by this render. */
  readonly slotted = new Set<string>();

  /**
   * `slots`: where endpoint ranges are allocated (the kept state's, when patching it; `record` undoes), or,
   * with `record` 'read-only', where the ranges a kept state was rendered with are looked up (never changed).
   */
  constructor(
    readonly slots: SlotSpace = emptySlots(),
    private readonly record?: RecordUndo | 'read-only',
  ) {}

  /** The endpoint range of a balancing chain with `k` endpoints. */
  range(chain: string, k: number): SlotRange {
    this.slotted.add(chain);
    if (this.record === 'read-only') return findSlots(this.slots, chain, k);
    return takeSlots(this.slots, chain, k, this.record);
  }

  chain(name: string, rules: readonly string[], hook?: string): void {
    this.chains.set(name, hook !== undefined ? { hook, rules } : { rules });
    this.owner.chains.push(name);
  }
  set(name: string, spec: string, map: boolean): void {
    const elements = new Map<string, string>();
    this.elements.set(name, elements);
    this.sets.set(name, { map, spec, elements });
    this.owner.sets.push(name);
  }
  /** An element of a set of this table, or of the table being patched (recorded in the owner only). */
  element(set: string, key: string, value = ''): void {
    this.elements.get(set)?.set(key, value);
    this.owner.elements.push(set, key, value);
  }
}

const PROTO: Readonly<Record<string, string>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

const SERVICE_IPS = 'service-ips';
const SERVICE_NODEPORTS = 'service-nodeports';
const NO_ENDPOINT_SERVICES = 'no-endpoint-services';
const NO_ENDPOINT_NODEPORTS = 'no-endpoint-nodeports';
const FIREWALL_IPS = 'firewall-ips';
const NODEPORT_IPS = 'nodeport-ips';
const HEALTH_CHECK_NODEPORTS = 'health-check-nodeports';
const MARK_FOR_MASQUERADE = 'mark-for-masquerade';
const REJECT_CHAIN = 'reject-chain';
/** The set of endpoint address pairs whose traffic is masqueraded (a pod reaching itself through a Service). */
export const HAIRPIN = 'hairpin-endpoints';

/** The chains and sets every render has, whatever the Services. */
export function writeFixed(t: Table, o: RenderOptions): void {
  const f = o.family;
  const addr = f === 4 ? 'ipv4_addr' : 'ipv6_addr';
  const ip = nftFamily(f);
  t.set(SERVICE_IPS, `type ${addr} . inet_proto . inet_service : verdict ;`, true);
  t.set(SERVICE_NODEPORTS, 'type inet_proto . inet_service : verdict ;', true);
  t.set(NO_ENDPOINT_SERVICES, `type ${addr} . inet_proto . inet_service : verdict ;`, true);
  t.set(NO_ENDPOINT_NODEPORTS, 'type inet_proto . inet_service : verdict ;', true);
  t.set(FIREWALL_IPS, `type ${addr} . inet_proto . inet_service : verdict ;`, true);
  t.set(HEALTH_CHECK_NODEPORTS, 'type inet_service ;', false);
  t.set(HAIRPIN, `type ${addr} . ${addr} ;`, false);
  for (const proto of Object.values(PROTO))
    for (let i = 0; i < ENDPOINT_MAPS; i++)
      t.set(
        endpointMapOf(i * MIN_RANGE, proto),
        `typeof numgen random mod 1 : ${ip} daddr . ${proto} dport ;`,
        true,
      );

  // Node ports answer on every local address (never on loopback: kube-proxy's nftables mode does not
  // support localhost node ports), or only on --nodeport-addresses of this family (none when all of them
  // are of the other family, as in the iptables mode).
  const given = o.nodePortAddresses ?? [];
  const cidrs = given.filter((c) => familyOf(c) === f);
  let nodePortDest: string;
  if (given.length === 0)
    nodePortDest = `fib daddr type local ${ip} daddr != ${f === 4 ? '127.0.0.0/8' : '::1'}`;
  else {
    t.set(NODEPORT_IPS, `type ${addr} ; flags interval ;`, false);
    for (const c of cidrs) t.element(NODEPORT_IPS, c);
    nodePortDest = `${ip} daddr @${NODEPORT_IPS}`;
  }

  const l4 = 'meta l4proto . th dport';
  t.chain('services', [
    `${ip} daddr . ${l4} vmap @${SERVICE_IPS}`,
    `${nodePortDest} ${l4} vmap @${SERVICE_NODEPORTS}`,
  ]);
  // Numeric priorities: nft 1.0.6 (Debian 12) accepts the names dstnat and srcnat only on some hooks
  // (dstnat -100, srcnat 100, filter 0).
  t.chain('nat-prerouting', ['jump services'], 'type nat hook prerouting priority -100 ;');
  t.chain('nat-output', ['jump services'], 'type nat hook output priority -100 ;');
  t.chain('nat-postrouting', ['jump masquerading'], 'type nat hook postrouting priority 100 ;');
  t.chain(MARK_FOR_MASQUERADE, [`meta mark set meta mark | ${MASQ_MARK}`]);
  t.chain('masquerading', [
    `ct status dnat ${ip} saddr . ${ip} daddr @${HAIRPIN} masquerade fully-random`,
    `meta mark & ${MASQ_MARK} == 0 return`,
    // Cleared so that a packet going through the stack again is not masqueraded twice.
    `meta mark set meta mark ^ ${MASQ_MARK}`,
    'masquerade fully-random',
  ]);

  t.chain(REJECT_CHAIN, ['reject']);
  t.chain('service-endpoints-check', [`${ip} daddr . ${l4} vmap @${NO_ENDPOINT_SERVICES}`]);
  t.chain('nodeport-endpoints-check', [`${nodePortDest} ${l4} vmap @${NO_ENDPOINT_NODEPORTS}`]);
  t.chain('firewall-check', [`${ip} daddr . ${l4} vmap @${FIREWALL_IPS}`]);
  // Source ranges are checked before DNAT, while the destination is still the load-balancer IP.
  t.chain(
    'filter-prerouting',
    ['ct state new jump firewall-check'],
    'type filter hook prerouting priority -110 ;',
  );
  t.chain(
    'filter-output-pre-dnat',
    ['ct state new jump firewall-check'],
    'type filter hook output priority -110 ;',
  );
  t.chain(
    'filter-input',
    [
      'ct state new jump nodeport-endpoints-check',
      'ct state new jump service-endpoints-check',
      // The load balancer's health checks reach the node whether or not it has local endpoints.
      `tcp dport @${HEALTH_CHECK_NODEPORTS} accept`,
    ],
    'type filter hook input priority -10 ;',
  );
  t.chain(
    'filter-forward',
    ['ct state new jump service-endpoints-check'],
    'type filter hook forward priority -10 ;',
  );
  t.chain(
    'filter-output',
    ['ct state new jump service-endpoints-check'],
    'type filter hook output priority -10 ;',
  );
}

// ---------------------------------------------------------------------------------------------- names

/** `<ns>/<name>/<proto>/<port name or number>`: the readable part of a Service port's chain names. */
const readable = (pp: Prepared): string =>
  `${pp.s.namespace}/${pp.s.name}/${pp.p}/${pp.s.portName !== '' ? pp.s.portName : `p${pp.s.port}`}`;

/** An nft identifier may hold letters, digits, '/', '-', '_' and '.': an IPv6 address's ':' become '.'. */
const endpointPart = (e: ProxyEndpoint): string => `${e.ip.replace(/:/g, '.')}/${e.port}`;

/** Names for one Service port: a prefix, 8 characters of a hash (the names stay unique), the readable part. */
function namesOf(pp: Prepared) {
  const base = `${pp.s.key}|${PROTO[pp.s.protocol] ?? pp.p}`;
  const tail = `${hash16(base).slice(0, 8)}-${readable(pp)}`;
  return {
    service: `service-${tail}`,
    local: `local-${tail}`,
    external: `external-${tail}`,
    firewall: `firewall-${tail}`,
    endpoint: (e: ProxyEndpoint): string =>
      `endpoint-${hash16(`${base}|${hostPort(e.ip, e.port)}`).slice(0, 8)}-${readable(pp)}__${endpointPart(e)}`,
    // The timeout is part of the name: a new timeout is a new set (nft cannot change it in place).
    affinity: (e: ProxyEndpoint, timeout: number): string =>
      `affinity-${hash16(`${base}|${hostPort(e.ip, e.port)}|${timeout}`).slice(0, 8)}-${readable(pp)}__${endpointPart(e)}`,
  };
}

// ---------------------------------------------------------------------------------------------- services

/** One Service port's chains, sets and map elements in one family. */
export function writeService(t: Table, pp: Prepared, o: RenderOptions): void {
  const { s, p } = pp;
  const f = o.family;
  const ip = nftFamily(f);
  const n = namesOf(pp);
  const timeout = s.affinityTimeoutSeconds;
  const addr = f === 4 ? 'ipv4_addr' : 'ipv6_addr';
  const cidr =
    o.clusterCIDR !== undefined && o.clusterCIDR !== '' && familyOf(o.clusterCIDR) === f
      ? o.clusterCIDR
      : undefined;

  // Hairpin: a pod sent to itself through the Service is masqueraded on the way out (postrouting matches
  // the DNATed packet's source and destination as a pair), so that its reply comes back through the node.
  const endpoints = new Map<string, ProxyEndpoint>();
  for (const e of [...pp.internal, ...pp.external]) endpoints.set(`${e.ip}|${e.port}`, e);
  // Each pair written as one flat string (a join, not a concatenation of concatenations): the proxy keeps
  // every pair's key (who holds it, nftables.ts), one per endpoint address of the cluster.
  for (const e of new Set([...endpoints.values()].map((x) => x.ip))) t.element(HAIRPIN, [e, e].join(' . '));

  // ClientIP affinity needs a chain per endpoint, which records the client in the endpoint's set; without
  // affinity the policy chain DNATs by itself (no chain per endpoint: the table has a chain per Service
  // port, not per endpoint, which keeps nft's work per transaction small at tens of thousands of endpoints).
  if (timeout !== undefined)
    for (const e of endpoints.values()) {
      const set = n.affinity(e, timeout);
      t.set(set, `type ${addr} ; flags dynamic,timeout ; timeout ${timeout}s ;`, false);
      t.chain(n.endpoint(e), [
        `update @${set} { ${ip} saddr }`,
        `meta l4proto ${p} dnat to ${hostPort(e.ip, e.port)}`,
      ]);
    }
  // A policy chain: a returning ClientIP client goes back to its endpoint; others to a random one. Without
  // affinity, one rule picks slot BASE + (random mod K) of the chain's endpoint range (nftables-slots.ts),
  // which maps it to the endpoint's address and port: endpoints come and go as map elements, and the rule
  // changes only with their number. With affinity, one rule per endpoint takes it with probability
  // 1/(endpoints left), as the iptables mode's statistic rules do, and goes to its endpoint chain.
  // (Not kube-proxy's `numgen random mod N vmap { … }`: each such inline map is an anonymous set, and the
  // kernel's cost of creating one grows with the sets in the table.)
  const balance = (chain: string, eps: readonly ProxyEndpoint[]): string[] => {
    if (eps.length === 0) return [];
    if (timeout === undefined) {
      const { base } = t.range(chain, eps.length);
      const map = endpointMapOf(base, p);
      eps.forEach((e, i) => t.element(map, String(base + i), `${e.ip} . ${e.port}`));
      return [`meta l4proto ${p} dnat ${ip} to numgen random mod ${eps.length} offset ${base} map @${map}`];
    }
    const rules: string[] = [];
    for (const e of eps) rules.push(`${ip} saddr @${n.affinity(e, timeout)} goto ${n.endpoint(e)}`);
    eps.forEach((e, i) =>
      rules.push(
        i < eps.length - 1
          ? `numgen random mod ${eps.length - i} == 0 goto ${n.endpoint(e)}`
          : `goto ${n.endpoint(e)}`,
      ),
    );
    return rules;
  };

  const dest = (daddr: string): string => `${daddr} . ${p} . ${s.port}`;
  const any = pp.internal.length > 0 || pp.external.length > 0 || s.hasEndpoints === true;
  // No usable endpoint anywhere: REJECT; some elsewhere but none this side may use here: DROP.
  const refuse = any ? 'drop' : `goto ${REJECT_CHAIN}`;

  if (pp.usesSvc) {
    const rules: string[] = [];
    // Off-cluster traffic to the cluster IP may be bridged to another node: masquerade it.
    if (o.masqueradeAll === true) rules.push(`jump ${MARK_FOR_MASQUERADE}`);
    else if (cidr !== undefined)
      for (const c of pp.clusterIPs)
        rules.push(`${ip} daddr ${c} ${ip} saddr != ${cidr} jump ${MARK_FOR_MASQUERADE}`);
    t.chain(n.service, [...rules, ...balance(n.service, pp.internal)]);
  }
  for (const c of pp.clusterIPs)
    if (pp.usesSvc) t.element(SERVICE_IPS, dest(c), `goto ${n.service}`);
    else t.element(NO_ENDPOINT_SERVICES, dest(c), refuse);

  if (pp.usesSvl) t.chain(n.local, balance(n.local, pp.external));
  if (pp.usesExt) {
    const rules: string[] = [];
    if (!s.externalLocal) {
      // Cluster policy: the endpoint may be on another node, so the reply must come back through this one.
      rules.push(`jump ${MARK_FOR_MASQUERADE}`);
    } else {
      // Local policy keeps the client's address, except for pods and the node itself, which are sent to
      // the cluster chain as if they went out to a load balancer and came back.
      if (cidr !== undefined && pp.usesSvc) rules.push(`${ip} saddr ${cidr} goto ${n.service}`);
      rules.push(`fib saddr type local jump ${MARK_FOR_MASQUERADE}`);
      if (pp.usesSvc) rules.push(`fib saddr type local goto ${n.service}`);
    }
    if (pp.usesSvl) rules.push(`goto ${n.local}`);
    else if (pp.external.length > 0) rules.push(`goto ${n.service}`);
    t.chain(n.external, rules);
  }
  for (const e of [...pp.externalIPs, ...pp.loadBalancerIPs]) {
    if (pp.usesExt) t.element(SERVICE_IPS, dest(e), `goto ${n.external}`);
    if (pp.external.length === 0) t.element(NO_ENDPOINT_SERVICES, dest(e), refuse);
  }
  if (pp.usesFw) {
    const allowed = [...pp.sourceRanges];
    // Traffic from the node to a load-balancer IP it owns comes from that IP (kube-proxy's allowFromNode).
    if (s.sourceRangesHoldNode?.includes(f) === true) allowed.push(...pp.loadBalancerIPs);
    t.chain(n.firewall, [`${ip} saddr != { ${allowed.join(', ')} } drop`]);
    for (const lb of pp.loadBalancerIPs) t.element(FIREWALL_IPS, dest(lb), `goto ${n.firewall}`);
  }
  if (s.nodePort !== undefined) {
    const np = `${p} . ${s.nodePort}`;
    if (pp.usesExt) t.element(SERVICE_NODEPORTS, np, `goto ${n.external}`);
    if (pp.external.length === 0) t.element(NO_ENDPOINT_NODEPORTS, np, refuse);
  }
  if (s.healthCheckNodePort !== undefined) t.element(HEALTH_CHECK_NODEPORTS, String(s.healthCheckNodePort));
}
