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

/**
 * The ports of a pool (slicePool's `name:protocol:port` list), for matching a Service port by name and
 * protocol. A port whose number is missing or not a positive integer reads as 0. Port names are DNS labels,
 * so ':' and ',' never appear in them; the number and protocol are read from the right all the same.
 */
export function poolPorts(pool: string): Array<{ name: string; protocol: string; port: number }> {
  const bar = pool.indexOf('|');
  const sig = bar < 0 ? '' : pool.slice(bar + 1);
  if (sig === '') return [];
  return sig.split(',').map((p) => {
    const last = p.lastIndexOf(':');
    const mid = last <= 0 ? -1 : p.lastIndexOf(':', last - 1);
    const n = last < 0 ? NaN : Number(p.slice(last + 1));
    return {
      name: mid < 0 ? '' : p.slice(0, mid),
      protocol: mid < 0 ? '' : p.slice(mid + 1, last),
      port: p.slice(last + 1) !== '' && Number.isInteger(n) && n > 0 ? n : 0,
    };
  });
}

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

/** How the parser stores what it reads: every endpoint of a Service, or a leaner form for a long-lived index. */
export interface ParseOptions {
  /**
   * Returns one shared instance of a string that repeats across endpoints (node names, zones, pools,
   * address types, slice names): JSON.parse gives every occurrence its own copy.
   */
  readonly intern?: (s: string) => string;
  /** Leaves `targetRef` out (only explain prints it). Default true. */
  readonly targetRefs?: boolean;
}

const same = (s: string): string => s;

/** One slice's endpoints, before they are merged with the Service's other slices. */
export interface SliceEndpoints {
  /** The slice's name: slices are merged in name order. */
  readonly name: string;
  /** The slice is being deleted: its endpoints are not used. */
  readonly deleting: boolean;
  readonly endpoints: readonly TopologyEndpoint[];
}

/** Reads one EndpointSlice's endpoints. */
export function endpointsOfSlice(s: unknown, o: ParseOptions = {}): SliceEndpoints {
  const intern = o.intern ?? same;
  const slice = rec(s);
  const meta = rec(slice['metadata']);
  const name = intern(optStr(meta['name']) ?? '');
  const deleting = meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null;
  const out: TopologyEndpoint[] = [];
  const addressType = intern(optStr(slice['addressType']) ?? 'IPv4');
  const pool = intern(slicePool(slice));
  const prefix = intern(`${pool}/`);
  for (const raw of list(slice['endpoints'])) {
    const e = rec(raw);
    // A copy of exactly its length: filter()'s result keeps room for 16 more (100 B per endpoint).
    const addresses = list(e['addresses'])
      .filter((a): a is string => typeof a === 'string')
      .slice();
    const first = addresses[0];
    if (first === undefined) continue;
    const c = rec(e['conditions']);
    const hints = rec(e['hints']);
    const nodeName = optStr(e['nodeName']);
    const zone = optStr(e['zone']);
    const forZones = names(hints['forZones'])?.map(intern);
    const forNodes = names(hints['forNodes'])?.map(intern);
    const topo = e['deprecatedTopology'] ?? e['topology'];
    const ref = o.targetRefs === false ? undefined : targetRef(e['targetRef']);
    // One literal with every common field (fast properties, no spread copies), then the rare ones added;
    // a field that is absent stays absent.
    // A concatenation shares its parts: the pool's prefix once per slice, and the address.
    const id = prefix + first;
    const ready = boolOr(c['ready'], true);
    const serving = boolOr(c['serving'], true);
    const terminating = boolOr(c['terminating'], false);
    const node = nodeName !== undefined && nodeName !== '' ? intern(nodeName) : undefined;
    const z = zone !== undefined && zone !== '' ? intern(zone) : undefined;
    type Mutable = { -readonly [K in keyof TopologyEndpoint]: TopologyEndpoint[K] };
    const ep: Mutable =
      node !== undefined && z !== undefined
        ? {
            id,
            pool,
            addressType,
            addresses,
            ready,
            serving,
            terminating,
            source: name,
            nodeName: node,
            zone: z,
          }
        : node !== undefined
          ? { id, pool, addressType, addresses, ready, serving, terminating, source: name, nodeName: node }
          : z !== undefined
            ? { id, pool, addressType, addresses, ready, serving, terminating, source: name, zone: z }
            : { id, pool, addressType, addresses, ready, serving, terminating, source: name };
    if (topo !== undefined) ep.deprecatedTopology = stringMap(topo) as Labels;
    if (forZones !== undefined) ep.forZones = forZones;
    if (forNodes !== undefined) ep.forNodes = forNodes;
    if (ref !== undefined) ep.targetRef = ref;
    out.push(ep);
  }
  return { name, deleting, endpoints: out };
}

/** An endpoint's fields that few endpoints carry, kept aside in a packed slice. */
type Rare = Pick<TopologyEndpoint, 'deprecatedTopology' | 'forZones' | 'forNodes' | 'targetRef'> & {
  readonly more?: readonly string[];
};

/**
 * One slice's endpoints packed into parallel arrays, for an index that holds every endpoint of a cluster
 * for a long time (the wrapper, the proxy): about 60 bytes an endpoint instead of about 250 as objects.
 * unpackSlice() gives back exactly what endpointsOfSlice() reads.
 */
export interface PackedSlice {
  readonly name: string;
  readonly deleting: boolean;
  readonly pool: string;
  readonly addressType: string;
  /** `<pool>/`: every id starts with it. */
  readonly prefix: string;
  /** Each endpoint's first address: a number for a dotted-quad IPv4 address (packAddress). */
  readonly addresses: readonly (string | number)[];
  /** ready | serving << 1 | terminating << 2. */
  readonly conditions: readonly number[];
  readonly nodes: readonly (string | undefined)[];
  /** Undefined when no endpoint names a zone. */
  readonly zones: readonly (string | undefined)[] | undefined;
  /** Undefined when no endpoint has more than one address, hints, a topology map or a kept targetRef. */
  readonly rare: readonly (Rare | undefined)[] | undefined;
}

const OCTET = /^(?:0|[1-9][0-9]{0,2})$/;

/**
 * An IPv4 address in its dotted-quad form as a number, which a packed array holds unboxed in 8 bytes
 * (a string is 8 bytes of slot and about 32 of string); any other address as it is.
 */
export function packAddress(a: string): string | number {
  const parts = a.split('.');
  if (parts.length !== 4) return a;
  let n = 0;
  for (const p of parts) {
    if (!OCTET.test(p)) return a;
    const v = Number(p);
    if (v > 255) return a;
    n = n * 256 + v;
  }
  return n;
}

/**
 * An address as packAddress() took it. A dotted quad comes back as one flat string: a template literal
 * would give a concatenation (the first three octets and the last, about 60 bytes against 32), and the
 * proxy's state keeps every endpoint's address.
 */
export const unpackAddress = (a: string | number): string =>
  typeof a === 'string'
    ? a
    : [Math.floor(a / 16_777_216), (a >>> 16) & 255, (a >>> 8) & 255, a & 255].join('.');

/** Reads one EndpointSlice into its packed form. */
export function packSlice(s: unknown, o: ParseOptions = {}): PackedSlice {
  const read = endpointsOfSlice(s, o);
  const slice = rec(s);
  const intern = o.intern ?? same;
  const pool = intern(slicePool(slice));
  const eps = read.endpoints;
  const zones = eps.some((e) => e.zone !== undefined) ? eps.map((e) => e.zone) : undefined;
  const rareOf = (e: TopologyEndpoint): Rare | undefined => {
    if (
      e.addresses.length === 1 &&
      e.deprecatedTopology === undefined &&
      e.forZones === undefined &&
      e.forNodes === undefined &&
      e.targetRef === undefined
    )
      return undefined;
    return {
      ...(e.addresses.length > 1 ? { more: e.addresses.slice(1) } : {}),
      ...(e.deprecatedTopology !== undefined ? { deprecatedTopology: e.deprecatedTopology } : {}),
      ...(e.forZones !== undefined ? { forZones: e.forZones } : {}),
      ...(e.forNodes !== undefined ? { forNodes: e.forNodes } : {}),
      ...(e.targetRef !== undefined ? { targetRef: e.targetRef } : {}),
    };
  };
  const rare = eps.map(rareOf);
  return {
    name: read.name,
    deleting: read.deleting,
    pool,
    addressType: intern(optStr(slice['addressType']) ?? 'IPv4'),
    prefix: intern(`${pool}/`),
    addresses: eps.map((e) => packAddress(e.addresses[0]!)),
    conditions: eps.map((e) => (e.ready ? 1 : 0) | (e.serving ? 2 : 0) | (e.terminating ? 4 : 0)),
    nodes: eps.map((e) => e.nodeName),
    zones,
    rare: rare.some((r) => r !== undefined) ? rare : undefined,
  };
}

/**
 * Where a slice carries its endpoints already packed: a consumer whose informer packs each slice as it
 * arrives (the proxy) caches that form, and its index holds the same arrays rather than a second copy.
 * A symbol, so that nothing read from the API can carry it.
 */
export const PACKED_ENDPOINTS: unique symbol = Symbol('packed endpoints');

/** A slice with its endpoints packed (packSlice) under PACKED_ENDPOINTS, beside whatever else it keeps. */
export interface PrepackedSlice {
  readonly [PACKED_ENDPOINTS]: PackedSlice;
}

/**
 * A slice's packed form: the one it carries (PrepackedSlice, packed with the options of the index it is
 * for), else packSlice(s, o).
 */
export function packedSliceOf(s: unknown, o: ParseOptions = {}): PackedSlice {
  const carried =
    typeof s === 'object' && s !== null ? (s as Partial<PrepackedSlice>)[PACKED_ENDPOINTS] : undefined;
  return carried ?? packSlice(s, o);
}

/** The endpoints of a packed slice, as endpointsOfSlice() read them. */
export function unpackSlice(p: PackedSlice): SliceEndpoints {
  const out: TopologyEndpoint[] = [];
  for (let i = 0; i < p.addresses.length; i++) {
    const first = unpackAddress(p.addresses[i]!);
    const c = p.conditions[i]!;
    const r = p.rare?.[i];
    const ep: { -readonly [K in keyof TopologyEndpoint]: TopologyEndpoint[K] } = {
      id: p.prefix + first,
      pool: p.pool,
      addressType: p.addressType,
      addresses: r?.more === undefined ? [first] : [first, ...r.more],
      ready: (c & 1) !== 0,
      serving: (c & 2) !== 0,
      terminating: (c & 4) !== 0,
      source: p.name,
    };
    const node = p.nodes[i];
    const zone = p.zones?.[i];
    if (node !== undefined) ep.nodeName = node;
    if (zone !== undefined) ep.zone = zone;
    if (r?.deprecatedTopology !== undefined) ep.deprecatedTopology = r.deprecatedTopology;
    if (r?.forZones !== undefined) ep.forZones = r.forZones;
    if (r?.forNodes !== undefined) ep.forNodes = r.forNodes;
    if (r?.targetRef !== undefined) ep.targetRef = r.targetRef;
    out.push(ep);
  }
  return { name: p.name, deleting: p.deleting, endpoints: out };
}

/**
 * Merges a Service's slices, read one by one, into one endpoint list. Slices being deleted are skipped; an
 * endpoint whose first address already appeared in the same pool is skipped too (a slice mid-move can
 * hold a copy).
 */
export function mergeSliceEndpoints(slices: Iterable<SliceEndpoints>): TopologyEndpoint[] {
  const out: TopologyEndpoint[] = [];
  const seen = new Set<string>();
  const ordered = [...slices].sort((a, b) => a.name.localeCompare(b.name));
  for (const s of ordered) {
    if (s.deleting) continue;
    for (const e of s.endpoints) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      out.push(e);
    }
  }
  return out;
}

/** Merges a Service's EndpointSlices into one endpoint list (see mergeSliceEndpoints). */
export function endpointsFromSlices(slices: readonly unknown[], o: ParseOptions = {}): TopologyEndpoint[] {
  return mergeSliceEndpoints(slices.map((s) => endpointsOfSlice(s, o)));
}

const familyOf = (ip: string): string => (ip.includes(':') ? 'IPv6' : 'IPv4');

/**
 * The endpoints of a legacy Endpoints object: `addresses` are ready, `notReadyAddresses` are neither ready
 * nor serving (Endpoints cannot say "terminating"). Each subset is a port set.
 */
export function endpointsFromEndpoints(ep: unknown, o: ParseOptions = {}): TopologyEndpoint[] {
  const intern = o.intern ?? same;
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
        const pool = intern(`${addressType}|${ports}`);
        const id = `${pool}/${ip}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const nodeName = optStr(a['nodeName']);
        const ref = o.targetRefs === false ? undefined : targetRef(a['targetRef']);
        out.push({
          id,
          pool,
          addressType,
          addresses: [ip],
          ready,
          serving: ready,
          terminating: false,
          ...(nodeName !== undefined && nodeName !== '' ? { nodeName: intern(nodeName) } : {}),
          ...(ref !== undefined ? { targetRef: ref } : {}),
          source: 'endpoints',
        });
      }
    }
  }
  return out;
}
