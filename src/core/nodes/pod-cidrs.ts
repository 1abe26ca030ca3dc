// Node pod CIDRs: parsing a node's one-or-two CIDRs (dual-stack, one per family), overlap between
// nodes' ranges, carving per-node subnets out of a larger range, the node IPAM range allocator, and
// which of two registrations that took overlapping ranges at the same time yields (cidrRaceLoss).
//
// NodeCidrSet behaves like kube-controller-manager's nodeipam cidrset (cidr_set.go) with the
// RangeAllocator (range_allocator.go): a bitmap of the 2^(nodeMask − clusterMask) subnets of a cluster
// CIDR, every existing node's podCIDRs occupied first, then a linear search from `nextCandidate`
// (initially 0) with wrap-around, after which nextCandidate = chosen + 1 — so subnets are handed out
// in order (10.244.0.0/24, 10.244.1.0/24, …) and freed ones are reused only after a wrap.
//
// Pure: no I/O; errors are values (a one-line problem) or NodeCidrError with a stable code.
import { cidrSize, formatCidr, parseCidrRange, type Cidr, type IPFamily } from '../allocator/cidr.js';
import { AllocationBitmap } from '../allocator/bitmap.js';

export type NodeCidrErrorCode = 'ErrInvalidCIDR' | 'ErrCIDRFull' | 'ErrMaskSize';

export class NodeCidrError extends Error {
  override readonly name = 'NodeCidrError';
  constructor(
    readonly code: NodeCidrErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Upstream's message when a cluster CIDR has no free subnet left. */
export const CIDR_FULL_MESSAGE =
  'CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range';

/** Default node mask sizes (kube-controller-manager --node-cidr-mask-size-ipv4 / -ipv6). */
export const DEFAULT_NODE_MASK: Readonly<Record<IPFamily, number>> = { IPv4: 24, IPv6: 64 };

/** The IPAM controller's bound for IPv6: node mask − cluster mask must be ≤ 16. */
const MAX_SUBNET_BITS_V6 = 16;
/** A bitmap of 2^20 subnets is plenty for any cluster; beyond that the flags are a mistake. */
const MAX_SUBNET_BITS = 20;

/**
 * One or two comma-separated CIDRs, canonicalised: two must be one per family (dual-stack), the first
 * is the primary. Returns the CIDRs or a one-line problem.
 */
export function parseCidrList(text: string): Cidr[] | string {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (parts.length === 0) return 'no CIDR given';
  if (parts.length > 2) return `at most two CIDRs (one per family), got ${parts.length}`;
  const cidrs: Cidr[] = [];
  for (const p of parts) {
    const c = parseCidrRange(p);
    if (c === undefined) return `${JSON.stringify(p)} is not a CIDR (e.g. 10.244.0.0/16 or fd00:10:244::/56)`;
    cidrs.push(c);
  }
  if (cidrs.length === 2 && cidrs[0]!.family === cidrs[1]!.family) {
    return `two CIDRs must be one IPv4 and one IPv6, got ${parts.join(',')}`;
  }
  return cidrs;
}

/** Whether two CIDRs share any address (same family and one holds the other's network). */
export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const [wide, narrow] = a.prefix <= b.prefix ? [a, b] : [b, a];
  return narrow.network >= wide.network && narrow.network < wide.network + cidrSize(wide);
}

export interface NodeCidrs {
  readonly node: string;
  /** spec.podCIDRs as text (an unparsable entry is ignored: the API server would not have stored it). */
  readonly cidrs: readonly string[];
}

export interface CidrConflict {
  readonly node: string;
  readonly cidr: string;
  readonly otherNode: string;
  readonly otherCidr: string;
}

/**
 * The first overlap between `mine` and `others` (in the order given), or undefined. Entries of `others`
 * naming a node in `mine` are skipped: a node does not conflict with itself.
 */
export function findCidrConflict(
  mine: readonly NodeCidrs[],
  others: readonly NodeCidrs[],
): CidrConflict | undefined {
  const own = new Set(mine.map((m) => m.node));
  const parsedOthers = others
    .filter((o) => !own.has(o.node))
    .flatMap((o) =>
      o.cidrs.flatMap((t) => {
        const c = parseCidrRange(t);
        return c === undefined ? [] : [{ node: o.node, text: t, c }];
      }),
    );
  for (const m of mine) {
    for (const t of m.cidrs) {
      const c = parseCidrRange(t);
      if (c === undefined) continue;
      const hit = parsedOthers.find((o) => cidrsOverlap(c, o.c));
      if (hit !== undefined) return { node: m.node, cidr: t, otherNode: hit.node, otherCidr: hit.text };
    }
  }
  return undefined;
}

/** Overlaps among the CIDRs of one list of nodes (pairs of distinct nodes), or undefined. */
export function findSelfConflict(nodes: readonly NodeCidrs[]): CidrConflict | undefined {
  for (let i = 0; i < nodes.length; i++) {
    const hit = findCidrConflict([nodes[i]!], nodes.slice(i + 1));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Subnet `index` of size /mask inside `c` (subnet i = base + i × 2^(bits − mask)). */
export function subnetAt(c: Cidr, mask: number, index: number): Cidr {
  const step = 1n << BigInt(c.bits - mask);
  return { family: c.family, network: c.network + BigInt(index) * step, prefix: mask, bits: c.bits };
}

/** How many /mask subnets `c` holds (capped at 2^MAX_SUBNET_BITS + 1 so callers can tell "too many"). */
function subnetCount(c: Cidr, mask: number): number {
  const bits = mask - c.prefix;
  return bits > MAX_SUBNET_BITS ? 2 ** MAX_SUBNET_BITS + 1 : 2 ** bits;
}

function checkMask(c: Cidr, mask: number): void {
  if (!Number.isInteger(mask) || mask < c.prefix || mask > c.bits) {
    throw new NodeCidrError(
      'ErrMaskSize',
      `node CIDR mask /${mask} does not fit in ${formatCidr(c)} (want /${c.prefix} to /${c.bits})`,
    );
  }
  const limit = c.family === 'IPv6' ? MAX_SUBNET_BITS_V6 : MAX_SUBNET_BITS;
  if (mask - c.prefix > limit) {
    throw new NodeCidrError(
      'ErrMaskSize',
      `New CIDR set failed; the node CIDR size is too big (${formatCidr(c)} in /${mask} subnets: more than 2^${limit})`,
    );
  }
}

/**
 * The node mask to carve `count` nodes out of `c`: the family's default (/24, /64) unless `c` is too
 * small for `count` of those, then the largest mask that still fits them.
 */
export function defaultNodeMask(c: Cidr, count: number): number {
  const need = count <= 1 ? 0 : Math.ceil(Math.log2(count));
  return Math.min(c.bits, Math.max(DEFAULT_NODE_MASK[c.family], c.prefix + need));
}

/**
 * `count` consecutive /mask subnets of `c`, the first at index 0 — what `--pod-cidr` with `--count`
 * gives nodes `<name>-0..N-1`: node i always gets subnet i, so a restart finds the same ranges.
 */
export function splitCidr(c: Cidr, mask: number, count: number): Cidr[] {
  checkMask(c, mask);
  if (subnetCount(c, mask) < count) {
    throw new NodeCidrError(
      'ErrCIDRFull',
      `${formatCidr(c)} holds ${subnetCount(c, mask)} /${mask} subnets, not ${count}`,
    );
  }
  return Array.from({ length: count }, (_, i) => subnetAt(c, mask, i));
}

/** The node IPAM range allocator for one cluster CIDR (cidrset.CidrSet). */
export class NodeCidrSet {
  private readonly used: AllocationBitmap;
  private nextCandidate = 0;
  readonly max: number;

  constructor(
    readonly cluster: Cidr,
    readonly mask: number,
  ) {
    checkMask(cluster, mask);
    this.max = subnetCount(cluster, mask);
    this.used = new AllocationBitmap(this.max);
  }

  /** The range of subnet indices that `c` touches, clipped to this set; undefined when disjoint. */
  private indices(c: Cidr): [number, number] | undefined {
    if (!cidrsOverlap(c, this.cluster)) return undefined;
    const shift = BigInt(this.cluster.bits - this.mask);
    const first = c.network < this.cluster.network ? 0n : (c.network - this.cluster.network) >> shift;
    const end = c.network + cidrSize(c) - 1n;
    const clusterEnd = this.cluster.network + cidrSize(this.cluster) - 1n;
    const last = ((end < clusterEnd ? end : clusterEnd) - this.cluster.network) >> shift;
    return [Number(first), Number(last)];
  }

  /**
   * Marks every subnet `c` touches as taken (an existing node's podCIDR, or the service range when it
   * overlaps the cluster CIDR). A CIDR of the other family or outside the range is ignored.
   */
  occupy(c: Cidr): void {
    const r = this.indices(c);
    if (r === undefined) return;
    for (let i = r[0]; i <= r[1]; i++) this.used.allocate(i);
  }

  /** Frees the subnet equal to `c` (a deleted node's podCIDR). */
  release(c: Cidr): void {
    if (c.prefix !== this.mask) return;
    const r = this.indices(c);
    if (r !== undefined) this.used.release(r[0]);
  }

  /** The next free subnet from nextCandidate, wrapping, taken. Throws ErrCIDRFull. */
  allocateNext(): Cidr {
    for (let k = 0; k < this.max; k++) {
      const i = (this.nextCandidate + k) % this.max;
      if (this.used.has(i)) continue;
      this.used.allocate(i);
      this.nextCandidate = (i + 1) % this.max;
      return subnetAt(this.cluster, this.mask, i);
    }
    throw new NodeCidrError('ErrCIDRFull', CIDR_FULL_MESSAGE);
  }

  get free(): number {
    return this.used.free();
  }
}

export interface NodeIpamInput {
  /** --cluster-cidr: one CIDR, or two (one per family). */
  readonly clusterCIDRs: readonly Cidr[];
  /** The node mask per cluster CIDR (same order); missing entries take the family default. */
  readonly maskSizes?: readonly (number | undefined)[];
  /** Every node's spec.podCIDRs as stored now (occupied first). */
  readonly existing: readonly NodeCidrs[];
  /** Ranges the allocator must never hand out (e.g. the service CIDR), occupied when they overlap. */
  readonly reserved?: readonly Cidr[];
  /** The nodes that need ranges, in order. A node listed in `existing` with podCIDRs keeps them. */
  readonly nodes: readonly string[];
}

/**
 * podCIDRs for `nodes`, as the RangeAllocator would assign them: one subnet per cluster CIDR (primary
 * first). A node that already has podCIDRs keeps them. Throws NodeCidrError (ErrCIDRFull, ErrMaskSize).
 */
export function allocateNodeCIDRs(input: NodeIpamInput): Map<string, string[]> {
  const sets = input.clusterCIDRs.map(
    (c, i) => new NodeCidrSet(c, input.maskSizes?.[i] ?? DEFAULT_NODE_MASK[c.family]),
  );
  const occupy = (c: Cidr): void => sets.forEach((s) => s.occupy(c));
  for (const r of input.reserved ?? []) occupy(r);
  const have = new Map<string, string[]>();
  for (const n of input.existing) {
    const parsed = n.cidrs.flatMap((t) => {
      const c = parseCidrRange(t);
      return c === undefined ? [] : [c];
    });
    parsed.forEach(occupy);
    if (parsed.length > 0) have.set(n.node, parsed.map(formatCidr));
  }
  const out = new Map<string, string[]>();
  for (const node of input.nodes) {
    const kept = have.get(node);
    out.set(node, kept ?? sets.map((s) => formatCidr(s.allocateNext())));
  }
  return out;
}

/** A node's podCIDRs and when they were claimed, for settling a registration race (cidrRaceLoss). */
export interface ClaimedCidrs extends NodeCidrs {
  /**
   * When the range was claimed, in ms since the epoch: the node's metadata.creationTimestamp (whole
   * seconds). Infinity for a range just set on a node that existed before (a take-over of a node
   * without podCIDRs): its creationTimestamp says nothing about when that range was taken.
   */
  readonly claimedMs: number;
}

export interface CidrRaceLoss extends CidrConflict {
  /** Both ranges were claimed in the same second: the other side may be yielding too. */
  readonly tie: boolean;
}

/**
 * Whether a registration must yield its ranges, decided after it created its nodes and listed all of
 * them again: the first overlap of `mine` with `others` that it loses, or undefined when it keeps
 * everything. Entries of `others` naming a node in `mine` are skipped.
 *
 * Two registrations that planned from the same list both create and then both re-list; the later one
 * always sees the earlier one's node (its re-list follows its own create, which follows the earlier
 * create), the earlier one may not see the later one's. So the older claim must win: mine yields to an
 * older other. It also yields on a tie — creationTimestamps are whole seconds, and breaking a tie by
 * name would let a later node with the smaller name stay while the earlier one, whose re-list came
 * before that node existed, stays too. On a tie both sides yield when both saw it; they try again
 * after random delays. A strict loss is preferred over a tie in the answer (it is final).
 */
export function cidrRaceLoss(
  mine: readonly ClaimedCidrs[],
  others: readonly ClaimedCidrs[],
): CidrRaceLoss | undefined {
  const own = new Set(mine.map((m) => m.node));
  const parsed = (n: ClaimedCidrs): { n: ClaimedCidrs; text: string; c: Cidr }[] =>
    n.cidrs.flatMap((text) => {
      const c = parseCidrRange(text);
      return c === undefined ? [] : [{ n, text, c }];
    });
  const theirs = others.filter((o) => !own.has(o.node)).flatMap(parsed);
  let tie: CidrRaceLoss | undefined;
  for (const m of mine.flatMap(parsed)) {
    for (const o of theirs) {
      if (m.n.claimedMs < o.n.claimedMs || !cidrsOverlap(m.c, o.c)) continue;
      const loss = { node: m.n.node, cidr: m.text, otherNode: o.n.node, otherCidr: o.text };
      if (m.n.claimedMs > o.n.claimedMs) return { ...loss, tie: false };
      tie ??= { ...loss, tie: true };
    }
  }
  return tie;
}
