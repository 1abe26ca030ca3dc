// Declarative message tables and the one decoder that walks them. A table maps each field number of a
// Kubernetes generated.proto message to its JSON name and value type; decoding yields the object as
// the Go JSON encoder would have written it:
// - scalars that Go writes with `omitempty` are dropped when zero (gogo-protobuf always writes
//   non-pointer scalars, so "" and 0 arrive on the wire); `keep` marks pointer fields and fields
//   without omitempty, whose zero is meaningful (spec.replicas: 0, ports[].port);
// - embedded messages are kept when present, even empty (Go writes non-pointer structs as `{}`);
// - Time and MicroTime with no content are the zero time, which is dropped (Go writes null);
// - a field number missing from the table is an error, never silently lost.
import { recordOf } from '../json.js';
import { malformed, unsupported } from './errors.js';
import { WIRE_LEN, WIRE_VARINT, toInt32, toInt64, type Tag, type WireReader } from './wire.js';

export type ScalarKind = 'string' | 'bool' | 'int32' | 'int64' | 'bytes';
/** Kubernetes' well-known wrapper messages, decoded to their JSON forms. */
export type SpecialKind = 'intOrString' | 'time' | 'microTime' | 'quantity' | 'fieldsV1';

export type ValueType = ScalarKind | SpecialKind | MessageType;

export interface FieldSpec {
  readonly json: string;
  readonly type: ValueType;
  /**
   * `map`: repeated entries {1 key, 2 value}. `inline`: an embedded Go struct (json:",inline") whose
   * JSON fields sit in the parent object, while protobuf nests them in a field of their own.
   */
  readonly cardinality: 'single' | 'repeated' | 'map' | 'inline';
  /** Keep a zero scalar (pointer fields, and fields Go encodes without omitempty). */
  readonly keep: boolean;
}

export interface MessageType {
  /** The proto message name, for error messages: `k8s.io.api.core.v1.ServiceSpec`. */
  readonly name: string;
  readonly fields: ReadonlyMap<number, FieldSpec>;
}

type FieldInput = readonly [json: string, type: ValueType, opts?: FieldOpts];
type FieldOpts = 'repeated' | 'map' | 'inline' | 'keep';

/** Builds a table: `message('k8s.io.api.core.v1.ServicePort', { 1: ['name', 'string'], 3: ['port', 'int32', 'keep'] })`. */
export function message(name: string, fields: Readonly<Record<number, FieldInput>>): MessageType {
  const map = new Map<number, FieldSpec>();
  for (const [num, [json, type, opt]] of Object.entries(fields)) {
    map.set(Number(num), {
      json,
      type,
      cardinality: opt === 'repeated' || opt === 'map' || opt === 'inline' ? opt : 'single',
      keep: opt === 'keep',
    });
  }
  return { name, fields: map };
}

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];

const isScalarVarint = (t: ValueType): boolean => t === 'bool' || t === 'int32' || t === 'int64';

function expectWire(msg: MessageType, spec: FieldSpec, tag: Tag, wire: number): void {
  if (tag.wire !== wire) {
    throw malformed(
      `${msg.name} field ${tag.field} (${spec.json}) has wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}, ` +
        `expected ${WIRE_NAMES[wire] ?? wire}`,
    );
  }
}

function scalarVarint(msg: MessageType, spec: FieldSpec, kind: ValueType, v: bigint): unknown {
  switch (kind) {
    case 'bool':
      return v !== 0n;
    case 'int32':
      return toInt32(v);
    default: {
      const n = toInt64(v);
      if (n === undefined) {
        throw unsupported(
          `${msg.name} field ${spec.json} holds ${BigInt.asIntN(64, v)}, beyond a JSON-safe integer`,
        );
      }
      return n;
    }
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding, as Go's encoding/json writes []byte. */
export function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i]!;
    const b = bytes[i + 1];
    const c = bytes[i + 2];
    out += BASE64[a >> 2]!;
    out += BASE64[((a & 3) << 4) | ((b ?? 0) >> 4)]!;
    out += b === undefined ? '=' : BASE64[((b & 15) << 2) | ((c ?? 0) >> 6)]!;
    out += c === undefined ? '=' : BASE64[c & 63]!;
  }
  return out;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * RFC 3339 in UTC, as metav1.Time (whole seconds) and metav1.MicroTime (six fraction digits) write it.
 * Go refuses to write years outside 0000-9999; so does this.
 */
export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const ms = seconds * 1000;
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (!Number.isFinite(ms) || Number.isNaN(d.getTime()) || year < 0 || year > 9999) {
    throw malformed(`timestamp ${seconds}s is outside the years 0000-9999`);
  }
  const base =
    `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return micro ? `${base}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${base}Z`;
}

/** metav1.Time / MicroTime: a Timestamp {1 seconds, 2 nanos}; no content is the zero time (undefined). */
function decodeTime(r: WireReader, name: string, micro: boolean): string | undefined {
  if (r.done) return undefined;
  let seconds = 0;
  let nanos = 0;
  while (!r.done) {
    const tag = r.tag();
    if (tag.field === 1 && tag.wire === WIRE_VARINT) {
      const s = toInt64(r.varint());
      if (s === undefined) throw malformed(`${name}: seconds out of range`);
      seconds = s;
    } else if (tag.field === 2 && tag.wire === WIRE_VARINT) {
      nanos = toInt32(r.varint());
    } else if (tag.field === 1 || tag.field === 2) {
      throw malformed(`${name} field ${tag.field} has wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}`);
    } else {
      throw unsupported(`${name} field ${tag.field} is not supported`);
    }
  }
  if (nanos < 0 || nanos > 999_999_999) throw malformed(`${name}: nanos ${nanos} out of range`);
  return formatTime(seconds, nanos, micro);
}

/** intstr.IntOrString {1 type, 2 intVal, 3 strVal}: a number or a string. */
function decodeIntOrString(r: WireReader): number | string {
  let type = 0n;
  let intVal = 0;
  let strVal = '';
  while (!r.done) {
    const tag = r.tag();
    if (tag.field === 1 && tag.wire === WIRE_VARINT) type = r.varint();
    else if (tag.field === 2 && tag.wire === WIRE_VARINT) intVal = toInt32(r.varint());
    else if (tag.field === 3 && tag.wire === WIRE_LEN) strVal = r.string();
    else if (tag.field >= 1 && tag.field <= 3) {
      throw malformed(`IntOrString field ${tag.field} has wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}`);
    } else throw unsupported(`IntOrString field ${tag.field} is not supported`);
  }
  if (type === 0n) return intVal;
  if (type === 1n) return strVal;
  throw malformed(`IntOrString has impossible type ${type}`);
}

/** resource.Quantity {1 string}: its canonical string; no content is the zero quantity. */
function decodeQuantity(r: WireReader): string {
  let s: string | undefined;
  while (!r.done) {
    const tag = r.tag();
    if (tag.field === 1 && tag.wire === WIRE_LEN) s = r.string();
    else if (tag.field === 1)
      throw malformed(`Quantity field 1 has wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}`);
    else throw unsupported(`Quantity field ${tag.field} is not supported`);
  }
  if (s === undefined) return '0';
  if (s === '') throw malformed('Quantity holds an empty string');
  return s;
}

/** metav1.FieldsV1 {1 Raw}: the raw bytes are the JSON field set; none is null (undefined). */
function decodeFieldsV1(r: WireReader): unknown {
  let raw: Uint8Array | undefined;
  while (!r.done) {
    const tag = r.tag();
    if (tag.field === 1 && tag.wire === WIRE_LEN) raw = r.bytes();
    else if (tag.field === 1)
      throw malformed(`FieldsV1 field 1 has wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}`);
    else throw unsupported(`FieldsV1 field ${tag.field} is not supported`);
  }
  if (raw === undefined || raw.length === 0) return undefined;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)) as unknown;
  } catch {
    throw malformed('FieldsV1 does not hold valid JSON');
  }
}

/** One length-delimited value of a non-scalar type (or a string/bytes scalar). */
function decodeLenValue(msg: MessageType, spec: FieldSpec, type: ValueType, r: WireReader): unknown {
  switch (type) {
    case 'string':
      return r.string();
    case 'bytes':
      return base64(r.bytes());
    case 'intOrString':
      return decodeIntOrString(r.message());
    case 'time':
      return decodeTime(r.message(), `${msg.name}.${spec.json}`, false);
    case 'microTime':
      return decodeTime(r.message(), `${msg.name}.${spec.json}`, true);
    case 'quantity':
      return decodeQuantity(r.message());
    case 'fieldsV1':
      return decodeFieldsV1(r.message());
    case 'bool':
    case 'int32':
    case 'int64':
      throw new Error('unreachable: varint types are not length-delimited');
    default:
      return decodeMessage(r.message(), type);
  }
}

const isZero = (v: unknown): boolean => v === '' || v === 0 || v === false;

function readSingle(msg: MessageType, spec: FieldSpec, tag: Tag, r: WireReader): unknown {
  if (isScalarVarint(spec.type)) {
    expectWire(msg, spec, tag, WIRE_VARINT);
    return scalarVarint(msg, spec, spec.type, r.varint());
  }
  expectWire(msg, spec, tag, WIRE_LEN);
  return decodeLenValue(msg, spec, spec.type, r);
}

/** A map entry: a message {1 key (string), 2 value}. */
function readMapEntry(msg: MessageType, spec: FieldSpec, tag: Tag, r: WireReader): [string, unknown] {
  expectWire(msg, spec, tag, WIRE_LEN);
  const entry = r.message();
  let key = '';
  let value: unknown;
  let seen = false;
  while (!entry.done) {
    const t = entry.tag();
    if (t.field === 1) {
      expectWire(msg, spec, t, WIRE_LEN);
      key = entry.string();
    } else if (t.field === 2) {
      seen = true;
      value = readSingle(msg, spec, t, entry);
    } else {
      throw unsupported(`${msg.name} map field ${spec.json} has an entry with field ${t.field}`);
    }
  }
  if (!seen) value = zeroOf(spec.type);
  return [key, value];
}

/** What a map value decodes to when its entry leaves the value out. */
function zeroOf(type: ValueType): unknown {
  switch (type) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'int64':
    case 'intOrString':
      return 0;
    case 'quantity':
      return '0';
    case 'time':
    case 'microTime':
    case 'fieldsV1':
      return null;
    default:
      return {};
  }
}

/** Decodes one message with its table into a JSON-shaped object (merging into `into` when given). */
export function decodeMessage(
  r: WireReader,
  msg: MessageType,
  into: Record<string, unknown> = {},
): Record<string, unknown> {
  const out = into;
  while (!r.done) {
    const tag = r.tag();
    const spec = msg.fields.get(tag.field);
    if (spec === undefined) {
      throw unsupported(
        `${msg.name} field ${tag.field} (wire type ${WIRE_NAMES[tag.wire] ?? tag.wire}) is not supported by this server`,
      );
    }
    switch (spec.cardinality) {
      case 'inline': {
        if (typeof spec.type !== 'object') throw new Error(`${msg.name}.${spec.json}: only messages inline`);
        expectWire(msg, spec, tag, WIRE_LEN);
        decodeMessage(r.message(), spec.type, out);
        break;
      }
      case 'map': {
        const [k, v] = readMapEntry(msg, spec, tag, r);
        const m = (out[spec.json] ??= {}) as Record<string, unknown>;
        m[k] = v;
        break;
      }
      case 'repeated': {
        const list = (out[spec.json] ??= []) as unknown[];
        if (isScalarVarint(spec.type) && tag.wire === WIRE_LEN) {
          // Packed encoding of a repeated varint field.
          const packed = r.message();
          while (!packed.done) list.push(scalarVarint(msg, spec, spec.type, packed.varint()));
        } else {
          list.push(readSingle(msg, spec, tag, r) ?? null);
        }
        break;
      }
      default: {
        if (typeof spec.type === 'object') {
          // A message field seen twice merges, as protobuf does.
          expectWire(msg, spec, tag, WIRE_LEN);
          const prev = out[spec.json];
          const target = recordOf(prev);
          out[spec.json] = decodeMessage(r.message(), spec.type, target);
          break;
        }
        const v = readSingle(msg, spec, tag, r);
        // omitempty drops zero scalars only: IntOrString and Quantity are structs, written even when zero.
        const scalar = spec.type === 'string' || spec.type === 'bytes' || isScalarVarint(spec.type);
        if (v === undefined || (scalar && !spec.keep && isZero(v))) delete out[spec.json];
        else out[spec.json] = v;
      }
    }
  }
  return out;
}
