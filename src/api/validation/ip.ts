// Strict IP and CIDR parsing, with the rules of Go's net/netip: IPv4 is exactly four decimal octets
// without leading zeros; IPv6 is up to eight hex groups of 1-4 digits, one optional "::", and an
// optional trailing dotted IPv4. Zones ("%eth0") are refused, as Kubernetes refuses them.
import { type FieldError, type FieldPath, invalid } from '../field-errors.js';

export type IPFamily = 'IPv4' | 'IPv6';

export interface ParsedIP {
  /** 4 bytes for IPv4, 16 for IPv6 (including IPv4-mapped IPv6). */
  readonly bytes: Uint8Array;
  /** The address as written was IPv6 syntax (including ::ffff:a.b.c.d). */
  readonly v6: boolean;
}

function parseIPv4Bytes(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^[0-9]{1,3}$/.test(part)) return undefined;
    if (part.length > 1 && part[0] === '0') return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIPv6Bytes(s: string): Uint8Array | undefined {
  if (s.includes('%')) return undefined;
  const out = new Uint8Array(16);
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return undefined;
  const head = dbl === -1 ? s : s.slice(0, dbl);
  const tail = dbl === -1 ? '' : s.slice(dbl + 2);
  const groups = (part: string, allowV4Tail: boolean): number[] | undefined => {
    if (part === '') return [];
    const fields = part.split(':');
    const words: number[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (allowV4Tail && i === fields.length - 1 && f.includes('.')) {
        const v4 = parseIPv4Bytes(f);
        if (v4 === undefined) return undefined;
        words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(f)) return undefined;
      words.push(parseInt(f, 16));
    }
    return words;
  };
  if (dbl === -1) {
    const w = groups(head, true);
    if (w === undefined || w.length !== 8) return undefined;
    w.forEach((x, i) => {
      out[2 * i] = x >> 8;
      out[2 * i + 1] = x & 0xff;
    });
    return out;
  }
  const h = groups(head, false);
  const t = groups(tail, true);
  if (h === undefined || t === undefined) return undefined;
  // "::" stands for at least one zero group.
  if (h.length + t.length > 7) return undefined;
  h.forEach((x, i) => {
    out[2 * i] = x >> 8;
    out[2 * i + 1] = x & 0xff;
  });
  const start = 8 - t.length;
  t.forEach((x, i) => {
    out[2 * (start + i)] = x >> 8;
    out[2 * (start + i) + 1] = x & 0xff;
  });
  return out;
}

/** Parse an IP address strictly; undefined if it is not one. */
export function parseIP(s: string): ParsedIP | undefined {
  if (s.includes(':')) {
    const bytes = parseIPv6Bytes(s);
    return bytes === undefined ? undefined : { bytes, v6: true };
  }
  const bytes = parseIPv4Bytes(s);
  return bytes === undefined ? undefined : { bytes, v6: false };
}

const isMapped = (b: Uint8Array): boolean =>
  b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** The 4 bytes of an IPv4 address, also for an IPv4-mapped IPv6 address (Go's To4). */
export function to4(ip: ParsedIP): Uint8Array | undefined {
  if (ip.bytes.length === 4) return ip.bytes;
  return isMapped(ip.bytes) ? ip.bytes.slice(12) : undefined;
}

export const isValidIP = (s: string): boolean => parseIP(s) !== undefined;
export const isIPv4 = (s: string): boolean => {
  const ip = parseIP(s);
  return ip !== undefined && to4(ip) !== undefined;
};
export const isIPv6 = (s: string): boolean => {
  const ip = parseIP(s);
  return ip !== undefined && to4(ip) === undefined;
};

/**
 * The family of an address as Kubernetes decides it (net.IP.To4): an IPv4-mapped IPv6 address
 * counts as IPv4. undefined when the string is not an IP.
 */
export function ipFamily(s: string): IPFamily | undefined {
  const ip = parseIP(s);
  if (ip === undefined) return undefined;
  return to4(ip) !== undefined ? 'IPv4' : 'IPv6';
}

export function isUnspecified(ip: ParsedIP): boolean {
  const v4 = to4(ip);
  if (v4 !== undefined) return v4.every((x) => x === 0);
  return ip.bytes.every((x) => x === 0);
}

export function isLoopback(ip: ParsedIP): boolean {
  const v4 = to4(ip);
  if (v4 !== undefined) return v4[0] === 127;
  return ip.bytes.slice(0, 15).every((x) => x === 0) && ip.bytes[15] === 1;
}

export function isLinkLocalUnicast(ip: ParsedIP): boolean {
  const v4 = to4(ip);
  if (v4 !== undefined) return v4[0] === 169 && v4[1] === 254;
  return ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80;
}

export function isLinkLocalMulticast(ip: ParsedIP): boolean {
  const v4 = to4(ip);
  if (v4 !== undefined) return v4[0] === 224 && v4[1] === 0 && v4[2] === 0;
  return ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02;
}

export interface ParsedCIDR {
  readonly ip: ParsedIP;
  readonly prefix: number;
  readonly family: IPFamily;
}

/** Parse "addr/bits" strictly (no leading zeros in bits, bits within the family's width). */
export function parseCIDR(s: string): ParsedCIDR | undefined {
  const slash = s.indexOf('/');
  if (slash === -1 || s.indexOf('/', slash + 1) !== -1) return undefined;
  const ip = parseIP(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (ip === undefined || !/^(0|[1-9][0-9]{0,2})$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > ip.bytes.length * 8) return undefined;
  return { ip, prefix, family: ip.v6 && !isMapped(ip.bytes) ? 'IPv6' : 'IPv4' };
}

export const isValidCIDR = (s: string): boolean => parseCIDR(s) !== undefined;

/** True when the list holds exactly one address of each family (netutils.IsDualStackIPStrings). */
export function isDualStackIPs(ips: readonly string[]): boolean {
  const fams = ips.map(ipFamily);
  return fams.includes('IPv4') && fams.includes('IPv6');
}

/** True when the list holds CIDRs of both families. */
export function isDualStackCIDRs(cidrs: readonly string[]): boolean {
  const fams = cidrs.map((c) => parseCIDR(c)?.family);
  return fams.includes('IPv4') && fams.includes('IPv6');
}

export const IP_MESSAGE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
export const CIDR_MESSAGE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** IsValidIP as a field error list. */
export const validateIP = (p: FieldPath, value: string): FieldError[] =>
  parseIP(value) === undefined ? [invalid(p, value, IP_MESSAGE)] : [];

/**
 * ValidateNonSpecialIP: no unspecified, loopback or link-local addresses. `allowLoopback` lifts the
 * loopback rule (ValidationOptions.allowLoopbackEndpoints).
 */
export function validateNonSpecialIP(
  p: FieldPath,
  value: string,
  opts: { readonly allowLoopback?: boolean } = {},
): FieldError[] {
  const ip = parseIP(value);
  if (ip === undefined) return [invalid(p, value, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  if (isUnspecified(ip)) errs.push(invalid(p, value, `may not be unspecified (${value})`));
  if (isLoopback(ip) && opts.allowLoopback !== true)
    errs.push(invalid(p, value, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (isLinkLocalUnicast(ip))
    errs.push(invalid(p, value, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (isLinkLocalMulticast(ip)) {
    errs.push(invalid(p, value, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  }
  return errs;
}
