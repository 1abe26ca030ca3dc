// A Service's endpoints as the engine sees them: every EndpointSlice of the Service merged (or its legacy
// Endpoints), one entry per endpoint, each in a pool (address family + port set). The conditions are read
// the way kube-proxy's endpointslicecache reads them: ready and serving default to true when unset,
// terminating to false.
import { list, optStr, rec, stringMap } from '../endpoints/read.js';
import type { Labels, TopologyEndpoint } from './types.js';

const portSignature = (ports: readonly unknown[]): string =>
  ports
    .map(rec)
    .map((p) => `${optStr(p['name']) ?? ''}:${optStr(p['protocol']) ?? 'TCP'}:${String(p['port'] ?? '')}`)
    .sort()
    .join(',');

/** The pool of a slice's endpoints: its address type and port set (an endpoint's id is `<pool>/<address>`). */
export const slicePool = (slice: unknown): string =>
  `${optStr(rec(slice)['addressType']) ?? 'IPv4'}|${portSignature(list(rec(slice)['ports']))}`;

const names = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.map((x) => optStr(rec(x)['name']) ?? '').filter((n) => n !== '') : undefined;

const boolOr = (v: unknown, dflt: boolean): boolean => (typeof v === 'boolean' ? v : dflt);

function targetRef(v: unknown): TopologyEndpoint['targetRef'] {
  if (v === undefined) return undefined;
  const r = rec(v);
  const kind = optStr(r['kind']);
  const namespace = optStr(r['namespace']);
  const name = optStr(r['name']);
  return {
    ...(kind !== undefined ? { kind } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
  };
}

/**
 * Merges a Service's EndpointSlices into one endpoint list. Slices being deleted are skipped; an endpoint
 * whose first address already appeared in the same pool is skipped too (a slice mid-move can hold a copy).
 */
export function endpointsFromSlices(slices: readonly unknown[]): TopologyEndpoint[] {
  const out: TopologyEndpoint[] = [];
  const seen = new Set<string>();
  const ordered = [...slices].sort((a, b) =>
    (optStr(rec(rec(a)['metadata'])['name']) ?? '').localeCompare(
      optStr(rec(rec(b)['metadata'])['name']) ?? '',
    ),
  );
  for (const s of ordered) {
    const slice = rec(s);
    const meta = rec(slice['metadata']);
    if (meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null) continue;
    const addressType = optStr(slice['addressType']) ?? 'IPv4';
    const pool = slicePool(slice);
    const source = optStr(meta['name']) ?? '';
    for (const raw of list(slice['endpoints'])) {
      const e = rec(raw);
      const addresses = list(e['addresses']).filter((a): a is string => typeof a === 'string');
      const first = addresses[0];
      if (first === undefined) continue;
      const id = `${pool}/${first}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const c = rec(e['conditions']);
      const ready = boolOr(c['ready'], true);
      const hints = rec(e['hints']);
      const nodeName = optStr(e['nodeName']);
      const zone = optStr(e['zone']);
      const forZones = names(hints['forZones']);
      const forNodes = names(hints['forNodes']);
      const topo = e['deprecatedTopology'] ?? e['topology'];
      const ref = targetRef(e['targetRef']);
      out.push({
        id,
        pool,
        addressType,
        addresses,
        ready,
        serving: boolOr(c['serving'], true),
        terminating: boolOr(c['terminating'], false),
        ...(nodeName !== undefined && nodeName !== '' ? { nodeName } : {}),
        ...(zone !== undefined && zone !== '' ? { zone } : {}),
        ...(topo !== undefined ? { deprecatedTopology: stringMap(topo) as Labels } : {}),
        ...(forZones !== undefined ? { forZones } : {}),
        ...(forNodes !== undefined ? { forNodes } : {}),
        ...(ref !== undefined ? { targetRef: ref } : {}),
        source,
      });
    }
  }
  return out;
}

const familyOf = (ip: string): string => (ip.includes(':') ? 'IPv6' : 'IPv4');

/**
 * The endpoints of a legacy Endpoints object: `addresses` are ready, `notReadyAddresses` are neither ready
 * nor serving (Endpoints cannot say "terminating"). Each subset is a port set.
 */
export function endpointsFromEndpoints(ep: unknown): TopologyEndpoint[] {
  const out: TopologyEndpoint[] = [];
  const seen = new Set<string>();
  for (const rawSubset of list(rec(ep)['subsets'])) {
    const subset = rec(rawSubset);
    const ports = portSignature(list(subset['ports']));
    for (const [field, ready] of [
      ['addresses', true],
      ['notReadyAddresses', false],
    ] as const) {
      for (const raw of list(subset[field])) {
        const a = rec(raw);
        const ip = optStr(a['ip']);
        if (ip === undefined || ip === '') continue;
        const addressType = familyOf(ip);
        const pool = `${addressType}|${ports}`;
        const id = `${pool}/${ip}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const nodeName = optStr(a['nodeName']);
        const ref = targetRef(a['targetRef']);
        out.push({
          id,
          pool,
          addressType,
          addresses: [ip],
          ready,
          serving: ready,
          terminating: false,
          ...(nodeName !== undefined && nodeName !== '' ? { nodeName } : {}),
          ...(ref !== undefined ? { targetRef: ref } : {}),
          source: 'endpoints',
        });
      }
    }
  }
  return out;
}
