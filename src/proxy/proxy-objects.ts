// What the proxy's informers keep of each object (client-go TransformFuncs, as kube-proxy keeps only the
// typed fields its change trackers read): a node proxy holds every Service, EndpointSlice and Node of the
// cluster, and at 10,000 Services most of what the API sends is never read. Each transform keeps what the
// proxy reads:
//   - Services: name, namespace, resourceVersion, the labels that make a Service another proxy's or
//     headless (core/proxy/state.ts), the annotations the topology rules read (core/topology/rules.ts),
//     the spec fields those two read (of each port: name, protocol, port, nodePort; clusterIPs only when
//     it says more than clusterIP) and status.loadBalancer when it has an ingress. Services with the same
//     ports share one list of them (the informers' objects are never changed);
//   - EndpointSlices: name, namespace, resourceVersion, deletionTimestamp, the service-name label
//     (core/topology/slice-service.ts), the last-change-trigger-time annotation (sync.ts), and the
//     endpoints already packed as the proxy's topology index holds them (core/topology/endpoints.ts:
//     PrepackedSlice, without targetRefs, which that index leaves out): the index keeps the same arrays,
//     so a slice's endpoints are held once, in about a third of the memory of the objects JSON gave;
//   - Nodes: name, resourceVersion, labels (the topology rules) and status.addresses (nodeHostIPs).
// Strings that repeat across objects (namespaces, node names, zones, pools, annotation values) are kept
// once, and so are lists (ports, endpoint conditions).
import type { KObject, ObjectMeta } from '../api/object.js';
import { ENGINE_ANNOTATIONS } from '../core/topology/rules.js';
import { PACKED_ENDPOINTS, packSlice, type PrepackedSlice } from '../core/topology/endpoints.js';
import { LABEL_SERVICE_NAME, LAST_CHANGE_TRIGGER_TIME_ANNOTATION } from '../core/endpointslices/types.js';
import { HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL } from '../core/proxy/state.js';
import type { TransformFunc } from '../runtime/informer.js';

const SERVICE_LABELS: ReadonlySet<string> = new Set([SERVICE_PROXY_NAME_LABEL, HEADLESS_LABEL]);
/** The spec fields core/proxy/state.ts and core/topology/rules.ts read, in the order they are kept. */
const SERVICE_SPEC: readonly string[] = [
  'type',
  'clusterIP',
  'clusterIPs',
  'externalIPs',
  'ports',
  'sessionAffinity',
  'sessionAffinityConfig',
  'loadBalancerSourceRanges',
  'externalTrafficPolicy',
  'internalTrafficPolicy',
  'healthCheckNodePort',
  'topologyKeys',
  'trafficDistribution',
];
/** Of a Service port, what core/proxy/state.ts and core/topology/rules.ts read. */
const SERVICE_PORT: readonly string[] = ['name', 'protocol', 'port', 'nodePort'];
const SLICE_LABELS: ReadonlySet<string> = new Set([LABEL_SERVICE_NAME]);
const SLICE_ANNOTATIONS: ReadonlySet<string> = new Set([LAST_CHANGE_TRIGGER_TIME_ANNOTATION]);

/** Past this many distinct strings (or lists) an intern table starts over (it only saves memory). */
const INTERN_LIMIT = 50_000;

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The entries of `m` whose key is in `keep` (string values through `value`); undefined when none (or `m`
 * is not a map).
 */
function only(
  m: unknown,
  keep: ReadonlySet<string>,
  value: (v: string) => string = (v) => v,
): Record<string, string> | undefined {
  if (!isRec(m)) return undefined;
  let out: Record<string, string> | undefined;
  for (const k of keep) {
    if (!Object.hasOwn(m, k)) continue;
    const v = m[k];
    (out ??= {})[k] = typeof v === 'string' ? value(v) : (v as string);
  }
  return out;
}

export interface ProxyTransforms {
  readonly services: TransformFunc;
  readonly slices: TransformFunc;
  readonly nodes: TransformFunc;
}

/** The three transforms, sharing one table of repeated strings. */
export function proxyTransforms(): ProxyTransforms {
  const strings = new Map<string, string>();
  const intern = (v: string): string => {
    const known = strings.get(v);
    if (known !== undefined) return known;
    if (strings.size >= INTERN_LIMIT) strings.clear();
    strings.set(v, v);
    return v;
  };
  // Lists that repeat across objects (a Service's ports as kept, a slice's endpoint conditions) are kept
  // once: the informers' objects are never changed.
  const lists = new Map<string, readonly unknown[]>();
  const shared = <T>(l: readonly T[]): readonly T[] => {
    const id = JSON.stringify(l);
    const known = lists.get(id);
    if (known !== undefined) return known as readonly T[];
    if (lists.size >= INTERN_LIMIT) lists.clear();
    lists.set(id, l);
    return l;
  };
  const ports = (v: unknown): unknown => {
    if (!Array.isArray(v)) return v;
    return shared(
      v.map((p: unknown) => {
        if (!isRec(p)) return p;
        const out: Rec = {};
        for (const k of SERVICE_PORT) if (p[k] !== undefined) out[k] = p[k];
        return out;
      }),
    );
  };
  const meta = (m: ObjectMeta, labels: ReadonlySet<string>, annotations: ReadonlySet<string>): ObjectMeta => {
    const out: ObjectMeta = {};
    if (m.name !== undefined) out.name = m.name;
    if (m.namespace !== undefined) out.namespace = intern(m.namespace);
    if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
    if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
    const l = only(m.labels, labels);
    if (l !== undefined) out.labels = l;
    // Their values (trigger times, topology modes) repeat across objects too.
    const a = only(m.annotations, annotations, intern);
    if (a !== undefined) out.annotations = a;
    return out;
  };

  const services: TransformFunc = (obj) => {
    const o = obj as KObject & { spec?: unknown; status?: unknown };
    const out: Rec = {};
    out['metadata'] = meta(o.metadata, SERVICE_LABELS, ENGINE_ANNOTATIONS);
    if (isRec(o.spec)) {
      const spec: Rec = {};
      for (const k of SERVICE_SPEC) {
        const v = o.spec[k];
        if (v === undefined) continue;
        // clusterIPs that hold just clusterIP say nothing more (state.ts reads clusterIP without them).
        if (k === 'clusterIPs' && Array.isArray(v) && v.length === 1 && v[0] === o.spec['clusterIP'])
          continue;
        spec[k] = k === 'ports' ? ports(v) : v;
      }
      out['spec'] = spec;
    } else if (o.spec !== undefined) out['spec'] = o.spec;
    const lb = isRec(o.status) ? o.status['loadBalancer'] : undefined;
    // Its ingress is all the readers take of status (an empty loadBalancer, most Services', reads the same).
    if (isRec(lb) && lb['ingress'] !== undefined)
      out['status'] = { loadBalancer: { ingress: lb['ingress'] } };
    return out as unknown as KObject;
  };

  const slices: TransformFunc = (obj) => {
    const packed = packSlice(obj, { intern, targetRefs: false });
    const out: KObject & PrepackedSlice = {
      metadata: meta(obj.metadata, SLICE_LABELS, SLICE_ANNOTATIONS),
      // Most slices' endpoints are all ready: one list of their conditions for all slices of a length.
      [PACKED_ENDPOINTS]: { ...packed, conditions: shared(packed.conditions) },
    };
    return out;
  };

  const nodes: TransformFunc = (obj) => {
    const o = obj as KObject & { status?: unknown };
    const { name, resourceVersion, deletionTimestamp, labels } = o.metadata;
    const m: ObjectMeta = {};
    if (name !== undefined) m.name = name;
    if (resourceVersion !== undefined) m.resourceVersion = resourceVersion;
    if (deletionTimestamp !== undefined) m.deletionTimestamp = deletionTimestamp;
    if (labels !== undefined) m.labels = labels;
    const out: Rec = {};
    out['metadata'] = m;
    if (isRec(o.status) && o.status['addresses'] !== undefined)
      out['status'] = { addresses: o.status['addresses'] };
    return out as unknown as KObject;
  };

  return { services, slices, nodes };
}
