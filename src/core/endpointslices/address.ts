// Which address types a Service's slices carry, and which of a pod's IPs go into a slice of one type. In
// behaviour like getAddressTypesForService and getEndpointAddresses in kubernetes'
// staging/src/k8s.io/endpointslice/utils.go.
import { parseIP, to4 } from '../../api/validation/ip.js';
import { formatAddress, parseAddress } from '../allocator/cidr.js';
import { isServiceIPSet } from '../endpoints/pod-address.js';
import { list, rec, str } from '../endpoints/read.js';
import type { AddressType, Pod, Service } from './types.js';

/** Address types in the order slices are planned (and listed) for a dual-stack Service. */
export const ADDRESS_TYPE_ORDER: readonly AddressType[] = ['IPv4', 'IPv6'];

/**
 * The address types of the Service's slices:
 *   - from spec.ipFamilies (IPv4 → "IPv4", IPv6 → "IPv6"; anything else ignored);
 *   - else (a Service written before dual-stack) the family of its cluster IP;
 *   - else (a headless Service without families) both, as upstream assumes until defaulting catches up.
 * Returned in ADDRESS_TYPE_ORDER, whatever the order of ipFamilies.
 */
export function addressTypesForService(service: Service): AddressType[] {
  const spec = rec(service.spec);
  const families = new Set(list(spec['ipFamilies']));
  const fromFamilies = ADDRESS_TYPE_ORDER.filter((t) => families.has(t));
  if (fromFamilies.length > 0) return fromFamilies;
  if (isServiceIPSet(service)) {
    const ip = parseIP(str(spec['clusterIP']));
    // As upstream (utilnet.IsIPv6String): anything that is not an IPv6 address counts as IPv4.
    return [ip !== undefined && to4(ip) === undefined ? 'IPv6' : 'IPv4'];
  }
  return [...ADDRESS_TYPE_ORDER];
}

/**
 * The canonical text of an IP and its family (Go's net.IP String and To4): IPv4 dotted decimal, IPv6 in
 * RFC 5952 form (see formatAddress in ../allocator/cidr.ts). An IPv4-mapped IPv6 address is IPv4, as in
 * Go. undefined when the text is not an IP.
 */
export function canonicalIP(text: string): { readonly family: AddressType; readonly ip: string } | undefined {
  const a = parseAddress(text);
  return a === undefined ? undefined : { family: a.family, ip: formatAddress(a) };
}

/**
 * The pod's IPs of the address type, canonicalised, in status.podIPs order (status.podIP when podIPs is
 * empty). Entries that are not IPs are skipped: upstream would publish them and fail validation.
 */
export function endpointAddresses(pod: Pod, addressType: AddressType): string[] {
  const status = rec(pod.status);
  let raw = list(status['podIPs']).map((e) => str(rec(e)['ip']));
  if (raw.length === 0) raw = [str(status['podIP'])];
  const out: string[] = [];
  for (const text of raw) {
    const ip = canonicalIP(text);
    if (ip !== undefined && ip.family === addressType && !out.includes(ip.ip)) out.push(ip.ip);
  }
  return out;
}
