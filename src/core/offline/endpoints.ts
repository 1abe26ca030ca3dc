// The offline rewrite of one served Endpoints object from its node's kubelet: the v1 counterpart of
// slices.ts, in upstream's terms (pkg/controller/endpoint's syncService: podToEndpointAddressForService,
// ShouldPodBeInEndpoints, addresses for ready pods and notReadyAddresses for the others, repacked).
// The addresses whose targetRef is a Pod on this node are recomputed from the kubelet's pods (the ones it
// no longer lists are dropped); a pod of this node the Service selects and the object does not name is
// added; the other nodes' addresses stay. Without the Service (unknown), the object is left as it is.
import type { KObject } from '../../api/object.js';
import { desiredSubsets, selectsPod } from '../endpoints/endpoints.js';
import { list, rec } from '../endpoints/read.js';
import { endpointSubsetsEqual, repackSubsets } from '../endpoints/repack.js';
import type { EndpointAddress, EndpointSubset, Pod, Service } from '../endpoints/types.js';
import { isLocalPodRef, readOfflineMark, refKey, withOfflineMark } from './mark.js';
import type { OfflineContext } from './slices.js';

/** The rewritten Endpoints: the same object when nothing changes. */
export function rewriteEndpoints(
  endpoints: KObject,
  service: Service | undefined,
  ctx: OfflineContext,
): KObject {
  if (service === undefined) return endpoints;
  const subsets = list(endpoints['subsets']) as EndpointSubset[];
  const named = new Set<string>();
  const localNamed = new Set<string>();
  const kept: EndpointSubset[] = [];
  for (const s of subsets) {
    const keep = (addrs: readonly EndpointAddress[] | undefined) =>
      list(addrs).filter((a) => {
        named.add(refKey(a));
        if (!isLocalPodRef(a, ctx.node)) return true;
        localNamed.add(refKey(a));
        return false;
      }) as EndpointAddress[];
    const addresses = keep(s.addresses);
    const notReady = keep(s.notReadyAddresses);
    if (addresses.length + notReady.length > 0)
      kept.push({
        ...(addresses.length > 0 ? { addresses } : {}),
        ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
        ...(s.ports === undefined ? {} : { ports: s.ports }),
      });
  }
  const pods: Pod[] = [];
  for (const [key, pod] of ctx.pods)
    if (localNamed.has(key) || (!named.has(key) && selectsPod(service, pod))) pods.push(pod);
  const next = repackSubsets([...kept, ...desiredSubsets(service, pods)]);
  const touched = !endpointSubsetsEqual(next, subsets);
  const had = readOfflineMark(endpoints);
  if (!touched && had === undefined) return endpoints;
  const out = touched ? next : subsets;
  const local = new Set<string>();
  for (const s of out)
    for (const a of [...list(s.addresses), ...list(s.notReadyAddresses)])
      if (isLocalPodRef(a, ctx.node)) local.add(rec(a)['ip'] as string);
  if (!touched && had!.endpoints === local.size) return endpoints;
  return withOfflineMark(touched ? { ...endpoints, subsets: next } : endpoints, {
    since: had?.since ?? ctx.since,
    endpoints: local.size,
  });
}
