// One Pod as one EndpointSlice endpoint, the identity by which an endpoint is matched across syncs, and the
// comparison deciding whether a matched endpoint changed. In behaviour like podToEndpoint in kubernetes'
// staging/src/k8s.io/endpointslice/utils.go and hashEndpoint / EndpointsEqualBeyondHash in its util/.
import { isPlainObject } from '../../api/json.js';
import { isPodReady, shouldSetHostname } from '../endpoints/pod-address.js';
import { compareBytes, copyObjectReference, list, rec, str, stringMap } from '../endpoints/read.js';
import type { ObjectReference } from '../endpoints/types.js';
import { endpointAddresses } from './address.js';
import {
  LABEL_TOPOLOGY_ZONE,
  type AddressType,
  type Endpoint,
  type EndpointConditions,
  type EndpointHints,
  type Node,
  type Pod,
  type Service,
} from './types.js';

/**
 * The endpoint for a pod in a slice of `addressType`; `addresses` is empty when the pod has no IP of that
 * type (the caller then leaves it out).
 *   - serving = the pod is Ready; terminating = it has a deletionTimestamp;
 *   - ready = publishNotReadyAddresses || (serving && !terminating): a terminating pod is never ready
 *     unless the Service publishes not-ready addresses;
 *   - nodeName when the pod is scheduled; zone from the node's topology.kubernetes.io/zone label when
 *     the node is known and the label is non-empty; hostname when the pod's subdomain is this Service.
 */
export function podToEndpoint(
  pod: Pod,
  node: Node | undefined,
  service: Service,
  addressType: AddressType,
): Endpoint {
  const serving = isPodReady(pod);
  const deletion = pod.metadata.deletionTimestamp as unknown;
  const terminating = deletion !== undefined && deletion !== null;
  const ready = rec(service.spec)['publishNotReadyAddresses'] === true || (serving && !terminating);
  const endpoint: Endpoint = {
    addresses: endpointAddresses(pod, addressType),
    conditions: { ready, serving, terminating },
  };
  const spec = rec(pod.spec);
  if (shouldSetHostname(pod, service)) endpoint.hostname = str(spec['hostname']);
  endpoint.targetRef = {
    kind: 'Pod',
    namespace: str(pod.metadata.namespace),
    name: str(pod.metadata.name),
    uid: str(pod.metadata.uid),
  };
  const nodeName = str(spec['nodeName']);
  if (nodeName !== '') endpoint.nodeName = nodeName;
  const zone = node === undefined ? '' : (stringMap(node.metadata.labels)[LABEL_TOPOLOGY_ZONE] ?? '');
  if (zone !== '') endpoint.zone = zone;
  return endpoint;
}

/** Ready means conditions.ready is true; absent counts as not ready here (upstream's EndpointReady). */
export const isEndpointReady = (endpoint: Endpoint): boolean => endpoint.conditions.ready === true;

/**
 * The identity an endpoint keeps across syncs (upstream's endpoint hash): its sorted addresses, hostname
 * and targetRef namespace/name. A pod whose IP changes is a different endpoint; a pod whose readiness,
 * node or zone changes is the same endpoint, changed (see endpointsEqualBeyondHash).
 */
export function endpointKey(endpoint: Endpoint): string {
  return JSON.stringify([
    [...endpoint.addresses].sort(compareBytes),
    endpoint.hostname ?? '',
    endpoint.targetRef?.namespace ?? '',
    endpoint.targetRef?.name ?? '',
  ]);
}

const refIdentity = (ref: ObjectReference | undefined): string | undefined =>
  ref === undefined
    ? undefined
    : JSON.stringify([ref.kind, ref.namespace, ref.name, ref.uid, ref.apiVersion, ref.fieldPath]);

/**
 * Whether two endpoints with the same endpointKey are the same beyond it: nodeName, zone, the three
 * conditions and targetRef (its resourceVersion ignored). Hints are not compared: they are recomputed.
 */
export function endpointsEqualBeyondHash(a: Endpoint, b: Endpoint): boolean {
  return (
    (a.nodeName ?? '') === (b.nodeName ?? '') &&
    (a.zone ?? '') === (b.zone ?? '') &&
    a.conditions.ready === b.conditions.ready &&
    a.conditions.serving === b.conditions.serving &&
    a.conditions.terminating === b.conditions.terminating &&
    refIdentity(a.targetRef) === refIdentity(b.targetRef)
  );
}

/**
 * The order of endpoints inside every slice this module writes: by addresses (as raw bytes, element by
 * element, as Endpoints sorts IPs), then targetRef namespace and name, then hostname. Endpoints of one
 * slice have distinct keys, so this is a total order there.
 */
export function compareEndpoints(a: Endpoint, b: Endpoint): number {
  const n = Math.min(a.addresses.length, b.addresses.length);
  for (let i = 0; i < n; i++) {
    const c = compareBytes(a.addresses[i]!, b.addresses[i]!);
    if (c !== 0) return c;
  }
  return (
    a.addresses.length - b.addresses.length ||
    compareBytes(a.targetRef?.namespace ?? '', b.targetRef?.namespace ?? '') ||
    compareBytes(a.targetRef?.name ?? '', b.targetRef?.name ?? '') ||
    compareBytes(a.hostname ?? '', b.hostname ?? '')
  );
}

// ---- reading endpoints from JSON ---------------------------------------------------------------------

function readRef(v: unknown): ObjectReference | undefined {
  return isPlainObject(v) ? copyObjectReference(v) : undefined;
}

const names = (v: unknown): { name: string }[] =>
  list(v)
    .map((x) => str(rec(x)['name']))
    .filter((n) => n !== '')
    .map((name) => ({ name }));

/** Hints as read; a hints object with neither list reads as `{}` (present but empty). */
function readHints(v: unknown): EndpointHints | undefined {
  if (!isPlainObject(v)) return undefined;
  const out: EndpointHints = {};
  const zones = names(v['forZones']);
  const nodes = names(v['forNodes']);
  if (zones.length > 0) out.forZones = zones;
  if (nodes.length > 0) out.forNodes = nodes;
  return out;
}

/** A clean copy of an endpoint read from JSON: known fields only, each with its declared type. */
export function readEndpoint(v: unknown): Endpoint {
  const e = rec(v);
  const c = rec(e['conditions']);
  const conditions: EndpointConditions = {};
  for (const k of ['ready', 'serving', 'terminating'] as const) {
    const x = c[k];
    if (typeof x === 'boolean') conditions[k] = x;
  }
  const out: Endpoint = {
    addresses: list(e['addresses']).filter((a): a is string => typeof a === 'string'),
    conditions,
  };
  const hostname = str(e['hostname']);
  if (hostname !== '') out.hostname = hostname;
  const targetRef = readRef(e['targetRef']);
  if (targetRef !== undefined) out.targetRef = targetRef;
  if (isPlainObject(e['deprecatedTopology'])) out.deprecatedTopology = stringMap(e['deprecatedTopology']);
  const nodeName = str(e['nodeName']);
  if (nodeName !== '') out.nodeName = nodeName;
  const zone = str(e['zone']);
  if (zone !== '') out.zone = zone;
  const hints = readHints(e['hints']);
  if (hints !== undefined) out.hints = hints;
  return out;
}

/** A deep copy of an endpoint (this module's own values only: plain JSON). */
export const copyEndpoint = (e: Endpoint): Endpoint => structuredClone(e);
