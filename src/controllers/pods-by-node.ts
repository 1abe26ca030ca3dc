// The pods bound to a node, from the shared pods informer: the node lifecycle controller marks them
// not Ready, the taint eviction controller revisits them when the node's NoExecute taints change.
import type { KObject } from '../api/object.js';
import type { Pod } from '../core/nodelifecycle/types.js';
import type { IndexFunc, Informer } from '../runtime/informer.js';

const BY_NODE = 'nodelifecycle:nodeName';
const byNodeName: IndexFunc = (o) => {
  const n = (o as Pod).spec?.nodeName;
  return n === undefined || n === '' ? [] : [n];
};

/** The indexers a pods informer needs for podsOnNode (add them when asking the factory for it). */
export const podsByNodeIndexers = { [BY_NODE]: byNodeName } as const;

export const podsOnNode = (pods: Informer, node: string): KObject[] => pods.indexer.byIndex(BY_NODE, node);
