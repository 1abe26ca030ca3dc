// v1 Service defaulting (SetDefaults_Service), plus the clusterIP → clusterIPs normalization the
// registry does before validation. ClusterIPs, ipFamilies, ipFamilyPolicy and node ports are left to
// the allocator.
import { type Obj, absent, ensureChild, items, setDefault, setDefaultString, unsetOrZero } from './util.js';

export const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS = 10800;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Default a ServiceSpec in place (a Service's spec or a ServiceGrid's spec.template). */
export function defaultServiceSpec(spec: Obj): void {
  setDefaultString(spec, 'type', 'ClusterIP');
  setDefaultString(spec, 'sessionAffinity', 'None');
  if (spec['sessionAffinity'] === 'ClientIP') {
    const config = ensureChild(spec, 'sessionAffinityConfig');
    const clientIP = config === undefined ? undefined : ensureChild(config, 'clientIP');
    if (clientIP !== undefined) setDefault(clientIP, 'timeoutSeconds', DEFAULT_CLIENT_IP_TIMEOUT_SECONDS);
  }
  for (const port of items(spec, 'ports')) {
    setDefaultString(port, 'protocol', 'TCP');
    if (unsetOrZero(port, 'targetPort') && typeof port['port'] === 'number')
      port['targetPort'] = port['port'];
  }
  const type = str(spec['type']);
  if (type !== 'ExternalName') setDefault(spec, 'internalTrafficPolicy', 'Cluster');
  const externalIPs = spec['externalIPs'];
  const externallyAccessible =
    type === 'NodePort' ||
    type === 'LoadBalancer' ||
    (type === 'ClusterIP' && Array.isArray(externalIPs) && externalIPs.length > 0);
  if (externallyAccessible) setDefaultString(spec, 'externalTrafficPolicy', 'Cluster');
  if (type === 'LoadBalancer') setDefault(spec, 'allocateLoadBalancerNodePorts', true);
  // Clients that set only clusterIP (e.g. `clusterIP: None` for a headless Service) get clusterIPs.
  const clusterIP = spec['clusterIP'];
  const clusterIPs = spec['clusterIPs'];
  if (
    typeof clusterIP === 'string' &&
    clusterIP !== '' &&
    (absent(spec, 'clusterIPs') || (Array.isArray(clusterIPs) && clusterIPs.length === 0))
  ) {
    spec['clusterIPs'] = [clusterIP];
  }
}

const sameStrings = (a: unknown, b: unknown): boolean =>
  (isEmptyList(a) && isEmptyList(b)) ||
  (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]));

function isEmptyList(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

const typeOf = (spec: Obj): string => str(spec['type']) || 'ClusterIP';
const needsClusterIP = (spec: Obj): boolean => typeOf(spec) !== 'ExternalName';
const needsNodePorts = (spec: Obj): boolean => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';
const needsHealthCheck = (spec: Obj): boolean =>
  typeOf(spec) === 'LoadBalancer' && spec['externalTrafficPolicy'] === 'Local';
const externallyAccessible = (spec: Obj): boolean =>
  needsNodePorts(spec) ||
  (typeOf(spec) === 'ClusterIP' && Array.isArray(spec['externalIPs']) && spec['externalIPs'].length > 0);
const nodePortsOf = (spec: Obj): Set<unknown> =>
  new Set(
    items(spec, 'ports')
      .map((p) => p['nodePort'])
      .filter((n) => typeof n === 'number' && n !== 0),
  );

/**
 * What the registry does to a Service update before validating it, so that the update means what
 * the client meant:
 * - patchAllocatedValues: a clusterIP, clusterIPs, nodePort or healthCheckNodePort the client left
 *   out is the one already allocated (`kubectl replace` with a manifest lacking them);
 * - normalizeClusterIPs: a changed clusterIP with untouched clusterIPs speaks for both;
 * - dropTypeDependentFields: switching type drops the values the old type had allocated or
 *   defaulted (cluster IPs for ExternalName, node ports, externalTrafficPolicy …) unless the client
 *   changed them too.
 * Call it before applyDefaults (which derives clusterIPs from clusterIP, as on create).
 */
export function prepareServiceUpdate(spec: Obj, oldSpec: Obj): void {
  const oldIPs = oldSpec['clusterIPs'];
  if (needsClusterIP(spec) && needsClusterIP(oldSpec)) {
    if (str(spec['clusterIP']) === '' && str(oldSpec['clusterIP']) !== '')
      spec['clusterIP'] = oldSpec['clusterIP'];
    if (isEmptyList(spec['clusterIPs']) && Array.isArray(oldIPs) && oldIPs.length > 0)
      spec['clusterIPs'] = [...(oldIPs as unknown[])];
    // The family fields are the allocator's; keep them while the IPs are unchanged.
    if (sameStrings(spec['clusterIPs'], oldIPs)) {
      if (absent(spec, 'ipFamilies') && Array.isArray(oldSpec['ipFamilies']))
        spec['ipFamilies'] = [...oldSpec['ipFamilies']];
      if (absent(spec, 'ipFamilyPolicy') && !absent(oldSpec, 'ipFamilyPolicy'))
        spec['ipFamilyPolicy'] = oldSpec['ipFamilyPolicy'];
    }
  }
  if (needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    const oldPorts = items(oldSpec, 'ports');
    const newUsed = nodePortsOf(spec);
    // Values present in both lists are taken; the others may be patched back in by port name.
    const used = new Set([...nodePortsOf(oldSpec)].filter((n) => newUsed.has(n)));
    const byName = new Map(oldPorts.map((o) => [str(o['name']), o['nodePort']]));
    for (const port of items(spec, 'ports')) {
      if (!unsetOrZero(port, 'nodePort')) continue;
      const np = byName.get(str(port['name']));
      if (typeof np === 'number' && np !== 0 && !used.has(np)) port['nodePort'] = np;
    }
  }
  if (needsHealthCheck(spec) && needsHealthCheck(oldSpec) && unsetOrZero(spec, 'healthCheckNodePort')) {
    spec['healthCheckNodePort'] = oldSpec['healthCheckNodePort'];
  }

  // normalizeClusterIPs (update): a changed clusterIP with clusterIPs left as they were.
  const oldIP = str(oldSpec['clusterIP']);
  const newIP = str(spec['clusterIP']);
  if (oldIP !== newIP && sameStrings(spec['clusterIPs'], oldIPs)) {
    if (newIP === '') delete spec['clusterIPs'];
    else spec['clusterIPs'] = [newIP];
  }

  // dropTypeDependentFields
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (str(spec['clusterIP']) === oldIP && sameStrings(spec['clusterIPs'], oldIPs)) {
      delete spec['clusterIP'];
      delete spec['clusterIPs'];
    }
    if (sameStrings(spec['ipFamilies'], oldSpec['ipFamilies'])) delete spec['ipFamilies'];
    if ((spec['ipFamilyPolicy'] ?? null) === (oldSpec['ipFamilyPolicy'] ?? null))
      delete spec['ipFamilyPolicy'];
  }
  if (needsNodePorts(oldSpec) && !needsNodePorts(spec)) {
    const oldPorts = nodePortsOf(oldSpec);
    if ([...nodePortsOf(spec)].every((n) => oldPorts.has(n)))
      for (const port of items(spec, 'ports')) delete port['nodePort'];
  }
  if (
    needsHealthCheck(oldSpec) &&
    !needsHealthCheck(spec) &&
    spec['healthCheckNodePort'] === oldSpec['healthCheckNodePort']
  ) {
    delete spec['healthCheckNodePort'];
  }
  if (typeOf(oldSpec) === 'LoadBalancer' && typeOf(spec) !== 'LoadBalancer') {
    const a = spec['allocateLoadBalancerNodePorts'];
    if (typeof a === 'boolean' && a === oldSpec['allocateLoadBalancerNodePorts'])
      delete spec['allocateLoadBalancerNodePorts'];
    if (!absent(spec, 'loadBalancerClass') && spec['loadBalancerClass'] === oldSpec['loadBalancerClass']) {
      delete spec['loadBalancerClass'];
    }
  }
  if (externallyAccessible(oldSpec) && !externallyAccessible(spec)) {
    if (str(spec['externalTrafficPolicy']) === str(oldSpec['externalTrafficPolicy']))
      delete spec['externalTrafficPolicy'];
  }
}
