// The Node mode, table-driven from upstream's semantics (node_authorizer.go with AuthorizeNodeWithSelectors):
// every verb and resource a kubelet uses, its own objects against another node's, and the reason texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseFieldSelector } from '../selectors/fields.js';
import { authorizeNodeRequest, nodeIdentity, type NodeLookups, type NodeRequest } from './node-authorizer.js';

const N1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

/** Pods web-a (on n1), web-b (on n2) and pending (unscheduled), in default. */
const pods: NodeLookups = {
  podNodeName: (ns, name) =>
    ns !== 'default'
      ? undefined
      : ({ 'web-a': 'n1', 'web-b': 'n2', pending: '' } as Record<string, string>)[name],
};

function req(
  verb: string,
  resource: string,
  opts: Partial<Omit<NodeRequest, 'fieldSelector'>> & { fieldSelector?: string } = {},
): NodeRequest {
  const [res, sub = ''] = resource.split('/');
  const { fieldSelector, ...rest } = opts;
  return {
    user: N1,
    verb,
    resourceRequest: true,
    apiGroup: '',
    namespace: '',
    resource: res!,
    subresource: sub,
    name: '',
    path: '',
    ...(fieldSelector === undefined ? {} : { fieldSelector: parseFieldSelector(fieldSelector).requirements }),
    ...rest,
  };
}

const ALLOW = { decision: 'allow', reason: '' };
const no = (reason = ''): { decision: string; reason: string } => ({ decision: 'no-opinion', reason });
const NO_RELATIONSHIP = no("no relationship found between node 'n1' and this object");
const LEASES = { apiGroup: 'coordination.k8s.io', namespace: 'kube-node-lease' };

const table: [string, NodeRequest, { decision: string; reason: string }][] = [
  // nodes
  ['get its own Node', req('get', 'nodes', { name: 'n1' }), ALLOW],
  [
    'get another Node',
    req('get', 'nodes', { name: 'n2' }),
    no("node 'n1' cannot read 'n2', only its own Node object"),
  ],
  ['list all nodes', req('list', 'nodes'), no("node 'n1' cannot read all nodes, only its own Node object")],
  ['watch all nodes', req('watch', 'nodes'), no("node 'n1' cannot read all nodes, only its own Node object")],
  ['list its own Node by metadata.name', req('list', 'nodes', { name: 'n1' }), ALLOW],
  ['watch its own Node by metadata.name', req('watch', 'nodes', { name: 'n1' }), ALLOW],
  ['create a Node (admission checks which)', req('create', 'nodes'), ALLOW],
  ['update its Node', req('update', 'nodes', { name: 'n1' }), ALLOW],
  ['patch its Node', req('patch', 'nodes', { name: 'n1' }), ALLOW],
  ['update nodes/status', req('update', 'nodes/status', { name: 'n1' }), ALLOW],
  ['patch nodes/status', req('patch', 'nodes/status', { name: 'n1' }), ALLOW],
  ['get nodes/status', req('get', 'nodes/status', { name: 'n1' }), no()],
  ['delete its Node', req('delete', 'nodes', { name: 'n1' }), no()],
  ['delete another Node', req('delete', 'nodes', { name: 'n2' }), no()],
  ['deletecollection nodes', req('deletecollection', 'nodes'), no()],
  ['nodes/proxy', req('get', 'nodes/proxy', { name: 'n1' }), no()],
  // pods
  ['get its own pod', req('get', 'pods', { namespace: 'default', name: 'web-a' }), ALLOW],
  ["get another node's pod", req('get', 'pods', { namespace: 'default', name: 'web-b' }), NO_RELATIONSHIP],
  ['get an unscheduled pod', req('get', 'pods', { namespace: 'default', name: 'pending' }), NO_RELATIONSHIP],
  [
    'get a pod that does not exist',
    req('get', 'pods', { namespace: 'default', name: 'gone' }),
    NO_RELATIONSHIP,
  ],
  [
    'get a pod in another namespace',
    req('get', 'pods', { namespace: 'other', name: 'web-a' }),
    NO_RELATIONSHIP,
  ],
  ['list pods', req('list', 'pods'), no('can only list/watch pods with spec.nodeName field selector')],
  ['watch pods', req('watch', 'pods'), no('can only list/watch pods with spec.nodeName field selector')],
  ['list pods on n1', req('list', 'pods', { fieldSelector: 'spec.nodeName=n1' }), ALLOW],
  ['watch pods on n1 (==)', req('watch', 'pods', { fieldSelector: 'spec.nodeName==n1' }), ALLOW],
  [
    'list pods on n1 in a namespace, with more terms',
    req('list', 'pods', { namespace: 'default', fieldSelector: 'status.phase=Running,spec.nodeName=n1' }),
    ALLOW,
  ],
  [
    'list pods on n2',
    req('list', 'pods', { fieldSelector: 'spec.nodeName=n2' }),
    no('can only list/watch pods with spec.nodeName field selector'),
  ],
  [
    'list pods not on n1',
    req('list', 'pods', { fieldSelector: 'spec.nodeName!=n1' }),
    no('can only list/watch pods with spec.nodeName field selector'),
  ],
  ['list one own pod by name', req('list', 'pods', { namespace: 'default', name: 'web-a' }), ALLOW],
  [
    'watch one foreign pod by name',
    req('watch', 'pods', { namespace: 'default', name: 'web-b' }),
    NO_RELATIONSHIP,
  ],
  ['create a pod (admission: mirror pods)', req('create', 'pods', { namespace: 'default' }), ALLOW],
  [
    'delete a pod (admission: bound to it)',
    req('delete', 'pods', { namespace: 'default', name: 'web-a' }),
    ALLOW,
  ],
  ['update a pod', req('update', 'pods', { namespace: 'default', name: 'web-a' }), no()],
  ['patch a pod', req('patch', 'pods', { namespace: 'default', name: 'web-a' }), no()],
  ['deletecollection pods', req('deletecollection', 'pods', { namespace: 'default' }), no()],
  ['update pods/status', req('update', 'pods/status', { namespace: 'default', name: 'web-b' }), ALLOW],
  ['patch pods/status', req('patch', 'pods/status', { namespace: 'default', name: 'web-a' }), ALLOW],
  ['get pods/status', req('get', 'pods/status', { namespace: 'default', name: 'web-a' }), no()],
  ['create pods/eviction', req('create', 'pods/eviction', { namespace: 'default', name: 'web-a' }), ALLOW],
  ['get pods/log', req('get', 'pods/log', { namespace: 'default', name: 'web-a' }), no()],
  ['create pods/binding', req('create', 'pods/binding', { namespace: 'default', name: 'web-a' }), no()],
  // leases
  ...(['get', 'update', 'patch', 'delete'] as const).map(
    (verb): [string, NodeRequest, { decision: string; reason: string }] => [
      `${verb} its Lease`,
      req(verb, 'leases', { ...LEASES, name: 'n1' }),
      ALLOW,
    ],
  ),
  ['create a Lease (admission checks the name)', req('create', 'leases', LEASES), ALLOW],
  [
    "get another node's Lease",
    req('get', 'leases', { ...LEASES, name: 'n2' }),
    no('can only access node lease with the same name as the requesting node'),
  ],
  [
    'update a Lease in another namespace',
    req('update', 'leases', { ...LEASES, namespace: 'kube-system', name: 'n1' }),
    no('can only access leases in the "kube-node-lease" system namespace'),
  ],
  [
    'list leases',
    req('list', 'leases', LEASES),
    no('can only get, create, update, patch, or delete a node lease'),
  ],
  [
    'watch leases',
    req('watch', 'leases', LEASES),
    no('can only get, create, update, patch, or delete a node lease'),
  ],
  // what every node may read, whatever the object
  ...(['get', 'list', 'watch'] as const).flatMap(
    (verb): [string, NodeRequest, { decision: string; reason: string }][] => [
      [`${verb} services`, req(verb, 'services', { namespace: 'default' }), ALLOW],
      [`${verb} endpoints`, req(verb, 'endpoints'), ALLOW],
      [`${verb} endpointslices`, req(verb, 'endpointslices', { apiGroup: 'discovery.k8s.io' }), ALLOW],
    ],
  ),
  ['create a Service', req('create', 'services', { namespace: 'default' }), no()],
  ['update services/status', req('update', 'services/status', { namespace: 'default', name: 'web' }), no()],
  [
    'delete an EndpointSlice',
    req('delete', 'endpointslices', { apiGroup: 'discovery.k8s.io', name: 'x' }),
    no(),
  ],
  ['create endpoints', req('create', 'endpoints', { namespace: 'default' }), no()],
  // events
  ...(['create', 'update', 'patch'] as const).flatMap(
    (verb): [string, NodeRequest, { decision: string; reason: string }][] => [
      [`${verb} core events`, req(verb, 'events', { namespace: 'default' }), ALLOW],
      [
        `${verb} events.k8s.io events`,
        req(verb, 'events', { namespace: 'default', apiGroup: 'events.k8s.io' }),
        ALLOW,
      ],
    ],
  ),
  ['list events', req('list', 'events', { namespace: 'default' }), no()],
  ['delete events', req('delete', 'events', { namespace: 'default', name: 'e' }), no()],
  // the rest
  ['get secrets', req('get', 'secrets', { namespace: 'default', name: 's' }), no()],
  ['list namespaces', req('list', 'namespaces'), no()],
  ['create a TokenReview', req('create', 'tokenreviews', { apiGroup: 'authentication.k8s.io' }), ALLOW],
  ['create a CSR', req('create', 'certificatesigningrequests', { apiGroup: 'certificates.k8s.io' }), ALLOW],
  ['a non-resource path', { ...req('get', ''), resourceRequest: false }, no()],
];

describe('Node mode', () => {
  for (const [what, request, want] of table) {
    it(what, () => assert.deepEqual(authorizeNodeRequest(request, pods), want));
  }

  it('has no opinion on anyone who is not a node', () => {
    for (const user of [
      { name: 'system:node:n1', groups: ['system:authenticated'] },
      { name: 'n1', groups: ['system:nodes'] },
      { name: 'system:nodes:n1', groups: ['system:nodes'] },
      { name: 'admin', groups: ['system:masters'] },
    ]) {
      assert.deepEqual(authorizeNodeRequest({ ...req('get', 'services'), user }, pods), no(), user.name);
    }
  });

  it('refuses a node identity without a name, saying so', () => {
    const user = { name: 'system:node:', groups: ['system:nodes'] };
    assert.deepEqual(
      authorizeNodeRequest({ ...req('get', 'services'), user }, pods),
      no('unknown node for user "system:node:"'),
    );
  });

  it("reads node names as kube's NodeIdentifier does", () => {
    assert.equal(nodeIdentity(N1), 'n1');
    assert.equal(nodeIdentity({ name: 'system:node:a:b', groups: ['system:nodes'] }), 'a:b');
    assert.equal(nodeIdentity({ name: 'system:node:', groups: ['system:nodes'] }), '');
    assert.equal(nodeIdentity({ name: 'system:node:n1', groups: [] }), undefined);
  });

  it('never allows a node to read a pod bound elsewhere, or to list without its own selector (property)', () => {
    const name = fc.constantFrom('n1', 'n2', 'n3', '');
    fc.assert(
      fc.property(name, name, fc.constantFrom('get', 'list', 'watch'), (node, podNode, verb) => {
        const user = { name: `system:node:${node}`, groups: ['system:nodes'] };
        const lookups: NodeLookups = { podNodeName: () => podNode };
        const one = authorizeNodeRequest(
          { ...req(verb, 'pods', { namespace: 'default', name: 'p' }), user },
          lookups,
        );
        assert.equal(one.decision === 'allow', node !== '' && podNode === node);
        const all = authorizeNodeRequest(
          { ...req(verb, 'pods', { fieldSelector: `spec.nodeName=${podNode}` }), user },
          lookups,
        );
        assert.equal(all.decision === 'allow', verb !== 'get' && node !== '' && podNode === node);
      }),
    );
  });
});
