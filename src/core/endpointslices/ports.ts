// The ports a pod offers for a Service, and the key slices are grouped by: every endpoint of a slice offers
// exactly the slice's ports, so pods whose named target ports resolve differently land in different slices.
// In behaviour like getEndpointPorts in kubernetes' staging/src/k8s.io/endpointslice/utils.go and
// NewPortMapKey in its util/.
import { findPort } from '../endpoints/pod-address.js';
import { compareBytes, int, list, rec, str } from '../endpoints/read.js';
import type { ServicePort } from '../endpoints/types.js';
import type { EndpointSlicePort, Pod, Service } from './types.js';

const DEFAULT_PROTOCOL = 'TCP';

/**
 * The slice ports for this pod, in the Service's port order: one per service port that resolves on the pod
 * (FindPort: a numeric targetPort as is; a named one by container port name and protocol). A port that does
 * not resolve is left out for this pod only. name is always written ("" when the service port is unnamed),
 * as upstream writes it and as defaulting would.
 */
export function endpointPorts(service: Service, pod: Pod): EndpointSlicePort[] {
  const out: EndpointSlicePort[] = [];
  for (const raw of list(rec(service.spec)['ports'])) {
    const sp = rec(raw);
    const port = findPort(pod, sp as ServicePort);
    if (port === undefined) continue;
    const appProtocol = str(sp['appProtocol']);
    out.push({
      name: str(sp['name']),
      port,
      protocol: str(sp['protocol']) || DEFAULT_PROTOCOL,
      ...(appProtocol === '' ? {} : { appProtocol }),
    });
  }
  return out;
}

/** A port as compared: "" and absent names are equal, an absent protocol is TCP (as defaulting makes it). */
export function portIdentity(v: unknown): string {
  const p = rec(v);
  return JSON.stringify([
    str(p['name']),
    int(p['port']) ?? null,
    str(p['protocol']) || DEFAULT_PROTOCOL,
    str(p['appProtocol']),
  ]);
}

/** The grouping key of a port list: order-insensitive, as upstream's port map key. */
export const portMapKey = (ports: unknown): string =>
  JSON.stringify(list(ports).map(portIdentity).sort(compareBytes));

/** A clean copy of a slice's ports read from JSON. */
export function readPorts(v: unknown): EndpointSlicePort[] {
  return list(v).map((raw) => {
    const p = rec(raw);
    const out: EndpointSlicePort = {};
    if (typeof p['name'] === 'string') out.name = p['name'];
    if (typeof p['protocol'] === 'string') out.protocol = p['protocol'];
    const port = int(p['port']);
    if (port !== undefined) out.port = port;
    if (typeof p['appProtocol'] === 'string') out.appProtocol = p['appProtocol'];
    return out;
  });
}
