// kube-proxy-style chain names for one Service port and its endpoints. Behaves like kube-proxy's
// pkg/proxy/iptables/proxier.go (portProtoHash, servicePortEndpointChainName): a prefix, then 16 base32
// characters of a hash of the service port name and protocol (and, for KUBE-SEP-, the endpoint "ip:port").
// kube-proxy hashes with SHA-256; src/core cannot use node:crypto, so the 80 bits here are 40 bits of each
// of two independently seeded 53-bit hashes (cyrb53, the hash of src/core/hash.ts, with two seeds). The
// names are not kube-proxy's, but they have the same shape and length, and are just as stable: the same
// input always gives the same name.

const BASE32 = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', (c) => c.charCodeAt(0));

/**
 * cyrb53's finalizer, then the low 40 bits of the 53-bit result (8 high bits of the high lane, the low
 * lane) as 8 base32 character codes into `out` at `at`. Integer operations only: it runs ~100k times a
 * render.
 */
function finish40(h1: number, h2: number, out: number[], at: number): void {
  const lo = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const hi = (Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(lo ^ (lo >>> 13), 3266489909)) & 0xff;
  out[at] = BASE32[hi >>> 3]!;
  out[at + 1] = BASE32[((hi & 7) << 2) | (lo >>> 30)]!;
  for (let i = 2; i < 8; i++) out[at + i] = BASE32[(lo >>> (5 * (7 - i))) & 31]!;
}

// Two seeds: hash53 of src/core/hash.ts is cyrb53 with seed 0; these are two others.
const SEED_A = 0x5ec1a9e1;
const SEED_B = 0x2f6b3c8d;

/**
 * cyrb53 with two seeds at once, fed part by part: the four 32-bit lanes of one hash in progress. The
 * parts are not concatenated (a render names ~100k endpoint chains; the concatenations would be garbage).
 */
const CODES: number[] = new Array<number>(16).fill(0);

class Hash80 {
  private a1 = 0xdeadbeef ^ SEED_A;
  private a2 = 0x41c6ce57 ^ SEED_A;
  private b1 = 0xdeadbeef ^ SEED_B;
  private b2 = 0x41c6ce57 ^ SEED_B;

  feed(s: string): this {
    let { a1, a2, b1, b2 } = this;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      a1 = Math.imul(a1 ^ c, 2654435761);
      a2 = Math.imul(a2 ^ c, 1597334677);
      b1 = Math.imul(b1 ^ c, 2654435761);
      b2 = Math.imul(b2 ^ c, 1597334677);
    }
    this.a1 = a1;
    this.a2 = a2;
    this.b1 = b1;
    this.b2 = b2;
    return this;
  }

  /** 16 RFC 4648 base32 characters: 40 bits of each seed's 53-bit hash. */
  base32(): string {
    const c = CODES;
    finish40(this.a1, this.a2, c, 0);
    finish40(this.b1, this.b2, c, 8);
    return String.fromCharCode(
      c[0]!,
      c[1]!,
      c[2]!,
      c[3]!,
      c[4]!,
      c[5]!,
      c[6]!,
      c[7]!,
      c[8]!,
      c[9]!,
      c[10]!,
      c[11]!,
      c[12]!,
      c[13]!,
      c[14]!,
      c[15]!,
    );
  }
}

/** 16 RFC 4648 base32 characters (80 bits) of `s`: deterministic, pure. */
export const hash16 = (s: string): string => new Hash80().feed(s).base32();

export const SVC_PREFIX = 'KUBE-SVC-';
export const SVL_PREFIX = 'KUBE-SVL-';
export const EXT_PREFIX = 'KUBE-EXT-';
export const FW_PREFIX = 'KUBE-FW-';
export const SEP_PREFIX = 'KUBE-SEP-';
/** The chain kube-proxy used before KUBE-EXT-/KUBE-SVL- (v1.23 and earlier); still cleaned up. */
export const XLB_PREFIX = 'KUBE-XLB-';

/** The longest chain name iptables accepts (XT_EXTENSION_MAXNAMELEN 29, with the NUL). */
export const MAX_CHAIN_NAME = 28;

const SERVICE_PREFIXES = [SVC_PREFIX, SVL_PREFIX, EXT_PREFIX, FW_PREFIX, SEP_PREFIX, XLB_PREFIX];

/** A per-service chain (what a full sync deletes when nothing owns it any more); like kube-proxy's isServiceChainName. */
export const isServiceChain = (chain: string): boolean => SERVICE_PREFIXES.some((p) => chain.startsWith(p));

const PROTOS: Readonly<Record<string, string>> = { TCP: 'tcp', UDP: 'udp', SCTP: 'sctp' };

/** kube-proxy hashes the protocol in lower case ("tcp"). */
const proto = (protocol: string): string => PROTOS[protocol] ?? protocol.toLowerCase();

/** The hash part shared by a service port's KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-FW- chains. */
export const portProtoHash = (key: string, protocol: string): string =>
  new Hash80().feed(key).feed(proto(protocol)).base32();

/** The cluster policy chain: load-balances over the internal endpoints. */
export const svcChain = (key: string, protocol: string): string => SVC_PREFIX + portProtoHash(key, protocol);

/** The local policy chain: load-balances over the external endpoints when they differ from the internal ones. */
export const svlChain = (key: string, protocol: string): string => SVL_PREFIX + portProtoHash(key, protocol);

/** The external destinations chain: NodePort, external IP and load-balancer traffic enters here. */
export const extChain = (key: string, protocol: string): string => EXT_PREFIX + portProtoHash(key, protocol);

/** The load-balancer source-range firewall chain. */
export const fwChain = (key: string, protocol: string): string => FW_PREFIX + portProtoHash(key, protocol);

/** `ip:port`, or `[ip]:port` for IPv6 (Go's net.JoinHostPort, as kube-proxy prints endpoints). */
export const hostPort = (ip: string, port: number): string =>
  ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

/** One endpoint's chain: masquerades hairpin traffic and DNATs to the endpoint. */
export const sepChain = (key: string, protocol: string, ip: string, port: number): string =>
  SEP_PREFIX + new Hash80().feed(key).feed(proto(protocol)).feed(hostPort(ip, port)).base32();
