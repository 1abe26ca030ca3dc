// The pure half of the Endpoints controller: from a Service, the pods it selects and the Endpoints object
// that exists now, decide whether to write and what. In behaviour like syncService in kubernetes'
// pkg/controller/endpoint/endpoints_controller.go, steps 2-10 (the caller does the lookups, the write, the
// delete when the Service is gone, and keeps the TriggerTimeTracker):
//   - ExternalName Services and Services without a selector are skipped: their Endpoints, if any, belong
//     to the user. An empty selector `{}` selects every pod in the namespace.
//   - each pod that should be in the Endpoints contributes one address per resolvable service port, ready
//     when the pod is Ready or the Service publishes not-ready addresses; a Service without ports publishes
//     portless addresses only when it is headless (clusterIP "None").
//   - the result is repacked into canonical form and capped at MAX_ENDPOINT_ADDRESSES addresses.
//   - the written object keeps the current object's metadata and replaces subsets, labels (the Service's,
//     plus `service.kubernetes.io/headless: ""` when the Service has no cluster IP) and the controller's two
//     annotations (trigger time, over-capacity); other annotations are kept.
//   - nothing is written when the subsets, the labels (ignoring the headless label, as upstream does, so a
//     missing or stale headless label alone never causes a write) and the over-capacity annotation are
//     already right. The trigger-time annotation alone never causes a write.
// Two deliberate differences, both removing writes that upstream repeats on every sync:
//   - upstream compares the current subsets with the UNtruncated desired ones, so a Service over capacity
//     is rewritten every time; we compare with the truncated ones and check the annotation is `truncated`;
//   - upstream strips the headless label from the current labels only, so a Service that itself carries
//     that label never compares equal; we strip it from both sides.
import { isPlainObject, sameStringMap } from '../../api/json.js';
import {
  endpointPortFromServicePort,
  findPort,
  isPodReady,
  isServiceIPSet,
  podToEndpointAddress,
  shouldPodBeInEndpoints,
} from './pod-address.js';
import { list, rec, str, stringMap } from './read.js';
import { endpointSubsetsEqual, repackSubsets } from './repack.js';
import { truncateEndpoints } from './truncate.js';
import {
  HEADLESS_SERVICE_LABEL,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  OVER_CAPACITY_ANNOTATION,
  TRUNCATED,
  type EndpointSubset,
  type Endpoints,
  type Pod,
  type Service,
  type ServicePort,
} from './types.js';

export * from './types.js';
export { TriggerTimeTracker } from './trigger-time.js';

/** Why a Service is left alone. */
export type SkipReason = 'ExternalName' | 'NoSelector';

export type EndpointsPlan =
  | { readonly kind: 'skip'; readonly reason: SkipReason }
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'create' | 'update'; readonly endpoints: Endpoints; readonly truncated: boolean };

export interface PlanEndpointsInput {
  readonly service: Service;
  /** The pods the Service selects (see selectsPod): same namespace, matching the selector. */
  readonly pods: readonly Pod[];
  /** The Endpoints object named like the Service, when one exists. */
  readonly current?: Endpoints | undefined;
  /** From TriggerTimeTracker; "" removes the annotation. */
  readonly triggerTime: string;
}

function skipReason(service: Service): SkipReason | undefined {
  const spec = rec(service.spec);
  if (spec['type'] === 'ExternalName') return 'ExternalName';
  if (!isPlainObject(spec['selector'])) return 'NoSelector';
  return undefined;
}

/**
 * The selector's key/value pairs, or null when the Service has no usable selector (absent, not an object,
 * or a non-string value). Memoised per selector object: objects from an informer cache are replaced, not
 * mutated, so a Service's selector is parsed once however many pods it is matched against (on every pod
 * event of its namespace, and over every pod of the namespace on each sync).
 */
const selectorPairs = new WeakMap<object, ReadonlyArray<readonly [string, string]> | null>();
export function selectorOf(service: Service): ReadonlyArray<readonly [string, string]> | null {
  const selector = rec(service.spec)['selector'];
  if (!isPlainObject(selector)) return null;
  let pairs = selectorPairs.get(selector);
  if (pairs === undefined) {
    const entries = Object.entries(selector);
    pairs = entries.every(([, v]) => typeof v === 'string') ? (entries as Array<[string, string]>) : null;
    selectorPairs.set(selector, pairs);
  }
  return pairs;
}

/**
 * Whether the Service's selector selects the pod: same namespace and every selector label matches (the
 * label is present with that value: labels.SelectorFromSet). A Service without a selector selects
 * nothing; `{}` selects every pod of its namespace.
 */
export function selectsPod(service: Service, pod: Pod): boolean {
  const pairs = selectorOf(service);
  if (pairs === null) return false;
  if (str(pod.metadata.namespace) !== str(service.metadata.namespace)) return false;
  if (pairs.length === 0) return true;
  const labels = pod.metadata.labels as unknown;
  if (!isPlainObject(labels)) return false;
  for (const [k, v] of pairs) if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  return true;
}

/** The subsets the Service's pods make, repacked (syncService steps 6-7), before any truncation. */
export function desiredSubsets(service: Service, pods: readonly Pod[]): EndpointSubset[] {
  const spec = rec(service.spec);
  const publishNotReady = spec['publishNotReadyAddresses'] === true;
  const ports = list(spec['ports']).map((p) => rec(p) as ServicePort);
  const headless = str(spec['clusterIP']) === 'None';
  const subsets: EndpointSubset[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
    const address = podToEndpointAddress(service, pod);
    if (address === undefined) continue;
    const ready = publishNotReady || isPodReady(pod);
    const subset = (): EndpointSubset =>
      ready ? { addresses: [address] } : { notReadyAddresses: [address] };
    if (ports.length === 0) {
      if (headless) subsets.push(subset());
      continue;
    }
    for (const servicePort of ports) {
      const port = findPort(pod, servicePort);
      if (port === undefined) continue;
      subsets.push({ ...subset(), ports: [endpointPortFromServicePort(servicePort, port)] });
    }
  }
  return repackSubsets(subsets);
}

/** syncService steps 2-10: skip, leave unchanged, or the object to create or update. */
export function planEndpoints(input: PlanEndpointsInput): EndpointsPlan {
  const { service, pods, current, triggerTime } = input;
  const reason = skipReason(service);
  if (reason !== undefined) return { kind: 'skip', reason };

  const { subsets, truncated } = truncateEndpoints(desiredSubsets(service, pods));
  const currentMeta = rec(current?.metadata);
  const create = current === undefined || str(currentMeta['resourceVersion']) === '';
  const serviceLabels = stringMap(service.metadata.labels);

  if (!create && current !== undefined) {
    const currentLabels = stringMap(currentMeta['labels']);
    delete currentLabels[HEADLESS_SERVICE_LABEL];
    const wantedLabels = { ...serviceLabels };
    delete wantedLabels[HEADLESS_SERVICE_LABEL];
    const annotations = stringMap(currentMeta['annotations']);
    const capacityMarkedRight = truncated
      ? annotations[OVER_CAPACITY_ANNOTATION] === TRUNCATED
      : !Object.hasOwn(annotations, OVER_CAPACITY_ANNOTATION);
    if (
      capacityMarkedRight &&
      sameStringMap(currentLabels, wantedLabels) &&
      endpointSubsetsEqual(current.subsets, subsets)
    ) {
      return { kind: 'unchanged' };
    }
  }

  const base: Endpoints =
    current === undefined
      ? { metadata: { name: str(service.metadata.name), namespace: str(service.metadata.namespace) } }
      : structuredClone(current);
  const metadata = { ...base.metadata };

  const labels = { ...serviceLabels };
  if (isServiceIPSet(service)) delete labels[HEADLESS_SERVICE_LABEL];
  else labels[HEADLESS_SERVICE_LABEL] = '';

  const annotations = stringMap(metadata.annotations);
  if (triggerTime !== '') annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = triggerTime;
  else delete annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION];
  if (truncated) annotations[OVER_CAPACITY_ANNOTATION] = TRUNCATED;
  else delete annotations[OVER_CAPACITY_ANNOTATION];

  // Empty maps are written as absent, as Go's omitempty would.
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  else delete metadata.labels;
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;

  const endpoints: Endpoints = { ...base, apiVersion: 'v1', kind: 'Endpoints', metadata, subsets };
  return { kind: create ? 'create' : 'update', endpoints, truncated };
}
