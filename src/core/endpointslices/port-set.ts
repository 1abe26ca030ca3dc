// One Service's slices, one port set at a time (reconcileByPortMapping in upstream's reconciler.go): the
// labels and owner a slice carries, and how the endpoints still desired are kept in place, fill the
// slices being updated, then one untouched slice that can take them all, then new slices. The rules and
// the ordering are described at the top of reconcile.ts.
import { sameStringMap } from '../../api/json.js';
import type { KObject } from '../../api/object.js';
import { isDNS1123Subdomain } from '../../api/validation/names.js';
import { isServiceIPSet } from '../endpoints/pod-address.js';
import { compareBytes, list, rec, str, stringMap } from '../endpoints/read.js';
import {
  compareEndpoints,
  copyEndpoint,
  endpointKey,
  endpointsEqualBeyondHash,
  readEndpoint,
} from './endpoint.js';
import { readPorts } from './ports.js';
import { copySlice } from './slice-info.js';
import type { ZoneRatios } from './topology-hints.js';
import {
  LABEL_HEADLESS,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  type AddressType,
  type Endpoint,
  type EndpointSlice,
  type EndpointSlicePort,
  type Node,
  type PlanEvent,
  type Pod,
  type Service,
} from './types.js';

/**
 * The generateName of new slices: `<service>-`, or the bare Service name when that is not a valid name
 * prefix (apimachinery's NameIsDNSSubdomain with prefix=true, which checks the prefix with its last two
 * characters replaced by "a"). For any valid Service name this is `<service>-`.
 */
export function endpointSlicePrefix(serviceName: string): string {
  const prefix = `${serviceName}-`;
  return isDNS1123Subdomain(`${prefix.slice(0, -2)}a`).length === 0 ? prefix : serviceName;
}

const RESERVED_LABELS = new Set([LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS]);

function withoutReserved(labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (!RESERVED_LABELS.has(k)) out[k] = v;
  return out;
}

export const sliceName = (slice: KObject): string => str(rec(slice.metadata)['name']);
export const byName = (a: KObject, b: KObject): number => compareBytes(sliceName(a), sliceName(b));

/** Everything one sync needs, computed once. */
export interface Context {
  readonly service: Service;
  readonly namespace: string;
  readonly name: string;
  readonly pods: readonly Pod[];
  readonly nodesByName: ReadonlyMap<string, Node>;
  readonly nodes: readonly Node[];
  readonly max: number;
  readonly controllerName: string;
  readonly publishNotReady: boolean;
  readonly errors: Set<string>;
  readonly events: PlanEvent[];
  ratios: ZoneRatios | undefined | null; // null: not computed yet
  /** Topology Aware Hints allocated for the Service (see PlanEndpointSlicesInput.hintsPopulated). */
  hintsPopulated: boolean;
}

/**
 * The labels a slice of this Service carries, and whether the slice's current labels differ from the
 * Service's in a way that warrants an update (setEndpointSliceLabels): the Service's labels minus the
 * reserved keys, plus the headless label when the Service has no cluster IP, plus service-name and
 * managed-by. Only the non-reserved labels are compared, as upstream: a stale headless label alone never
 * causes a write.
 */
export function sliceLabels(
  ctx: Context,
  current: unknown,
): { labels: Record<string, string>; changed: boolean } {
  const fromService = withoutReserved(stringMap(ctx.service.metadata.labels));
  const changed = !sameStringMap(withoutReserved(stringMap(current)), fromService);
  const labels = { ...fromService };
  if (!isServiceIPSet(ctx.service)) labels[LABEL_HEADLESS] = '';
  labels[LABEL_SERVICE_NAME] = ctx.name;
  labels[LABEL_MANAGED_BY] = ctx.controllerName;
  return { labels, changed };
}

export function newSlice(
  ctx: Context,
  addressType: AddressType,
  ports: readonly EndpointSlicePort[],
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: endpointSlicePrefix(ctx.name),
      namespace: ctx.namespace,
      labels: sliceLabels(ctx, undefined).labels,
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name: ctx.name,
          uid: str(ctx.service.metadata.uid),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports: ports.map((p) => ({ ...p })),
  };
}

/** Owned by this Service: an ownerReference v1/Service with its uid. */
export function ownedBy(slice: KObject, service: Service): boolean {
  const uid = str(service.metadata.uid);
  return list(rec(slice.metadata)['ownerReferences']).some((o) => {
    const ref = rec(o);
    return ref['uid'] === uid && ref['kind'] === 'Service' && ref['apiVersion'] === 'v1';
  });
}

/** A typed working copy of an existing slice: endpoints and ports read defensively. */
export function readSlice(raw: KObject): EndpointSlice {
  const copy = structuredClone(raw);
  return {
    ...copy,
    metadata: rec(copy.metadata),
    addressType: str(copy['addressType']),
    endpoints: list(copy['endpoints']).map(readEndpoint),
    ports: readPorts(copy['ports']),
  };
}

/** What one port set's slices need. */
export interface PortMappingResult {
  readonly toCreate: EndpointSlice[];
  readonly toUpdate: EndpointSlice[];
  readonly toDelete: EndpointSlice[];
}

/** Index of the slice that `count` more endpoints leave closest to full without passing `max` (getSliceToFill). */
function sliceToFill(slices: readonly EndpointSlice[], count: number, max: number): number {
  let closest = max;
  let found = -1;
  for (const [i, slice] of slices.entries()) {
    const diff = max - (count + slice.endpoints.length);
    if (diff >= 0 && diff < closest) {
      [closest, found] = [diff, i];
      if (diff === 0) break;
    }
  }
  return found;
}

/** reconcileByPortMapping: existing slices of one port set (sorted by name) against its desired endpoints. */
export function reconcilePortSet(
  ctx: Context,
  addressType: AddressType,
  existing: readonly EndpointSlice[],
  ports: readonly EndpointSlicePort[],
  desired: ReadonlyMap<string, Endpoint>,
): PortMappingResult {
  const left = new Map(desired);
  const unchanged: EndpointSlice[] = [];
  const toUpdate = new Map<string, EndpointSlice>();
  const toDelete: EndpointSlice[] = [];

  // 1. Keep the endpoints still desired, in their desired version.
  for (const slice of existing) {
    const kept: Endpoint[] = [];
    let changed = false;
    for (const endpoint of slice.endpoints) {
      const key = endpointKey(endpoint);
      const want = left.get(key);
      if (want === undefined) continue;
      kept.push(copyEndpoint(want));
      if (!endpointsEqualBeyondHash(want, endpoint)) changed = true;
      left.delete(key);
    }
    const { labels, changed: labelsChanged } = sliceLabels(ctx, rec(slice.metadata)['labels']);
    const relabelled = (): EndpointSlice => {
      const copy = copySlice(slice);
      return { ...copy, metadata: { ...copy.metadata, labels } };
    };
    if (changed || kept.length !== slice.endpoints.length) {
      if (kept.length === 0) toDelete.push(slice);
      else toUpdate.set(sliceName(slice), { ...relabelled(), endpoints: kept });
    } else if (labelsChanged) {
      toUpdate.set(sliceName(slice), relabelled());
    } else {
      unchanged.push(slice);
    }
  }

  const remaining = [...left.values()].sort(compareEndpoints);
  let next = 0;
  const fill = (slice: EndpointSlice): void => {
    while (next < remaining.length && slice.endpoints.length < ctx.max) {
      slice.endpoints.push(copyEndpoint(remaining[next++]!));
    }
  };

  // 2. Fill the slices being updated anyway, fullest first.
  if (remaining.length > 0) {
    const fullestFirst = [...toUpdate.values()].sort(
      (a, b) => b.endpoints.length - a.endpoints.length || byName(a, b),
    );
    for (const slice of fullestFirst) fill(slice);
  }

  // 3. What is left goes into one untouched slice that can take all of it, or into new slices.
  const toCreate: EndpointSlice[] = [];
  while (next < remaining.length) {
    const count = remaining.length - next;
    const i = count < ctx.max ? sliceToFill(unchanged, count, ctx.max) : -1;
    let target: EndpointSlice;
    if (i === -1) {
      target = newSlice(ctx, addressType, ports);
      toCreate.push(target);
    } else {
      target = copySlice(unchanged.splice(i, 1)[0]!);
      toUpdate.set(sliceName(target), target);
    }
    fill(target);
  }

  const sortEndpoints = (slice: EndpointSlice): EndpointSlice => {
    slice.endpoints.sort(compareEndpoints);
    return slice;
  };
  return {
    toCreate: toCreate.map(sortEndpoints),
    toUpdate: [...toUpdate.values()].sort(byName).map(sortEndpoints),
    toDelete,
  };
}
