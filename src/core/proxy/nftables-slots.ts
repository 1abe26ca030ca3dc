// Where the nftables proxy mode keeps each balancing chain's endpoints: a range of slot numbers in one of
// the table's endpoint maps. A Service port's chain DNATs with
//
//   meta l4proto tcp dnat ip to numgen random mod K offset BASE map @endpoints-N
//
// and the map holds BASE … BASE+K-1 → (endpoint address . port). Maps are per protocol: nft 1.0.6 types
// the port by the map's `typeof … tcp dport`, and refuses a rule added later against a map typed with the
// protocol-free `th dport`. Replacing an endpoint is then an element
// change only, and a readiness flip rewrites one two-rule chain: the kernel's cost of a transaction that
// writes rules grows with the rules of the whole table, so the table keeps few (docs/design/proxy-nftables.md).
//
// Ranges are powers of two, at least MIN_RANGE long, aligned to their size, and a chain keeps its range
// while its endpoints fit, so its rule text (hence the rule) stays the same. The elements are spread over
// ENDPOINT_MAPS maps because the kernel checks each element added to a data map against every rule bound to
// that map, and each bound rule against the map's elements: one map for all Services would make a full
// write quadratic.
//
// The allocation is plain data kept in the proxy's model; every change can be recorded for undo (a partial
// render updates the kept model in place and may have to put it back).

/** Endpoint maps per protocol in each family's table: `endpoints-tcp-0` … `endpoints-tcp-63`, and udp, sctp. */
export const ENDPOINT_MAPS = 64;
/** The shortest range: most Services have fewer endpoints, and a few more fit without a new range. */
export const MIN_RANGE = 16;
/** numgen's result and the maps' keys are 32-bit. */
const SPACE = 2 ** 32;

export interface SlotRange {
  readonly base: number;
  readonly size: number;
}

/** The allocation: each chain's range, the ranges given back (per size), and the first never used. */
export interface SlotSpace {
  readonly ranges: Map<string, SlotRange>;
  readonly free: Map<number, number[]>;
  next: number;
}

/** Records how to undo one change (a partial render's undo log), or nothing. */
export type RecordUndo = (undo: () => void) => void;

export const emptySlots = (): SlotSpace => ({ ranges: new Map(), free: new Map(), next: 0 });

/** Whether a set of the table is one of the endpoint maps. */
export const isEndpointMap = (set: string): boolean => set.startsWith('endpoints-');

/** The endpoint map a range of a chain of protocol `proto` (tcp, udp, sctp) lives in. */
export const endpointMapOf = (base: number, proto: string): string =>
  `endpoints-${proto}-${Math.floor(base / MIN_RANGE) % ENDPOINT_MAPS}`;

const sizeFor = (k: number): number => {
  let size = MIN_RANGE;
  while (size < k) size *= 2;
  return size;
};

/** The range of `chain` for `k` endpoints: the one it has when they fit, else a new one. */
export function takeSlots(space: SlotSpace, chain: string, k: number, record?: RecordUndo): SlotRange {
  const had = space.ranges.get(chain);
  if (had !== undefined && had.size >= k) return had;
  if (had !== undefined) releaseSlots(space, chain, record);
  const size = sizeFor(k);
  const free = space.free.get(size);
  let base: number;
  if (free !== undefined && free.length > 0) {
    base = free.pop()!;
    record?.(() => free.push(base));
  } else {
    base = Math.ceil(space.next / size) * size;
    if (base + size > SPACE)
      throw new RangeError(`the nftables endpoint maps have no room for ${k} more endpoints`);
    const next = space.next;
    space.next = base + size;
    record?.(() => {
      space.next = next;
    });
  }
  const range = { base, size };
  space.ranges.set(chain, range);
  record?.(() => space.ranges.delete(chain));
  return range;
}

/**
 * The range `chain` was given for `k` endpoints, allocating nothing: how a kept state is rendered again as it
 * was (a partial render's old side). A missing or short range is a bug of the caller.
 */
export function findSlots(space: SlotSpace, chain: string, k: number): SlotRange {
  const had = space.ranges.get(chain);
  if (had === undefined || had.size < k)
    throw new Error(`the nftables endpoint range of ${chain} for ${k} endpoints is not kept`);
  return had;
}

/** Gives back the range of `chain` (nothing happens when it has none). */
export function releaseSlots(space: SlotSpace, chain: string, record?: RecordUndo): void {
  const had = space.ranges.get(chain);
  if (had === undefined) return;
  space.ranges.delete(chain);
  let free = space.free.get(had.size);
  if (free === undefined) {
    free = [];
    space.free.set(had.size, free);
    const created = free;
    record?.(() => {
      if (space.free.get(had.size) === created) space.free.delete(had.size);
    });
  }
  const list = free;
  list.push(had.base);
  record?.(() => {
    list.pop();
    space.ranges.set(chain, had);
  });
}
