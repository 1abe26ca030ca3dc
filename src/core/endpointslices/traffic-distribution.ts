// Hints from Service.spec.trafficDistribution. In behaviour like kubernetes'
// staging/src/k8s.io/endpointslice/trafficdist/trafficdist.go (ReconcileHints), with the
// PreferSameTrafficDistribution gate on (its default since 1.34):
//   - PreferClose / PreferSameZone: every READY endpoint gets forZones = [its zone] (no hints when it has
//     no zone); PreferSameNode: additionally forNodes = [its node] (forZones still set, for proxies that
//     only read zone hints);
//   - any other value, or none: every hint is removed;
//   - endpoints that are not ready keep whatever they have (endpoints this controller builds have none).
// No CPU proportionality, no minimum per zone, no overload threshold: "if there are endpoints in the zone,
// they get all of that zone's traffic".
import { isEndpointReady } from './endpoint.js';
import { copySlice, removeHintsFromSlices, type SliceInfo } from './slice-info.js';
import {
  TRAFFIC_DISTRIBUTIONS,
  type Endpoint,
  type EndpointSlice,
  type TrafficDistribution,
} from './types.js';

/** The trafficDistribution value when it is one that produces hints, else undefined. */
export function validTrafficDistribution(value: unknown): TrafficDistribution | undefined {
  return TRAFFIC_DISTRIBUTIONS.find((v) => v === value);
}

const single = (list: readonly { name: string }[] | undefined): string | undefined =>
  list !== undefined && list.length === 1 ? list[0]!.name : undefined;

/** The hints a ready endpoint should carry; undefined for none. */
function wantedHints(e: Endpoint, nodeHints: boolean): Endpoint['hints'] {
  const zone = e.zone ?? '';
  const node = nodeHints ? (e.nodeName ?? '') : '';
  if (zone === '' && node === '') return undefined;
  return {
    ...(zone === '' ? {} : { forZones: [{ name: zone }] }),
    ...(node === '' ? {} : { forNodes: [{ name: node }] }),
  };
}

/** Whether a ready endpoint's hints are missing, wrong or stale. */
function hintsWrong(e: Endpoint, nodeHints: boolean): boolean {
  const zone = e.zone ?? '';
  const node = e.nodeName ?? '';
  const zones = e.hints?.forZones ?? [];
  const nodes = e.hints?.forNodes ?? [];
  if (zone !== '' ? single(zones) !== zone : zones.length > 0) return true;
  return nodeHints && node !== '' ? single(nodes) !== node : nodes.length > 0;
}

/**
 * Reconciles hints for trafficDistribution over the slices of one address type: slices to create or
 * update get the wanted hints; an unchanged slice with a missing, wrong or stale hint on a ready endpoint
 * moves to toUpdate (as a copy). The given slices are not modified.
 */
export function reconcileTrafficDistributionHints(trafficDistribution: unknown, si: SliceInfo): SliceInfo {
  const mode = validTrafficDistribution(trafficDistribution);
  if (mode === undefined) return removeHintsFromSlices(si);
  const nodeHints = mode === 'PreferSameNode';
  const apply = (slice: EndpointSlice): EndpointSlice => {
    const copy = copySlice(slice);
    for (const e of copy.endpoints) {
      if (!isEndpointReady(e)) continue;
      const hints = wantedHints(e, nodeHints);
      if (hints === undefined) delete e.hints;
      else e.hints = hints;
    }
    return copy;
  };
  const toUpdate = si.toUpdate.map(apply);
  const unchanged: EndpointSlice[] = [];
  for (const slice of si.unchanged) {
    if (slice.endpoints.some((e) => isEndpointReady(e) && hintsWrong(e, nodeHints))) {
      toUpdate.push(apply(slice));
    } else {
      unchanged.push(slice);
    }
  }
  return { toCreate: si.toCreate.map(apply), toUpdate, unchanged };
}
