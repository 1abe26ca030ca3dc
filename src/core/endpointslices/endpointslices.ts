// The pure half of the EndpointSlice controller (see reconcile.ts for the rules and the ordering).
export * from './types.js';
export {
  planEndpointSlices,
  topologyHintsEnabled,
  endpointSlicePrefix,
  MIN_MAX_ENDPOINTS_PER_SLICE,
  MAX_MAX_ENDPOINTS_PER_SLICE,
  type EndpointSlicePlan,
  type PlanEndpointSlicesInput,
} from './reconcile.js';
export { endpointSlicesEqual } from './equal.js';
export { addressTypesForService, canonicalIP, endpointAddresses } from './address.js';
export {
  compareEndpoints,
  endpointKey,
  endpointsEqualBeyondHash,
  isEndpointReady,
  podToEndpoint,
  readEndpoint,
} from './endpoint.js';
export { endpointPorts, portMapKey } from './ports.js';
export { parseMilliValue } from './quantity.js';
export { removeHintsFromSlices, type SliceInfo } from './slice-info.js';
export {
  allocateHints,
  getAllocations,
  givingAndReceivingZones,
  zoneCPURatios,
  OVERLOAD_THRESHOLD,
  type AllocateHintsInput,
  type AllocateHintsResult,
  type AllocationsResult,
  type ZoneAllocation,
  type ZoneRatios,
} from './topology-hints.js';
export { reconcileTrafficDistributionHints, validTrafficDistribution } from './traffic-distribution.js';
