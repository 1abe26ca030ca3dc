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
//     unlike upstream, a pod with no nodeName at all is kept (without nodeName and zone): see below;
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
import { isPlainObject } from '../../api/json.js';
import type { KObject } from '../../api/object.js';
import { selectsPod } from '../endpoints/endpoints.js';
import { shouldPodBeInEndpoints } from '../endpoints/pod-address.js';
import { compareBytes, rec, str, stringMap } from '../endpoints/read.js';
import { addressTypesForService } from './address.js';
import { compareEndpoints, endpointKey, podToEndpoint } from './endpoint.js';
import { endpointSlicesEqual } from './equal.js';
import { endpointPorts, portMapKey } from './ports.js';
import {
  byName,
  newSlice,
  ownedBy,
  readSlice,
  reconcilePortSet,
  sliceName,
  type Context,
} from './port-set.js';
import { removeHintsFromSlices, type SliceInfo } from './slice-info.js';
import {
  allocateHints,
  formatWithAddressType,
  TOPOLOGY_AWARE_HINTS_DISABLED,
  zoneCPURatios,
} from './topology-hints.js';
import { reconcileTrafficDistributionHints, validTrafficDistribution } from './traffic-distribution.js';
import {
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  ENDPOINTSLICE_CONTROLLER_NAME,
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

export { endpointSlicePrefix } from './port-set.js';

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
  /**
   * Whether Topology Aware Hints were allocated for this Service by the previous plan (the plan's own
   * `hintsPopulated`, which the caller remembers per Service, as upstream's topology cache does). It
   * decides the TopologyAwareHintsEnabled and TopologyAwareHintsDisabled events. Default false.
   */
  readonly hintsPopulated?: boolean;
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
  /** Whether Topology Aware Hints are allocated after this plan: the next plan's `hintsPopulated`. */
  readonly hintsPopulated: boolean;
}

/** Whether the annotations enable topology hints: the deprecated key wins when both are set. */
export function topologyHintsEnabled(annotations: Readonly<Record<string, string>>): boolean {
  const value = Object.hasOwn(annotations, ANNOTATION_TOPOLOGY_AWARE_HINTS)
    ? annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS]
    : annotations[ANNOTATION_TOPOLOGY_MODE];
  return value === 'Auto' || value === 'auto';
}

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
    // Upstream also skips a pod without a nodeName (the lookup of "" fails). In Kubernetes a pod with an IP
    // always has one; in svcplane, without kubelets, pods get their IPs through /status and are often never
    // scheduled, so such a pod is kept, with no nodeName and no zone, as the Endpoints controller keeps it.
    if (node === undefined && nodeName !== '' && !ctx.publishNotReady) {
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
  // The annotation wins: trafficDistribution is not consulted at all when it enables hints, even when
  // the allocation then fails and every hint is removed. Whether hints were populated is the Service's,
  // not the address type's (as upstream's topology cache keeps it): a dual-stack Service reports
  // Enabled or Disabled once.
  if (hintsOn) {
    if (ctx.ratios === null) ctx.ratios = zoneCPURatios(ctx.nodes);
    const r = allocateHints({
      cpuRatiosByZone: ctx.ratios,
      addressType,
      slices: si,
      hintsPopulated: ctx.hintsPopulated,
    });
    ctx.events.push(...r.events);
    ctx.hintsPopulated = r.hintsByZone !== undefined;
    si = r;
  } else {
    if (ctx.hintsPopulated) {
      ctx.events.push({
        type: 'Warning',
        reason: 'TopologyAwareHintsDisabled',
        message: formatWithAddressType(TOPOLOGY_AWARE_HINTS_DISABLED, addressType),
      });
      ctx.hintsPopulated = false;
    }
    si = removeHintsFromSlices(si);
    if (trafficDistribution !== undefined) si = reconcileTrafficDistributionHints(trafficDistribution, si);
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
  const empty = { create: [], update: [], delete: [], events: [], errors: [], hintsPopulated: false };
  const spec = rec(service.spec);
  if (spec['type'] === 'ExternalName') return { ...empty, skipped: 'ExternalName' };
  const selector = spec['selector'];
  if (!isPlainObject(selector)) {
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
    hintsPopulated: input.hintsPopulated ?? false,
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
    hintsPopulated: ctx.hintsPopulated,
  };
}
