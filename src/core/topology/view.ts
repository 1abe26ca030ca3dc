// The views the topology index hands out: the endpoints one node may use for one Service. Pure.
import { mergeSliceEndpoints, unpackSlice, type PackedSlice } from './endpoints.js';
import type { Rule, TopologyEndpoint } from './types.js';

/**
 * The endpoints one node may use for one Service. The index's views unpack their endpoints on each read
 * of `internal` or `external` (fresh arrays and objects each time): read each once per use, and compare
 * views by what they hold, not by identity or as plain objects.
 */
export interface TopologyView {
  /** `namespace/name`. */
  readonly key: string;
  readonly internal: readonly TopologyEndpoint[];
  /** Undefined when the Service is not externally accessible. */
  readonly external?: readonly TopologyEndpoint[] | undefined;
  readonly internalRule: Rule;
  readonly externalRule?: Rule | undefined;
  /**
   * The pools (`addressType|ports`) in which the Service has a usable endpoint (ready, or serving and
   * terminating, on a node not marked unhealthy): anywhere in the cluster when a side's rule is a Local
   * traffic policy, otherwise among the kept endpoints (a topology rule that keeps nothing leaves the
   * Service without endpoints for this node). kube-proxy's hasAnyEndpoints per port: a port with none is
   * refused (REJECT), one with some but none for this node's side is dropped. The index's views always
   * carry it.
   */
  readonly usablePools?: readonly string[];
  /**
   * The Service's endpoints left out because the health source reports their node unhealthy (edge
   * autonomy), by id and by address; undefined when there are none. A view that leaves filtering to
   * kube-proxy (no edge rule) still loses these, as SuperEdge drops them from every Service.
   */
  readonly unhealthy?: Unhealthy | undefined;
}

export interface Unhealthy {
  readonly ids: ReadonlySet<string>;
  readonly addresses: ReadonlySet<string>;
}

/** The endpoints on nodes `health` reports unhealthy; undefined for none. */
export function unhealthyOf(
  all: readonly TopologyEndpoint[],
  health: (node: string) => boolean | undefined,
): Unhealthy | undefined {
  let ids: Set<string> | undefined;
  const addresses = new Set<string>();
  for (const e of all) {
    if (e.nodeName === undefined || health(e.nodeName) !== false) continue;
    (ids ??= new Set()).add(e.id);
    for (const a of e.addresses) addresses.add(a);
  }
  return ids === undefined ? undefined : { ids, addresses };
}

/** Whether an endpoint counts for usablePools (before topology: its conditions and its node's health). */
export const usableAnywhere = (e: TopologyEndpoint, health: (node: string) => boolean | undefined): boolean =>
  e.addressType !== 'FQDN' &&
  (e.ready || (e.serving && e.terminating)) &&
  (e.nodeName === undefined || health(e.nodeName) !== false);

/** The distinct pools of the endpoints that count, sorted. */
export function usablePoolsOf(
  all: readonly TopologyEndpoint[],
  health: (node: string) => boolean | undefined,
): string[] {
  const pools = new Set<string>();
  for (const e of all) if (usableAnywhere(e, health)) pools.add(e.pool);
  return [...pools].sort();
}

/** Where a view's endpoints are read back from: its Service's packed slices then, or its Endpoints' list. */
export type ViewSource =
  { readonly packed: readonly PackedSlice[] } | { readonly list: readonly TopologyEndpoint[] };

const endpointsFrom = (src: ViewSource): readonly TopologyEndpoint[] =>
  'list' in src ? src.list : mergeSliceEndpoints(src.packed.map(unpackSlice));

/** Kept positions: every endpoint, in order (the common case, held without an array), or these. */
type Positions = 'all' | readonly number[];

/**
 * The positions of `kept` in `all` (kept is a subset of all, normally in all's order); 'all' when it is
 * all of them in all's order.
 */
function positions(all: readonly TopologyEndpoint[], kept: readonly TopologyEndpoint[]): Positions {
  const out: number[] = [];
  for (let i = 0, j = 0; i < all.length && j < kept.length; i++)
    if (all[i] === kept[j]) {
      out.push(i);
      j++;
    }
  if (out.length === kept.length) return out.length === all.length ? 'all' : out;
  const at = new Map(all.map((e, i) => [e, i] as const));
  return kept.map((e) => {
    const i = at.get(e);
    if (i === undefined) throw new Error(`topology index: kept endpoint ${e.id} is not among the Service's`);
    return i;
  });
}

const samePositions = (a: Positions, b: Positions): boolean =>
  a === b || (a !== 'all' && b !== 'all' && a.length === b.length && a.every((x, i) => x === b[i]));

const pick = (all: readonly TopologyEndpoint[], at: Positions): readonly TopologyEndpoint[] =>
  at === 'all' ? all.slice() : at.map((i) => all[i]!);

/**
 * A view as the index holds it: which of the Service's endpoints are kept (their positions; no array when it keeps them all, as most
 * views do) and where the
 * endpoints come from (the packed slices of the time, which are never changed, or the Endpoints' list).
 * The endpoints are unpacked when read. Held as objects, the kept endpoints of every view cost about 300
 * bytes each: 11 MiB of the wrapper's heap for 100,000 endpoints. Readers read a view's endpoints once
 * per use (served.ts keeps the ids it derives per view).
 */
export class KeptView implements TopologyView {
  private readonly at: Positions;
  private readonly atExternal: Positions | undefined;

  constructor(
    readonly key: string,
    private readonly source: ViewSource,
    all: readonly TopologyEndpoint[],
    internal: readonly TopologyEndpoint[],
    readonly internalRule: Rule,
    external: readonly TopologyEndpoint[] | undefined,
    readonly externalRule: Rule | undefined,
    readonly usablePools: readonly string[],
    readonly unhealthy?: Unhealthy,
  ) {
    this.at = positions(all, internal);
    const ext = external === undefined ? undefined : positions(all, external);
    this.atExternal = ext !== undefined && samePositions(ext, this.at) ? this.at : ext;
  }

  get internal(): readonly TopologyEndpoint[] {
    return pick(endpointsFrom(this.source), this.at);
  }

  get external(): readonly TopologyEndpoint[] | undefined {
    if (this.atExternal === undefined) return undefined;
    return pick(endpointsFrom(this.source), this.atExternal);
  }

  toJSON(): object {
    return {
      key: this.key,
      internal: this.internal,
      ...(this.atExternal !== undefined ? { external: this.external } : {}),
      internalRule: this.internalRule,
      ...(this.externalRule !== undefined ? { externalRule: this.externalRule } : {}),
      usablePools: this.usablePools,
      ...(this.unhealthy !== undefined ? { unhealthy: [...this.unhealthy.ids] } : {}),
    };
  }
}
