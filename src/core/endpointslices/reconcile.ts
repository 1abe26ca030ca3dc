// The pure half of the EndpointSlice controller: from a Service, its pods, the nodes and the slices that
// exist now, the slices to create, update and delete. In behaviour like syncService's checks and the
// Reconciler (Reconcile, reconcileByAddressType, reconcileByPortMapping, finalize) in kubernetes'
// staging/src/k8s.io/endpointslice/ (reconciler.go, utils.go). The caller lists, writes (filling in names
// for `metadata.generateName`), records events and requeues on errors.
//
// Rules, per address type of the Service (IPv4 then IPv6):
//   - slices of this Service managed by this controller whose owner is not this Service (an older Service
//     of the same name) are deleted; so are slices of an address type the Service no longer has;
//   - desired endpoints come from the pods that should be in endpoints, terminating ones included (with
//     their conditions), grouped by the ports they resolve; a pod on an unknown node is left out and
//     reported in `errors` (the caller should retry), unless the Service publishes not-ready addresses;
//   - churn is kept low: an existing slice keeps the endpoints still desired (in their new version:
//     conditions, node, zone); a slice that lost all of them is deleted, one whose endpoints changed is
//     updated, one whose Service labels changed is updated, and the rest are left alone. Remaining endpoints first fill the slices being
//     updated (fullest first), then — when fewer than maxEndpointsPerSlice remain — the untouched slice
//     they leave closest to full, if one can take them all; then new slices are created. Slices are never
//     merged or re-packed beyond that (as upstream);
//   - a port set no longer desired loses its slices; when no slice would remain, one placeholder slice
//     with no endpoints and no ports is created (or an identical one kept);
//   - hints: topology-mode Auto (allocateHints) wins over trafficDistribution, which applies only when the
//     annotation does not enable hints; with neither, hints are removed;
//   - a slice that would be created while another of the same address type and owner is deleted is
//     written over the deleted one (an update reusing its name) instead;
//   - nothing is created while the Service is being deleted;
//   - an update equal to the existing slice (endpointSlicesEqual) is dropped.
// ExternalName Services and Services without a selector are skipped entirely: their slices, if any, are
// not this controller's business (upstream leaves them in place too).
//
// Ordering (deterministic whatever the order of the inputs):
//   - endpoints inside every created or updated slice are sorted by compareEndpoints (addresses as bytes,
//     then targetRef namespace/name, then hostname); endpoints are also handed out to slices in that order;
//   - `create` lists new slices IPv4 before IPv6, then by port set (key order), in the order they fill;
//   - `update` and `delete` are sorted by slice name;
//   - where upstream picks among slices at random, the first in name order wins.
import type { KObject } from '../../api/object.js';
import { isDNS1123Subdomain } from '../../api/validation/names.js';
import { selectsPod } from '../endpoints/endpoints.js';
import { isServiceIPSet, shouldPodBeInEndpoints } from '../endpoints/pod-address.js';
import { compareBytes, list, rec, str, stringMap } from '../endpoints/read.js';
import { addressTypesForService } from './address.js';
import {
  compareEndpoints,
  copyEndpoint,
  endpointKey,
  endpointsEqualBeyondHash,
  podToEndpoint,
  readEndpoint,
} from './endpoint.js';
import { endpointSlicesEqual } from './equal.js';
import { endpointPorts, portMapKey, readPorts } from './ports.js';
import { copySlice, removeHintsFromSlices, type SliceInfo } from './slice-info.js';
import {
  allocateHints,
  formatWithAddressType,
  TOPOLOGY_AWARE_HINTS_DISABLED,
  zoneCPURatios,
  type ZoneRatios,
} from './topology-hints.js';
import { reconcileTrafficDistributionHints, validTrafficDistribution } from './traffic-distribution.js';
import {
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  ENDPOINTSLICE_CONTROLLER_NAME,
  LABEL_HEADLESS,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  type AddressType,
  type Endpoint,
  type EndpointSlice,
  type EndpointSlicePort,
  type Node,
  type PlanEvent,
  type Pod,
  type Service,
} from './types.js';

export const MIN_MAX_ENDPOINTS_PER_SLICE = 1;
export const MAX_MAX_ENDPOINTS_PER_SLICE = 1000;

export interface PlanEndpointSlicesInput {
  readonly service: Service;
  /** Pods of the Service's namespace; those the selector does not select are ignored. */
  readonly pods: readonly Pod[];
  /** Every node (for zones, and the CPU shares of topology hints). */
  readonly nodes: readonly Node[];
  /** EndpointSlices as listed (JSON); only those of this Service managed by this controller are touched. */
  readonly existing: readonly KObject[];
  /** 1..1000; default 100. */
  readonly maxEndpointsPerSlice?: number;
  /** The managed-by label value; default "endpointslice-controller.k8s.io". */
  readonly controllerName?: string;
  /** From TriggerTimeTracker, for the last-change-trigger-time annotation; "" (default) removes it. */
  readonly triggerTime?: string;
}

export interface EndpointSlicePlan {
  /** New slices: `metadata.generateName` set, no name. */
  readonly create: EndpointSlice[];
  /** Whole objects to PUT, carrying the existing slice's name and resourceVersion. */
  readonly update: EndpointSlice[];
  /** The existing objects to delete, as given. */
  readonly delete: KObject[];
  /** Events to record against the Service. */
  readonly events: PlanEvent[];
  /**
   * Problems that should make the caller retry later (pods on unknown nodes), sorted; the plan is still
   * valid and should be applied.
   */
  readonly errors: string[];
  /** Why nothing was planned, when the Service is skipped. */
  readonly skipped?: 'ExternalName' | 'NoSelector';
}

/** Whether the annotations enable topology hints: the deprecated key wins when both are set. */
export function topologyHintsEnabled(annotations: Readonly<Record<string, string>>): boolean {
  const value = Object.hasOwn(annotations, ANNOTATION_TOPOLOGY_AWARE_HINTS)
    ? annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS]
    : annotations[ANNOTATION_TOPOLOGY_MODE];
  return value === 'Auto' || value === 'auto';
}

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

function sameStringMap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && b[k] === a[k]);
}

const sliceName = (slice: KObject): string => str(rec(slice.metadata)['name']);
const byName = (a: KObject, b: KObject): number => compareBytes(sliceName(a), sliceName(b));

/** Everything one sync needs, computed once. */
interface Context {
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
}

/**
 * The labels a slice of this Service carries, and whether the slice's current labels differ from the
 * Service's in a way that warrants an update (setEndpointSliceLabels): the Service's labels minus the
 * reserved keys, plus the headless label when the Service has no cluster IP, plus service-name and
 * managed-by. Only the non-reserved labels are compared, as upstream: a stale headless label alone never
 * causes a write.
 */
function sliceLabels(ctx: Context, current: unknown): { labels: Record<string, string>; changed: boolean } {
  const fromService = withoutReserved(stringMap(ctx.service.metadata.labels));
  const changed = !sameStringMap(withoutReserved(stringMap(current)), fromService);
  const labels = { ...fromService };
  if (!isServiceIPSet(ctx.service)) labels[LABEL_HEADLESS] = '';
  labels[LABEL_SERVICE_NAME] = ctx.name;
  labels[LABEL_MANAGED_BY] = ctx.controllerName;
  return { labels, changed };
}

function newSlice(
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
function ownedBy(slice: KObject, service: Service): boolean {
  const uid = str(service.metadata.uid);
  return list(rec(slice.metadata)['ownerReferences']).some((o) => {
    const ref = rec(o);
    return ref['uid'] === uid && ref['kind'] === 'Service' && ref['apiVersion'] === 'v1';
  });
}

/** A typed working copy of an existing slice: endpoints and ports read defensively. */
function readSlice(raw: KObject): EndpointSlice {
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
interface PortMappingResult {
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
function reconcilePortSet(
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

const hasZoneHints = (slices: readonly EndpointSlice[]): boolean =>
  slices.some((s) => s.endpoints.some((e) => (e.hints?.forZones ?? []).length > 0));

/** reconcileByAddressType. `existing` are this Service's managed slices of this type, sorted by name. */
function reconcileAddressType(
  ctx: Context,
  addressType: AddressType,
  existing: readonly EndpointSlice[],
): { create: EndpointSlice[]; update: EndpointSlice[]; delete: EndpointSlice[] } {
  const toDelete: EndpointSlice[] = [];
  const existingByPorts = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    if (!ownedBy(slice, ctx.service)) {
      toDelete.push(slice);
      continue;
    }
    const key = portMapKey(slice.ports);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), slice]);
  }

  // Desired endpoints by port set.
  const desired = new Map<string, { ports: EndpointSlicePort[]; endpoints: Map<string, Endpoint> }>();
  for (const pod of ctx.pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ports = endpointPorts(ctx.service, pod);
    const key = portMapKey(ports);
    let group = desired.get(key);
    if (group === undefined) desired.set(key, (group = { ports, endpoints: new Map() }));
    const nodeName = str(rec(pod.spec)['nodeName']);
    const node = ctx.nodesByName.get(nodeName);
    if (node === undefined && !ctx.publishNotReady) {
      ctx.errors.add(
        `skipping Pod ${str(pod.metadata.name)} for Service ${ctx.namespace}/${ctx.name}: Node ${nodeName} Not Found`,
      );
      continue;
    }
    const endpoint = podToEndpoint(pod, node, ctx.service, addressType);
    if (endpoint.addresses.length > 0) group.endpoints.set(endpointKey(endpoint), endpoint);
  }

  let toCreate: EndpointSlice[] = [];
  let toUpdate: EndpointSlice[] = [];
  for (const key of [...desired.keys()].sort(compareBytes)) {
    const group = desired.get(key)!;
    const r = reconcilePortSet(
      ctx,
      addressType,
      existingByPorts.get(key) ?? [],
      group.ports,
      group.endpoints,
    );
    toCreate.push(...r.toCreate);
    toUpdate.push(...r.toUpdate);
    toDelete.push(...r.toDelete);
  }
  for (const key of [...existingByPorts.keys()].sort(compareBytes)) {
    if (!desired.has(key)) toDelete.push(...existingByPorts.get(key)!);
  }

  // Every Service with a selector keeps at least one slice per address type. Upstream keeps an existing
  // placeholder that compares equal here instead of replacing it; that needs no special case: the
  // replacement below turns delete + create into an update of the same slice, which endpointSlicesEqual
  // then drops. (Unlike upstream, a placeholder owned by an older Service is not adopted.)
  if (existing.length === toDelete.length && toCreate.length === 0) {
    toCreate.push(newSlice(ctx, addressType, []));
  }

  // Hints.
  const changed = new Set([...toUpdate, ...toDelete].map(sliceName));
  const unchanged = existing.filter((s) => !changed.has(sliceName(s)));
  let si: SliceInfo = { toCreate, toUpdate, unchanged };
  const annotations = stringMap(ctx.service.metadata.annotations);
  const hintsOn = topologyHintsEnabled(annotations);
  const trafficDistribution = validTrafficDistribution(rec(ctx.service.spec)['trafficDistribution']);
  const hadZoneHints = hasZoneHints(existing);
  // The annotation wins: trafficDistribution is not consulted at all when it enables hints, even when
  // the allocation then fails and every hint is removed.
  if (hintsOn) {
    if (ctx.ratios === null) ctx.ratios = zoneCPURatios(ctx.nodes);
    const r = allocateHints({
      cpuRatiosByZone: ctx.ratios,
      addressType,
      slices: si,
      hintsPopulated: hadZoneHints,
    });
    ctx.events.push(...r.events);
    si = r;
  } else if (trafficDistribution === undefined) {
    if (hadZoneHints) {
      ctx.events.push({
        type: 'Warning',
        reason: 'TopologyAwareHintsDisabled',
        message: formatWithAddressType(TOPOLOGY_AWARE_HINTS_DISABLED, addressType),
      });
    }
    si = removeHintsFromSlices(si);
  } else {
    si = reconcileTrafficDistributionHints(trafficDistribution, si);
  }
  toCreate = [...si.toCreate];
  toUpdate = [...si.toUpdate];

  // finalize: write a new slice over one being deleted, rather than create one and delete the other.
  for (let i = 0; i < toDelete.length && toCreate.length > 0;) {
    const old = toDelete[i]!;
    const replacement = toCreate[toCreate.length - 1]!;
    if (old.addressType === replacement.addressType && ownedBy(old, ctx.service)) {
      toCreate.pop();
      toDelete.splice(i, 1);
      const { generateName: _generated, ...fresh } = replacement.metadata;
      toUpdate.push({
        ...replacement,
        metadata: { ...structuredClone(old.metadata), ...fresh, name: sliceName(old) },
      });
    } else {
      i++;
    }
  }
  return { create: toCreate, update: toUpdate, delete: toDelete };
}

function setTriggerTime(slice: EndpointSlice, triggerTime: string): EndpointSlice {
  const annotations = stringMap(slice.metadata.annotations);
  if (triggerTime !== '') annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = triggerTime;
  else delete annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION];
  const metadata = { ...slice.metadata };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return { ...slice, metadata, endpoints: [...slice.endpoints].sort(compareEndpoints) };
}

/** The slices to create, update and delete so that the Service's EndpointSlices match its pods. */
export function planEndpointSlices(input: PlanEndpointSlicesInput): EndpointSlicePlan {
  const {
    service,
    maxEndpointsPerSlice = DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    controllerName = ENDPOINTSLICE_CONTROLLER_NAME,
    triggerTime = '',
  } = input;
  if (!Number.isInteger(maxEndpointsPerSlice) || maxEndpointsPerSlice < MIN_MAX_ENDPOINTS_PER_SLICE) {
    throw new RangeError(
      `max-endpoints-per-slice must not be less than ${MIN_MAX_ENDPOINTS_PER_SLICE}, but got ${maxEndpointsPerSlice}`,
    );
  }
  if (maxEndpointsPerSlice > MAX_MAX_ENDPOINTS_PER_SLICE) {
    throw new RangeError(
      `max-endpoints-per-slice must not be more than ${MAX_MAX_ENDPOINTS_PER_SLICE}, but got ${maxEndpointsPerSlice}`,
    );
  }
  const empty = { create: [], update: [], delete: [], events: [], errors: [] };
  const spec = rec(service.spec);
  if (spec['type'] === 'ExternalName') return { ...empty, skipped: 'ExternalName' };
  const selector = spec['selector'];
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) {
    return { ...empty, skipped: 'NoSelector' };
  }

  const namespace = str(service.metadata.namespace);
  const name = str(service.metadata.name);
  const ctx: Context = {
    service,
    namespace,
    name,
    pods: input.pods.filter((pod) => selectsPod(service, pod)),
    nodesByName: new Map(input.nodes.map((n) => [str(n.metadata.name), n])),
    nodes: input.nodes,
    max: maxEndpointsPerSlice,
    controllerName,
    publishNotReady: spec['publishNotReadyAddresses'] === true,
    errors: new Set(),
    events: [],
    ratios: null,
  };

  // This Service's slices managed by this controller, not already being deleted.
  const rawByName = new Map<string, KObject>();
  const managed: EndpointSlice[] = [];
  for (const raw of input.existing) {
    const meta = rec(raw.metadata);
    const labels = stringMap(meta['labels']);
    if (
      str(meta['namespace']) !== namespace ||
      labels[LABEL_SERVICE_NAME] !== name ||
      labels[LABEL_MANAGED_BY] !== controllerName ||
      (meta['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null)
    ) {
      continue;
    }
    rawByName.set(str(meta['name']), raw);
    managed.push(readSlice(raw));
  }
  managed.sort(byName);

  const types = addressTypesForService(service);
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  const toDelete: EndpointSlice[] = managed.filter(
    (s) => !(types as readonly string[]).includes(s.addressType),
  );
  for (const addressType of types) {
    const r = reconcileAddressType(
      ctx,
      addressType,
      managed.filter((s) => s.addressType === addressType),
    );
    create.push(...r.create);
    update.push(...r.update);
    toDelete.push(...r.delete);
  }

  const deleting = service.metadata.deletionTimestamp as unknown;
  const creating = deleting === undefined || deleting === null ? create : [];
  const updates = update.filter((s) => !endpointSlicesEqual(s, rawByName.get(sliceName(s))));
  return {
    create: creating.map((s) => setTriggerTime(s, triggerTime)),
    update: updates.sort(byName).map((s) => setTriggerTime(s, triggerTime)),
    delete: toDelete.sort(byName).map((s) => rawByName.get(sliceName(s))!),
    events: ctx.events,
    errors: [...ctx.errors].sort(compareBytes),
  };
}
