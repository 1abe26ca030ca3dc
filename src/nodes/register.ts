// Registration of simulated nodes: decide each node's pod CIDRs, refuse what a kubelet would make a
// mess of, then create (or take over) the Nodes and their Leases — all or nothing.
//
// Refused, before anything is written:
//   - a name held by a live node (Ready and its Lease fresh: some other kubelet runs it);
//   - a pod CIDR overlapping another node's spec.podCIDRs, or differing from the podCIDRs a node of that
//     name already has (podCIDRs are immutable once set);
//   - no free range left in --cluster-cidr.
// A node of the same name that is not live (this process before a restart, or a kubelet that died) is
// taken over: it keeps its podCIDRs and its pods. If a write fails halfway, the Nodes this call
// created and their Leases are deleted again, so a failed start leaves nothing half-registered (a
// taken-over node keeps the Lease written for it, naming this process).
//
// Two registrations at the same moment both pass the checks on the same list. So after writing, the
// Nodes are listed again, and on an overlap with another node the range claimed later (or in the same
// second) yields (cidrRaceLoss): this call's Nodes and Leases are deleted as above, and with
// --cluster-cidr it plans again from a fresh list after a random delay, up to MAX_ATTEMPTS times
// (nodes it took over are its own on the next attempt: their Leases name this process); with
// --pod-cidr the overlap is refused as before (after a tie, the next attempt's check decides).
import type { KObject } from '../api/object.js';
import { parseTimestamp } from '../api/printers/time.js';
import { mustFindResource } from '../api/resources.js';
import { formatCidr, type Cidr } from '../core/allocator/cidr.js';
import {
  leaseObject,
  nodeLiveness,
  nodeObject,
  nodeStatus,
  NODE_LEASE_NAMESPACE,
  PROCESS_ANNOTATION,
  type NodeInput,
} from '../core/nodes/node-object.js';
import {
  allocateNodeCIDRs,
  cidrRaceLoss,
  defaultNodeMask,
  findCidrConflict,
  NodeCidrError,
  splitCidr,
  type CidrConflict,
  type CidrRaceLoss,
  type ClaimedCidrs,
  type NodeCidrs,
} from '../core/nodes/pod-cidrs.js';
import { isApiError, type Client } from '../runtime/client.js';

export const NODES = mustFindResource('', 'nodes');
export const LEASES = mustFindResource('coordination.k8s.io', 'leases');

/** Attempts at registering before a call that keeps losing races for its pod CIDRs gives up. */
export const MAX_ATTEMPTS = 5;

/** The wait before attempt `attempt + 1`: random, so two losers do not collide again, and growing. */
const retryDelayMs = (attempt: number): number => 50 + Math.random() * 250 * 2 ** attempt;

/** A start refused for a reason the user can fix; its message is the one line printed. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError';
}

export type CidrSource =
  /** --pod-cidr: the node's own range(s); with several nodes, each gets the i-th /mask subnet. */
  | { readonly kind: 'pod-cidr'; readonly cidrs: readonly Cidr[]; readonly maskSize?: number }
  /** --cluster-cidr: ranges allocated as the node IPAM controller does. */
  | { readonly kind: 'cluster-cidr'; readonly cidrs: readonly Cidr[]; readonly maskSize?: number };

export interface RegisterOptions {
  readonly client: Client;
  /**
   * Each node's own client (TLS bootstrapping: its system:node:NAME certificate), for that node's writes
   * and its Lease's read, as a kubelet under the Node authorizer may; `client` still lists the Nodes.
   */
  readonly clientFor?: (name: string) => Client;
  readonly names: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly cidrs: CidrSource;
  /** The InternalIP of node i. */
  readonly internalIP: (index: number) => string;
  readonly version: string;
  readonly maxPods?: number;
  readonly nowMs: () => number;
  /** This process, as PROCESS_ANNOTATION records it (`<host>/<pid>`). */
  readonly process?: string;
  /**
   * Whether the process a live-looking node's Lease names is gone (it was this host's previous run,
   * killed): then the node is taken over rather than refused.
   */
  readonly processGone?: (process: string) => boolean;
  /** The wait after losing attempt `attempt` (1-based) to a concurrent registration; default random. */
  readonly retryDelayMs?: (attempt: number) => number;
}

export interface RegisteredNode {
  readonly name: string;
  readonly index: number;
  readonly uid: string;
  readonly podCIDRs: readonly string[];
  readonly internalIP: string;
  readonly input: NodeInput;
  /** The Lease as last written (its resourceVersion is the next update's precondition). */
  lease: KObject;
}

const cidrsOf = (n: KObject): string[] => {
  const spec = (n as { spec?: { podCIDRs?: unknown; podCIDR?: unknown } }).spec;
  if (Array.isArray(spec?.podCIDRs) && spec.podCIDRs.length > 0) return spec.podCIDRs.map(String);
  return typeof spec?.podCIDR === 'string' && spec.podCIDR !== '' ? [spec.podCIDR] : [];
};

/** The podCIDRs each node should have, before looking at what the cluster holds. */
function plannedCIDRs(
  source: CidrSource,
  names: readonly string[],
  existing: NodeCidrs[],
): Map<string, string[]> {
  try {
    if (source.kind === 'cluster-cidr') {
      const maskSizes = source.cidrs.map(
        (c, i) => (i === 0 ? source.maskSize : undefined) ?? defaultNodeMask(c, 1),
      );
      return allocateNodeCIDRs({ clusterCIDRs: source.cidrs, maskSizes, existing, nodes: names });
    }
    if (names.length === 1) return new Map([[names[0]!, source.cidrs.map(formatCidr)]]);
    const perFamily = source.cidrs.map((c, i) =>
      splitCidr(c, (i === 0 ? source.maskSize : undefined) ?? defaultNodeMask(c, names.length), names.length),
    );
    return new Map(names.map((n, i) => [n, perFamily.map((subnets) => formatCidr(subnets[i]!))]));
  } catch (err) {
    if (err instanceof NodeCidrError) {
      const flag = source.kind === 'cluster-cidr' ? '--cluster-cidr' : '--pod-cidr';
      throw new RegistrationError(`${flag}: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

const overlapError = (c: CidrConflict): RegistrationError =>
  new RegistrationError(
    `pod CIDR ${c.cidr} of node "${c.node}" overlaps ${c.otherCidr} of node "${c.otherNode}"`,
  );

/**
 * Registers the nodes (or takes over dead ones of the same names) and their Leases. Throws
 * RegistrationError for refused input, ApiError or a connection error when the API server fails.
 */
export async function registerNodes(o: RegisterOptions): Promise<RegisteredNode[]> {
  for (let attempt = 1; ; attempt++) {
    const result = await registerOnce(o);
    if (Array.isArray(result)) return result;
    if (o.cidrs.kind === 'pod-cidr' && !result.tie) throw overlapError(result);
    if (attempt >= MAX_ATTEMPTS) {
      const flag = o.cidrs.kind === 'cluster-cidr' ? '--cluster-cidr' : '--pod-cidr';
      throw new RegistrationError(
        `${flag}: gave up after ${attempt} attempts: another registration took the same pod CIDRs at the same time each time (last: ${result.cidr} of node "${result.node}" and ${result.otherCidr} of node "${result.otherNode}"); try again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, (o.retryDelayMs ?? retryDelayMs)(attempt)));
  }
}

/** One attempt: the nodes, or the race it lost (after deleting what it created). */
async function registerOnce(o: RegisterOptions): Promise<RegisteredNode[] | CidrRaceLoss> {
  const { client } = o;
  const own = (name: string): Client => o.clientFor?.(name) ?? client;
  const allNodes = await visibleNodes(o, own);
  const leases = new Map(
    o.clientFor === undefined
      ? (await listAll(client, LEASES, NODE_LEASE_NAMESPACE)).map((l) => [l.metadata.name, l])
      : await ownLeases(o.names, own),
  );
  const byName = new Map(allNodes.map((n) => [n.metadata.name ?? '', n]));
  const now = o.nowMs();

  for (const name of o.names) {
    const n = byName.get(name);
    if (n === undefined) continue;
    const lease = leases.get(name);
    const l = nodeLiveness(n, lease, now);
    const holder = lease?.metadata.annotations?.[PROCESS_ANNOTATION];
    // A node this process took over in an attempt that lost a race is still its own.
    const ours = holder !== undefined && (holder === o.process || o.processGone?.(holder) === true);
    if (l.live && !ours) {
      throw new RegistrationError(`node "${name}" is taken by a live node (${l.why}); pick another --name`);
    }
  }

  const existing = allNodes.map((n) => ({ node: n.metadata.name ?? '', cidrs: cidrsOf(n) }));
  const planned = plannedCIDRs(o.cidrs, o.names, existing);
  for (const name of o.names) {
    const had = cidrsOf(byName.get(name) ?? { metadata: {} });
    const want = planned.get(name)!;
    if (had.length > 0 && (had.length !== want.length || had.some((c, i) => c !== want[i]))) {
      throw new RegistrationError(
        `node "${name}" already has podCIDRs ${had.join(',')}, not ${want.join(',')} (podCIDRs cannot change; delete the node or use its range)`,
      );
    }
  }
  const mine = o.names.map((name) => ({ node: name, cidrs: planned.get(name)! }));
  const conflict = findCidrConflict(mine, existing);
  if (conflict !== undefined) throw overlapError(conflict);

  const createdNodes: string[] = [];
  const createdLeases: string[] = [];
  const undo = async (): Promise<void> => {
    const ignore = (): undefined => undefined;
    await forEachLimit(createdLeases, 32, (n) =>
      own(n).delete(LEASES, NODE_LEASE_NAMESPACE, n).then(ignore, ignore),
    );
    await forEachLimit(createdNodes, 32, (n) => own(n).delete(NODES, '', n).then(ignore, ignore));
  };
  try {
    const out: RegisteredNode[] = [];
    const claimed: ClaimedCidrs[] = [];
    // Writes go out a few at a time: thousands of nodes register in seconds without a burst of sockets.
    await forEachLimit(o.names, 32, async (name, index) => {
      const input: NodeInput = {
        name,
        labels: o.labels,
        podCIDRs: planned.get(name)!,
        internalIP: o.internalIP(index),
        version: o.version,
        nowMs: o.nowMs(),
        ...(o.maxPods === undefined ? {} : { maxPods: o.maxPods }),
      };
      const stored = byName.get(name);
      let node: KObject;
      if (stored === undefined) {
        node = await own(name).create(NODES, '', nodeObject(input));
        createdNodes.push(name);
      } else {
        node = await takeOver(own(name), stored, input);
      }
      // A range set by this call on an old node is as new as it gets (see ClaimedCidrs).
      const claimedMs =
        stored !== undefined && cidrsOf(stored).length === 0
          ? Infinity
          : (parseTimestamp(node.metadata.creationTimestamp) ?? Infinity);
      claimed.push({ node: name, cidrs: input.podCIDRs, claimedMs });
      const uid = node.metadata.uid ?? '';
      const lease = await writeLease(
        own(name),
        leases.get(name),
        leaseObject(name, o.nowMs(), uid, o.process),
        () => stored === undefined && createdLeases.push(name),
      );
      out[index] = { name, index, uid, podCIDRs: input.podCIDRs, internalIP: input.internalIP, input, lease };
    });
    // Someone who listed before these Nodes existed may hold the same ranges now.
    const others = (await visibleNodes(o, own)).map((n) => ({
      node: n.metadata.name ?? '',
      cidrs: cidrsOf(n),
      claimedMs: parseTimestamp(n.metadata.creationTimestamp) ?? 0,
    }));
    const loss = cidrRaceLoss(claimed, others);
    if (loss === undefined) return out;
    await undo();
    return loss;
  } catch (err) {
    await undo();
    throw err;
  }
}

/** Each node's Lease, read with its own client (a node may read its own Lease, not list them all). */
/**
 * Every Node this registration may read: all of them, or, for node identities the Node authorizer lets
 * read only their own Node (a list is 403), each of its own by name. Other nodes' podCIDRs are then
 * unknown, so --cluster-cidr (which allocates around them) cannot be used.
 */
async function visibleNodes(o: RegisterOptions, own: (name: string) => Client): Promise<KObject[]> {
  try {
    return await listAll(o.client, NODES);
  } catch (err) {
    if (o.clientFor === undefined || !isApiError(err, 403)) throw err;
  }
  if (o.cidrs.kind === 'cluster-cidr')
    throw new RegistrationError(
      "--cluster-cidr: these node identities may read only their own Node (the Node authorizer), so other nodes' pod CIDRs are unknown; give --pod-cidr",
    );
  const out: KObject[] = [];
  await forEachLimit(o.names, 32, async (name) => {
    try {
      out.push(await own(name).get(NODES, '', name));
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  });
  return out;
}

async function ownLeases(
  names: readonly string[],
  own: (name: string) => Client,
): Promise<Array<[string | undefined, KObject]>> {
  const out: Array<[string | undefined, KObject]> = [];
  await forEachLimit(names, 32, async (name) => {
    try {
      out.push([name, await own(name).get(LEASES, NODE_LEASE_NAMESPACE, name)]);
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  });
  return out;
}

/** A dead node of our name: add our labels and (when it has none) podCIDRs, then report our status. */
async function takeOver(client: Client, stored: KObject, input: NodeInput): Promise<KObject> {
  const want = nodeObject(input) as {
    metadata: { labels: Record<string, string> };
    spec: Record<string, unknown>;
  };
  const spec = { ...(stored as { spec?: Record<string, unknown> }).spec };
  if (cidrsOf(stored).length === 0 && want.spec['podCIDRs'] !== undefined) {
    spec['podCIDR'] = want.spec['podCIDR'];
    spec['podCIDRs'] = want.spec['podCIDRs'];
  }
  await client.update(NODES, {
    ...stored,
    metadata: { ...stored.metadata, labels: { ...stored.metadata.labels, ...want.metadata.labels } },
    spec,
  } as KObject);
  const previous = (stored as { status?: { conditions?: unknown } }).status?.conditions;
  return client.patch(
    NODES,
    '',
    input.name,
    'merge',
    { status: nodeStatus(input, previous) },
    { sub: 'status' },
  );
}

async function writeLease(
  client: Client,
  stored: KObject | undefined,
  desired: Record<string, unknown>,
  created: () => void,
): Promise<KObject> {
  if (stored === undefined) {
    const l = await client.create(LEASES, NODE_LEASE_NAMESPACE, desired);
    created();
    return l;
  }
  const d = desired as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  return client.update(LEASES, {
    ...stored,
    metadata: { ...stored.metadata, ...d.metadata, resourceVersion: stored.metadata.resourceVersion },
    spec: { ...(stored as { spec?: object }).spec, ...d.spec },
  } as KObject);
}

export async function listAll(client: Client, r: typeof NODES, namespace?: string): Promise<KObject[]> {
  const items: KObject[] = [];
  let cont: string | undefined;
  do {
    const page = await client.list(r, {
      ...(namespace === undefined ? {} : { namespace }),
      limit: 500,
      ...(cont === undefined ? {} : { continue: cont }),
    });
    items.push(...page.items);
    cont = page.metadata.continue;
  } while (cont !== undefined && cont !== '');
  return items;
}

/** Runs fn over items with at most `limit` in flight; the first failure is thrown after all settle. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && failure === undefined) {
      const i = next++;
      try {
        await fn(items[i]!, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== undefined) throw failure.err;
}
