// The kubelet's `GET /pods` answer (a v1 PodList) as the offline rewrite reads it: the pods bound to one
// node, by `namespace/name`, and a signature of what the rewrite reads of them, so an unchanged answer
// costs nothing.
import { isPlainObject } from '../../api/json.js';
import { compareBytes, list, rec, str } from '../endpoints/read.js';
import type { Pod } from '../endpoints/types.js';

/** The node's pods (spec.nodeName == node) of a PodList body, by `namespace/name`; throws when it is not one. */
export function nodePods(body: unknown, node: string): Map<string, Pod> {
  if (!isPlainObject(body) || body['kind'] !== 'PodList' || !Array.isArray(body['items']))
    throw new Error('not a v1 PodList');
  const out = new Map<string, Pod>();
  for (const raw of list(body['items'])) {
    if (!isPlainObject(raw)) continue;
    const pod = raw as unknown as Pod;
    const meta = rec(pod.metadata);
    if (str(rec(pod.spec)['nodeName']) !== node || str(meta['name']) === '') continue;
    out.set(`${str(meta['namespace'])}/${str(meta['name'])}`, pod);
  }
  return out;
}

/** What the rewrite reads of the pods, as one string: equal signatures rewrite alike. */
export function podsSignature(pods: ReadonlyMap<string, Pod>): string {
  return JSON.stringify(
    sorted(pods).map(([key, p]) => [
      key,
      p.metadata.uid ?? '',
      p.metadata.labels ?? {},
      p.metadata.deletionTimestamp ?? null,
      p.spec ?? {},
      p.status ?? {},
    ]),
  );
}

/** What selecting reads of the pods (names and labels): the Services that select them change with it. */
export function podLabelsSignature(pods: ReadonlyMap<string, Pod>): string {
  return JSON.stringify(sorted(pods).map(([key, p]) => [key, p.metadata.labels ?? {}]));
}

const sorted = (pods: ReadonlyMap<string, Pod>): [string, Pod][] =>
  [...pods].sort(([a], [b]) => compareBytes(a, b));
