// What the proxy's informers keep of each object (client-go TransformFuncs, as kube-proxy keeps only the
// typed fields its change trackers read): a node proxy holds every Service, EndpointSlice and Node of the
// cluster, and at 10,000 Services most of what the API sends is never read. Each transform keeps what the
// proxy reads:
//   - Services: name, namespace, resourceVersion, the labels that make a Service another proxy's or
//     headless (core/proxy/state.ts), the annotations the topology rules read (core/topology/rules.ts),
//     spec without the selector, and status.loadBalancer, in the shape they were sent;
//   - EndpointSlices: name, namespace, resourceVersion, deletionTimestamp, the service-name label
//     (core/topology/slice-service.ts), the last-change-trigger-time annotation (sync.ts), and the
//     endpoints already packed as the proxy's topology index holds them (core/topology/endpoints.ts:
//     PrepackedSlice, without targetRefs, which that index leaves out): the index keeps the same arrays,
//     so a slice's endpoints are held once, in about a third of the memory of the objects JSON gave;
//   - Nodes: name, resourceVersion, labels (the topology rules) and status.addresses (nodeHostIPs).
// Strings that repeat across objects (namespaces, node names, zones, pools) are kept once.
import type { KObject, ObjectMeta } from '../api/object.js';
import { ENGINE_ANNOTATIONS } from '../core/topology/rules.js';
import { PACKED_ENDPOINTS, packSlice, type PrepackedSlice } from '../core/topology/endpoints.js';
import { LABEL_SERVICE_NAME, LAST_CHANGE_TRIGGER_TIME_ANNOTATION } from '../core/endpointslices/types.js';
import { HEADLESS_LABEL, SERVICE_PROXY_NAME_LABEL } from '../core/proxy/state.js';
import type { TransformFunc } from '../runtime/informer.js';

const SERVICE_LABELS: ReadonlySet<string> = new Set([SERVICE_PROXY_NAME_LABEL, HEADLESS_LABEL]);
const SLICE_LABELS: ReadonlySet<string> = new Set([LABEL_SERVICE_NAME]);
const SLICE_ANNOTATIONS: ReadonlySet<string> = new Set([LAST_CHANGE_TRIGGER_TIME_ANNOTATION]);

/** Past this many distinct strings the intern table starts over (it only saves memory). */
const INTERN_LIMIT = 50_000;

type Rec = Record<string, unknown>;

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The entries of `m` whose key is in `keep`; undefined when none (or `m` is not a map). */
function only(m: unknown, keep: ReadonlySet<string>): Record<string, string> | undefined {
  if (!isRec(m)) return undefined;
  let out: Record<string, string> | undefined;
  for (const k of keep) if (Object.hasOwn(m, k)) (out ??= {})[k] = m[k] as string;
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
  const meta = (m: ObjectMeta, labels: ReadonlySet<string>, annotations: ReadonlySet<string>): ObjectMeta => {
    const out: ObjectMeta = {};
    if (m.name !== undefined) out.name = m.name;
    if (m.namespace !== undefined) out.namespace = intern(m.namespace);
    if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
    if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
    const l = only(m.labels, labels);
    if (l !== undefined) out.labels = l;
    const a = only(m.annotations, annotations);
    if (a !== undefined) out.annotations = a;
    return out;
  };

  const services: TransformFunc = (obj) => {
    const o = obj as KObject & { spec?: unknown; status?: unknown };
    const out: Rec = {};
    out['metadata'] = meta(o.metadata, SERVICE_LABELS, ENGINE_ANNOTATIONS);
    if (isRec(o.spec)) {
      const { selector: _selector, ...spec } = o.spec;
      out['spec'] = spec;
    } else if (o.spec !== undefined) out['spec'] = o.spec;
    if (isRec(o.status) && o.status['loadBalancer'] !== undefined)
      out['status'] = { loadBalancer: o.status['loadBalancer'] };
    return out as unknown as KObject;
  };

  const slices: TransformFunc = (obj) => {
    const out: KObject & PrepackedSlice = {
      metadata: meta(obj.metadata, SLICE_LABELS, SLICE_ANNOTATIONS),
      [PACKED_ENDPOINTS]: packSlice(obj, { intern, targetRefs: false }),
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
