// Capping an Endpoints object at MAX_ENDPOINT_ADDRESSES addresses. In behaviour like truncateEndpoints in
// kubernetes' pkg/controller/endpoint/endpoints_controller.go:
//   - at most `max` addresses (ready + not ready): nothing changes;
//   - more than `max` ready addresses: every not-ready address is dropped and `max` ready ones are kept;
//   - otherwise every ready address is kept and the remaining budget goes to not-ready addresses;
//   - the budget is shared between subsets in proportion to their size, rounded UP (so each subset keeps at
//     least one while budget remains), and capped by what is left; subsets are visited in order, so a later
//     subset may get less than its share. Each subset keeps its FIRST addresses (sorted, after repacking).
// Unlike upstream, a subset left with no address at all is dropped: upstream writes it with only ports,
// which Endpoints validation rejects ("must specify `addresses` or `notReadyAddresses`").
// The share is computed in IEEE double arithmetic exactly as upstream's float64 expression, so the same
// inputs give the same counts.
import { MAX_ENDPOINT_ADDRESSES } from './types.js';
import type { EndpointSubset } from './types.js';

export interface TruncateResult {
  readonly subsets: EndpointSubset[];
  readonly truncated: boolean;
}

/** Ready + not-ready addresses over all subsets. */
export function countAddresses(subsets: readonly EndpointSubset[]): number {
  return subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
}

/** Returns new subsets (the input is not modified) and whether anything was cut. */
export function truncateEndpoints(
  subsets: readonly EndpointSubset[],
  max: number = MAX_ENDPOINT_ADDRESSES,
): TruncateResult {
  let totalReady = 0;
  let totalNotReady = 0;
  for (const s of subsets) {
    totalReady += s.addresses?.length ?? 0;
    totalNotReady += s.notReadyAddresses?.length ?? 0;
  }
  if (totalReady + totalNotReady <= max) return { subsets: [...subsets], truncated: false };

  const truncateReady = totalReady > max;
  const budget = truncateReady ? max : max - totalReady;
  const total = truncateReady ? totalReady : totalNotReady;
  let left = budget;
  const out: EndpointSubset[] = [];
  for (const s of subsets) {
    const pool = (truncateReady ? s.addresses : s.notReadyAddresses) ?? [];
    const share = Math.min(Math.ceil((pool.length / total) * budget), left);
    const kept = pool.slice(0, share);
    left -= kept.length;
    const next: EndpointSubset = { ...s };
    if (truncateReady) {
      next.addresses = kept;
      delete next.notReadyAddresses;
    } else {
      next.notReadyAddresses = kept;
    }
    // An empty list is written as absent, as Go's omitempty would.
    if (next.addresses?.length === 0) delete next.addresses;
    if (next.notReadyAddresses?.length === 0) delete next.notReadyAddresses;
    if (next.addresses !== undefined || next.notReadyAddresses !== undefined) out.push(next);
  }
  return { subsets: out, truncated: true };
}
