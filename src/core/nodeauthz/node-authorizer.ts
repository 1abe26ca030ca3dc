// kube-apiserver's Node authorization mode (plugin/pkg/auth/authorizer/node/node_authorizer.go), as it
// behaves with AuthorizeNodeWithSelectors (on by default since 1.32): what a kubelet, authenticated as
// user system:node:NAME in group system:nodes, may do. Anyone else gets no opinion, so the next mode
// decides. The decision is pure: the one fact it needs from the server's state, which node a pod is
// bound to, comes in through `lookups`.
//
// Per resource:
//   nodes          create/update/patch any (NodeRestriction admission keeps a node to its own);
//                  get/list/watch only its own (by name; a list names it with fieldSelector metadata.name)
//   nodes/status   update/patch (NodeRestriction: its own)
//   pods           get one bound to it; list/watch only with fieldSelector spec.nodeName=NAME;
//                  create/delete (NodeRestriction: mirror pods, pods bound to it)
//   pods/status    update/patch (NodeRestriction: pods bound to it); pods/eviction create
//   leases         get/create/update/patch/delete in kube-node-lease, named as the node (create: admission)
//   the rest       upstream's static node rules (bootstrappolicy NodeRules), plus reads of endpoints and
//                  EndpointSlices, which svcplane's node agents watch as the node.
import type { AccessRequest } from '../authz/access-request.js';

/** kube's user.NodesGroup and the user name prefix of node identities. */
export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';
/** api.NamespaceNodeLease: where node heartbeats (Leases) live. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** What the Node mode is asked (core/authz/access-request.ts). */
export type NodeRequest = AccessRequest;

export interface NodeDecision {
  readonly decision: 'allow' | 'no-opinion';
  readonly reason: string;
}

/** What the decision needs from the server's state. */
export interface NodeLookups {
  /** spec.nodeName of pod namespace/name ('' when unscheduled); undefined when there is no such pod. */
  podNodeName(namespace: string, name: string): string | undefined;
}

/**
 * kube's default NodeIdentifier: the node name when `user` is a node (name system:node:NAME and
 * member of system:nodes; NAME may be '' and is then refused by the callers), undefined otherwise.
 */
export function nodeIdentity(user: NodeRequest['user']): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}

/** A static rule: verbs on group/resource[/subresource] names. */
export interface NodeRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
}

const READ = ['get', 'list', 'watch'];

/**
 * The rules every node holds whatever the object (upstream's NodeRules, less what this API server does
 * not serve, plus endpoints and EndpointSlices reads). Nodes, pods and leases are decided per object above.
 */
export const NODE_STATIC_RULES: readonly NodeRule[] = [
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['subjectaccessreviews', 'localsubjectaccessreviews'],
  },
  { verbs: READ, apiGroups: [''], resources: ['services', 'endpoints'] },
  { verbs: READ, apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'] },
  { verbs: ['create', 'update', 'patch'], apiGroups: ['', 'events.k8s.io'], resources: ['events'] },
  {
    verbs: ['create', 'get', 'list', 'watch'],
    apiGroups: ['certificates.k8s.io'],
    resources: ['certificatesigningrequests'],
  },
];

const ALLOW: NodeDecision = { decision: 'allow', reason: '' };
const noOpinion = (reason = ''): NodeDecision => ({ decision: 'no-opinion', reason });

function staticRulesAllow(req: NodeRequest): boolean {
  const resource = req.subresource === '' ? req.resource : `${req.resource}/${req.subresource}`;
  return NODE_STATIC_RULES.some(
    (r) => r.verbs.includes(req.verb) && r.apiGroups.includes(req.apiGroup) && r.resources.includes(resource),
  );
}

/** The Node mode's answer for one request. */
export function authorizeNodeRequest(req: NodeRequest, lookups: NodeLookups): NodeDecision {
  const node = nodeIdentity(req.user);
  if (node === undefined) return noOpinion();
  // The only such name is the bare prefix.
  if (node === '') return noOpinion(`unknown node for user "${NODE_USER_PREFIX}"`);
  if (!req.resourceRequest) return noOpinion();
  if (req.apiGroup === '' && req.resource === 'nodes') return nodeObject(node, req);
  if (req.apiGroup === '' && req.resource === 'pods') return podObject(node, req, lookups);
  if (req.apiGroup === 'coordination.k8s.io' && req.resource === 'leases') return lease(node, req);
  return staticRulesAllow(req) ? ALLOW : noOpinion();
}

function nodeObject(node: string, req: NodeRequest): NodeDecision {
  if (req.subresource === 'status') {
    return req.verb === 'update' || req.verb === 'patch' ? ALLOW : noOpinion();
  }
  if (req.subresource !== '') return noOpinion();
  switch (req.verb) {
    case 'create':
    case 'update':
    case 'patch':
      return ALLOW;
    case 'get':
    case 'list':
    case 'watch':
      // By name, not by whether the Node exists: a kubelet reads its Node before registering it.
      if (req.name === node) return ALLOW;
      return req.name === ''
        ? noOpinion(`node '${node}' cannot read all nodes, only its own Node object`)
        : noOpinion(`node '${node}' cannot read '${req.name}', only its own Node object`);
    default:
      return noOpinion();
  }
}

function podObject(node: string, req: NodeRequest, lookups: NodeLookups): NodeDecision {
  switch (req.subresource) {
    case '':
      switch (req.verb) {
        case 'get':
          return boundPod(node, req, lookups);
        case 'list':
        case 'watch':
          if (
            (req.fieldSelector ?? []).some(
              (f) => f.field === 'spec.nodeName' && f.operator !== 'NotEquals' && f.value === node,
            )
          )
            return ALLOW;
          if (req.name !== '') return boundPod(node, req, lookups);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        case 'create':
        case 'delete':
          return ALLOW;
        default:
          return noOpinion();
      }
    case 'status':
      return req.verb === 'update' || req.verb === 'patch' ? ALLOW : noOpinion();
    case 'eviction':
      return req.verb === 'create' ? ALLOW : noOpinion();
    default:
      return noOpinion();
  }
}

/** A single pod, allowed when it is bound to `node` (upstream: a path from the pod to the node in its graph). */
function boundPod(node: string, req: NodeRequest, lookups: NodeLookups): NodeDecision {
  if (req.name === '') return noOpinion('No Object name found');
  if (lookups.podNodeName(req.namespace, req.name) === node) return ALLOW;
  return noOpinion(`no relationship found between node '${node}' and this object`);
}

function lease(node: string, req: NodeRequest): NodeDecision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(req.verb)) {
    return noOpinion('can only get, create, update, patch, or delete a node lease');
  }
  if (req.namespace !== NODE_LEASE_NAMESPACE) {
    return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  }
  // A create names its object in the body: NodeRestriction admission checks it there.
  if (req.verb !== 'create' && req.name !== node) {
    return noOpinion('can only access node lease with the same name as the requesting node');
  }
  return ALLOW;
}
