// The pure half of the EndpointSlice controller (see reconcile.ts for the rules and the ordering).
export * from './types.js';
export { planEndpointSlices, topologyHintsEnabled, MAX_MAX_ENDPOINTS_PER_SLICE } from './reconcile.js';
