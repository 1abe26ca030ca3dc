// Which address types a Service's slices carry, and which of a pod's IPs go into a slice of one type. In
// behaviour like getAddressTypesForService and getEndpointAddresses in kubernetes'
// staging/src/k8s.io/endpointslice/utils.go.
import { parseIP, to4 } from '../../api/validation/ip.js';
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

const hex = (n: number): string => n.toString(16);

/**
 * The canonical text of an IP and its family (Go's net.IP String and To4): IPv4 dotted decimal, IPv6 in
 * RFC 5952 form (lower case, the longest run of two or more zero groups — the first on a tie — as "::"). An
 * IPv4-mapped IPv6 address is IPv4, as in Go. undefined when the text is not an IP.
 */
export function canonicalIP(text: string): { readonly family: AddressType; readonly ip: string } | undefined {
  const parsed = parseIP(text);
  if (parsed === undefined) return undefined;
  const v4 = to4(parsed);
  if (v4 !== undefined) return { family: 'IPv4', ip: [...v4].join('.') };
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((parsed.bytes[i]! << 8) | parsed.bytes[i + 1]!);
  let bestStart = -1;
  let bestLen = 1; // a single zero group is never compressed
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  if (bestStart === -1) return { family: 'IPv6', ip: groups.map(hex).join(':') };
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups
    .slice(bestStart + bestLen)
    .map(hex)
    .join(':');
  return { family: 'IPv6', ip: `${head}::${tail}` };
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
