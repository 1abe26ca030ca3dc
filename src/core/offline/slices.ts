// The offline rewrite of one Service's served EndpointSlices from its node's kubelet (the wrapper, while
// the upstream API server is away: docs/wrapper.md, "Offline: the node's own pods"). In upstream's terms
// (pkg/controller/endpointslice, staging/src/k8s.io/endpointslice/utils.go podToEndpoint and
// getEndpointPorts, pkg/api/v1/pod FindPort), for the endpoints whose targetRef is a Pod on this node:
//   - the pod still in the kubelet's list: its current IPs of the slice's addressType, serving = Ready,
//     terminating = deletionTimestamp set, ready = publishNotReadyAddresses || (serving && !terminating);
//   - the pod gone from the list, terminal (Succeeded/Failed), or without an IP of the addressType: dropped;
//   - the pod's ports now resolving otherwise (a named targetPort): moved to a slice of those ports;
//   - a pod of this node the Service selects and none of its slices names: added to the Service's slice of
//     the same addressType and resolved ports (the first by name), or, when there is none, to a slice of
//     its own (managed-by OFFLINE_MANAGED_BY), which goes away with its last endpoint.
// Endpoints of other nodes stay as they are. A slice whose endpoints change gets the OFFLINE_ANNOTATION
// mark, and keeps it (its `since` too) on later rewrites: rewriting a rewritten slice gives it back
// unchanged, and the rewrite of slices the pods agree with is the identity.
import type { KObject } from '../../api/object.js';
import { hash53 } from '../hash.js';
import { isPodTerminal } from '../endpoints/pod-address.js';
import { selectsPod } from '../endpoints/endpoints.js';
import { compareBytes, list, rec, str, stringMap } from '../endpoints/read.js';
import type { Pod, Service } from '../endpoints/types.js';
import { addressTypesForService } from '../endpointslices/address.js';
import {
  endpointKey,
  endpointsEqualBeyondHash,
  podToEndpoint,
  readEndpoint,
} from '../endpointslices/endpoint.js';
import { endpointPorts, portMapKey } from '../endpointslices/ports.js';
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  type AddressType,
  type EndpointConditions,
} from '../endpointslices/types.js';
import { OFFLINE_MANAGED_BY, isLocalPodRef, readOfflineMark, refKey, withOfflineMark } from './mark.js';

/** What every offline rewrite reads besides the objects. */
export interface OfflineContext {
  /** This node: the endpoints with this nodeName and a Pod targetRef are rewritten. */
  readonly node: string;
  /** The kubelet's pods of this node, by `namespace/name` (pod-list.ts). */
  readonly pods: ReadonlyMap<string, Pod>;
  /** When rewriting began (RFC 3339): the `since` of a new mark. */
  readonly since: string;
}

export interface ServiceSlicesInput {
  readonly namespace: string;
  /** The Service's name (its slices' kubernetes.io/service-name). */
  readonly service: string;
  /** The Service as served, or undefined when it is not known (then no pod is added or moved). */
  readonly object: Service | undefined;
  /** Every served slice of the Service. */
  readonly slices: readonly KObject[];
}

/**
 * The rewritten slices by name: every input slice (the same object when unchanged), and any created one;
 * null: the slice is to be deleted (a created slice left without endpoints).
 */
export function rewriteServiceSlices(
  input: ServiceSlicesInput,
  ctx: OfflineContext,
): Map<string, KObject | null> {
  const svc: Service = input.object ?? {
    metadata: { namespace: input.namespace, name: input.service },
    spec: {},
  };
  const named = new Set<string>();
  for (const s of input.slices) for (const e of list(s['endpoints'])) named.add(refKey(e));
  const work = input.slices.map((s) => ({
    slice: s,
    endpoints: list(s['endpoints']) as unknown[],
    touched: false,
  }));
  /** Pods to place in the slice of their ports: `namespace/name` → address types. */
  const toPlace = new Map<string, Set<AddressType>>();
  const place = (key: string, t: AddressType) => {
    const types = toPlace.get(key) ?? new Set<AddressType>();
    types.add(t);
    toPlace.set(key, types);
  };
  for (const w of work) {
    const t = str(w.slice['addressType']) as AddressType;
    const portsKey = portMapKey(w.slice['ports']);
    const out: unknown[] = [];
    for (const raw of w.endpoints) {
      if (!isLocalPodRef(raw, ctx.node)) {
        out.push(raw);
        continue;
      }
      const pod = ctx.pods.get(refKey(raw));
      const next = pod === undefined || isPodTerminal(pod) ? undefined : rewritten(raw, pod, svc, t);
      if (
        next !== undefined &&
        input.object !== undefined &&
        portMapKey(endpointPorts(svc, pod!)) !== portsKey
      ) {
        place(refKey(raw), t);
        w.touched = true;
        continue;
      }
      if (next !== raw) w.touched = true;
      if (next !== undefined) out.push(next);
    }
    w.endpoints = out;
  }
  if (input.object !== undefined) {
    const types = addressTypesForService(svc);
    for (const [key, pod] of ctx.pods) {
      if (named.has(key) || isPodTerminal(pod) || !selectsPod(svc, pod)) continue;
      for (const t of types) place(key, t);
    }
  }
  const created = new Map<string, { slice: KObject; endpoints: unknown[]; touched: boolean }>();
  for (const key of [...toPlace.keys()].sort(compareBytes)) {
    const pod = ctx.pods.get(key)!;
    for (const t of toPlace.get(key)!) {
      const e = podToEndpoint(pod, undefined, svc, t);
      if (e.addresses.length === 0) continue;
      const ports = endpointPorts(svc, pod);
      const portsKey = portMapKey(ports);
      const fits = (s: KObject) => str(s['addressType']) === t && portMapKey(s['ports']) === portsKey;
      const target =
        work
          .filter((w) => fits(w.slice))
          .sort((a, b) => compareBytes(str(a.slice.metadata.name), str(b.slice.metadata.name)))[0] ??
        created.get(createdName(input.service, t, portsKey)) ??
        newSlice(input, t, ports, portsKey, created);
      target.endpoints.push(e);
      target.touched = true;
    }
  }
  const result = new Map<string, KObject | null>();
  for (const w of [...work, ...created.values()]) {
    const name = str(w.slice.metadata.name);
    const createdHere = stringMap(w.slice.metadata.labels)[LABEL_MANAGED_BY] === OFFLINE_MANAGED_BY;
    if (createdHere && w.endpoints.length === 0) {
      result.set(name, null);
      continue;
    }
    const had = readOfflineMark(w.slice);
    if (!w.touched && had === undefined) {
      result.set(name, w.slice);
      continue;
    }
    const endpoints = w.endpoints.filter((e) => isLocalPodRef(e, ctx.node)).length;
    const body = w.touched ? { ...w.slice, endpoints: w.endpoints } : w.slice;
    result.set(
      name,
      had !== undefined && !w.touched && had.endpoints === endpoints
        ? w.slice
        : withOfflineMark(body, { since: had?.since ?? ctx.since, endpoints }),
    );
  }
  return result;
}

/** The endpoint for the pod now: `raw` itself when nothing it says changed; undefined: no IP of `t`. */
function rewritten(raw: unknown, pod: Pod, svc: Service, t: AddressType): unknown {
  const fresh = podToEndpoint(pod, undefined, svc, t);
  if (fresh.addresses.length === 0) return undefined;
  const old = readEndpoint(raw);
  if (sameConditions(old.conditions, fresh.conditions)) fresh.conditions = old.conditions;
  if (old.zone !== undefined) fresh.zone = old.zone;
  if (old.hostname !== undefined && fresh.hostname === undefined) fresh.hostname = old.hostname;
  if (endpointKey(old) === endpointKey(fresh) && endpointsEqualBeyondHash(old, fresh)) return raw;
  const r = rec(raw);
  const uid = str(pod.metadata.uid);
  return {
    ...r,
    addresses: fresh.addresses,
    conditions: fresh.conditions,
    targetRef: { ...rec(r['targetRef']), ...(uid === '' ? {} : { uid }) },
  };
}

/**
 * Whether two endpoints' conditions say the same, an absent one read as the API documents it: ready as
 * true, serving as ready, terminating as false (a slice another controller wrote may leave them out).
 */
function sameConditions(a: EndpointConditions, b: EndpointConditions): boolean {
  const read = (c: EndpointConditions) => {
    const ready = c.ready ?? true;
    return [ready, c.serving ?? ready, c.terminating ?? false].join();
  };
  return read(a) === read(b);
}

/** The name of the slice the rewrite creates for a Service, address type and port set: stable across runs. */
const createdName = (service: string, t: AddressType, portsKey: string): string =>
  `${service}-offline-${t === 'IPv6' ? 'v6' : 'v4'}-${hash53(portsKey).toString(36)}`;

function newSlice(
  input: ServiceSlicesInput,
  t: AddressType,
  ports: unknown[],
  portsKey: string,
  created: Map<string, { slice: KObject; endpoints: unknown[]; touched: boolean }>,
): { slice: KObject; endpoints: unknown[]; touched: boolean } {
  const name = createdName(input.service, t, portsKey);
  const slice: KObject = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: input.namespace,
      labels: { [LABEL_SERVICE_NAME]: input.service, [LABEL_MANAGED_BY]: OFFLINE_MANAGED_BY },
    },
    addressType: t,
    endpoints: [],
    ports,
  };
  const w = { slice, endpoints: [], touched: true };
  created.set(name, w);
  return w;
}
