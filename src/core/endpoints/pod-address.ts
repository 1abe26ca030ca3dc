// From one Pod to its entries in a Service's Endpoints: whether it belongs there at all, which of its IPs
// to publish, the address record, and the port each service port resolves to on it. In behaviour like
// kubernetes' pkg/api/v1/pod/util.go (FindPort, IsPodReady), pkg/api/v1/endpoints and
// pkg/controller/util/endpoint (ShouldPodBeInEndpoints, ShouldSetHostname) and podToEndpointAddressForService
// in pkg/controller/endpoint/endpoints_controller.go.
import { ipFamily, type IPFamily } from '../../api/validation/ip.js';
import { int, list, rec, str } from './read.js';
import type { EndpointAddress, EndpointPort, Pod, Service, ServicePort } from './types.js';

const DEFAULT_PROTOCOL = 'TCP';

/** Succeeded or Failed: the pod will not run again, whatever its restartPolicy says. */
export function isPodTerminal(pod: Pod): boolean {
  const phase = str(rec(pod.status)['phase']);
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The pod's Ready condition has status "True". */
export function isPodReady(pod: Pod): boolean {
  return list(rec(pod.status)['conditions']).some((c) => {
    const cond = rec(c);
    return cond['type'] === 'Ready' && cond['status'] === 'True';
  });
}

const isTerminating = (pod: Pod): boolean => {
  const ts = pod.metadata.deletionTimestamp as unknown;
  return ts !== undefined && ts !== null;
};

/**
 * Whether the pod gets an entry at all (ready or not): not terminal, has an IP, and is not being deleted
 * unless `includeTerminating` (the Service's publishNotReadyAddresses).
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  const status = rec(pod.status);
  if (str(status['podIP']) === '' && list(status['podIPs']).length === 0) return false;
  if (!includeTerminating && isTerminating(pod)) return false;
  return true;
}

/** kube's IsServiceIPSet: a clusterIP that is neither "" nor "None". */
export function isServiceIPSet(service: Service): boolean {
  const ip = str(rec(service.spec)['clusterIP']);
  return ip !== '' && ip !== 'None';
}

/** The pod's IPs in preference order: status.podIPs, or status.podIP when podIPs is empty. */
function podIPs(pod: Pod): string[] {
  const status = rec(pod.status);
  const ips = list(status['podIPs'])
    .map((e) => str(rec(e)['ip']))
    .filter((ip) => ip !== '');
  if (ips.length > 0) return ips;
  const single = str(status['podIP']);
  return single === '' ? [] : [single];
}

/**
 * The family the Service publishes: spec.ipFamilies[0]; else (a Service written before dual-stack) the
 * family of its clusterIP; else (legacy headless) the family of the pod's primary IP. As upstream, anything
 * that is not recognisably IPv6 counts as IPv4 here.
 */
export function endpointIPFamily(service: Service, pod: Pod): IPFamily {
  const spec = rec(service.spec);
  const families = list(spec['ipFamilies']);
  if (families.length > 0) return families[0] === 'IPv6' ? 'IPv6' : 'IPv4';
  const decider = isServiceIPSet(service) ? str(spec['clusterIP']) : (podIPs(pod)[0] ?? '');
  return ipFamily(decider) === 'IPv6' ? 'IPv6' : 'IPv4';
}

/**
 * ShouldSetHostname: the pod names a hostname and its subdomain is this Service in the same namespace
 * (for every Service, headless or not).
 */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  const spec = rec(pod.spec);
  return (
    str(spec['hostname']) !== '' &&
    str(spec['subdomain']) === str(service.metadata.name) &&
    str(service.metadata.namespace) === str(pod.metadata.namespace)
  );
}

/**
 * The address to publish for the pod, or undefined when it has no IP of the Service's family (upstream logs
 * "failed to find a matching endpoint for service" and skips the pod). The first IP of the family wins.
 * Unlike upstream, an entry that is not an IP at all never matches: it would only make the write fail.
 */
export function podToEndpointAddress(service: Service, pod: Pod): EndpointAddress | undefined {
  const family = endpointIPFamily(service, pod);
  const ip = podIPs(pod).find((candidate) => ipFamily(candidate) === family);
  if (ip === undefined) return undefined;
  const spec = rec(pod.spec);
  const address: EndpointAddress = { ip };
  if (shouldSetHostname(pod, service)) address.hostname = str(spec['hostname']);
  // Upstream always sets nodeName, but only scheduled pods (nodeName set) ever have an IP there.
  // Without a kubelet a pod can have an IP and no node; "" is not a valid nodeName, so leave it out.
  const nodeName = str(spec['nodeName']);
  if (nodeName !== '') address.nodeName = nodeName;
  address.targetRef = {
    kind: 'Pod',
    namespace: str(pod.metadata.namespace),
    name: str(pod.metadata.name),
    uid: str(pod.metadata.uid),
  };
  return address;
}

const protocolOf = (v: unknown): string => str(v) || DEFAULT_PROTOCOL;

function namedPort(containers: readonly unknown[], name: string, protocol: string): number | undefined {
  for (const c of containers) {
    for (const p of list(rec(c)['ports'])) {
      const port = rec(p);
      const number = int(port['containerPort']);
      if (port['name'] === name && protocolOf(port['protocol']) === protocol && number !== undefined) {
        return number;
      }
    }
  }
  return undefined;
}

/**
 * The port a service port reaches on this pod (FindPort), or undefined when it cannot be resolved (upstream:
 * "no suitable port for manifest"; the port is skipped for this pod only).
 *   - targetPort a number: that number, unchecked against the containers;
 *   - targetPort a name: the first port with that name AND the service port's protocol, searching
 *     spec.containers in order, then restartable init containers (restartPolicy Always);
 *   - targetPort 0, "" or absent: the service port itself (what defaulting would have written).
 */
export function findPort(pod: Pod, servicePort: ServicePort): number | undefined {
  const sp = rec(servicePort);
  const target = sp['targetPort'];
  if (typeof target === 'string' && target !== '') {
    const spec = rec(pod.spec);
    const protocol = protocolOf(sp['protocol']);
    const sidecars = list(spec['initContainers']).filter((c) => rec(c)['restartPolicy'] === 'Always');
    return namedPort(list(spec['containers']), target, protocol) ?? namedPort(sidecars, target, protocol);
  }
  const number = int(target);
  if (number !== undefined && number !== 0) return number;
  if (target !== undefined && target !== null && target !== '' && target !== 0) return undefined; // not IntOrString
  return int(sp['port']);
}

/** The EndpointPort for a resolved service port: name, protocol and appProtocol come from the Service. */
export function endpointPortFromServicePort(servicePort: ServicePort, port: number): EndpointPort {
  const sp = rec(servicePort);
  const name = str(sp['name']);
  const appProtocol = str(sp['appProtocol']);
  return {
    ...(name === '' ? {} : { name }),
    port,
    protocol: protocolOf(sp['protocol']),
    ...(appProtocol === '' ? {} : { appProtocol }),
  };
}
