// The canonical form of Endpoints subsets, and semantic equality between two lists of subsets. In
// behaviour like kubernetes' pkg/api/v1/endpoints/util.go (RepackSubsets, SortSubsets, LessEndpointAddress):
//   - every (address, port) pair is exploded; a subset without ports keeps its addresses under a "no port"
//     sentinel, so a headless Service without ports still publishes them;
//   - an address is identified by (ip, targetRef.uid); the first record seen for that identity is kept;
//   - per port, an address listed both ready and not ready is not ready ("not ready always trumps ready");
//   - ports are grouped by identical sets of (address, ready), and each group becomes one subset. A
//     portless group whose addresses equal a ported group's merges into it and loses its sentinel.
//   - addresses and notReadyAddresses are sorted by IP as raw bytes ("10.0.0.10" < "10.0.0.2"), then by
//     targetRef.uid, an address without targetRef first.
// Upstream orders ports and subsets by a hash, which is deterministic but opaque. OUR canonical order:
// ports by (name, port, protocol, appProtocol); subsets by their sorted ready addresses compared element by
// element (a prefix first), then by their not-ready addresses the same way. Group sets are distinct, so this
// is a total order. Callers that compare against objects another controller wrote must not rely on it:
// endpointSubsetsEqual ignores subset and port order.
import { isPlainObject } from '../../api/json.js';
import { copyObjectReference, int, list, optStr, rec, str, compareBytes } from './read.js';
import type { EndpointAddress, EndpointPort, EndpointSubset } from './types.js';

/** A clean copy of an address read from JSON: only known fields, each with its declared type. */
function copyAddress(v: unknown): EndpointAddress {
  const a = rec(v);
  const out: EndpointAddress = { ip: str(a['ip']) };
  const hostname = str(a['hostname']);
  if (hostname !== '') out.hostname = hostname;
  const nodeName = optStr(a['nodeName']);
  if (nodeName !== undefined) out.nodeName = nodeName;
  const ref = a['targetRef'];
  if (isPlainObject(ref)) {
    out.targetRef = copyObjectReference(rec(ref));
  }
  return out;
}

function copyPort(v: unknown): EndpointPort | undefined {
  const p = rec(v);
  const port = int(p['port']);
  if (port === undefined || port <= 0) return undefined;
  const name = str(p['name']);
  const protocol = str(p['protocol']);
  const appProtocol = optStr(p['appProtocol']);
  return {
    ...(name === '' ? {} : { name }),
    port,
    ...(protocol === '' ? {} : { protocol }),
    ...(appProtocol === undefined ? {} : { appProtocol }),
  };
}

/** The identity repacking de-duplicates by. */
const addressKey = (a: EndpointAddress): string => JSON.stringify([a.ip, a.targetRef?.uid ?? '']);

const portKey = (p: EndpointPort): string =>
  JSON.stringify([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? null]);

/** LessEndpointAddress as a comparator: IP bytes, then targetRef.uid with no targetRef first. */
export function compareEndpointAddresses(a: EndpointAddress, b: EndpointAddress): number {
  const byIP = compareBytes(a.ip, b.ip);
  if (byIP !== 0) return byIP;
  if (a.targetRef === undefined) return b.targetRef === undefined ? 0 : -1;
  if (b.targetRef === undefined) return 1;
  return compareBytes(a.targetRef.uid ?? '', b.targetRef.uid ?? '');
}

export function compareEndpointPorts(a: EndpointPort, b: EndpointPort): number {
  return (
    compareBytes(a.name ?? '', b.name ?? '') ||
    a.port - b.port ||
    compareBytes(a.protocol ?? '', b.protocol ?? '') ||
    compareBytes(a.appProtocol ?? '', b.appProtocol ?? '')
  );
}

function compareAddressLists(a: readonly EndpointAddress[], b: readonly EndpointAddress[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareEndpointAddresses(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareSubsets(a: EndpointSubset, b: EndpointSubset): number {
  return (
    compareAddressLists(a.addresses ?? [], b.addresses ?? []) ||
    compareAddressLists(a.notReadyAddresses ?? [], b.notReadyAddresses ?? [])
  );
}

/** Ready state of each address (by key) that offers one port. */
type AddressSet = Map<string, boolean>;

/**
 * Repacks subsets into the canonical form described at the top of this file. The input is read defensively
 * and never mutated; the output shares no objects with it.
 */
export function repackSubsets(subsets: readonly EndpointSubset[] | null | undefined): EndpointSubset[] {
  const addresses = new Map<string, EndpointAddress>();
  // Port key → the port (undefined: the "no port" sentinel) and the addresses offering it.
  const byPort = new Map<string, { port: EndpointPort | undefined; set: AddressSet }>();

  const record = (raw: unknown, portId: string, port: EndpointPort | undefined, ready: boolean): void => {
    if (typeof raw !== 'object' || raw === null) return;
    const addr = copyAddress(raw);
    const key = addressKey(addr);
    if (!addresses.has(key)) addresses.set(key, addr);
    let entry = byPort.get(portId);
    if (entry === undefined) byPort.set(portId, (entry = { port, set: new Map() }));
    // Not ready always trumps ready: only an unseen or ready entry is (over)written.
    if (entry.set.get(key) !== false) entry.set.set(key, ready);
  };

  for (const rawSubset of list(subsets)) {
    const s = rec(rawSubset);
    const ports = list(s['ports']).map(copyPort);
    const targets = ports.length === 0 ? [undefined] : ports;
    for (const port of targets) {
      const portId = port === undefined ? '' : portKey(port);
      for (const a of list(s['addresses'])) record(a, portId, port, true);
      for (const a of list(s['notReadyAddresses'])) record(a, portId, port, false);
    }
  }

  // Group the ports by identical address sets.
  const groups = new Map<string, { set: AddressSet; ports: EndpointPort[] }>();
  for (const { port, set } of byPort.values()) {
    const id = JSON.stringify([...set].sort(([x], [y]) => compareBytes(x, y)));
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = { set, ports: [] }));
    if (port !== undefined) group.ports.push(port);
  }

  const out: EndpointSubset[] = [];
  for (const { set, ports } of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [key, isReady] of set) {
      const addr = structuredCopy(addresses.get(key)!);
      (isReady ? ready : notReady).push(addr);
    }
    const subset: EndpointSubset = {};
    if (ready.length > 0) subset.addresses = ready.sort(compareEndpointAddresses);
    if (notReady.length > 0) subset.notReadyAddresses = notReady.sort(compareEndpointAddresses);
    if (ports.length > 0) subset.ports = ports.sort(compareEndpointPorts);
    out.push(subset);
  }
  return out.sort(compareSubsets);
}

/** A copy, so that one address shared by several subsets is not one object in the output. */
const structuredCopy = (a: EndpointAddress): EndpointAddress => ({
  ...a,
  ...(a.targetRef === undefined ? {} : { targetRef: { ...a.targetRef } }),
});

// ---- semantic equality ------------------------------------------------------------------------------

/** An address as compared: targetRef.resourceVersion ignored, "" and absent the same for string fields. */
function addressIdentity(v: unknown): unknown[] {
  const a = rec(v);
  const ref = a['targetRef'];
  const r = rec(ref);
  return [
    str(a['ip']),
    str(a['hostname']),
    str(a['nodeName']),
    typeof ref === 'object' && ref !== null
      ? [
          str(r['kind']),
          str(r['namespace']),
          str(r['name']),
          str(r['uid']),
          str(r['apiVersion']),
          str(r['fieldPath']),
        ]
      : null,
  ];
}

/** A port as compared: an empty protocol is TCP (as defaulting would make it). */
function portIdentity(v: unknown): string {
  const p = rec(v);
  return JSON.stringify([
    str(p['name']),
    p['port'] ?? null,
    str(p['protocol']) || 'TCP',
    str(p['appProtocol']),
  ]);
}

function subsetIdentity(v: unknown): string {
  const s = rec(v);
  return JSON.stringify([
    list(s['addresses']).map(addressIdentity),
    list(s['notReadyAddresses']).map(addressIdentity),
    list(s['ports']).map(portIdentity).sort(compareBytes),
  ]);
}

/**
 * Semantic equality of two subset lists, as the no-op check needs it (upstream:
 * EndpointSubsetsEqualIgnoreResourceVersion): targetRef.resourceVersion is ignored, absent and empty lists
 * are equal, and so are absent and empty strings. The order of subsets and of ports is ignored (upstream
 * orders them by an opaque hash); the order of addresses counts, because it is specified (sorted).
 */
export function endpointSubsetsEqual(
  a: readonly EndpointSubset[] | null | undefined,
  b: readonly EndpointSubset[] | null | undefined,
): boolean {
  const left = list(a).map(subsetIdentity).sort(compareBytes);
  const right = list(b).map(subsetIdentity).sort(compareBytes);
  return left.length === right.length && left.every((x, i) => x === right[i]);
}
