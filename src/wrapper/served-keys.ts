// What the wrapper's sync keeps per served object: the resources it serves, which object a store key
// names, and the hash a served form is compared by.
import { mustFindResource, type ResourceInfo } from '../api/resources.js';
import { resourcePrefix } from '../api/codec.js';
import { hash53 } from '../core/hash.js';
import { servedContent } from '../core/topology/served-text.js';

export const SERVICES = mustFindResource('', 'services');
export const ENDPOINTS = mustFindResource('', 'endpoints');
export const ENDPOINTSLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
export const NODES = mustFindResource('', 'nodes');
export const SERVED: readonly ResourceInfo[] = [SERVICES, ENDPOINTS, ENDPOINTSLICES, NODES];

/** What the store holds for a key. */
export interface Held {
  readonly revision: number;
  /** contentHash() of the held form. */
  readonly hash: number;
}

/**
 * The hash a served form is compared by. A slice's or Endpoints' generation and trigger time move with
 * every change to the Service's endpoints, this node's or not: they are left out, so a change the node
 * is not served writes nothing and sends its clients no event (the next write that does change the view
 * carries the upstream's metadata of that moment). Services and Nodes pass through whole.
 */
export const contentHash = (r: ResourceInfo, form: string): number =>
  hash53(r === ENDPOINTSLICES || r === ENDPOINTS ? servedContent(form) : form);

export interface Dirty {
  readonly r: ResourceInfo;
  readonly namespace: string;
  readonly name: string;
}

export type Kind = 'services' | 'endpoints' | 'slices' | 'nodes';

export const RESOURCE_OF: Record<Kind, ResourceInfo> = {
  services: SERVICES,
  endpoints: ENDPOINTS,
  slices: ENDPOINTSLICES,
  nodes: NODES,
};

/** The served object a store key names, or undefined for a key outside the served resources. */
export function dirtyOf(key: string): Dirty | undefined {
  for (const r of SERVED) {
    const prefix = resourcePrefix(r);
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length).split('/');
    return r.namespaced
      ? { r, namespace: rest[0] ?? '', name: rest.slice(1).join('/') }
      : { r, namespace: '', name: rest.join('/') };
  }
  return undefined;
}
