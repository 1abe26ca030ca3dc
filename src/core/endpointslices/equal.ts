// Semantic equality of two EndpointSlices, over what this controller owns: the comparison that keeps a
// planned update that would change nothing from being written.
import { sameStringMap } from '../../api/json.js';
import { compareBytes, list, rec, str, stringMap } from '../endpoints/read.js';
import { readEndpoint } from './endpoint.js';
import { portIdentity } from './ports.js';

function endpointIdentity(v: unknown): string {
  const e = readEndpoint(v);
  const ref = e.targetRef;
  const topology = Object.entries(e.deprecatedTopology ?? {}).sort(([a], [b]) => compareBytes(a, b));
  return JSON.stringify([
    e.addresses,
    [e.conditions.ready ?? null, e.conditions.serving ?? null, e.conditions.terminating ?? null],
    e.hostname ?? '',
    ref === undefined
      ? null
      : [
          ref.kind ?? '',
          ref.namespace ?? '',
          ref.name ?? '',
          ref.uid ?? '',
          ref.apiVersion ?? '',
          ref.fieldPath ?? '',
        ],
    topology,
    e.nodeName ?? '',
    e.zone ?? '',
    (e.hints?.forZones ?? []).map((z) => z.name),
    (e.hints?.forNodes ?? []).map((n) => n.name),
  ]);
}

function ownerIdentity(v: unknown): string {
  const o = rec(v);
  return JSON.stringify([
    str(o['apiVersion']),
    str(o['kind']),
    str(o['name']),
    str(o['uid']),
    o['controller'] === true,
    o['blockOwnerDeletion'] === true,
  ]);
}

const sortedIdentities = (v: unknown, identity: (x: unknown) => string): string[] =>
  list(v).map(identity).sort(compareBytes);

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Whether two slices are the same as far as this controller is concerned:
 *   - addressType, labels and ownerReferences (in any order) are equal;
 *   - the ports are equal as a multiset (an absent protocol is TCP, "" and absent names are equal);
 *   - the endpoints are equal as a multiset — the order of endpoints carries no meaning — each compared
 *     on addresses (in order: consumers use the first), conditions, hostname, targetRef (resourceVersion
 *     ignored), deprecatedTopology, nodeName, zone and hints. "" and absent strings are equal, and so are
 *     an empty and an absent hint list; an absent condition differs from false.
 * Annotations and bookkeeping metadata (name, resourceVersion, uid, managedFields, ...) are not compared:
 * the only annotation the controller writes is the trigger time, which alone never warrants a write.
 * Inputs are read defensively, as JSON.
 */
export function endpointSlicesEqual(a: unknown, b: unknown): boolean {
  const x = rec(a);
  const y = rec(b);
  const mx = rec(x['metadata']);
  const my = rec(y['metadata']);
  return (
    str(x['addressType']) === str(y['addressType']) &&
    sameStringMap(stringMap(mx['labels']), stringMap(my['labels'])) &&
    sameList(
      sortedIdentities(mx['ownerReferences'], ownerIdentity),
      sortedIdentities(my['ownerReferences'], ownerIdentity),
    ) &&
    sameList(sortedIdentities(x['ports'], portIdentity), sortedIdentities(y['ports'], portIdentity)) &&
    sameList(
      sortedIdentities(x['endpoints'], endpointIdentity),
      sortedIdentities(y['endpoints'], endpointIdentity),
    )
  );
}
