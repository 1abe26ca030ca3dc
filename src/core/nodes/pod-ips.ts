// A node's pod IP pool: what a CNI plugin's IPAM (host-local) does for the pods on one node. One
// range per pod CIDR of the node; a dual-stack node hands every pod one address of each family, the
// primary CIDR's first (status.podIPs order).
//
// Usable addresses are those ipRange gives: never the network address, never the IPv4 broadcast
// address (an IPv6 range is capped at 2^16 addresses). Allocation is round-robin like host-local's:
// it continues after the last address handed out and wraps, so a released address is reused only
// once the range has gone around — an Endpoint still pointing at a deleted pod's IP is not handed a
// new pod at once. Addresses are owned by a key (the pod's UID), so allocate() is idempotent and a
// restart re-reserves every pod's status.podIPs before handing out new ones.
//
// Pure: no I/O.
import { AllocationBitmap } from '../allocator/bitmap.js';
import { canonicalIP, formatCidr, type Cidr } from '../allocator/cidr.js';
import { ipAt, ipOffset, ipRange, type IPRange } from '../allocator/ip-allocator.js';
import { NodeCidrError } from './pod-cidrs.js';

interface Pool {
  readonly range: IPRange;
  readonly used: AllocationBitmap;
  /** Where the next scan starts: one past the last address handed out. */
  cursor: number;
}

export class PodIPPool {
  private readonly pools: Pool[];
  private readonly owned = new Map<string, string[]>();
  private readonly owner = new Map<string, string>();

  /** `cidrs`: the node's spec.podCIDRs, primary first (one, or one per family). */
  constructor(cidrs: readonly Cidr[]) {
    if (cidrs.length === 0 || cidrs.length > 2) throw new RangeError('a node has one or two pod CIDRs');
    if (cidrs.length === 2 && cidrs[0]!.family === cidrs[1]!.family) {
      throw new RangeError('two pod CIDRs must be one per family');
    }
    this.pools = cidrs.map((c) => {
      const range = ipRange(c);
      return { range, used: new AllocationBitmap(range.max), cursor: 0 };
    });
  }

  get cidrs(): string[] {
    return this.pools.map((p) => formatCidr(p.range.cidr));
  }

  /** The addresses `key` holds, primary first; undefined when it holds none. */
  get(key: string): readonly string[] | undefined {
    return this.owned.get(key);
  }

  /** Who holds an address, if anyone. */
  ownerOf(ip: string): string | undefined {
    return this.owner.get(ip);
  }

  /** The round-robin position of each range (where the next scan starts), for a checkpoint. */
  get cursors(): number[] {
    return this.pools.map((p) => p.cursor);
  }

  /**
   * Continues the round-robin from a checkpoint's `cursors` (one per range; a value past a range's end
   * wraps, a missing one leaves the range as it is).
   */
  resume(cursors: readonly number[]): void {
    this.pools.forEach((p, i) => {
      const c = cursors[i];
      if (c !== undefined && Number.isSafeInteger(c) && c >= 0) p.cursor = c % Math.max(p.range.max, 1);
    });
  }

  /** How many keys hold addresses. */
  get size(): number {
    return this.owned.size;
  }

  /** How many addresses are left in the smallest range (what limits new pods). */
  free(): number {
    return Math.min(...this.pools.map((p) => p.used.free()));
  }

  /**
   * Records that `key` holds `ips` (a pod's status.podIPs, read back after a restart). Returns a
   * one-line problem and takes nothing when an address is outside the node's ranges, the families do
   * not match the ranges, or another key holds one of them.
   */
  reserve(key: string, ips: readonly string[]): string | undefined {
    const held = this.owned.get(key);
    if (held !== undefined) {
      return held.length === ips.length && held.every((ip, i) => ip === canonicalIP(ips[i]!))
        ? undefined
        : `already holds ${held.join(',')}`;
    }
    if (ips.length !== this.pools.length) {
      return `${ips.join(',')} is not one address per pod CIDR (${this.cidrs.join(',')})`;
    }
    const offsets: number[] = [];
    for (const [i, ip] of ips.entries()) {
      const pool = this.pools[i]!;
      const off = ipOffset(pool.range, ip);
      if (off === undefined) return `${ip} is not a usable address of ${pool.range.spec}`;
      const other = this.owner.get(ipAt(pool.range, off));
      if (other !== undefined) return `${ip} is held by ${other}`;
      offsets.push(off);
    }
    this.take(key, offsets);
    return undefined;
  }

  /**
   * The addresses of `key`, taking one per range when it holds none yet. Throws NodeCidrError
   * ErrCIDRFull (and takes nothing) when a range has no free address.
   */
  allocate(key: string): readonly string[] {
    const held = this.owned.get(key);
    if (held !== undefined) return held;
    const offsets: number[] = [];
    for (const pool of this.pools) {
      const off = this.scan(pool);
      if (off === undefined) {
        throw new NodeCidrError('ErrCIDRFull', `no free pod IP left in ${pool.range.spec}`);
      }
      offsets.push(off);
    }
    this.pools.forEach((p, i) => (p.cursor = (offsets[i]! + 1) % Math.max(p.range.max, 1)));
    return this.take(key, offsets);
  }

  /** Frees what `key` holds; returns the addresses freed (empty when it held none). */
  release(key: string): readonly string[] {
    const held = this.owned.get(key);
    if (held === undefined) return [];
    this.owned.delete(key);
    held.forEach((ip, i) => {
      const pool = this.pools[i]!;
      const off = ipOffset(pool.range, ip);
      if (off !== undefined) pool.used.release(off);
      this.owner.delete(ip);
    });
    return held;
  }

  private take(key: string, offsets: readonly number[]): string[] {
    const ips = offsets.map((off, i) => {
      const pool = this.pools[i]!;
      pool.used.allocate(off);
      const ip = ipAt(pool.range, off);
      this.owner.set(ip, key);
      return ip;
    });
    this.owned.set(key, ips);
    return ips;
  }

  /** The first free offset from the cursor, wrapping. */
  private scan(pool: Pool): number | undefined {
    const max = pool.range.max;
    if (pool.used.free() === 0) return undefined;
    for (let k = 0; k < max; k++) {
      const off = (pool.cursor + k) % max;
      if (!pool.used.has(off)) return off;
    }
    return undefined;
  }
}
