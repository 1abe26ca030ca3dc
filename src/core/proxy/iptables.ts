// A node's Service rules as iptables-restore input, in kube-proxy's layout (behaves like kube-proxy's
// pkg/proxy/iptables/proxier.go syncProxyRules, one address family per render):
//
//   nat     PREROUTING, OUTPUT → KUBE-SERVICES → KUBE-SVC-… (cluster IP) / KUBE-EXT-… (external IP, LB IP)
//                                             → KUBE-NODEPORTS (last rule) → KUBE-EXT-… (node port)
//           KUBE-EXT-… → KUBE-MARK-MASQ, then KUBE-SVC-… or KUBE-SVL-… → KUBE-SEP-… (DNAT)
//           POSTROUTING → KUBE-POSTROUTING (MASQUERADE what KUBE-MARK-MASQ marked)
//   filter  KUBE-SERVICES / KUBE-EXTERNAL-SERVICES: REJECT (or DROP) what has no endpoints;
//           KUBE-FORWARD: accept marked and established traffic, drop conntrack INVALID
//
// The text is meant for `iptables-restore --noflush`: a `:CHAIN - [0:0]` line creates or flushes a chain,
// so only the declared chains change. A full sync declares every chain; a partial sync (KEP-3453,
// MinimizeIPTablesRestore) declares the dispatch chains and the chains of the Service ports that changed,
// and leaves the other Service ports' chains as they are in the kernel.
import { isServiceChain } from './chain-names.js';
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_SERVICES,
  dispatchTargets,
  prepare,
  quote,
  writeChains,
  writeDispatch,
  type DispatchSinks,
  type Family,
  type Prepared,
} from './iptables-service.js';
import type { ProxyState } from './types.js';

export { failedLine, jumpRules, parseSaveChains, renderCleanup } from './iptables-admin.js';
export { quote } from './iptables-service.js';

export interface RenderOptions {
  readonly family: Family;
  /** The pod network of this family: traffic to a cluster IP from outside it is masqueraded. */
  readonly clusterCIDR?: string;
  /** Masquerade all traffic to cluster IPs. */
  readonly masqueradeAll?: boolean;
  /** Node ports answer only on these CIDRs (default: every local address). */
  readonly nodePortAddresses?: readonly string[];
}

/** What the last successful restore left in the kernel: per service port key, the KUBE-SVC/SVL/EXT/SEP chains it owns. */
export type Applied = ReadonlyMap<string, readonly string[]>;

export interface RestorePlan {
  readonly text: string;
  /** Every service port key of the state with the chains it owns once `text` is restored. */
  readonly applied: Map<string, string[]>;
  /** Service ports whose chains were (re)written. */
  readonly written: number;
  /** Rule lines (-A) in text. */
  readonly rules: number;
  /** Chains deleted (-X). */
  readonly deleted: number;
}

export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';

/** The chains every sync declares, per table (kube-proxy's own, not per Service). */
export const NAT_CHAINS: readonly string[] = [
  KUBE_SERVICES,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_MARK_MASQ,
];
export const FILTER_CHAINS: readonly string[] = [
  KUBE_SERVICES,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_NODEPORTS,
  KUBE_PROXY_FIREWALL,
];

/** The mark KUBE-MARK-MASQ sets (kube-proxy's default --iptables-masquerade-bit 14). */
const MASQ_MARK = '0x4000';

const natFixedRules = [
  `-A KUBE-POSTROUTING -m mark ! --mark ${MASQ_MARK}/${MASQ_MARK} -j RETURN`,
  // The mark is cleared so that a packet re-traversing the stack is not masqueraded twice.
  `-A KUBE-POSTROUTING -j MARK --xor-mark ${MASQ_MARK}`,
  `-A KUBE-POSTROUTING -m comment --comment ${quote('kubernetes service traffic requiring SNAT')} -j MASQUERADE`,
  `-A KUBE-MARK-MASQ -j MARK --or-mark ${MASQ_MARK}`,
];

const filterFixedRules = [
  `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP`,
  `-A KUBE-FORWARD -m comment --comment ${quote('kubernetes forwarding rules')} -m mark --mark ${MASQ_MARK}/${MASQ_MARK} -j ACCEPT`,
  `-A KUBE-FORWARD -m comment --comment ${quote('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
];

/** The last rule of nat KUBE-SERVICES: whatever is addressed to this node goes on to the node ports. */
function nodePortsJump(o: RenderOptions): string[] {
  const comment = `-m comment --comment ${quote('kubernetes service nodeports; NOTE: this must be the last rule in this chain')}`;
  const addresses = o.nodePortAddresses ?? [];
  if (addresses.length === 0) {
    // IPv6 node ports never work on ::1 (kube-proxy excludes it; IPv4 localhost relies on route_localnet).
    const notLoopback = o.family === 6 ? ' ! -d ::1/128' : '';
    return [`-A KUBE-SERVICES ${comment} -m addrtype --dst-type LOCAL${notLoopback} -j KUBE-NODEPORTS`];
  }
  const ofFamily = addresses.filter((c) => c.includes(':') === (o.family === 6));
  return ofFamily.map((cidr) => `-A KUBE-SERVICES ${comment} -d ${cidr} -j KUBE-NODEPORTS`);
}

const declaration = (chain: string): string => `:${chain} - [0:0]`;

/** Everything one render collects before it is joined into text. */
class Render {
  readonly sinks: DispatchSinks = {
    natServices: [],
    natNodePorts: [],
    filterServices: [],
    filterExternal: [],
    filterNodePorts: [],
    filterFirewall: [],
  };
  /**
   * Per-service chains: their declarations (sorted at the end), and one string of rules per service port
   * (lines joined per service port while they are young: a big render's garbage collection takes half as
   * long).
   */
  readonly chainDecl: string[] = [];
  readonly chainRules: string[] = [];
  chainRuleCount = 0;
  readonly applied = new Map<string, string[]>();
  readonly active = new Set<string>();
  written = 0;

  constructor(readonly o: RenderOptions) {}

  write(key: string, pp: Prepared | undefined): void {
    this.written++;
    let owned: string[] = [];
    if (pp !== undefined) {
      const decl: string[] = [];
      const rules: string[] = [];
      owned = writeChains(pp, this.o, decl, rules);
      for (const d of decl) this.chainDecl.push(d);
      if (rules.length > 0) this.chainRules.push(rules.join('\n'));
      this.chainRuleCount += rules.length;
    }
    for (const c of owned) this.active.add(c);
    this.applied.set(key, owned);
  }

  finish(deleted: readonly string[]): RestorePlan {
    const { sinks } = this;
    // Per-service chains are declared in descending name order: iptables-nft (1.8.9) handles a --noflush
    // restore's declarations in about linear time in that order and in quadratic time in any other (by
    // hand, 1,000 Services: 1.8 s against 4.7 s). iptables-legacy does not care.
    const serviceDecl = this.chainDecl.concat(deleted.map(declaration)).sort().reverse();
    const natDecl = NAT_CHAINS.map(declaration).concat(serviceDecl);
    // Array literals and concat, not push(...xs): a big cluster has more lines than the call stack has room.
    const natRules = [
      ...sinks.natServices,
      ...nodePortsJump(this.o),
      ...sinks.natNodePorts,
      ...natFixedRules,
    ].concat(this.chainRules);
    const filterRules = [
      ...sinks.filterServices,
      ...sinks.filterExternal,
      ...sinks.filterNodePorts,
      ...sinks.filterFirewall,
      ...filterFixedRules,
    ];
    const lines = ['*nat'].concat(
      natDecl,
      natRules,
      deleted.map((c) => `-X ${c}`),
      ['COMMIT', '*filter'],
      FILTER_CHAINS.map(declaration),
      filterRules,
      ['COMMIT', ''],
    );
    return {
      text: lines.join('\n'),
      applied: this.applied,
      written: this.written,
      rules: natRules.length - this.chainRules.length + this.chainRuleCount + filterRules.length,
      deleted: deleted.length,
    };
  }
}

const sortedKeys = (state: ProxyState): string[] => [...state.keys()].sort();

/**
 * Full sync: every chain is declared and rewritten. `existing` is what iptables-save lists now: per-service
 * chains (KUBE-SVC-, -SVL-, -EXT-, -FW-, -SEP-, -XLB-) in nat that this state does not write are stale and
 * are flushed and deleted (kube-proxy deletes only in nat too; the filter table has no per-service chains).
 */
export function renderFull(
  state: ProxyState,
  existing: { nat: readonly string[]; filter: readonly string[] },
  o: RenderOptions,
): RestorePlan {
  const r = new Render(o);
  for (const key of sortedKeys(state)) {
    const pp = prepare(state.get(key)!, o.family);
    if (pp !== undefined) writeDispatch(pp, r.sinks);
    r.write(key, pp);
  }
  const stale = new Set<string>();
  for (const c of existing.nat) if (isServiceChain(c) && !r.active.has(c)) stale.add(c);
  return r.finish([...stale]);
}

/**
 * Partial sync (KEP-3453): the dispatch chains (nat KUBE-SERVICES and KUBE-NODEPORTS, filter KUBE-SERVICES
 * and KUBE-EXTERNAL-SERVICES) and kube-proxy's fixed chains are rewritten in full; only the service ports in
 * `changed` get their own chains declared and rewritten. Chains that `previous` lists for a changed (or
 * removed) key and the new state does not write are declared and deleted. Other service ports' chains are
 * not mentioned: the kernel keeps them as the previous restore left them.
 *
 * A key is also rewritten when `previous` does not list it, or does not list a chain its dispatch rules now
 * jump to, so the rewritten dispatch chains never jump to a chain missing from the kernel even when
 * `changed` is incomplete. A key that `previous` lists and the state lacks is deleted even when not in
 * `changed`.
 */
export function renderPartial(
  state: ProxyState,
  changed: ReadonlySet<string>,
  previous: Applied,
  o: RenderOptions,
): RestorePlan {
  const r = new Render(o);
  const dropped: string[] = [];
  for (const key of sortedKeys(state)) {
    const pp = prepare(state.get(key)!, o.family);
    if (pp !== undefined) writeDispatch(pp, r.sinks);
    const before = previous.get(key);
    const stale =
      changed.has(key) ||
      before === undefined ||
      (pp !== undefined && dispatchTargets(pp).some((c) => !before.includes(c)));
    if (!stale) {
      r.applied.set(key, [...before]);
      continue;
    }
    r.write(key, pp);
    if (before !== undefined) {
      const now = r.applied.get(key)!;
      for (const c of before) if (!now.includes(c)) dropped.push(c);
    }
  }
  for (const [key, before] of previous) if (!state.has(key)) dropped.push(...before);
  // A chain some key writes now is never deleted (two keys would only share one through a hash collision).
  const deleted = [...new Set(dropped)].filter((c) => !r.active.has(c));
  return r.finish(deleted);
}
