// Content negotiation as kube-apiserver does it for JSON-only serving: Accept picks JSON, YAML, a
// meta.k8s.io Table or PartialObjectMetadata; protobuf is never produced, so a protobuf-first Accept
// that also allows JSON gets JSON, and one that allows only protobuf gets 406.
import { statusErrors } from '../../api/status.js';

export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [full, ...paramParts] = part.split(';').map((s) => s.trim());
    if (full === undefined || full === '') continue;
    const [type, subtype] = full.toLowerCase().split('/');
    if (type === undefined || subtype === undefined || type === '' || subtype === '') continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params[k] = v;
    }
    if (q > 0) out.push({ type, subtype, params, q });
  }
  // Stable by q, highest first.
  return out
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.q - a.m.q || a.i - b.i)
    .map((x) => x.m);
}

export type Rendering =
  | { readonly kind: 'json' }
  | { readonly kind: 'yaml' }
  | { readonly kind: 'table'; readonly version: 'v1' | 'v1beta1' }
  | { readonly kind: 'metadata'; readonly version: 'v1' | 'v1beta1' }
  | { readonly kind: 'discovery'; readonly version: 'v2' | 'v2beta1' };

const ACCEPTED = ['application/json', 'application/yaml', 'application/json;stream=watch'];

const isJsonish = (m: MediaRange): boolean =>
  (m.type === 'application' && m.subtype === 'json') ||
  (m.type === 'application' && m.subtype === '*') ||
  (m.type === '*' && m.subtype === '*');

/**
 * Picks how to render a response. `allow` names the special renderings this endpoint offers: tables
 * and partial metadata for resource reads, aggregated discovery for /api and /apis.
 */
export function negotiate(
  header: string | undefined,
  allow: { table?: boolean; metadata?: boolean; discovery?: boolean; yaml?: boolean },
): Rendering {
  for (const m of parseAccept(header)) {
    const as = m.params['as'];
    if (as !== undefined && isJsonish(m)) {
      const g = m.params['g'];
      const v = m.params['v'];
      if (allow.table === true && as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1')) {
        return { kind: 'table', version: v };
      }
      if (
        allow.metadata === true &&
        (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') &&
        g === 'meta.k8s.io' &&
        (v === 'v1' || v === 'v1beta1')
      ) {
        return { kind: 'metadata', version: v };
      }
      if (
        allow.discovery === true &&
        as === 'APIGroupDiscoveryList' &&
        g === 'apidiscovery.k8s.io' &&
        (v === 'v2' || v === 'v2beta1')
      ) {
        return { kind: 'discovery', version: v };
      }
      continue; // an `as=` we cannot produce: try the next range
    }
    if (isJsonish(m)) return { kind: 'json' };
    if (allow.yaml !== false && m.type === 'application' && m.subtype === 'yaml') return { kind: 'yaml' };
  }
  throw statusErrors.notAcceptable(ACCEPTED);
}

/** The media type of a request body, without parameters, lower-cased. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
