// What one node's kernel rules do with TCP traffic to a cluster IP and port, read back from the rules
// themselves, so that the demo shows (and checks) the data plane it ran, not only the traffic. Pure: the
// caller lists the rules in the node's namespace (`nft -j list table ip svcplane`, or `iptables-save`).
//
// - nftables mode (kube-proxy's nftables layout, KEP-3866): the `service-ips` verdict map sends the
//   destination to the Service port's chain, which DNATs to a slot of its range in an endpoint map (or,
//   with ClientIP affinity, picks an endpoint chain, which DNATs); a destination in `no-endpoint-services`
//   instead is rejected (`goto reject-chain`) or dropped.
// - iptables mode: nat `KUBE-SERVICES` jumps to `KUBE-SVC-*`, which jumps to `KUBE-SEP-*` chains that
//   DNAT; filter `KUBE-SERVICES` REJECTs or DROPs a destination without usable endpoints.

/** Where the rules send ip:port/tcp: to these DNAT targets (`ip:port`), refused, dropped, or nowhere. */
export type NodeRules =
  | { readonly kind: 'dnat'; readonly chain: string; readonly targets: readonly string[] }
  | { readonly kind: 'reject' | 'drop' | 'none' };

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const field = (v: unknown, k: string): unknown => (isObj(v) ? v[k] : undefined);

/** Every value under `v` (depth first) for which `pick` says something. */
function collect<T>(v: unknown, pick: (o: Json) => T | undefined, out: T[] = []): T[] {
  if (Array.isArray(v)) for (const x of v) collect(x, pick, out);
  else if (isObj(v)) {
    const got = pick(v);
    if (got !== undefined) out.push(got);
    for (const x of Object.values(v)) collect(x, pick, out);
  }
  return out;
}

/** The target of a `goto`/`jump` verdict object, e.g. {"goto": {"target": "reject-chain"}}. */
function verdictTarget(o: Json): string | undefined {
  const t = field(o['goto'] ?? o['jump'], 'target');
  return typeof t === 'string' ? t : undefined;
}

/** The verdict a map element of `map` keyed `ip . tcp . port` holds: a chain name, 'drop', or undefined. */
function mapVerdict(items: readonly unknown[], map: string, ip: string, port: number): string | undefined {
  for (const item of items) {
    const m = field(item, 'map');
    if (field(m, 'name') !== map) continue;
    const elems = field(m, 'elem');
    for (const e of Array.isArray(elems) ? elems : []) {
      if (!Array.isArray(e)) continue;
      const key = field(e[0], 'concat');
      if (!Array.isArray(key) || key[0] !== ip || key[1] !== 'tcp' || Number(key[2]) !== port) continue;
      if (isObj(e[1]) && 'drop' in e[1]) return 'drop';
      return isObj(e[1]) ? verdictTarget(e[1]) : undefined;
    }
  }
  return undefined;
}

/** The nftables mode's answer for ip:port/tcp, from the items of `nft -j list table ip svcplane`. */
export function nftNodeRules(items: readonly unknown[], ip: string, port: number): NodeRules {
  const chain = mapVerdict(items, 'service-ips', ip, port);
  if (chain === undefined) {
    const refused = mapVerdict(items, 'no-endpoint-services', ip, port);
    return { kind: refused === undefined ? 'none' : refused === 'drop' ? 'drop' : 'reject' };
  }
  return { kind: 'dnat', chain, targets: nftChainTargets(items, chain) };
}

/** The elements of the map `name` among `items`: key → value. */
function mapElements(items: readonly unknown[], name: string): Map<unknown, unknown> {
  const out = new Map<unknown, unknown>();
  for (const item of items) {
    const m = field(item, 'map');
    if (field(m, 'name') !== name) continue;
    const elems = field(m, 'elem');
    for (const e of Array.isArray(elems) ? elems : []) if (Array.isArray(e)) out.set(e[0], e[1]);
  }
  return out;
}

/**
 * The endpoints (`ip:port`, sorted) the chain `chain` of an nftables-mode table DNATs to, following its
 * jumps and gotos: a `dnat to ip:port`, or a `dnat to numgen random mod K offset BASE map @endpoints-N`
 * whose slots BASE … BASE+K-1 are looked up in that map. `items`: `nft -j` listing items holding the chains
 * and the endpoint maps.
 */
export function nftChainTargets(items: readonly unknown[], chain: string): string[] {
  const rules = new Map<string, unknown[]>();
  for (const item of items) {
    const r = field(item, 'rule');
    const c = field(r, 'chain');
    if (typeof c === 'string') rules.set(c, [...(rules.get(c) ?? []), field(r, 'expr')]);
  }
  const targets: string[] = [];
  const seen = new Set<string>();
  const walk = (c: string): void => {
    if (seen.has(c)) return;
    seen.add(c);
    const exprs = rules.get(c) ?? [];
    for (const d of collect(exprs, (o) => (isObj(o['dnat']) ? o['dnat'] : undefined))) {
      const map = field(d['addr'], 'map');
      if (map === undefined) {
        targets.push(`${String(d['addr'])}:${String(d['port'])}`);
        continue;
      }
      const ng = field(field(map, 'key'), 'numgen');
      const data = field(map, 'data');
      const [mod, offset] = [Number(field(ng, 'mod')), Number(field(ng, 'offset') ?? 0)];
      if (typeof data !== 'string' || !Number.isSafeInteger(mod) || !Number.isSafeInteger(offset)) continue;
      const elements = mapElements(items, data.replace(/^@/, ''));
      for (let slot = offset; slot < offset + mod; slot++) {
        const to = field(elements.get(slot), 'concat');
        if (Array.isArray(to)) targets.push(`${String(to[0])}:${String(to[1])}`);
      }
    }
    for (const next of collect(exprs, verdictTarget)) walk(next);
  };
  walk(chain);
  return [...new Set(targets)].sort();
}

/**
 * What the rules of `chain` among `items` refer to: the chains they jump or go to, and the maps their DNATs
 * look endpoints up in (without the `@`). A reader that lists one chain at a time (the whole table costs
 * seconds at 10,000 Services) lists these next, until nothing new is named, then asks nftChainTargets.
 */
export function nftReferences(
  items: readonly unknown[],
  chain: string,
): { chains: string[]; maps: string[] } {
  const exprs = items.map((i) => field(i, 'rule')).filter((r) => field(r, 'chain') === chain);
  const maps = collect(exprs, (o) => {
    const data = field(field(field(o['dnat'], 'addr'), 'map'), 'data');
    return typeof data === 'string' ? data.replace(/^@/, '') : undefined;
  });
  return { chains: [...new Set(collect(exprs, verdictTarget))], maps: [...new Set(maps)] };
}

/** One `-A CHAIN ...` line of iptables-save: its chain, and its options with quoted comments removed. */
function appends(save: string): Array<{ chain: string; rest: string }> {
  const out: Array<{ chain: string; rest: string }> = [];
  for (const line of save.split('\n')) {
    const m = /^-A (\S+) (.*)$/.exec(line.trim());
    if (m !== null) out.push({ chain: m[1]!, rest: m[2]!.replace(/"(?:[^"\\]|\\.)*"/g, '""') });
  }
  return out;
}

/** The rule of `chain` that matches destination ip:port/tcp: its `-j` target. */
function dispatch(
  lines: ReturnType<typeof appends>,
  chain: string,
  ip: string,
  port: number,
): string | undefined {
  for (const l of lines) {
    if (l.chain !== chain) continue;
    const dest = /(?:^| )-d (\S+)/.exec(l.rest)?.[1];
    if (dest !== ip && dest !== `${ip}/32`) continue;
    if (/(?:^| )-p tcp /.test(l.rest) === false || /--dport (\d+)/.exec(l.rest)?.[1] !== String(port))
      continue;
    return /(?:^| )-j (\S+)/.exec(l.rest)?.[1];
  }
  return undefined;
}

/** The iptables mode's answer for ip:port/tcp, from `iptables-save -t nat` and `-t filter`. */
export function iptablesNodeRules(nat: string, filter: string, ip: string, port: number): NodeRules {
  const natLines = appends(nat);
  const chain = dispatch(natLines, 'KUBE-SERVICES', ip, port);
  if (chain === undefined) {
    const verdict = dispatch(appends(filter), 'KUBE-SERVICES', ip, port);
    return { kind: verdict === 'REJECT' ? 'reject' : verdict === 'DROP' ? 'drop' : 'none' };
  }
  const targets: string[] = [];
  const seen = new Set<string>();
  const walk = (c: string): void => {
    if (seen.has(c)) return;
    seen.add(c);
    for (const l of natLines) {
      if (l.chain !== c) continue;
      const to = /--to-destination (\S+)/.exec(l.rest)?.[1];
      if (to !== undefined) targets.push(to);
      const next = /(?:^| )-j (\S+)/.exec(l.rest)?.[1];
      if (next !== undefined && next.startsWith('KUBE-')) walk(next);
    }
  };
  walk(chain);
  return { kind: 'dnat', chain, targets: [...new Set(targets)].sort() };
}
