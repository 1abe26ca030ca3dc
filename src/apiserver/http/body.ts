// Request bodies: read with a hard size limit (413 beyond 3 MiB, as kube-apiserver), then decoded
// by media type. Protobuf bodies get 415: this server speaks JSON (and YAML) only.
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { statusErrors } from '../../api/status.js';
import { mediaType } from './negotiation.js';

export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw statusErrors.requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw statusErrors.requestEntityTooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const WRITE_TYPES = ['application/json', 'application/yaml'];

export function parseJson(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') throw statusErrors.badRequest('the request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw statusErrors.badRequest(`json parse error: ${(err as Error).message}`);
  }
}

export function parseYamlDoc(buf: Buffer): unknown {
  const text = buf.toString('utf8');
  if (text.trim() === '') throw statusErrors.badRequest('the request body is empty');
  try {
    const docs = parseAllDocuments(text, { uniqueKeys: false });
    if (Array.isArray(docs) && docs.length > 1) {
      throw statusErrors.badRequest('the request body must hold exactly one YAML document');
    }
    return parseYaml(text, { uniqueKeys: false, maxAliasCount: 100 }) as unknown;
  } catch (err) {
    if (err instanceof Error && err.name === 'StatusError') throw err;
    throw statusErrors.badRequest(`yaml parse error: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
}

/** A POST or PUT body: JSON (also when no Content-Type is given) or YAML. */
export function decodeWriteBody(contentType: string | undefined, buf: Buffer): unknown {
  const t = mediaType(contentType);
  if (t === '' || t === 'application/json') return parseJson(buf);
  if (t === 'application/yaml') return parseYamlDoc(buf);
  throw statusErrors.unsupportedMediaType(WRITE_TYPES);
}
