// Where the userspace demo may put its pods and its proxies' stand-in addresses on this machine's
// loopback, given the TCP listeners already there. Pure: the caller reads /proc/net/tcp and tcp6.
//
// The demo's pods answer on 127.P.N.x (node N), and node N's proxy on 127.(S+N).a.b for a cluster IP with
// host bits a.b. Another svcplane node with --serve-pods (the README's example uses 127.10.0.0/16), or a
// second demo, may hold the same addresses: their pods would answer the demo's traffic, and every table
// would be wrong for a reason the demo could not name. So the demo takes /16 blocks nobody listens in.

/** A listening socket: its local address (IPv4 dotted, or IPv6 text; `0.0.0.0`/`::` for any) and port. */
export interface Listener {
  readonly ip: string;
  readonly port: number;
}

/** The LISTEN state in /proc/net/tcp's `st` column. */
const LISTEN = '0A';

/** One 32-bit word of /proc/net/tcp's address column as its four bytes in network order. */
function wordBytes(hex: string, littleEndian: boolean): number[] {
  const b = [0, 2, 4, 6].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return littleEndian ? b.reverse() : b;
}

/**
 * The listeners in the text of /proc/net/tcp (`family` 4) or /proc/net/tcp6 (6). The kernel prints each
 * 32-bit word of an address in the machine's byte order (`littleEndian`: os.endianness() === 'LE').
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is given as a.b.c.d. Lines that do not parse are skipped.
 */
export function parseProcNetTcp(text: string, family: 4 | 6, littleEndian: boolean): Listener[] {
  const out: Listener[] = [];
  const width = family === 4 ? 8 : 32;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || f[3] !== LISTEN) continue;
    const m = new RegExp(`^([0-9A-Fa-f]{${width}}):([0-9A-Fa-f]{4})$`).exec(f[1]!);
    if (m === null) continue;
    const port = parseInt(m[2]!, 16);
    const bytes: number[] = [];
    for (let i = 0; i < width; i += 8) bytes.push(...wordBytes(m[1]!.slice(i, i + 8), littleEndian));
    if (family === 4) {
      out.push({ ip: bytes.join('.'), port });
      continue;
    }
    const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255;
    if (mapped) {
      out.push({ ip: bytes.slice(12).join('.'), port });
      continue;
    }
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
    out.push({ ip: groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::'), port });
  }
  return out;
}

export interface LoopbackNeeds {
  /** How many nodes (each takes one /24 of the pod block, and one /16 for its stand-ins). */
  readonly nodes: number;
  /** Ports the pods and the stand-ins listen on, on every address of their blocks. */
  readonly ports: readonly number[];
  /** The second octets to try for the pod block, in order. */
  readonly podBlocks: readonly number[];
  /** The first second octet to try for the stand-in blocks (each node's the next one up). */
  readonly firstStandIn: number;
}

export type LoopbackChoice =
  { readonly pods: number; readonly standIns: number } | { readonly conflict: string };

const isAny = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';

/**
 * The pod block (127.pods.0.0/16) and the first stand-in block (127.standIns.0.0/16, then one up per
 * node) with no listener in them, or why there are none: a listener on every address at one of the
 * ports (no block avoids it), or every candidate taken.
 */
export function chooseLoopbackBlocks(listeners: readonly Listener[], need: LoopbackNeeds): LoopbackChoice {
  const wildcard = listeners.find((l) => isAny(l.ip) && need.ports.includes(l.port));
  if (wildcard !== undefined) {
    const at = wildcard.ip === '::' ? `[::]:${wildcard.port}` : `0.0.0.0:${wildcard.port}`;
    return {
      conflict: `port ${wildcard.port} is taken on every address (${at}), and the demo's pods and proxies listen on it`,
    };
  }
  const busy = new Set<number>();
  for (const l of listeners) {
    const m = /^127\.(\d+)\./.exec(l.ip);
    if (m !== null) busy.add(Number(m[1]));
  }
  const pods = need.podBlocks.find((b) => !busy.has(b));
  if (pods === undefined) {
    return {
      conflict: `something listens in each of 127.{${need.podBlocks.join(',')}}.0.0/16, where the demo puts its pods`,
    };
  }
  for (let s = need.firstStandIn; s + need.nodes - 1 <= 255; s++) {
    let free = true;
    for (let n = 0; n < need.nodes && free; n++) free = !busy.has(s + n) && s + n !== pods;
    if (free) return { pods, standIns: s };
  }
  return { conflict: `no ${need.nodes} free /16 blocks of 127.0.0.0/8 from 127.${need.firstStandIn} up` };
}
