// --authorization-mode=Node: kube-apiserver's Node authorizer over this server's own state. The decision
// is core/nodeauthz/node-authorizer.ts; here it becomes an Authorizer and a RuleResolver, and learns
// which node a pod is bound to from the watch cache (synchronously, as upstream's graph answers).
import { mustFindResource } from '../../api/resources.js';
import {
  authorizeNodeRequest,
  nodeIdentity,
  NODE_STATIC_RULES,
  type NodeLookups,
} from '../../core/nodeauthz/node-authorizer.js';
import type { NodeRestrictionLookups } from '../../core/nodeauthz/node-restriction.js';
import { objectKey } from '../codec.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import type { RuleResolver, SubjectRules } from './rules.js';
import type { Authorizer } from './types.js';

export type { NodeLookups } from '../../core/nodeauthz/node-authorizer.js';

const PODS = mustFindResource('', 'pods');
const NODES = mustFindResource('', 'nodes');

/** The Node mode, asking `lookups` which node a pod is bound to. */
export const nodeAuthorizer =
  (lookups: NodeLookups): Authorizer =>
  (attrs) =>
    authorizeNodeRequest(attrs, lookups);

const NODE_RULES: SubjectRules = {
  resourceRules: NODE_STATIC_RULES,
  nonResourceRules: [],
  // Its own Node, Lease and pods are allowed per object, which rules cannot say.
  incomplete: true,
};
const NO_RULES: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false };

/**
 * The Node mode's part of a SelfSubjectRulesReview: for a node, the rules that hold whatever the object,
 * marked incomplete (upstream lists none and is incomplete too); nothing for anyone else.
 */
export const nodeRules: RuleResolver = (user) => (nodeIdentity(user) === undefined ? NO_RULES : NODE_RULES);

/** The lookups the Node mode and NodeRestriction need, answered from `cache`. */
export function cacheNodeLookups(cache: WatchCache): NodeLookups & NodeRestrictionLookups {
  return {
    podNodeName: (namespace, name) =>
      cache.get(PODS, objectKey(PODS, namespace, name))?.fields['spec.nodeName'],
    nodeUid: (name) => {
      const cached = cache.get(NODES, objectKey(NODES, '', name));
      if (cached === undefined) return undefined;
      return (JSON.parse(cached.json) as { metadata: { uid?: string } }).metadata.uid ?? '';
    },
  };
}
