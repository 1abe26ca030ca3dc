// Zones and the rate at which their nodes get NoExecute taints. Behaves like kube-controller-manager's
// node lifecycle controller (ComputeZoneState, handleDisruption, setLimiterInZone) and its
// token-bucket limiter: a zone where every node is down is "fully disrupted"; when every zone is, the
// controller concludes the fault is its own (or the network's) and taints nothing. This is the case an
// edge cluster cut off from its control plane hits, and evicting there would only make things worse.
import {
  LABEL_EXCLUDE_DISRUPTION,
  LABEL_REGION,
  LABEL_REGION_BETA,
  LABEL_ZONE,
  LABEL_ZONE_BETA,
  type Node,
} from './types.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

export interface ZoneRates {
  /** --node-eviction-rate (default 0.1 nodes/s). */
  readonly evictionRate: number;
  /** --secondary-node-eviction-rate (default 0.01 nodes/s). */
  readonly secondaryEvictionRate: number;
  /** --large-cluster-size-threshold (default 50). */
  readonly largeClusterThreshold: number;
  /** --unhealthy-zone-threshold (default 0.55). */
  readonly unhealthyZoneThreshold: number;
}

export const DEFAULT_ZONE_RATES: ZoneRates = {
  evictionRate: 0.1,
  secondaryEvictionRate: 0.01,
  largeClusterThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

/** The zone key of a node: region and zone (GA labels first, then beta), joined by NUL. */
export function zoneOf(node: Node): string {
  const l = node.metadata.labels ?? {};
  const region = l[LABEL_REGION] ?? l[LABEL_REGION_BETA] ?? '';
  const zone = l[LABEL_ZONE] ?? l[LABEL_ZONE_BETA] ?? '';
  return region === '' && zone === '' ? '' : `${region}:\0:${zone}`;
}

export const excludedFromDisruption = (node: Node): boolean =>
  Object.hasOwn(node.metadata.labels ?? {}, LABEL_EXCLUDE_DISRUPTION);

/** A zone's state from its nodes' Ready statuses (ComputeZoneState). */
export function zoneState(readyStatuses: readonly string[], unhealthyZoneThreshold: number): ZoneState {
  const ready = readyStatuses.filter((s) => s === 'True').length;
  const notReady = readyStatuses.length - ready;
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && notReady / (notReady + ready) >= unhealthyZoneThreshold) return 'PartialDisruption';
  return 'Normal';
}

/** Nodes per second a zone's NoExecute tainter may taint in a state (setLimiterInZone). */
export function zoneRate(state: ZoneState, zoneSize: number, rates: ZoneRates): number {
  switch (state) {
    case 'PartialDisruption':
      return zoneSize > rates.largeClusterThreshold ? rates.secondaryEvictionRate : 0;
    default:
      return rates.evictionRate;
  }
}

/** Whether every zone (at least one) is fully disrupted. */
export const allFullyDisrupted = (states: Iterable<ZoneState>): boolean => {
  let any = false;
  for (const s of states) {
    if (s !== 'FullDisruption') return false;
    any = true;
  }
  return any;
};

/** A token bucket (client-go flowcontrol's), starting full. */
export interface Bucket {
  readonly tokens: number;
  readonly lastMs: number;
}

export const fullBucket = (burst: number, now: number): Bucket => ({ tokens: burst, lastMs: now });

/**
 * Takes one token if there is one after refilling at `qps` (capped at `burst`). A qps of 0 or less
 * never yields one (upstream's always-reject limiter).
 */
export function takeToken(b: Bucket, now: number, qps: number, burst = 1): { ok: boolean; bucket: Bucket } {
  if (qps <= 0) return { ok: false, bucket: { tokens: 0, lastMs: now } };
  const elapsed = Math.max(0, now - b.lastMs) / 1000;
  const tokens = Math.min(burst, b.tokens + elapsed * qps);
  if (tokens >= 1) return { ok: true, bucket: { tokens: tokens - 1, lastMs: now } };
  return { ok: false, bucket: { tokens, lastMs: now } };
}
