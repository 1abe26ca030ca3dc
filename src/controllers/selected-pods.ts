// The pods a Service selects, from the shared pods informer, without scanning its whole namespace: the
// pods informer is indexed by namespace and label pair (byNamespaceLabel), and a selector's candidates
// are the pods of its rarest pair, then checked against the whole selector.
import { selectorOf, selectsPod, type Pod, type Service } from '../core/endpoints/endpoints.js';
import { byNamespaceLabel, namespaceLabelKey, type Informer } from '../runtime/informer.js';

export const POD_LABEL_INDEX = 'namespaceLabel';

/** The indexers a pods informer needs for selectedPods (add them when asking the factory for it). */
export const podLabelIndexers = { [POD_LABEL_INDEX]: byNamespaceLabel } as const;

export function selectedPods(pods: Informer, service: Service): Pod[] {
  const pairs = selectorOf(service);
  if (pairs === null) return [];
  const namespace = service.metadata.namespace ?? '';
  const indexer = pods.indexer;
  // With no pair (`{}` selects the whole namespace) the candidates are the namespace's pods.
  let index = 'namespace';
  let candidates = namespace;
  let smallest = Infinity;
  for (const [k, v] of pairs) {
    const key = namespaceLabelKey(namespace, k, v);
    const n = indexer.indexCount(POD_LABEL_INDEX, key);
    if (n < smallest) {
      smallest = n;
      candidates = key;
      index = POD_LABEL_INDEX;
    }
  }
  return (indexer.byIndex(index, candidates) as Pod[]).filter((p) => selectsPod(service, p));
}
