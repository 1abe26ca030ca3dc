// Network namespaces for the demo and the process-level tests: one "hub" namespace holding a bridge
// (and, by the caller's choice, the control plane), and one namespace per node wired to it by a veth pair.
//
//   <prefix>-hub     br0 = hubIP (the subnet's last usable address, .254 of a /24), ip_forward=1,
//                    a route to each node's podCIDR via that node's IP; veth<i> (node i's peer) on br0
//   <prefix>-<node>  eth0 = .1, .2, ... of the subnet; `local <podCIDR> dev lo`, so every pod IP of the
//                    node can be bound without adding addresses (AnyIP); a route to every other node's
//                    podCIDR via that node's IP; a default route via hubIP, so a connect() to a ClusterIP
//                    finds a route before the node's iptables DNAT it
//
// Everything is created inside the namespaces: each veth pair is made from within the hub with its peer
// placed straight into the node's namespace, so no interface ever exists in the root namespace and the
// veth names only need to be unique inside the hub (which is why the prefix's length does not matter).
// Processes are the caller's: remove() deletes the namespaces and kills nothing.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import {
  cidrSize,
  formatAddress,
  formatCidr,
  indexedAddress,
  parseCidrRange,
  type Cidr,
} from '../core/allocator/cidr.js';
import { errText } from '../api/err-text.js';

export interface NetnsNode {
  /** The node's name, e.g. node0. */
  name: string;
  netns: string;
  /** The node's IP on the bridge. */
  ip: string;
  podCIDR: string;
}

export interface NetnsLayout {
  prefix: string;
  /** The hub namespace (bridge + control plane). */
  hub: string;
  hubIP: string;
  nodes: NetnsNode[];
  /** The subnet of the bridge, e.g. 10.231.0.0/24. */
  subnet: string;
  serviceCIDR: string;
  /** Deletes every namespace of the layout that still exists. Idempotent; kills no process. */
  remove(): Promise<void>;
  /** SIGKILLs every process still running in the layout's namespaces (before remove(), after an interrupt). */
  killProcesses(): Promise<number>;
}

export interface CreateLayoutOptions {
  /** Names every namespace: `<prefix>-hub`, `<prefix>-<node>`; e.g. 'svcp-<6 random chars>'. */
  prefix: string;
  nodes: ReadonlyArray<{ name: string; podCIDR: string }>;
  /** The bridge's subnet; default 10.231.0.0/24. */
  subnet?: string;
  serviceCIDR: string;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The `ip` program: PATH, then the sbin directories non-login shells often lack. */
export function ipPath(): string {
  const dirs = (process.env['PATH'] ?? '').split(path.delimiter).filter((d) => d !== '');
  for (const dir of new Set([...dirs, '/usr/sbin', '/sbin', '/usr/bin', '/bin'])) {
    const p = path.join(dir, 'ip');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  throw new Error('ip (Debian package iproute2) not found on PATH, /usr/sbin or /sbin');
}

/** Runs `ip args...` (no shell) with `stdin`; resolves with stdout, rejects with stderr on failure. */
function ip(args: readonly string[], stdin = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(ipPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => {}); // ip may stop reading at a failing batch line; its status says why
    child.on('error', reject);
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(new Error(`ip ${args.join(' ')}: exit ${code ?? 'signal'}: ${stderr || 'no error output'}`));
    });
    child.stdin.end(stdin);
  });
}

/** `ip [-n netns] -batch -`: many commands in one process, in one namespace (or the root one for `netns add`). */
function batch(netns: string | undefined, lines: readonly string[], force = false): Promise<string> {
  const where = netns === undefined ? [] : ['-n', netns];
  return ip([...where, ...(force ? ['-force'] : []), '-batch', '-'], `${lines.join('\n')}\n`);
}

/** The names of the existing network namespaces (`ip netns list` prints "name (id: N)"). */
async function listNetns(): Promise<string[]> {
  const out = await ip(['netns', 'list']);
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n !== '');
}

/** Deletes those of `names` that exist; throws if any is still there afterwards. */
async function deleteNetns(names: readonly string[]): Promise<string[]> {
  const existing = new Set(await listNetns());
  const doomed = names.filter((n) => existing.has(n));
  if (doomed.length === 0) return [];
  // -force: keep going past a namespace that vanished meanwhile; the listing below is the verdict.
  await batch(
    undefined,
    doomed.map((n) => `netns del ${n}`),
    true,
  ).catch(() => {});
  const left = new Set(await listNetns());
  const stuck = doomed.filter((n) => left.has(n));
  if (stuck.length > 0) throw new Error(`could not delete network namespace(s) ${stuck.join(', ')}`);
  return doomed;
}

/** SIGKILLs the processes in these namespaces (`ip netns pids`); returns how many. */
async function killIn(names: readonly string[]): Promise<number> {
  const existing = new Set(await listNetns());
  let n = 0;
  for (const ns of names.filter((x) => existing.has(x))) {
    const pids = (await ip(['netns', 'pids', ns]).catch(() => ''))
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        n++;
      } catch {
        // gone already
      }
    }
  }
  return n;
}

/** Removes leftover namespaces whose names match (from a run that crashed); returns their names. */
export async function removeStale(prefixPattern: RegExp): Promise<string[]> {
  const stale = (await listNetns()).filter((n) => {
    prefixPattern.lastIndex = 0; // a /g or /y pattern keeps state between test() calls
    return prefixPattern.test(n);
  });
  return deleteNetns(stale);
}

/** `ip netns exec <netns> argv...`, spawned without a shell. The process is the caller's to stop. */
export function exec(netns: string, argv: readonly string[], o: SpawnOptions = {}): ChildProcess {
  return spawn(ipPath(), ['netns', 'exec', netns, ...argv], o);
}

/**
 * Runs `node -e script args...` inside `netns` to its end; resolves with its stdout, rejects naming `what`
 * with its stderr when it exits non-zero (the probes' and tests' clients: a socket cannot change namespace).
 */
export function nodeScriptInNetns(
  netns: string,
  script: string,
  args: readonly string[],
  what: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = exec(netns, [process.execPath, '-e', script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${what} in ${netns} exited ${code}: ${err.trim()}`)),
    );
  });
}

function parseV4(what: string, text: string): Cidr {
  const c = parseCidrRange(text);
  if (c === undefined || c.family !== 'IPv4')
    throw new Error(`${what} ${JSON.stringify(text)} is not an IPv4 CIDR`);
  return c;
}

/** Checks the options and computes every name and address, before anything is created. */
function plan(o: CreateLayoutOptions): Omit<NetnsLayout, 'remove' | 'killProcesses'> {
  if (!NAME.test(o.prefix) || o.prefix.length > 40) {
    throw new Error(
      `prefix ${JSON.stringify(o.prefix)}: lower-case letters, digits and '-', at most 40 characters`,
    );
  }
  if (o.nodes.length === 0) throw new Error('a layout needs at least one node');
  const subnet = parseV4('subnet', o.subnet ?? '10.231.0.0/24');
  parseV4('serviceCIDR', o.serviceCIDR);
  const size = cidrSize(subnet);
  // .1 .. .N for the nodes and the last usable address for the hub: N + 1 host addresses.
  if (size < BigInt(o.nodes.length + 3)) {
    throw new Error(`subnet ${formatCidr(subnet)} is too small for ${o.nodes.length} nodes and the hub`);
  }
  const seen = new Set<string>();
  const nodes = o.nodes.map((n, i): NetnsNode => {
    if (!NAME.test(n.name) || n.name === 'hub')
      throw new Error(`node name ${JSON.stringify(n.name)} is not usable`);
    if (seen.has(n.name)) throw new Error(`node name ${n.name} appears twice`);
    seen.add(n.name);
    return {
      name: n.name,
      netns: `${o.prefix}-${n.name}`,
      ip: formatAddress(indexedAddress(subnet, BigInt(i + 1))),
      podCIDR: formatCidr(parseV4(`podCIDR of ${n.name}`, n.podCIDR)),
    };
  });
  return {
    prefix: o.prefix,
    hub: `${o.prefix}-hub`,
    hubIP: formatAddress(indexedAddress(subnet, size - 2n)),
    nodes,
    subnet: formatCidr(subnet),
    serviceCIDR: o.serviceCIDR,
  };
}

/**
 * Creates the hub and node namespaces and wires them (see the top of this file). Refuses, creating
 * nothing, when a namespace of that name already exists; if a later step fails it removes everything it
 * made before rejecting.
 */
export async function createLayout(o: CreateLayoutOptions): Promise<NetnsLayout> {
  const p = plan(o);
  const all = [p.hub, ...p.nodes.map((n) => n.netns)];
  const layout: NetnsLayout = {
    ...p,
    remove: async () => void (await deleteNetns(all)),
    killProcesses: () => killIn(all),
  };

  const existing = new Set(await listNetns());
  const taken = all.filter((n) => existing.has(n));
  if (taken.length > 0) {
    throw new Error(
      `network namespace(s) ${taken.join(', ')} already exist (removeStale() clears leftovers)`,
    );
  }

  const bits = p.subnet.slice(p.subnet.indexOf('/'));
  try {
    await batch(
      undefined,
      all.map((n) => `netns add ${n}`),
    );
    // The hub: its bridge, and one veth pair per node made from inside the hub, the peer landing in the
    // node's namespace as eth0 (the veth's own name only has to be unique inside the hub).
    await batch(p.hub, [
      'link set lo up',
      'link add br0 type bridge',
      `addr add ${p.hubIP}${bits} dev br0`,
      'link set br0 up',
      ...p.nodes.flatMap((n, i) => [
        `link add veth${i} type veth peer name eth0 netns ${n.netns}`,
        `link set veth${i} master br0`,
        `link set veth${i} up`,
      ]),
      ...p.nodes.map((n) => `route add ${n.podCIDR} via ${n.ip}`),
    ]);
    await Promise.all(
      p.nodes.map((n) =>
        batch(n.netns, [
          'link set lo up',
          `addr add ${n.ip}${bits} dev eth0`,
          'link set eth0 up',
          `route add local ${n.podCIDR} dev lo`,
          ...p.nodes.filter((m) => m !== n).map((m) => `route add ${m.podCIDR} via ${m.ip}`),
          `route add default via ${p.hubIP}`,
        ]),
      ),
    );
    await enableForwarding(p.hub);
  } catch (e) {
    await layout.remove().catch(() => {});
    throw new Error(`createLayout ${o.prefix}: ${errText(e)}`, { cause: e });
  }
  return layout;
}

/**
 * net.ipv4.ip_forward=1 in the hub only. /proc/sys/net belongs to the namespace of whoever opens it, so
 * node (always here) writes it from inside the hub: no dependency on procps' sysctl.
 */
function enableForwarding(netns: string): Promise<void> {
  const script = "require('node:fs').writeFileSync('/proc/sys/net/ipv4/ip_forward', '1\\n')";
  return new Promise((resolve, reject) => {
    const child = exec(netns, [process.execPath, '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`setting net.ipv4.ip_forward=1 in ${netns} failed: ${stderr.trim() || `exit ${code}`}`),
        );
    });
  });
}
