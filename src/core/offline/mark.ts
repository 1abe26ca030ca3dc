// The visible trace of an offline rewrite (src/core/offline/slices.ts, endpoints.ts): an annotation on
// each served EndpointSlice or Endpoints the wrapper rewrote from its node's kubelet while the upstream
// API server was away, and the condition `svcplane explain` prints when it reads one (docs/wrapper.md,
// "Offline: the node's own pods").
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { int, rec, str } from '../endpoints/read.js';

/**
 * On a served object rewritten from the kubelet: `{"since":"<RFC 3339>","endpoints":N}`, since = when the
 * rewriting began (kept across rewrites and restarts), N = the object's endpoints (a slice's endpoints,
 * an Endpoints object's addresses) that now come from the kubelet.
 */
export const OFFLINE_ANNOTATION = 'svcplane.io/offline-local-pods';

/** `endpointslice.kubernetes.io/managed-by` of a slice the rewrite created (no served slice fit a pod). */
export const OFFLINE_MANAGED_BY = 'svcplane-wrapper-offline';

export interface OfflineMark {
  readonly since: string;
  readonly endpoints: number;
}

/** The mark on an object, or undefined (absent, or not the format). */
export function readOfflineMark(obj: KObject): OfflineMark | undefined {
  const raw = rec(obj.metadata.annotations)[OFFLINE_ANNOTATION];
  if (typeof raw !== 'string') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isPlainObject(v)) return undefined;
  const since = str(v['since']);
  const endpoints = int(v['endpoints']);
  return since === '' || endpoints === undefined ? undefined : { since, endpoints };
}

/** The object with the mark set (the other annotations kept, in their order). */
export function withOfflineMark<T extends KObject>(obj: T, mark: OfflineMark): T {
  const value = JSON.stringify({ since: mark.since, endpoints: mark.endpoints });
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [OFFLINE_ANNOTATION]: value },
    },
  };
}

/** What `svcplane explain` reports when the objects it read carry the mark (`-o json`: `conditions`). */
export interface OfflineCondition {
  readonly type: 'OfflineLocalPods';
  readonly status: 'True';
  readonly reason: 'RewrittenFromKubelet';
  readonly message: string;
  /** The earliest `since` of the marks. */
  readonly since: string;
  /** The marked objects' names. */
  readonly objects: readonly string[];
  /** Their endpoints taken from the kubelet, summed. */
  readonly endpoints: number;
}

/** The condition for these objects (a Service's slices, or its Endpoints), or undefined when none is marked. */
export function offlineCondition(objects: readonly KObject[]): OfflineCondition | undefined {
  const marked = objects.flatMap((o) => {
    const mark = readOfflineMark(o);
    return mark === undefined ? [] : [{ name: str(o.metadata.name), mark }];
  });
  if (marked.length === 0) return undefined;
  const since = marked.map((m) => m.mark.since).sort()[0]!;
  const endpoints = marked.reduce((n, m) => n + m.mark.endpoints, 0);
  const names = marked.map((m) => m.name);
  return {
    type: 'OfflineLocalPods',
    status: 'True',
    reason: 'RewrittenFromKubelet',
    message:
      `rewritten from the node's kubelet while the upstream API server was away (since ${since}): ` +
      `${endpoints} endpoint${endpoints === 1 ? '' : 's'} of this node's pods in ${names.join(', ')}; ` +
      `the other endpoints are as last seen upstream`,
    since,
    objects: names,
    endpoints,
  };
}

/** Whether a raw endpoint or address is one of `node`'s pods: nodeName is the node, targetRef a Pod. */
export function isLocalPodRef(raw: unknown, node: string): boolean {
  const e = rec(raw);
  return str(e['nodeName']) === node && str(rec(e['targetRef'])['kind']) === 'Pod';
}

/** `namespace/name` of a raw endpoint's or address's targetRef ("" when it has none). */
export function refKey(raw: unknown): string {
  const ref = rec(rec(raw)['targetRef']);
  if (!isPlainObject(rec(raw)['targetRef'])) return '';
  return `${str(ref['namespace'])}/${str(ref['name'])}`;
}
