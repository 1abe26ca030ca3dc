// Topology Aware Routing (`service.kubernetes.io/topology-mode: Auto`): zone hints on ready endpoints,
// allocated in proportion to the allocatable CPU of each zone's ready nodes, never leaving a zone more than
// 20% over its share. In behaviour like kubernetes' staging/src/k8s.io/endpointslice/topologycache/
// (SetNodes, getAllocations, AddHints, getAllocatedHintsByZone, getGivingAndReceivingZones,
// redistributeHints). Upstream keeps the zone shares and "hints were populated" in a cache between syncs;
// here they are computed from the nodes and passed in, so this stays a pure function.
//
// Where upstream iterates a Go map (and so picks at random), this module picks deterministically: the zone
// with the most surplus / deficit is the first in zone-name order among equals, and an endpoint given away
// goes to the first receiving zone in zone-name order.
import { isNodeReady } from '../nodes/node-object.js';
import { compareBytes, rec, str, stringMap } from '../endpoints/read.js';
import { isEndpointReady } from './endpoint.js';
import { parseMilliValue } from './quantity.js';
import { copySlice, removeHintsFromSlices, type SliceInfo } from './slice-info.js';
import {
  CONTROL_PLANE_NODE_LABELS,
  LABEL_TOPOLOGY_ZONE,
  type EndpointSlice,
  type Node,
  type PlanEvent,
} from './types.js';

/** An endpoint may receive up to 20% more than its proportional share of a zone's traffic. */
export const OVERLOAD_THRESHOLD = 0.2;

// Event messages (upstream's topologycache/event.go); each is suffixed with ", addressType: <type>".
export const INSUFFICIENT_NODE_INFO =
  'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes';
export const NODES_READY_IN_ONE_ZONE_ONLY = 'Nodes only ready in one zone';
export const INSUFFICIENT_NUMBER_OF_ENDPOINTS = 'Insufficient number of endpoints';
export const MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD =
  'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold';
export const NO_ZONE_SPECIFIED = 'One or more endpoints do not have a zone specified';
export const TOPOLOGY_AWARE_HINTS_ENABLED = 'Topology Aware Hints has been enabled';
export const TOPOLOGY_AWARE_HINTS_DISABLED = 'Topology Aware Hints has been disabled';

export const formatWithAddressType = (message: string, addressType: string): string =>
  `${message}, addressType: ${addressType}`;

/** Zone → share of the total allocatable CPU (the shares sum to 1). */
export type ZoneRatios = Readonly<Record<string, number>>;

/**
 * Each zone's share of the allocatable CPU of the nodes that count (SetNodes). Nodes with a control-plane
 * or master role label (any value) and nodes that are not Ready do not count. undefined — "insufficient
 * node information", which disables hints for every Service — when any counting node has no zone label or
 * no positive allocatable CPU, or when fewer than two zones remain. CPU is compared in milli-cores.
 */
export function zoneCPURatios(nodes: readonly Node[]): ZoneRatios | undefined {
  const cpuByZone = new Map<string, bigint>();
  let total = 0n;
  for (const node of nodes) {
    const labels = stringMap(node.metadata.labels);
    if (CONTROL_PLANE_NODE_LABELS.some((l) => Object.hasOwn(labels, l))) continue;
    if (!isNodeReady(node)) continue;
    const zone = labels[LABEL_TOPOLOGY_ZONE] ?? '';
    const cpu = parseMilliValue(str(rec(rec(node.status)['allocatable'])['cpu']));
    if (zone === '' || cpu === undefined || cpu <= 0n) return undefined;
    total += cpu;
    cpuByZone.set(zone, (cpuByZone.get(zone) ?? 0n) + cpu);
  }
  if (total === 0n || cpuByZone.size < 2) return undefined;
  const ratios: Record<string, number> = {};
  for (const [zone, cpu] of cpuByZone) ratios[zone] = Number(cpu) / Number(total);
  return ratios;
}

export interface ZoneAllocation {
  /** Fewest endpoints the zone may get without its endpoints exceeding the overload threshold. */
  readonly minimum: number;
  /** Most endpoints the zone may get while every other zone still gets its minimum. */
  readonly maximum: number;
  /** Its proportional share (never below minimum); may be fractional. */
  readonly desired: number;
}

export type AllocationsResult =
  | { readonly ok: true; readonly allocations: Readonly<Record<string, ZoneAllocation>> }
  | { readonly ok: false; readonly message: string };

/**
 * The per-zone allocation of `numEndpoints` ready endpoints (getAllocations): desired = share × N,
 * minimum = ceil(desired × 1/(1 + 0.2)) (computed exactly as upstream's float64 expression), desired raised
 * to minimum, maximum = minimum + N − Σ minimum. Fails (with the event message) without zone shares, with
 * fewer than 2 zones, with more zones than endpoints, or when the minimums add up to more than N.
 */
export function getAllocations(ratios: ZoneRatios | undefined, numEndpoints: number): AllocationsResult {
  if (ratios === undefined) return { ok: false, message: INSUFFICIENT_NODE_INFO };
  const zones = Object.keys(ratios).sort(compareBytes);
  if (zones.length < 2) return { ok: false, message: NODES_READY_IN_ONE_ZONE_ONLY };
  if (zones.length > numEndpoints) {
    return {
      ok: false,
      message: `${INSUFFICIENT_NUMBER_OF_ENDPOINTS} (${numEndpoints} endpoints, ${zones.length} zones)`,
    };
  }
  const partial = new Map<string, { minimum: number; desired: number }>();
  let minTotal = 0;
  for (const zone of zones) {
    const desired = ratios[zone]! * numEndpoints;
    const minimum = Math.ceil(desired * (1 / (1 + OVERLOAD_THRESHOLD)));
    partial.set(zone, { minimum, desired: Math.max(desired, minimum) });
    minTotal += minimum;
  }
  if (minTotal > numEndpoints) {
    return {
      ok: false,
      message: `${MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD} (${numEndpoints} endpoints, ${zones.length} zones)`,
    };
  }
  const allocations: Record<string, ZoneAllocation> = {};
  for (const [zone, { minimum, desired }] of partial) {
    allocations[zone] = { minimum, desired, maximum: minimum + numEndpoints - minTotal };
  }
  return { ok: true, allocations };
}

const countReady = (slices: readonly EndpointSlice[]): number =>
  slices.reduce((n, s) => n + s.endpoints.filter(isEndpointReady).length, 0);

/**
 * The hints an unchanged slice already holds, per zone, or undefined when the slice must be re-hinted: a
 * ready endpoint without zone hints, a hint for a zone with no allocation, or a zone pushed past its
 * maximum by this slice together with the unchanged slices before it (getHintsByZone).
 */
function validHintsByZone(
  slice: EndpointSlice,
  allocated: ReadonlyMap<string, number>,
  allocations: Readonly<Record<string, ZoneAllocation>>,
): Map<string, number> | undefined {
  const byZone = new Map<string, number>();
  for (const e of slice.endpoints) {
    if (!isEndpointReady(e)) continue;
    const zones = e.hints?.forZones ?? [];
    if (zones.length === 0) return undefined;
    for (const { name } of zones) {
      if (!Object.hasOwn(allocations, name)) return undefined;
      byZone.set(name, (byZone.get(name) ?? 0) + 1);
    }
  }
  for (const [zone, n] of byZone) {
    if (n + (allocated.get(zone) ?? 0) > allocations[zone]!.maximum) return undefined;
  }
  return byZone;
}

/** The zone with the largest positive value; the first in name order among equals; '' when none. */
function most(values: ReadonlyMap<string, number>): [string, number] {
  let best: [string, number] = ['', 0];
  for (const zone of [...values.keys()].sort(compareBytes)) {
    const n = values.get(zone)!;
    if (n > best[1]) best = [zone, n];
  }
  return best;
}

/**
 * How many whole endpoints each zone gives away and receives (getGivingAndReceivingZones): surplus and
 * deficit against `desired` are fractional; one endpoint at a time moves from the zone with the most
 * surplus to the zone with the most deficit, while both are at least 0.5 and not both below 1.
 */
export function givingAndReceivingZones(
  allocations: Readonly<Record<string, ZoneAllocation>>,
  allocated: ReadonlyMap<string, number>,
): { giving: Map<string, number>; receiving: Map<string, number> } {
  const surplus = new Map<string, number>();
  const deficit = new Map<string, number>();
  for (const zone of Object.keys(allocations)) {
    const have = allocated.get(zone) ?? 0;
    const target = allocations[zone]!.desired;
    if (have > target) surplus.set(zone, have - target);
    else if (have < target) deficit.set(zone, target - have);
  }
  const giving = new Map<string, number>();
  const receiving = new Map<string, number>();
  for (;;) {
    const [from, toGive] = most(surplus);
    const [to, toReceive] = most(deficit);
    if (from === '' || to === '' || (toGive < 1 && toReceive < 1) || toGive < 0.5 || toReceive < 0.5) break;
    giving.set(from, (giving.get(from) ?? 0) + 1);
    surplus.set(from, toGive - 1);
    receiving.set(to, (receiving.get(to) ?? 0) + 1);
    deficit.set(to, toReceive - 1);
  }
  return { giving, receiving };
}

/**
 * Re-hints ready endpoints of giving zones to receiving zones, walking the slices and their endpoints in
 * order (redistributeHints). Mutates the slices (the caller's own copies); returns the change per zone.
 */
function redistribute(
  slices: readonly EndpointSlice[],
  giving: Map<string, number>,
  receiving: Map<string, number>,
): Map<string, number> {
  const changes = new Map<string, number>();
  for (const slice of slices) {
    for (const e of slice.endpoints) {
      if (!isEndpointReady(e)) continue;
      if (giving.size === 0 || receiving.size === 0) return changes;
      const from = e.zone ?? '';
      if ((giving.get(from) ?? 0) <= 0) continue;
      const to = [...receiving.keys()].sort(compareBytes)[0]!;
      e.hints = { forZones: [{ name: to }] };
      for (const [map, zone] of [
        [giving, from],
        [receiving, to],
      ] as const) {
        const left = map.get(zone)! - 1;
        if (left === 0) map.delete(zone);
        else map.set(zone, left);
      }
      changes.set(to, (changes.get(to) ?? 0) + 1);
      changes.set(from, (changes.get(from) ?? 0) - 1);
    }
  }
  return changes;
}

export interface AllocateHintsInput {
  /** From zoneCPURatios(nodes); undefined when node information is insufficient. */
  readonly cpuRatiosByZone: ZoneRatios | undefined;
  /** For event messages. */
  readonly addressType: string;
  readonly slices: SliceInfo;
  /**
   * Whether the Service already had topology hints (upstream's cache); when false and hints are
   * allocated, a TopologyAwareHintsEnabled event is returned. Default false.
   */
  readonly hintsPopulated?: boolean;
}

export interface AllocateHintsResult extends SliceInfo {
  readonly events: readonly PlanEvent[];
  /** Ready endpoints hinted to each zone, or undefined when hints were removed. */
  readonly hintsByZone: ReadonlyMap<string, number> | undefined;
}

/**
 * Adds zone hints to the ready endpoints of the Service's slices of one address type (AddHints):
 *   1. allocate the N ready endpoints (create + update + unchanged) over the zones (getAllocations); on
 *      failure remove every hint and return a TopologyAwareHintsDisabled event;
 *   2. keep unchanged slices whose hints are still valid, counting them; the others move to toUpdate;
 *   3. hint every ready endpoint of slices to create or update to its own zone — a ready endpoint without
 *      a zone removes every hint instead (event "One or more endpoints do not have a zone specified");
 *      endpoints that are not ready get no hint;
 *   4. move whole endpoints from zones over their desired share to zones under it.
 * The given slices are not modified: slices in the result that differ from the input are copies.
 */
export function allocateHints(input: AllocateHintsInput): AllocateHintsResult {
  const { addressType, slices } = input;
  const warn = (message: string): PlanEvent => ({
    type: 'Warning',
    reason: 'TopologyAwareHintsDisabled',
    message: formatWithAddressType(message, addressType),
  });
  const disable = (si: SliceInfo, message: string): AllocateHintsResult => ({
    ...removeHintsFromSlices(si),
    events: [warn(message)],
    hintsByZone: undefined,
  });

  const total = countReady(slices.toCreate) + countReady(slices.toUpdate) + countReady(slices.unchanged);
  const result = getAllocations(input.cpuRatiosByZone, total);
  if (!result.ok) return disable(slices, result.message);
  const { allocations } = result;

  const toCreate = slices.toCreate.map(copySlice);
  const toUpdate = slices.toUpdate.map(copySlice);
  const unchanged: EndpointSlice[] = [];
  const allocated = new Map<string, number>();
  for (const slice of slices.unchanged) {
    const held = validHintsByZone(slice, allocated, allocations);
    if (held === undefined) {
      toUpdate.push(copySlice(slice));
      continue;
    }
    unchanged.push(slice);
    for (const [zone, n] of held) allocated.set(zone, (allocated.get(zone) ?? 0) + n);
  }

  const allocatable = [...toCreate, ...toUpdate];
  for (const slice of allocatable) {
    for (const e of slice.endpoints) {
      if (!isEndpointReady(e)) {
        delete e.hints;
        continue;
      }
      if (e.zone === undefined || e.zone === '') {
        return disable({ toCreate, toUpdate, unchanged }, NO_ZONE_SPECIFIED);
      }
      allocated.set(e.zone, (allocated.get(e.zone) ?? 0) + 1);
      e.hints = { forZones: [{ name: e.zone }] };
    }
  }

  const { giving, receiving } = givingAndReceivingZones(allocations, allocated);
  for (const [zone, diff] of redistribute(allocatable, giving, receiving)) {
    allocated.set(zone, (allocated.get(zone) ?? 0) + diff);
  }
  // Upstream also gives up ("No hints allocated for zones") when no zone got a hint; that cannot happen
  // here: getAllocations has already failed unless there is at least one ready endpoint per zone.

  const events: PlanEvent[] =
    input.hintsPopulated === true
      ? []
      : [
          {
            type: 'Normal',
            reason: 'TopologyAwareHintsEnabled',
            message: formatWithAddressType(TOPOLOGY_AWARE_HINTS_ENABLED, addressType),
          },
        ];
  return { toCreate, toUpdate, unchanged, events, hintsByZone: allocated };
}
