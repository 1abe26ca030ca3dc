// A protobuf wire-format reader over a Uint8Array: varints (up to 64 bits), length-delimited fields
// and skipping of the fixed-width ones. Pure: no Buffer, no node:* modules.
import { malformed } from './errors.js';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_FIXED32 = 5;

export interface Tag {
  readonly field: number;
  readonly wire: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads one message's fields, front to back. `end` bounds a nested message inside a larger buffer. */
export class WireReader {
  private pos: number;
  private readonly end: number;

  constructor(
    private readonly buf: Uint8Array,
    start = 0,
    end = buf.length,
  ) {
    this.pos = start;
    this.end = end;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  get offset(): number {
    return this.pos;
  }

  private byte(): number {
    if (this.pos >= this.end) throw malformed(`unexpected end of data at offset ${this.pos}`);
    return this.buf[this.pos++]!;
  }

  /** An unsigned varint of up to 64 bits. */
  varint(): bigint {
    // Fast path: values below 2^28 (tags, lengths, most ints) fit four bytes and plain numbers.
    let small = 0;
    for (let i = 0; i < 4; i++) {
      const b = this.byte();
      small |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return BigInt(small);
    }
    let value = BigInt(small);
    for (let i = 4; i < 10; i++) {
      const b = this.byte();
      value |= BigInt(b & 0x7f) << BigInt(7 * i);
      if ((b & 0x80) === 0) {
        if (i === 9 && b > 1) throw malformed(`varint overflows 64 bits at offset ${this.pos - 1}`);
        return value;
      }
    }
    throw malformed(`varint longer than 10 bytes at offset ${this.pos}`);
  }

  /** A field key: field number and wire type. */
  tag(): Tag {
    const at = this.pos;
    const key = this.varint();
    if (key > 0xffffffffn) throw malformed(`field key out of range at offset ${at}`);
    const k = Number(key);
    const field = Math.floor(k / 8);
    const wire = k % 8;
    if (field === 0) throw malformed(`field number 0 at offset ${at}`);
    if (wire === 6 || wire === 7) throw malformed(`invalid wire type ${wire} at offset ${at}`);
    return { field, wire };
  }

  /** The bounds of a length-delimited value, which the reader then steps over. */
  lengthDelimited(): { readonly start: number; readonly end: number } {
    const at = this.pos;
    const len = this.varint();
    if (len > BigInt(this.end - this.pos)) {
      throw malformed(`length ${len} at offset ${at} runs past the end of the data`);
    }
    const start = this.pos;
    this.pos += Number(len);
    return { start, end: this.pos };
  }

  bytes(): Uint8Array {
    const { start, end } = this.lengthDelimited();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const at = this.pos;
    try {
      return utf8.decode(this.bytes());
    } catch (err) {
      if (err instanceof TypeError) throw malformed(`invalid UTF-8 in string at offset ${at}`);
      throw err;
    }
  }

  /** A reader over a length-delimited value (a nested message). */
  message(): WireReader {
    const { start, end } = this.lengthDelimited();
    return new WireReader(this.buf, start, end);
  }

  /** Steps over a value of the given wire type. Groups are not used by Kubernetes and are refused. */
  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_LEN:
        this.lengthDelimited();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw malformed(`unsupported wire type ${wire} at offset ${this.pos}`);
    }
  }

  private advance(n: number): void {
    if (this.end - this.pos < n) throw malformed(`unexpected end of data at offset ${this.pos}`);
    this.pos += n;
  }
}

/** The two's-complement int32 Go writes as a sign-extended 64-bit varint. */
export const toInt32 = (v: bigint): number => Number(BigInt.asIntN(32, v));

/** A signed int64, as a JS number when it is exactly representable. */
export function toInt64(v: bigint): number | undefined {
  const n = BigInt.asIntN(64, v);
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : undefined;
}
