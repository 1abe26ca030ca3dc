// fast-check arbitraries for the proxy renderers' property tests: Service port states over a few keys,
// next states that keep, change, add or remove each key, and render options.
import fc from 'fast-check';
import type { RenderOptions } from '../iptables.js';
import type { ProxyEndpoint, ServicePortState } from '../types.js';
import { ep, portState } from './builders.js';

export const KEYS = ['ns/a:http', 'ns/a:dns', 'ns/b', 'other/c:web', 'other/d'];
const IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.1.1', 'fd00::1', 'fd00::2'];

const endpointsArb: fc.Arbitrary<ProxyEndpoint[]> = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...IPS), fc.constantFrom(8080, 9090), fc.boolean()), {
    maxLength: 4,
    selector: ([ip, port]) => `${ip}|${port}`,
  })
  .map((xs) => xs.map(([ip, port, local]) => ep(ip, port, local)));

const portStateArb = (key: string): fc.Arbitrary<ServicePortState> =>
  fc
    .record({
      protocol: fc.constantFrom('TCP' as const, 'UDP' as const, 'SCTP' as const),
      clusterIPs: fc.constantFrom(['10.96.0.1'], ['fd00:96::1'], ['10.96.0.1', 'fd00:96::1']),
      port: fc.constantFrom(80, 443),
      nodePort: fc.option(fc.constantFrom(30001, 30002), { nil: undefined }),
      externalIPs: fc.subarray(['192.0.2.1', '2001:db8::1']),
      loadBalancerIPs: fc.subarray(['198.51.100.1', '2001:db8::2']),
      sourceRanges: fc.subarray(['203.0.113.0/24', '10.0.0.0/8', '2001:db8:1::/48']),
      holdNode: fc.subarray([4 as const, 6 as const]),
      healthCheckNodePort: fc.option(fc.constantFrom(32000), { nil: undefined }),
      affinity: fc.option(fc.constantFrom(60, 10800), { nil: undefined }),
      internal: endpointsArb,
      external: fc.oneof(endpointsArb, fc.constant('same' as const)),
      externalLocal: fc.boolean(),
    })
    .map((r) =>
      portState(key, {
        protocol: r.protocol,
        clusterIPs: r.clusterIPs,
        port: r.port,
        ...(r.nodePort !== undefined ? { nodePort: r.nodePort } : {}),
        externalIPs: r.externalIPs,
        loadBalancerIPs: r.loadBalancerIPs,
        ...(r.sourceRanges.length > 0 ? { loadBalancerSourceRanges: r.sourceRanges } : {}),
        ...(r.holdNode.length > 0 ? { sourceRangesHoldNode: r.holdNode } : {}),
        ...(r.healthCheckNodePort !== undefined ? { healthCheckNodePort: r.healthCheckNodePort } : {}),
        ...(r.affinity !== undefined ? { affinityTimeoutSeconds: r.affinity } : {}),
        internal: r.internal,
        external: r.external === 'same' ? r.internal : r.external,
        externalLocal: r.externalLocal,
      }),
    );

export const stateArb: fc.Arbitrary<Map<string, ServicePortState>> = fc
  .tuple(...KEYS.map((k) => fc.option(portStateArb(k), { nil: undefined })))
  .map((ss) => new Map(ss.filter((s) => s !== undefined).map((s) => [s.key, s])));

/** The next state: each key kept as it was (the same object), changed, added or removed. */
export const nextArb = (s1: Map<string, ServicePortState>): fc.Arbitrary<Map<string, ServicePortState>> =>
  fc
    .tuple(
      ...KEYS.map((k) =>
        fc.oneof(
          { weight: 3, arbitrary: fc.constant(s1.get(k)) },
          { weight: 2, arbitrary: portStateArb(k) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
      ),
    )
    .map((ss) => new Map(ss.filter((s) => s !== undefined).map((s) => [s.key, s])));

export const optionsArb: fc.Arbitrary<RenderOptions> = fc
  .record({
    family: fc.constantFrom(4 as const, 6 as const),
    cidr: fc.boolean(),
    masqueradeAll: fc.boolean(),
    nodePortAddresses: fc.subarray(['192.168.0.0/16', 'fd00:1::/64']),
  })
  .map((r) => ({
    family: r.family,
    ...(r.cidr ? { clusterCIDR: r.family === 4 ? '10.0.0.0/16' : 'fd00::/64' } : {}),
    ...(r.masqueradeAll ? { masqueradeAll: true } : {}),
    nodePortAddresses: r.nodePortAddresses,
  }));

/** The keys whose state is not the very same object (what a change tracker reports), plus some unchanged. */
export function changedKeys(
  s1: ReadonlyMap<string, ServicePortState>,
  s2: ReadonlyMap<string, ServicePortState>,
  extra: readonly string[],
): Set<string> {
  const out = new Set(extra);
  for (const k of new Set([...s1.keys(), ...s2.keys()])) if (s1.get(k) !== s2.get(k)) out.add(k);
  return out;
}
