// What the wrapper serves of each upstream object, given the topology view of the object's Service. Pure.
//
// - Services and Nodes pass through unchanged.
// - A Service whose deciding rule is an edge rule (ordered keys, SuperEdge, OpenYurt): its EndpointSlices
//   and Endpoints carry exactly the endpoints the engine keeps for this node, and slices lose their hints,
//   so a stock kube-proxy behind the wrapper computes the same answer (it would otherwise apply the hints
//   on top of the unit filter).
// - Any other Service (hints, no rule): its slices and Endpoints pass through; kube-proxy applies hints
//   and traffic policies itself, from the fields the wrapper leaves in place. Only the endpoints on nodes
//   the health source reports unhealthy (edge autonomy) are left out, hints and all.
// - `default/kubernetes`: with the annotations superedge.io/local-endpoint (an IP) and
//   superedge.io/local-port (a port) on the Endpoints or the slice, it is rewritten to that one address,
//   as SuperEdge's wrapper does for edge nodes that reach a local API server cache (unless
//   ServeOptions.localApiserver is false: SuperEdge's --wrapper-in-cluster=false). The rewrite follows the
//   annotations on every change of the object, annotations alone included (SuperEdge's B8).
import { recordOf as rec } from '../../api/json.js';
import type { KObject } from '../../api/object.js';
import { parseIP } from '../../api/validation/ip.js';
import { LABEL_SERVICE_NAME } from '../endpointslices/types.js';
import { slicePool } from './endpoints.js';
import type { TopologyView } from './view.js';
import type { TopologyEndpoint } from './types.js';

export const LOCAL_ENDPOINT_ANNOTATION = 'superedge.io/local-endpoint';
export const LOCAL_PORT_ANNOTATION = 'superedge.io/local-port';

/** Whether the view's rule filters endpoints in the wrapper (an edge rule), or leaves it to kube-proxy. */
export const viewFilters = (view: TopologyView | undefined): boolean =>
  view !== undefined &&
  (view.internalRule.kind === 'ordered-keys' ||
    view.internalRule.kind === 'superedge' ||
    view.internalRule.kind === 'openyurt');

// A view is immutable (the index replaces it on change), so its id set is built once for all its slices.
const idSets = new WeakMap<TopologyView, Set<string>>();
export const keptIds = (view: TopologyView): Set<string> => {
  let ids = idSets.get(view);
  if (ids === undefined) idSets.set(view, (ids = new Set(view.internal.map((e: TopologyEndpoint) => e.id))));
  return ids;
};
const keptAddresses = (view: TopologyView): Set<string> =>
  new Set(view.internal.flatMap((e: TopologyEndpoint) => e.addresses));

type Obj = Record<string, unknown>;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The local API server address the annotations name, or undefined when they are absent or invalid. */
export function localApiserver(obj: KObject): { ip: string; port: number } | undefined {
  const a = obj.metadata.annotations ?? {};
  const ip = a[LOCAL_ENDPOINT_ANNOTATION];
  const portText = a[LOCAL_PORT_ANNOTATION];
  if (ip === undefined || portText === undefined || parseIP(ip) === undefined || !/^\d{1,5}$/.test(portText))
    return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { ip, port } : undefined;
}

export const isKubernetes = (obj: KObject, serviceName: string | undefined): boolean =>
  obj.metadata.namespace === 'default' && serviceName === 'kubernetes';

/** How the served forms are made, beyond the view. */
export interface ServeOptions {
  /**
   * Rewrite `default/kubernetes` to the address its superedge.io/local-endpoint and local-port
   * annotations name (SuperEdge's --wrapper-in-cluster, default true).
   */
  readonly localApiserver?: boolean;
}

/** The slice as served to this node. `view` is its Service's view (undefined: no Service, pass through). */
export function servedSlice(
  slice: KObject,
  view: TopologyView | undefined,
  opts: ServeOptions = {},
): KObject {
  const serviceName = slice.metadata.labels?.[LABEL_SERVICE_NAME];
  if (opts.localApiserver !== false && isKubernetes(slice, serviceName)) {
    const local = localApiserver(slice);
    if (local !== undefined) {
      return {
        ...slice,
        addressType: local.ip.includes(':') ? 'IPv6' : 'IPv4',
        endpoints: [
          { addresses: [local.ip], conditions: { ready: true, serving: true, terminating: false } },
        ],
        ports: [{ name: 'https', protocol: 'TCP', port: local.port }],
      };
    }
  }
  if (!viewFilters(view)) {
    const gone = view?.unhealthy?.ids;
    if (gone === undefined) return slice;
    const at = slicePool(slice);
    const endpoints = arr(slice['endpoints']).filter((e) => {
      const first = arr(rec(e)['addresses'])[0];
      return !(typeof first === 'string' && gone.has(`${at}/${first}`));
    });
    return { ...slice, endpoints };
  }
  const kept = keptIds(view!);
  const pool = slicePool(slice);
  const endpoints = arr(slice['endpoints'])
    .map(rec)
    .filter((e) => {
      const first = arr(e['addresses'])[0];
      return typeof first === 'string' && kept.has(`${pool}/${first}`);
    })
    .map(({ hints: _hints, ...rest }) => rest);
  return { ...slice, endpoints };
}

/** The Endpoints object as served to this node. */
export function servedEndpoints(
  ep: KObject,
  view: TopologyView | undefined,
  opts: ServeOptions = {},
): KObject {
  if (opts.localApiserver !== false && isKubernetes(ep, ep.metadata.name)) {
    const local = localApiserver(ep);
    if (local !== undefined)
      return {
        ...ep,
        subsets: [
          { addresses: [{ ip: local.ip }], ports: [{ name: 'https', port: local.port, protocol: 'TCP' }] },
        ],
      };
  }
  const gone = view?.unhealthy?.addresses;
  if (!viewFilters(view) && gone === undefined) return ep;
  const kept = viewFilters(view) ? keptAddresses(view!) : undefined;
  const keep = (ip: string): boolean => (kept === undefined ? !gone!.has(ip) : kept.has(ip));
  const subsets = arr(ep['subsets'])
    .map(rec)
    .map((s) => {
      const out: Obj = { ...s };
      for (const field of ['addresses', 'notReadyAddresses']) {
        if (s[field] === undefined) continue;
        const list = arr(s[field]).filter((a) => keep(String(rec(a)['ip'])));
        if (list.length > 0) out[field] = list;
        else delete out[field];
      }
      return out;
    })
    .filter((s) => s['addresses'] !== undefined || s['notReadyAddresses'] !== undefined);
  return { ...ep, subsets };
}
