// The NodePort range and its in-memory allocator, in behaviour like kube-apiserver's
// portallocator/allocator.go: every port of the inclusive range is usable; the lowest
// `calculatePortRangeOffset` ports form the static block that dynamic allocation avoids.
import { AllocationBitmap, type Random } from './bitmap.js';
import { errFull, errMismatchedPortRange, errPortAllocated, errPortNotInRange } from './errors.js';
import type { RangeSnapshot } from './ip-allocator.js';

export interface PortRange {
  readonly base: number;
  readonly size: number;
}

export const formatPortRange = (r: PortRange): string =>
  r.size === 0 ? '' : `${r.base}-${r.base + r.size - 1}`;

export const portRangeContains = (r: PortRange, p: number): boolean =>
  Number.isInteger(p) && p >= r.base && p - r.base < r.size;

/**
 * Parses "N", "min-max" (inclusive) or "min+offset" as apimachinery's PortRange.Set does, with its
 * error texts. "" is the empty range.
 */
export function parsePortRange(value: string): PortRange {
  const s = value.trim();
  if (s === '') return { base: 0, size: 0 };
  const hyphen = s.indexOf('-');
  const plus = s.indexOf('+');
  if (hyphen !== -1 && plus !== -1) throw new RangeError(`unable to parse port range: ${s}`);
  const num = (t: string): number => {
    const x = t.trim();
    if (!/^\d+$/.test(x)) throw new RangeError(`unable to parse port range: ${s}: invalid port ${x}`);
    return Number(x);
  };
  let low: number;
  let high: number;
  if (hyphen !== -1) {
    low = num(s.slice(0, hyphen));
    high = num(s.slice(hyphen + 1));
  } else if (plus !== -1) {
    low = num(s.slice(0, plus));
    high = low + num(s.slice(plus + 1));
  } else {
    low = high = num(s);
  }
  if (low > 65535 || high > 65535) throw new RangeError(`the port range cannot be greater than 65535: ${s}`);
  if (high < low) throw new RangeError(`end port cannot be less than start port: ${s}`);
  return { base: low, size: 1 + high - low };
}

/** The static-block size for a port range: size/32 clamped to [16, 128]; 0 for 16 ports or fewer. */
export function calculatePortRangeOffset(r: PortRange): number {
  if (r.size <= 16) return 0;
  return Math.min(128, Math.max(16, Math.floor(r.size / 32)));
}

/** An in-memory NodePort allocator for one range. */
export class PortAllocator {
  readonly bitmap: AllocationBitmap;
  readonly spec: string;
  constructor(readonly range: PortRange) {
    this.bitmap = new AllocationBitmap(range.size, calculatePortRangeOffset(range));
    this.spec = formatPortRange(range);
  }

  static fromSnapshot(s: RangeSnapshot): PortAllocator {
    const a = new PortAllocator(parsePortRange(s.range));
    a.restore(s);
    return a;
  }

  contains(port: number): boolean {
    return portRangeContains(this.range, port);
  }

  /** Takes a specific port. Throws ErrNotInRange or ErrAllocated. */
  allocate(port: number): void {
    if (!this.contains(port)) throw errPortNotInRange(this.spec);
    if (!this.bitmap.allocate(port - this.range.base)) throw errPortAllocated();
  }

  /** Takes any free port (upper block first). Throws ErrFull. */
  allocateNext(random: Random): number {
    const off = this.bitmap.allocateNext(random);
    if (off === undefined) throw errFull();
    return this.range.base + off;
  }

  release(port: number): void {
    if (this.contains(port)) this.bitmap.release(port - this.range.base);
  }

  has(port: number): boolean {
    return this.contains(port) && this.bitmap.has(port - this.range.base);
  }

  free(): number {
    return this.bitmap.free();
  }

  used(): number {
    return this.bitmap.count;
  }

  forEach(fn: (port: number) => void): void {
    this.bitmap.forEach((off) => fn(this.range.base + off));
  }

  snapshot(): RangeSnapshot {
    return { range: this.spec, data: this.bitmap.snapshot() };
  }

  restore(s: RangeSnapshot): void {
    let other: PortRange;
    try {
      other = parsePortRange(s.range);
    } catch {
      throw errMismatchedPortRange();
    }
    if (other.base !== this.range.base || other.size !== this.range.size) throw errMismatchedPortRange();
    this.bitmap.restore(s.data);
  }
}
