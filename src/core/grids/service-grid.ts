// ServiceGrid → Service planning, pure. From a grid and the Services that concern it, the
// writes that make `<grid>-svc` what the grid says, and the status the grid should show.
//
// SuperEdge's contract (its application-grid-controller), kept: the Service is `<sg>-svc`,
// its spec is spec.template, its labels are the grid's plus grid-selector and grid-uniq-key, its
// annotations the grid's plus `topologyKeys: ["<key>"]`; other Services the grid controls are deleted;
// failures are CreateError / UpdateError / DeleteError conditions. Its defects, fixed: the Service gets
// a controller ownerReference (deleting the grid removes it); only an unowned `<sg>-svc` is adopted,
// and one another controller owns is left alone and reported; drift is judged on the whole spec as
// the API server would default the template, keeping only what the server allocated
// (clusterIP(s), IP families, node ports) when the template leaves it unset, so the two never fight.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { defaultServiceSpec } from '../../api/defaults/service.js';
import { serviceSpec as serviceSpecSchema } from '../../api/schema/core.js';
import { isDNS1035Label } from '../../api/validation/formats.js';
import {
  type Condition,
  type Grid,
  type Obj,
  type WriteErrorType,
  clone,
  conditionsOf,
  containsAll,
  controllerRefTo,
  gridKeyOf,
  gridLabels,
  labelsInSync,
  mergedMeta,
  ownershipOf,
  sameUnderSchema,
  TOPOLOGY_KEYS_ANNOTATION,
  withCondition,
  withWriteErrors,
} from './objects.js';

export const SERVICE_GRID_KIND = 'ServiceGrid';
/** kube's controllers do not copy this annotation onto what they make (deployment util's skip list). */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

export const serviceNameOf = (grid: Grid): string => `${grid.metadata.name ?? ''}-svc`;

/** One write a grid controller makes. `update` and `recreate` carry the live resourceVersion / uid. */
export type GridAction =
  | { readonly op: 'create'; readonly object: KObject }
  | { readonly op: 'update'; readonly object: KObject; readonly adopt: boolean }
  | { readonly op: 'recreate'; readonly object: KObject; readonly uid: string; readonly why: string }
  | { readonly op: 'delete'; readonly name: string; readonly uid: string; readonly why: string };

/** Why a grid cannot be reconciled at all; not retried until the grid changes. */
export interface GridProblem {
  readonly reason: 'EmptyGridKey' | 'InvalidName';
  /** The Event reason: SuperEdge's `Empty` for an empty key. */
  readonly eventReason: string;
  readonly message: string;
}

export interface ServiceGridPlan {
  readonly serviceName: string;
  readonly problem?: GridProblem;
  /** `<sg>-svc` exists and another controller owns it: left alone. */
  readonly conflict?: string;
  readonly actions: readonly GridAction[];
  /** The grid's Service before the actions, when it has one. */
  readonly current?: KObject;
}

/** The annotations a grid passes on: its own, less kubectl's last-applied configuration. */
export function passedAnnotations(grid: Grid): Record<string, string> {
  const out = { ...(grid.metadata.annotations ?? {}) };
  delete out[LAST_APPLIED_ANNOTATION];
  return out;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const typeOf = (spec: Obj): string => str(spec['type']) || 'ClusterIP';
const hasClusterIP = (spec: Obj): boolean => typeOf(spec) !== 'ExternalName';
const hasNodePorts = (spec: Obj): boolean => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';
const portsOf = (spec: Obj): Obj[] =>
  Array.isArray(spec['ports']) ? (spec['ports'].filter(isPlainObject) as Obj[]) : [];

/**
 * The spec the grid wants for its Service: spec.template defaulted as the API server defaults a
 * Service, plus, from the live Service, what the server allocated and the template leaves unset —
 * cluster IPs (never `None`) and IP families, each port's nodePort (matched by port and protocol, then
 * by name), the health-check node port — and any field svcplane's schema does not know (a newer
 * server's).
 */
export function desiredServiceSpec(template: Obj | undefined, live: Obj | undefined): Obj {
  const spec = clone(template ?? {});
  defaultServiceSpec(spec);
  if (live === undefined) return spec;
  // The cluster IP is the allocator's when the template leaves it unset, unless the live Service is
  // headless (`None` came from an old template, not from the allocator: a new IP means a new Service).
  // The IP families are the allocator's while the template's clusterIP is unset or the live one.
  const wanted = str(spec['clusterIP']);
  const liveIP = str(live['clusterIP']);
  if (
    hasClusterIP(spec) &&
    hasClusterIP(live) &&
    (wanted === liveIP || (wanted === '' && liveIP !== 'None'))
  ) {
    for (const k of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'])
      if (spec[k] === undefined && live[k] !== undefined) spec[k] = clone(live[k]);
  }
  if (hasNodePorts(spec) && hasNodePorts(live)) {
    const livePorts = portsOf(live);
    const taken = new Set(portsOf(spec).map((p) => p['nodePort']));
    for (const port of portsOf(spec)) {
      if (typeof port['nodePort'] === 'number' && port['nodePort'] !== 0) continue;
      const match =
        livePorts.find((l) => l['port'] === port['port'] && str(l['protocol']) === str(port['protocol'])) ??
        livePorts.find((l) => str(l['name']) !== '' && str(l['name']) === str(port['name']));
      const np = match?.['nodePort'];
      if (typeof np === 'number' && np !== 0 && !taken.has(np)) {
        port['nodePort'] = np;
        taken.add(np);
      }
    }
    if (
      typeOf(spec) === 'LoadBalancer' &&
      spec['externalTrafficPolicy'] === 'Local' &&
      spec['healthCheckNodePort'] === undefined &&
      live['healthCheckNodePort'] !== undefined
    )
      spec['healthCheckNodePort'] = live['healthCheckNodePort'];
  }
  for (const [k, v] of Object.entries(live))
    if (serviceSpecSchema.properties?.[k] === undefined && spec[k] === undefined) spec[k] = clone(v);
  return spec;
}

/** The Service the grid wants, as it would be created (no live Service to keep allocations from). */
export function desiredService(grid: Grid, live?: KObject): KObject {
  const template = grid.spec?.['template'];
  const liveSpec = live?.['spec'];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...(live === undefined ? {} : clone(live.metadata)),
      name: serviceNameOf(grid),
      namespace: grid.metadata.namespace ?? 'default',
      ...mergedMeta(live?.metadata, {
        labels: gridLabels(grid),
        annotations: {
          ...passedAnnotations(grid),
          [TOPOLOGY_KEYS_ANNOTATION]: JSON.stringify([gridKeyOf(grid)]),
        },
        ref: controllerRefTo(grid, SERVICE_GRID_KIND),
      }),
    },
    spec: desiredServiceSpec(
      isPlainObject(template) ? template : undefined,
      isPlainObject(liveSpec) ? liveSpec : undefined,
    ),
  };
}

/** Why a grid cannot be reconciled at all, if it cannot. */
export function serviceGridProblem(grid: Grid): GridProblem | undefined {
  if (gridKeyOf(grid) === '')
    return { reason: 'EmptyGridKey', eventReason: 'Empty', message: 'spec.gridUniqKey is empty' };
  const name = serviceNameOf(grid);
  const bad = isDNS1035Label(name);
  if (bad.length > 0)
    return {
      reason: 'InvalidName',
      eventReason: 'InvalidName',
      message: `the Service it would create, "${name}", is not a valid Service name: ${bad.join('; ')}`,
    };
  return undefined;
}

/**
 * The writes that make the grid's Service right. `services` are the Services of the grid's namespace
 * that concern it: those labelled `grid-selector=<grid>`, those it controls, and `<grid>-svc`.
 */
export function planServiceGrid(grid: Grid, services: readonly KObject[]): ServiceGridPlan {
  const serviceName = serviceNameOf(grid);
  const current = services.find((s) => s.metadata.name === serviceName);
  const base = { serviceName, ...(current === undefined ? {} : { current }) };
  const problem = serviceGridProblem(grid);
  if (problem !== undefined) return { ...base, problem, actions: [] };
  if (grid.metadata.deletionTimestamp !== undefined) return { ...base, actions: [] };
  const actions: GridAction[] = [];
  for (const s of services) {
    if (s.metadata.name === serviceName || ownershipOf(s, grid) !== 'ours') continue;
    actions.push({
      op: 'delete',
      name: s.metadata.name ?? '',
      uid: s.metadata.uid ?? '',
      why: `the grid's Service is ${serviceName}`,
    });
  }
  if (current === undefined)
    return { ...base, actions: [{ op: 'create', object: desiredService(grid) }, ...actions] };
  const owner = ownershipOf(current, grid);
  if (owner === 'other') {
    const ref = current.metadata.ownerReferences?.find((r) => r.controller === true);
    return {
      ...base,
      conflict: `Service ${serviceName} is controlled by ${ref?.kind ?? '?'} ${ref?.name ?? '?'}, not by this grid`,
      actions,
    };
  }
  if (current.metadata.deletionTimestamp !== undefined) return { ...base, actions }; // wait for it to go
  const want = desiredService(grid, current);
  const wantSpec = want['spec'] as Obj;
  const liveSpec = isPlainObject(current['spec']) ? current['spec'] : {};
  // wantSpec has the live IP unless the template names another one or the live Service is headless.
  const immutable =
    hasClusterIP(wantSpec) &&
    hasClusterIP(liveSpec) &&
    str(liveSpec['clusterIP']) !== '' &&
    str(wantSpec['clusterIP']) !== str(liveSpec['clusterIP']);
  if (immutable) {
    const fresh = desiredService(grid);
    return {
      ...base,
      actions: [
        {
          op: 'recreate',
          object: fresh,
          uid: current.metadata.uid ?? '',
          why: `spec.clusterIP ${str(liveSpec['clusterIP'])} → ${str(wantSpec['clusterIP']) || 'a new one'} cannot change in place`,
        },
        ...actions,
      ],
    };
  }
  const inSync =
    owner === 'ours' &&
    labelsInSync(current.metadata.labels, want.metadata.labels ?? {}) &&
    containsAll(current.metadata.annotations, want.metadata.annotations ?? {}) &&
    sameUnderSchema(wantSpec, liveSpec, serviceSpecSchema);
  if (!inSync) actions.unshift({ op: 'update', object: want, adopt: owner === 'orphan' });
  return { ...base, actions };
}

/** What the controller's writes came to, for the status. */
export interface WriteOutcome {
  /** The grid's Service after the writes (the server's answer), or the live one when none was made. */
  readonly service?: KObject;
  readonly failures: ReadonlyArray<{ readonly type: WriteErrorType; readonly message: string }>;
}

/**
 * The status the grid should show: the Service's name and load balancer, observedGeneration, a Ready
 * condition with a reason, and one condition per kind of write that failed (cleared when it works).
 */
export function serviceGridStatus(
  grid: Grid,
  plan: ServiceGridPlan,
  outcome: WriteOutcome,
  now: string,
): Record<string, unknown> {
  const generation = grid.metadata.generation ?? 1;
  let conditions = withWriteErrors(conditionsOf(grid.status), outcome.failures, generation, now);
  const svc = outcome.service;
  const ready: Omit<Condition, 'lastTransitionTime'> = plan.problem
    ? { type: 'Ready', status: 'False', reason: plan.problem.reason, message: plan.problem.message }
    : plan.conflict !== undefined
      ? { type: 'Ready', status: 'False', reason: 'OwnedByAnotherController', message: plan.conflict }
      : outcome.failures.length > 0
        ? {
            type: 'Ready',
            status: 'False',
            reason: outcome.failures[0]!.type,
            message: outcome.failures[0]!.message,
          }
        : svc === undefined
          ? {
              type: 'Ready',
              status: 'False',
              reason: 'ServicePending',
              message: `${plan.serviceName} is not there yet`,
            }
          : {
              type: 'Ready',
              status: 'True',
              reason: 'ServiceReady',
              message: `Service ${plan.serviceName} matches the template`,
            };
  conditions = withCondition(conditions, { ...ready, observedGeneration: generation }, now);
  const svcStatus = svc?.['status'];
  const lb =
    isPlainObject(svcStatus) && isPlainObject(svcStatus['loadBalancer']) ? svcStatus['loadBalancer'] : {};
  return {
    ...(isPlainObject(grid.status) ? clone(grid.status) : {}),
    loadBalancer: clone(lb),
    service: plan.serviceName,
    observedGeneration: generation,
    conditions,
  };
}
