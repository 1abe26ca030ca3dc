// CIDR math on bigint, for IPv4 and IPv6 alike. An address is a (family, bigint) pair; IPv4-mapped
// IPv6 addresses count as IPv4, as Kubernetes decides families (net.IP.To4). Formatting is the
// canonical text form (RFC 5952 for IPv6), so one address always has one spelling: allocation keys
// and comparisons depend on that.
import { parseCIDR, parseIP, to4, type IPFamily } from '../../api/validation/ip.js';

export type { IPFamily };

export interface Address {
  readonly family: IPFamily;
  readonly value: bigint;
}

export interface Cidr {
  readonly family: IPFamily;
  /** The network address (host bits cleared). */
  readonly network: bigint;
  readonly prefix: number;
  /** Address width in bits: 32 or 128. */
  readonly bits: 32 | 128;
}

const bytesToBigInt = (bytes: Uint8Array): bigint => {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
};

export const familyBits = (family: IPFamily): 32 | 128 => (family === 'IPv4' ? 32 : 128);

/** Parse an address; undefined when the text is not one. */
export function parseAddress(s: string): Address | undefined {
  const ip = parseIP(s);
  if (ip === undefined) return undefined;
  const v4 = to4(ip);
  return v4 !== undefined
    ? { family: 'IPv4', value: bytesToBigInt(v4) }
    : { family: 'IPv6', value: bytesToBigInt(ip.bytes) };
}

/** The canonical text of an address: dotted quad, or RFC 5952 lower-case IPv6 with the longest zero run compressed. */
export function formatAddress(a: Address): string {
  if (a.family === 'IPv4') {
    const v = a.value;
    return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((a.value >> BigInt(i * 16)) & 0xffffn));
  // The longest run of two or more zero groups (the first one on a tie) becomes "::".
  let bestStart = -1;
  let bestLen = 0;
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
  const hex = (g: number[]): string => g.map((x) => x.toString(16)).join(':');
  if (bestLen < 2) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** The canonical spelling of an address text, or undefined when it is not an address. */
export function canonicalIP(s: string): string | undefined {
  const a = parseAddress(s);
  return a === undefined ? undefined : formatAddress(a);
}

/**
 * Parse "addr/bits". Like Go's ParseCIDR the host bits may be set ("10.96.0.5/12" is 10.96.0.0/12).
 * undefined when the text is not a CIDR.
 */
export function parseCidrRange(s: string): Cidr | undefined {
  const parsed = parseCIDR(s);
  if (parsed === undefined) return undefined;
  const addr = parseAddress(s.slice(0, s.indexOf('/')));
  if (addr === undefined) return undefined;
  const bits = familyBits(addr.family);
  // An IPv4-mapped IPv6 CIDR counts its prefix over 128 bits; bring it to IPv4's 32.
  const prefix = addr.family === 'IPv4' && parsed.ip.bytes.length === 16 ? parsed.prefix - 96 : parsed.prefix;
  if (prefix < 0 || prefix > bits) return undefined;
  const host = BigInt(bits - prefix);
  const network = (addr.value >> host) << host;
  return { family: addr.family, network, prefix, bits };
}

export const formatCidr = (c: Cidr): string =>
  `${formatAddress({ family: c.family, value: c.network })}/${c.prefix}`;

/** 2^(host bits): every address the CIDR covers, network and broadcast included. */
export const cidrSize = (c: Cidr): bigint => 1n << BigInt(c.bits - c.prefix);

export function cidrContains(c: Cidr, a: Address): boolean {
  if (a.family !== c.family) return false;
  return a.value >= c.network && a.value < c.network + cidrSize(c);
}

/** The address `index` places after the network address (GetIndexedIP). */
export const indexedAddress = (c: Cidr, index: bigint): Address => ({
  family: c.family,
  value: c.network + index,
});
