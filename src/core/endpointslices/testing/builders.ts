// Test builders for EndpointSlice planning: Services with the fields slices care about, nodes, slices and
// endpoints, and an in-memory "API" that applies a plan the way the caller would.
import type { KObject } from '../../../api/object.js';
import { service as baseService, type ServiceOptions } from '../../endpoints/testing/builders.js';
import type { EndpointSlicePlan } from '../reconcile.js';
import {
  ENDPOINTSLICE_CONTROLLER_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_TOPOLOGY_ZONE,
  type Endpoint,
  type EndpointSlice,
  type EndpointSlicePort,
  type Node,
  type Service,
} from '../types.js';

export { nthIP, pod, type PodOptions } from '../../endpoints/testing/builders.js';

export interface SliceServiceOptions extends ServiceOptions {
  annotations?: Record<string, string>;
  trafficDistribution?: string;
  deleting?: boolean;
  uid?: string;
}

export function service(o: SliceServiceOptions = {}): Service {
  const s = baseService(o);
  if (o.annotations !== undefined) s.metadata.annotations = o.annotations;
  if (o.uid !== undefined) s.metadata.uid = o.uid;
  if (o.deleting === true) s.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
  if (o.trafficDistribution !== undefined) {
    s.spec = { ...s.spec, trafficDistribution: o.trafficDistribution } as NonNullable<Service['spec']>;
  }
  return s;
}

export interface NodeOptions {
  zone?: string;
  /** Allocatable CPU quantity; default "1". "" leaves it out. */
  cpu?: string;
  ready?: boolean;
  labels?: Record<string, string>;
}

export function node(name: string, o: NodeOptions = {}): Node {
  const labels: Record<string, string> = { 'kubernetes.io/hostname': name, ...o.labels };
  if (o.zone !== undefined) labels[LABEL_TOPOLOGY_ZONE] = o.zone;
  const cpu = o.cpu ?? '1';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels },
    status: {
      ...(cpu === '' ? {} : { allocatable: { cpu, memory: '1Gi' } }),
      conditions: [{ type: 'Ready', status: (o.ready ?? true) ? 'True' : 'False' }],
    },
  };
}

export interface EndpointOptions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  zone?: string;
  nodeName?: string;
  /** forZones hints. */
  hint?: string | string[];
  forNodes?: string[];
  /** targetRef pod name; default derived from the address. */
  pod?: string;
}

/** An endpoint as this controller writes it for a pod named `pod-<ip>` (unless o.pod). */
export function ep(address: string, o: EndpointOptions = {}): Endpoint {
  const ready = o.ready ?? true;
  const name = o.pod ?? `pod-${address}`;
  const e: Endpoint = {
    addresses: [address],
    conditions: { ready, serving: o.serving ?? ready, terminating: o.terminating ?? false },
    targetRef: { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` },
  };
  if (o.nodeName !== undefined) e.nodeName = o.nodeName;
  if (o.zone !== undefined) e.zone = o.zone;
  const zones = o.hint === undefined ? [] : typeof o.hint === 'string' ? [o.hint] : o.hint;
  if (zones.length > 0 || o.forNodes !== undefined) {
    e.hints = {
      ...(zones.length > 0 ? { forZones: zones.map((name) => ({ name })) } : {}),
      ...(o.forNodes !== undefined ? { forNodes: o.forNodes.map((name) => ({ name })) } : {}),
    };
  }
  return e;
}

export interface SliceOptions {
  name?: string;
  service?: string;
  serviceUid?: string;
  addressType?: string;
  endpoints?: Endpoint[];
  ports?: EndpointSlicePort[];
  labels?: Record<string, string>;
  managedBy?: string;
  /** Leave out the ownerReference. */
  unowned?: boolean;
  resourceVersion?: string;
}

export const HTTP_PORT: EndpointSlicePort = { name: 'http', port: 8080, protocol: 'TCP' };

/** An existing slice (as listed from the API): named, with a resourceVersion. */
export function slice(o: SliceOptions = {}): EndpointSlice {
  const svc = o.service ?? 'foo';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: o.name ?? `${svc}-abc`,
      generateName: `${svc}-`,
      namespace: 'default',
      uid: `slice-uid-${o.name ?? `${svc}-abc`}`,
      resourceVersion: o.resourceVersion ?? '1',
      labels: o.labels ?? {
        [LABEL_SERVICE_NAME]: svc,
        [LABEL_MANAGED_BY]: o.managedBy ?? ENDPOINTSLICE_CONTROLLER_NAME,
      },
      ...(o.unowned === true
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'Service',
                name: svc,
                uid: o.serviceUid ?? `svc-uid-${svc}`,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }),
    },
    addressType: o.addressType ?? 'IPv4',
    endpoints: o.endpoints ?? [],
    ports: o.ports ?? [HTTP_PORT],
  };
}

/**
 * An in-memory API that applies a plan as the caller would: creates get `<generateName><n>` names, every
 * write a fresh resourceVersion, updates must name an existing slice, deletes remove by name. Returns the
 * new list, sorted by name.
 */
export class FakeSliceAPI {
  private next = 0;
  private revision = 100;

  apply(existing: readonly KObject[], plan: EndpointSlicePlan): EndpointSlice[] {
    const byName = new Map(existing.map((s) => [String(s.metadata.name), structuredClone(s)]));
    for (const d of plan.delete) {
      if (!byName.delete(String(d.metadata.name)))
        throw new Error(`delete of a missing slice ${d.metadata.name}`);
    }
    for (const u of plan.update) {
      const name = String(u.metadata.name);
      if (!byName.has(name)) throw new Error(`update of a missing slice ${name}`);
      byName.set(name, {
        ...structuredClone(u),
        metadata: { ...u.metadata, resourceVersion: String(++this.revision) },
      });
    }
    for (const c of plan.create) {
      if (c.metadata.name !== undefined) throw new Error('a created slice must not carry a name');
      const name = `${c.metadata.generateName ?? ''}${(++this.next).toString(36)}`;
      byName.set(name, {
        ...structuredClone(c),
        metadata: { ...c.metadata, name, uid: `slice-uid-${name}`, resourceVersion: String(++this.revision) },
      });
    }
    return [...byName.values()]
      .sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)))
      .map((s) => s as EndpointSlice);
  }
}
