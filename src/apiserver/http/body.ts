// Request bodies: read with a hard size limit (413 beyond 3 MiB, as kube-apiserver), then decoded
// by media type: JSON, YAML, and for the kinds src/api/protobuf has tables for, Kubernetes protobuf
// (what kubectl 1.33's generator commands and client-go's event recorder send).
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import {
  PROTOBUF_MEDIA_TYPE,
  ProtobufError,
  decodeProtobufDeleteOptions,
  decodeProtobufObject,
  hasProtobufTable,
  type GroupVersionKind,
} from '../../api/protobuf/index.js';
import { StatusError, statusErrors } from '../../api/status.js';
import { mediaType } from './negotiation.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/**
 * How long a request body may pause between chunks before the request is given up and its connection
 * dropped (kube's request timeout filter ends a request after 60 s): a client that declares a body and
 * stops sending would otherwise hold its request, and what it sent, for as long as it keeps the
 * connection. A test hook: tests shorten it.
 */
export const bodyTimeouts = { idleMs: 60_000 };

export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw statusErrors.requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let stalled = false;
  const idle = setTimeout(() => {
    stalled = true;
    req.destroy();
  }, bodyTimeouts.idleMs);
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      idle.refresh();
      size += chunk.length;
      if (size > limit) {
        req.resume();
        throw statusErrors.requestEntityTooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (stalled) throw statusErrors.timeout(`the request body stalled for ${bodyTimeouts.idleMs / 1000} s`);
    throw err;
  } finally {
    clearTimeout(idle);
  }
  return Buffer.concat(chunks);
}

const WRITE_TYPES = ['application/json', 'application/yaml'];

/**
 * How deeply a request body may nest. Go's decoder stops at 10000; here the recursive walks that follow
 * (structuredClone, JSON.stringify, validation, patching) run out of stack well before that, so bodies
 * are refused far above any real object's depth but below where a walk could overflow.
 */
export const MAX_BODY_DEPTH = 500;

/** 400 when a parsed body nests deeper than MAX_BODY_DEPTH (walked without recursion). */
function checkDepth(value: unknown): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_BODY_DEPTH) {
      throw statusErrors.badRequest(`the request body is nested more than ${MAX_BODY_DEPTH} levels deep`);
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}

export function parseJson(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') throw statusErrors.badRequest('the request body is empty');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw statusErrors.badRequest(`json parse error: ${(err as Error).message}`);
  }
  checkDepth(value);
  return value;
}

/**
 * The keys that occur more than once in one object of a JSON text, as kube's strict decoder names them
 * ("metadata.name", "spec.ports[0].port"), in document order. `text` must be valid JSON.
 */
export function duplicateFields(text: string): string[] {
  interface Frame {
    readonly keys: Set<string> | undefined; // undefined for an array
    readonly path: string;
    key: string;
    index: number;
  }
  const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);
  const childPath = (f: Frame | undefined): string =>
    f === undefined ? '' : f.keys !== undefined ? join(f.path, f.key) : `${f.path}[${f.index}]`;
  const out: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else if (d === 0x22 || Number.isNaN(d)) break;
        else j++;
      }
      const top = stack.at(-1);
      if (expectKey && top?.keys !== undefined) {
        const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
        if (top.keys.has(key)) out.push(join(top.path, key));
        else top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const path = childPath(stack.at(-1));
      stack.push({ keys: c === 0x7b ? new Set() : undefined, path, key: '', index: 0 });
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = stack.at(-1);
      if (top?.keys !== undefined) expectKey = true;
      else if (top !== undefined) top.index++;
    }
  }
  return out;
}

export function parseYamlDoc(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') throw statusErrors.badRequest('the request body is empty');
  try {
    const docs = parseAllDocuments(text, { uniqueKeys: false });
    if (Array.isArray(docs) && docs.length > 1) {
      throw statusErrors.badRequest('the request body must hold exactly one YAML document');
    }
    const value = parseYaml(text, { uniqueKeys: false, maxAliasCount: 100 }) as unknown;
    checkDepth(value);
    return value;
  } catch (err) {
    if (err instanceof Error && err.name === 'StatusError') throw err;
    throw statusErrors.badRequest(`yaml parse error: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
}

/** 415 for a protobuf body with a kind or field this server has no table for: nothing is dropped silently. */
const undecodable = (err: ProtobufError): StatusError =>
  new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message:
      `the ${PROTOBUF_MEDIA_TYPE} body could not be decoded without losing data: ${err.message}; ` +
      `send this request as application/json`,
    reason: 'UnsupportedMediaType',
    code: 415,
  });

/**
 * A protobuf body of the expected kind as JSON. Bodies that are not valid protobuf, or hold another
 * kind, are a 400; a kind or field without a decoding table is a 415 that says what was not
 * understood, so that nothing is dropped silently and the client knows to send JSON.
 */
function decodeProtobufBody(buf: Buffer, expected: GroupVersionKind): unknown {
  try {
    return decodeProtobufObject(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), expected);
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    const { kind, version } = expected;
    if (err.reason !== 'Unsupported') {
      throw statusErrors.badRequest(
        `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${err.message}`,
      );
    }
    throw undecodable(err);
  }
}

/**
 * A POST or PUT body: JSON (also when no Content-Type is given), YAML, or with `expected` (the
 * resource's group, version and kind) Kubernetes protobuf. With `validation`, repeated JSON keys are
 * what kube's strict decoder makes of them: a 400 under Strict (named as transformDecodeError names
 * it), warnings under Warn.
 */
export function decodeWriteBody(
  contentType: string | undefined,
  buf: Buffer,
  validation?: {
    readonly fieldValidation: string;
    readonly warnings: string[];
    readonly kind: string;
    readonly version: string;
  },
  expected?: GroupVersionKind,
): unknown {
  const t = mediaType(contentType);
  if (t === '' || t === 'application/json') {
    const value = parseJson(buf);
    if (validation !== undefined && validation.fieldValidation !== 'Ignore') {
      const dups = duplicateFields(buf.toString('utf8')).map((f) => `duplicate field ${JSON.stringify(f)}`);
      if (dups.length > 0 && validation.fieldValidation === 'Strict') {
        const { kind, version } = validation;
        throw statusErrors.badRequest(
          `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: strict decoding error: ${dups.join(', ')}`,
        );
      }
      validation.warnings.push(...dups);
    }
    return value;
  }
  if (t === 'application/yaml') return parseYamlDoc(buf);
  if (t === PROTOBUF_MEDIA_TYPE && expected !== undefined) return decodeProtobufBody(buf, expected);
  const protobuf = expected !== undefined && hasProtobufTable(expected);
  throw statusErrors.unsupportedMediaType(protobuf ? [...WRITE_TYPES, PROTOBUF_MEDIA_TYPE] : WRITE_TYPES);
}

/**
 * A DELETE body (DeleteOptions): none, JSON (also without a Content-Type), YAML, or Kubernetes protobuf,
 * which client-go's typed clients send (`kubectl drain`). undefined when there is no body.
 */
export function decodeDeleteBody(contentType: string | undefined, buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  const t = mediaType(contentType);
  if (t === '' || t === 'application/json')
    return buf.toString('utf8').trim() === '' ? undefined : parseJson(buf);
  if (t === 'application/yaml') return parseYamlDoc(buf);
  if (t !== PROTOBUF_MEDIA_TYPE)
    throw statusErrors.unsupportedMediaType([...WRITE_TYPES, PROTOBUF_MEDIA_TYPE]);
  try {
    return decodeProtobufDeleteOptions(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
  } catch (err) {
    if (!(err instanceof ProtobufError)) throw err;
    if (err.reason !== 'Unsupported')
      throw statusErrors.badRequest(`DeleteOptions cannot be decoded: ${err.message}`);
    throw undecodable(err);
  }
}
