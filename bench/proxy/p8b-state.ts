// P8b's ProxyState: 10,000 Services × 10 endpoints as plain data, and one endpoint replaced.
import type { ProxyEndpoint, ServicePortState } from '../../src/core/proxy/types.js';
import { serviceName } from '../lib/preload.js';
import { compareEndpoints } from './shape.js';

/** Service s's cluster IP: 10.100.0.0 + s + 1 (inside 10.96.0.0/12). */
const clusterIPOf = (s: number): string => {
  const v = (100 << 16) + s + 1;
  return `10.${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}`;
};
/** Endpoint k (of all): 10.128.0.0 + k. */
const endpointIPOf = (k: number): string => `10.${128 + ((k >> 16) & 63)}.${(k >> 8) & 255}.${k & 255}`;
/** The i-th replacement endpoint: 10.200.0.0 + i. */
const replacementIPOf = (i: number): string => `10.200.${(i >> 8) & 255}.${i & 255}`;

function portState(s: number, eps: ProxyEndpoint[]): ServicePortState {
  const namespace = `bench-p8b-${String(s % 10).padStart(2, '0')}`;
  const name = serviceName(s);
  return {
    key: `${namespace}/${name}:http`,
    namespace,
    name,
    portName: 'http',
    protocol: 'TCP',
    clusterIPs: [clusterIPOf(s)],
    port: 80,
    externalIPs: [],
    loadBalancerIPs: [],
    internal: eps,
    external: eps,
    externalLocal: false,
    internalLocal: false,
  };
}

export function buildState(services: number, perService: number): Map<string, ServicePortState> {
  const state = new Map<string, ServicePortState>();
  for (let s = 0; s < services; s++) {
    const eps = Array.from({ length: perService }, (_, e): ProxyEndpoint => ({
      ip: endpointIPOf(s * perService + e),
      port: 8080,
      local: false,
      ready: true,
    })).sort(compareEndpoints);
    const st = portState(s, eps);
    state.set(st.key, st);
  }
  return state;
}

/** The state with service s's first endpoint replaced by replacement i; its key. */
export function replaceEndpoint(
  state: ReadonlyMap<string, ServicePortState>,
  keys: readonly string[],
  s: number,
  i: number,
): { next: Map<string, ServicePortState>; key: string; removed: ProxyEndpoint; added: ProxyEndpoint } {
  const key = keys[s]!;
  const old = state.get(key)!;
  const removed = old.internal[0]!;
  const added: ProxyEndpoint = { ip: replacementIPOf(i), port: 8080, local: false, ready: true };
  const eps = [added, ...old.internal.slice(1)].sort(compareEndpoints);
  const next = new Map(state);
  next.set(key, { ...old, internal: eps, external: eps });
  return { next, key, removed, added };
}
