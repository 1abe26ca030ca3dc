// The allocation bitmap behind both allocators, in behaviour like kube-apiserver's
// allocator/bitmap.go with the "random scan with offset" strategy (KEP-3070/3668): dynamic
// allocation prefers the upper block [offset, max), starting at a random point and scanning forward
// with wrap-around, and falls back to the lower "static" block [0, offset) only when the upper block
// is full. Users who pick values by hand pick them from the lower block and rarely collide.
//
// Unlike upstream's big.Int, the bits live in 32-bit words, so a scan skips 32 taken values at a time
// and nothing is ever copied: allocate, release and has are O(1), allocateNext is O(1) expected on a
// sparse range and O(max/32) at worst. The random source is injected (a pure module has no Math.random).

export type Random = () => number;

const FULL = 0xffffffff;

export class AllocationBitmap {
  private readonly words: Uint32Array;
  private taken = 0;

  constructor(
    /** Number of values: offsets are 0 … max-1. */
    readonly max: number,
    /** Size of the static (lower) block. Must be smaller than max (or 0). */
    readonly offset: number = 0,
  ) {
    if (!Number.isSafeInteger(max) || max < 0) throw new RangeError(`bitmap size ${max} is not valid`);
    if (offset < 0 || (offset > 0 && offset >= max)) throw new RangeError(`offset ${offset} out of range`);
    this.words = new Uint32Array(Math.ceil(max / 32));
  }

  get count(): number {
    return this.taken;
  }

  free(): number {
    return this.max - this.taken;
  }

  has(i: number): boolean {
    if (!Number.isInteger(i) || i < 0 || i >= this.max) return false;
    return ((this.words[i >>> 5]! >>> (i & 31)) & 1) === 1;
  }

  /** Takes offset i. False when it was taken already. Throws for an offset outside [0, max). */
  allocate(i: number): boolean {
    if (!Number.isInteger(i) || i < 0 || i >= this.max) {
      throw new RangeError(`offset ${i} out of range [0,${this.max}]`);
    }
    const w = i >>> 5;
    const bit = 1 << (i & 31);
    if ((this.words[w]! & bit) !== 0) return false;
    this.words[w] = this.words[w]! | bit;
    this.taken++;
    return true;
  }

  /** Frees offset i; a no-op when it is free or outside the range. */
  release(i: number): void {
    if (!this.has(i)) return;
    const w = i >>> 5;
    this.words[w] = this.words[w]! & ~(1 << (i & 31));
    this.taken--;
  }

  /**
   * A free offset chosen by the random-scan-with-offset strategy, taken. undefined when full.
   * `random` returns a float in [0, 1).
   */
  allocateNext(random: Random): number | undefined {
    const at = this.pickNext(random);
    if (at !== undefined) this.allocate(at);
    return at;
  }

  /** The offset allocateNext would take, without taking it. */
  pickNext(random: Random): number | undefined {
    if (this.taken >= this.max) return undefined;
    const upper = this.max - this.offset;
    const start = this.offset + Math.floor(random() * upper);
    const found = this.scan(start, this.max) ?? this.scan(this.offset, start);
    if (found !== undefined) return found;
    if (this.offset === 0) return undefined;
    const lowStart = Math.floor(random() * this.offset);
    return this.scan(lowStart, this.offset) ?? this.scan(0, lowStart);
  }

  /** The first free offset in [from, to), skipping full words. */
  private scan(from: number, to: number): number | undefined {
    let i = from;
    while (i < to) {
      const w = i >>> 5;
      const word = this.words[w]!;
      if ((i & 31) === 0 && word === FULL) {
        i += 32;
        continue;
      }
      if (((word >>> (i & 31)) & 1) === 0) return i;
      i++;
    }
    return undefined;
  }

  /** Every taken offset, ascending. */
  forEach(fn: (i: number) => void): void {
    for (let w = 0; w < this.words.length; w++) {
      let word = this.words[w]!;
      while (word !== 0) {
        const low = word & -word;
        fn(w * 32 + 31 - Math.clz32(low));
        word = (word ^ low) >>> 0;
      }
    }
  }

  /**
   * The bitmap as upstream's RangeAllocation.data: the big-endian bytes of the integer whose bit i is
   * offset i, with no leading zero bytes (empty when nothing is taken).
   */
  snapshot(): Uint8Array {
    let highest = -1;
    for (let w = this.words.length - 1; w >= 0 && highest < 0; w--) {
      if (this.words[w] !== 0) highest = w * 32 + 31 - Math.clz32(this.words[w]!);
    }
    if (highest < 0) return new Uint8Array(0);
    const n = (highest >>> 3) + 1;
    const out = new Uint8Array(n);
    for (let byte = 0; byte < n; byte++) {
      const word = this.words[byte >>> 2]!;
      out[n - 1 - byte] = (word >>> ((byte & 3) * 8)) & 0xff;
    }
    return out;
  }

  /** Replaces the contents with a snapshot's. Bits beyond max are ignored. */
  restore(data: Uint8Array): void {
    this.words.fill(0);
    this.taken = 0;
    const n = data.length;
    for (let k = 0; k < n; k++) {
      const byte = data[n - 1 - k]!;
      for (let b = 0; b < 8; b++) {
        if (((byte >>> b) & 1) === 1) {
          const i = k * 8 + b;
          if (i < this.max) this.allocate(i);
        }
      }
    }
  }

  clone(): AllocationBitmap {
    const copy = new AllocationBitmap(this.max, this.offset);
    copy.words.set(this.words);
    copy.taken = this.taken;
    return copy;
  }
}
