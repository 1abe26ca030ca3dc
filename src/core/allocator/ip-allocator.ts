// The ClusterIP range and its in-memory allocator, in behaviour like kube-apiserver's
// ipallocator/bitmap.go: offset 0 is the address after the network address; IPv4 also drops the
// broadcast address; IPv6 keeps its last address and is capped at 2^16 addresses. The lowest
// `calculateRangeOffset` addresses form the static block that dynamic allocation avoids.
import { AllocationBitmap, type Random } from './bitmap.js';
import {
  cidrContains,
  cidrSize,
  formatAddress,
  formatCidr,
  parseAddress,
  parseCidrRange,
  type Cidr,
  type IPFamily,
} from './cidr.js';
import { errFull, errIPAllocated, errIPNotInRange, errMismatchedNetwork } from './errors.js';

const IPV6_CAP = 65536n;
/** Beyond this many addresses a bitmap stops being reasonable; kube-apiserver caps flags at 2^20. */
const MAX_BITMAP = 1n << 24n;

/** The static-block size for a CIDR (KEP-3070): size/16 clamped to [16, 256]; 0 for 16 addresses or fewer. */
export function calculateRangeOffset(c: Cidr): number {
  const size = cidrSize(c);
  if (size <= 16n) return 0;
  const offset = size / 16n;
  return Number(offset < 16n ? 16n : offset > 256n ? 256n : offset);
}

export interface IPRange {
  readonly cidr: Cidr;
  /** The CIDR's canonical text ("10.96.0.0/12"). */
  readonly spec: string;
  readonly family: IPFamily;
  /** The address at offset 0 (network + 1). */
  readonly base: bigint;
  /** Number of usable addresses. */
  readonly max: number;
  /** Size of the static block at the bottom. */
  readonly offset: number;
}

/** The usable range of a CIDR, or a RangeError for text that is not a CIDR or too large to hold. */
export function ipRange(cidrText: string | Cidr): IPRange {
  const cidr = typeof cidrText === 'string' ? parseCidrRange(cidrText) : cidrText;
  if (cidr === undefined) throw new RangeError(`${String(cidrText)} is not a valid CIDR`);
  let size = cidrSize(cidr);
  if (cidr.family === 'IPv6') {
    if (size > IPV6_CAP) size = IPV6_CAP;
  } else {
    size -= 1n; // the broadcast address
  }
  size -= 1n; // the network address
  if (size < 0n) size = 0n;
  if (size > MAX_BITMAP) throw new RangeError(`${formatCidr(cidr)} is too large for an allocation bitmap`);
  return {
    cidr,
    spec: formatCidr(cidr),
    family: cidr.family,
    base: cidr.network + 1n,
    max: Number(size),
    offset: calculateRangeOffset(cidr),
  };
}

/** The offset of an address text in the range, or undefined when the range does not hold it. */
export function ipOffset(r: IPRange, ip: string): number | undefined {
  const a = parseAddress(ip);
  if (a === undefined || !cidrContains(r.cidr, a)) return undefined;
  const off = a.value - r.base;
  return off < 0n || off >= BigInt(r.max) ? undefined : Number(off);
}

export const ipAt = (r: IPRange, offset: number): string =>
  formatAddress({ family: r.family, value: r.base + BigInt(offset) });

/** A RangeAllocation as upstream persists it: the range text and the bitmap bytes. */
export interface RangeSnapshot {
  readonly range: string;
  readonly data: Uint8Array;
}

/** An in-memory ClusterIP allocator for one range (ipallocator.Range). */
export class IPAllocator {
  readonly bitmap: AllocationBitmap;
  constructor(readonly range: IPRange) {
    this.bitmap = new AllocationBitmap(range.max, range.offset);
  }

  static fromSnapshot(s: RangeSnapshot): IPAllocator {
    const a = new IPAllocator(ipRange(s.range));
    a.restore(s);
    return a;
  }

  /** Takes a specific address. Throws ErrNotInRange or ErrAllocated. */
  allocate(ip: string): void {
    const off = ipOffset(this.range, ip);
    if (off === undefined) throw errIPNotInRange(ip);
    if (!this.bitmap.allocate(off)) throw errIPAllocated();
  }

  /** Takes any free address (upper block first). Throws ErrFull. */
  allocateNext(random: Random): string {
    const off = this.bitmap.allocateNext(random);
    if (off === undefined) throw errFull();
    return ipAt(this.range, off);
  }

  /** Frees an address; out-of-range and free addresses are a no-op. */
  release(ip: string): void {
    const off = ipOffset(this.range, ip);
    if (off !== undefined) this.bitmap.release(off);
  }

  has(ip: string): boolean {
    const off = ipOffset(this.range, ip);
    return off !== undefined && this.bitmap.has(off);
  }

  contains(ip: string): boolean {
    return ipOffset(this.range, ip) !== undefined;
  }

  free(): number {
    return this.bitmap.free();
  }

  used(): number {
    return this.bitmap.count;
  }

  forEach(fn: (ip: string) => void): void {
    this.bitmap.forEach((off) => fn(ipAt(this.range, off)));
  }

  snapshot(): RangeSnapshot {
    return { range: this.range.spec, data: this.bitmap.snapshot() };
  }

  /** Throws ErrMismatchedNetwork when the snapshot is of another range. */
  restore(s: RangeSnapshot): void {
    const other = parseCidrRange(s.range);
    if (
      other === undefined ||
      other.family !== this.range.family ||
      other.network !== this.range.cidr.network ||
      other.prefix !== this.range.cidr.prefix
    ) {
      throw errMismatchedNetwork();
    }
    this.bitmap.restore(s.data);
  }
}
