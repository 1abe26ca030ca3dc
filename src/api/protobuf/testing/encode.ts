// A tiny protobuf encoder for tests: builds messages field by field, the way gogo-protobuf lays
// them out, so the decoder can be checked against hand-made Kubernetes bodies.
import { PROTOBUF_MAGIC } from '../index.js';

const varintBytes = (value: number | bigint): number[] => {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
};

const utf8 = new TextEncoder();

/** One message under construction. Every method appends a field and returns the encoder. */
export class Enc {
  private readonly out: number[] = [];

  private key(field: number, wire: number): void {
    this.out.push(...varintBytes(field * 8 + wire));
  }

  /** A varint field (int32, int64, bool); negative numbers are sign-extended to 64 bits, as Go does. */
  varint(field: number, value: number | bigint | boolean): this {
    this.key(field, 0);
    this.out.push(...varintBytes(typeof value === 'boolean' ? (value ? 1 : 0) : value));
    return this;
  }

  bytes(field: number, value: Uint8Array | readonly number[]): this {
    this.key(field, 2);
    this.out.push(...varintBytes(value.length), ...value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  message(field: number, value: Enc): this {
    return this.bytes(field, value.finish());
  }

  /** A map<string, V> entry {1 key, 2 value}. */
  entry(field: number, key: string, value: string | Enc): this {
    const e = new Enc().string(1, key);
    return this.message(field, typeof value === 'string' ? e.string(2, value) : e.message(2, value));
  }

  fixed32(field: number, value: number): this {
    this.key(field, 5);
    this.out.push(value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff);
    return this;
  }

  fixed64(field: number): this {
    this.key(field, 1);
    this.out.push(1, 2, 3, 4, 5, 6, 7, 8);
    return this;
  }

  /** Bytes appended as they are (for malformed input). */
  raw(bytes: readonly number[]): this {
    this.out.push(...bytes);
    return this;
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.out);
  }
}

export const enc = (): Enc => new Enc();

/** IntOrString {1 type, 2 intVal, 3 strVal} as gogo writes it (all three fields, always). */
export const intOrString = (v: number | string): Enc =>
  typeof v === 'number'
    ? enc().varint(1, 0).varint(2, v).string(3, '')
    : enc().varint(1, 1).varint(2, 0).string(3, v);

/** metav1.Time / MicroTime as a Timestamp {1 seconds, 2 nanos}. */
export const timestamp = (seconds: number, nanos = 0): Enc => enc().varint(1, seconds).varint(2, nanos);

/** resource.Quantity {1 string}. */
export const quantity = (s: string): Enc => enc().string(1, s);

/** The full body: `k8s\0` + runtime.Unknown {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3, 4}. */
export function envelope(
  apiVersion: string,
  kind: string,
  raw: Enc | Uint8Array,
  opts: { contentEncoding?: string; contentType?: string } = {},
): Uint8Array {
  const unknown = enc()
    .message(1, enc().string(1, apiVersion).string(2, kind))
    .bytes(2, raw instanceof Enc ? raw.finish() : raw)
    .string(3, opts.contentEncoding ?? '')
    .string(4, opts.contentType ?? '')
    .finish();
  return Uint8Array.from([...PROTOBUF_MAGIC, ...unknown]);
}

/** ObjectMeta as gogo writes a freshly built one: every non-pointer field, empty ones included. */
export function objectMeta(name: string, namespace = '', extra: (m: Enc) => Enc = (m) => m): Enc {
  return extra(
    enc()
      .string(1, name)
      .string(2, '')
      .string(3, namespace)
      .string(4, '')
      .string(5, '')
      .string(6, '')
      .varint(7, 0)
      .message(8, enc()),
  );
}
