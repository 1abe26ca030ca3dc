// NodeRestriction, table-driven from upstream's plugin/pkg/admission/noderestriction semantics: a node's
// own Node (labels, taints), the pods bound to it (status, delete, mirror pods), its Lease; the messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { admitNodeWrite, type NodeWrite, type NodeRestrictionVerdict } from './node-restriction.js';

const N1 = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const lookups = { nodeUid: (name: string) => (name === 'n1' ? 'uid-n1' : undefined) };

const node = (
  name: string,
  labels: Record<string, string> = {},
  spec: Record<string, unknown> = {},
): KObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
  spec,
});
const pod = (
  nodeName: string,
  meta: Partial<KObject['metadata']> = {},
  spec: Record<string, unknown> = {},
  status: Record<string, unknown> = {},
): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', ...meta },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
  status,
});
const MIRROR = {
  annotations: { 'kubernetes.io/config.mirror': 'hash' },
  ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-n1', controller: true }],
};

function write(
  operation: NodeWrite['operation'],
  resource: string,
  objects: { object?: KObject; old?: KObject },
  extra: Partial<NodeWrite> = {},
): NodeWrite {
  const [res, sub = ''] = resource.split('/');
  const meta = (objects.object ?? objects.old)!.metadata;
  return {
    user: N1,
    operation,
    apiGroup: res === 'leases' ? 'coordination.k8s.io' : '',
    resource: res!,
    subresource: sub,
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    ...objects,
    ...extra,
  };
}
const forbid = (reason: string): NodeRestrictionVerdict => ({ kind: 'forbidden', reason });
const lease = (name: string, namespace = 'kube-node-lease'): KObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace },
});

const table: [string, NodeWrite, NodeRestrictionVerdict][] = [
  // its Node
  [
    'create its Node',
    write('create', 'nodes', { object: node('n1', { 'kubernetes.io/hostname': 'n1' }) }),
    undefined,
  ],
  [
    'create another Node',
    write('create', 'nodes', { object: node('n2') }),
    forbid('node "n1" is not allowed to modify node "n2"'),
  ],
  [
    'update another Node',
    write('update', 'nodes', { object: node('n2'), old: node('n2') }),
    forbid('node "n1" is not allowed to modify node "n2"'),
  ],
  [
    "update another Node's status",
    write('update', 'nodes/status', { object: node('n2'), old: node('n2') }),
    forbid('node "n1" is not allowed to modify node "n2"'),
  ],
  [
    'delete another Node',
    write('delete', 'nodes', { old: node('n2') }),
    forbid('node "n1" is not allowed to modify node "n2"'),
  ],
  [
    'update its Node status',
    write('update', 'nodes/status', { object: node('n1'), old: node('n1') }),
    undefined,
  ],
  [
    'register with a node-restriction label',
    write('create', 'nodes', {
      object: node('n1', { 'node-restriction.kubernetes.io/trusted': 'yes', 'example.com/x': '1' }),
    }),
    forbid('node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/trusted'),
  ],
  [
    'register with labels outside the kubelet set, sorted',
    write('create', 'nodes', {
      object: node('n1', {
        'node-role.kubernetes.io/master': '',
        'a.k8s.io/b': '1',
        'topology.kubernetes.io/zone': 'z',
      }),
    }),
    forbid(
      'node "n1" is not allowed to set the following labels: a.k8s.io/b, node-role.kubernetes.io/master',
    ),
  ],
  [
    'add a node-restriction label (subdomain) on update',
    write('update', 'nodes', {
      object: node('n1', { 'x.node-restriction.kubernetes.io/a': '1' }),
      old: node('n1'),
    }),
    forbid('is not allowed to modify labels: x.node-restriction.kubernetes.io/a'),
  ],
  [
    'remove a node-restriction label',
    write('update', 'nodes', {
      object: node('n1'),
      old: node('n1', { 'node-restriction.kubernetes.io/a': '1' }),
    }),
    forbid('is not allowed to modify labels: node-restriction.kubernetes.io/a'),
  ],
  [
    'change a kubelet label and its own labels',
    write('update', 'nodes', {
      object: node('n1', {
        'topology.kubernetes.io/zone': 'b',
        'node.kubernetes.io/exclude-from-external-load-balancers': '',
        'kubelet.kubernetes.io/x': '1',
        'example.com/y': '2',
      }),
      old: node('n1', { 'topology.kubernetes.io/zone': 'a' }),
    }),
    undefined,
  ],
  [
    'keep a node-restriction label as it is',
    write('update', 'nodes', {
      object: node('n1', { 'node-restriction.kubernetes.io/a': '1', b: '2' }),
      old: node('n1', { 'node-restriction.kubernetes.io/a': '1' }),
    }),
    undefined,
  ],
  [
    'add a taint',
    write('update', 'nodes', {
      object: node('n1', {}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }),
      old: node('n1'),
    }),
    forbid('node "n1" is not allowed to modify taints'),
  ],
  [
    'remove its taints',
    write('update', 'nodes', {
      object: node('n1', {}, { taints: [] }),
      old: node('n1', {}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }),
    }),
    forbid('node "n1" is not allowed to modify taints'),
  ],
  [
    'keep its taints (an empty list is none)',
    write('update', 'nodes', { object: node('n1', {}, { taints: [] }), old: node('n1') }),
    undefined,
  ],
  [
    'register with a configSource',
    write('create', 'nodes', { object: node('n1', {}, { configSource: { configMap: {} } }) }),
    forbid('node "n1" is not allowed to create pods with a non-nil configSource'),
  ],
  // pods bound to it
  [
    'update the status of its pod',
    write('update', 'pods/status', { object: pod('n1'), old: pod('n1') }),
    undefined,
  ],
  [
    "update the status of another node's pod",
    write('update', 'pods/status', { object: pod('n2'), old: pod('n2') }),
    forbid('node "n1" can only update pod status for pods with spec.nodeName set to itself'),
  ],
  [
    'relabel its pod through status',
    write('update', 'pods/status', { object: pod('n1', { labels: { a: 'b' } }), old: pod('n1') }),
    forbid('node "n1" cannot update labels through pod status'),
  ],
  [
    'change resource claim statuses',
    write('update', 'pods/status', {
      object: pod('n1', {}, {}, { resourceClaimStatuses: [{ name: 'c', resourceClaimName: 'x' }] }),
      old: pod('n1'),
    }),
    forbid('node "n1" cannot update resource claim statues'),
  ],
  ['delete its pod', write('delete', 'pods', { old: pod('n1') }), undefined],
  [
    "delete another node's pod",
    write('delete', 'pods', { old: pod('n2') }),
    forbid('node "n1" can only delete pods with spec.nodeName set to itself'),
  ],
  [
    'delete an unscheduled pod',
    write('delete', 'pods', { old: pod('') }),
    forbid('node "n1" can only delete pods with spec.nodeName set to itself'),
  ],
  [
    'update a pod',
    write('update', 'pods', { object: pod('n1'), old: pod('n1') }),
    forbid('unexpected operation "UPDATE", node "n1" can only create and delete mirror pods'),
  ],
  ['create a mirror pod', write('create', 'pods', { object: pod('n1', MIRROR) }), undefined],
  [
    'create a pod that is no mirror',
    write('create', 'pods', { object: pod('n1') }),
    forbid(
      'pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    ),
  ],
  [
    'create a mirror pod on another node',
    write('create', 'pods', { object: pod('n2', MIRROR) }),
    forbid('node "n1" can only create pods with spec.nodeName set to itself'),
  ],
  [
    'create a mirror pod owned by nothing',
    write('create', 'pods', { object: pod('n1', { ...MIRROR, ownerReferences: [] }) }),
    forbid('node "n1" can only create pods with an owner reference set to itself'),
  ],
  [
    'create a mirror pod owned by another node',
    write('create', 'pods', {
      object: pod('n1', { ...MIRROR, ownerReferences: [{ ...MIRROR.ownerReferences[0]!, name: 'n2' }] }),
    }),
    forbid('node "n1" can only create pods with an owner reference set to itself'),
  ],
  [
    'create a mirror pod with two owners',
    write('create', 'pods', {
      object: pod('n1', {
        ...MIRROR,
        ownerReferences: [MIRROR.ownerReferences[0]!, MIRROR.ownerReferences[0]!],
      }),
    }),
    forbid('node "n1" can only create pods with a single owner reference set to itself'),
  ],
  [
    'create a mirror pod whose owner is no controller',
    write('create', 'pods', {
      object: pod('n1', {
        ...MIRROR,
        ownerReferences: [{ ...MIRROR.ownerReferences[0]!, controller: false }],
      }),
    }),
    forbid('node "n1" can only create pods with a controller owner reference set to itself'),
  ],
  [
    'create a mirror pod that blocks owner deletion',
    write('create', 'pods', {
      object: pod('n1', {
        ...MIRROR,
        ownerReferences: [{ ...MIRROR.ownerReferences[0]!, blockOwnerDeletion: true }],
      }),
    }),
    forbid('node "n1" must not set blockOwnerDeletion on an owner reference'),
  ],
  [
    'create a mirror pod with a stale node uid',
    write('create', 'pods', {
      object: pod('n1', { ...MIRROR, ownerReferences: [{ ...MIRROR.ownerReferences[0]!, uid: 'old' }] }),
    }),
    forbid('node n1 UID mismatch: expected old got uid-n1'),
  ],
  [
    'create a mirror pod with a service account',
    write('create', 'pods', { object: pod('n1', MIRROR, { serviceAccountName: 'default' }) }),
    forbid('node "n1" can not create pods that reference a service account'),
  ],
  [
    'create a mirror pod that mounts a secret',
    write('create', 'pods', {
      object: pod('n1', MIRROR, { volumes: [{ name: 'v', secret: { secretName: 's' } }] }),
    }),
    forbid('node "n1" can not create pods that reference secrets'),
  ],
  [
    'create a mirror pod with a configmap env',
    write('create', 'pods', {
      object: pod('n1', MIRROR, {
        containers: [
          {
            name: 'c',
            image: 'i',
            env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'm', key: 'k' } } }],
          },
        ],
      }),
    }),
    forbid('node "n1" can not create pods that reference configmaps'),
  ],
  [
    'create a mirror pod with a claim',
    write('create', 'pods', {
      object: pod('n1', MIRROR, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }),
    }),
    forbid('node "n1" can not create pods that reference persistentvolumeclaims'),
  ],
  [
    'write another pod subresource',
    write('update', 'pods/ephemeralcontainers', { object: pod('n1'), old: pod('n1') }),
    forbid("unexpected pod subresource \"ephemeralcontainers\", only 'status' and 'eviction' are allowed"),
  ],
  // its Lease
  ['create its Lease', write('create', 'leases', { object: lease('n1') }), undefined],
  ['renew its Lease', write('update', 'leases', { object: lease('n1'), old: lease('n1') }), undefined],
  [
    "create another node's Lease",
    write('create', 'leases', { object: lease('n2') }),
    forbid('can only access node lease with the same name as the requesting node'),
  ],
  [
    'create a Lease elsewhere',
    write('create', 'leases', { object: lease('n1', 'kube-system') }),
    forbid('can only access leases in the "kube-node-lease" system namespace'),
  ],
  // the rest
  [
    'create a Service',
    write('create', 'services', { object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } } }),
    undefined,
  ],
];

describe('NodeRestriction', () => {
  for (const [what, w, want] of table) {
    it(what, () => assert.deepEqual(admitNodeWrite(w, lookups), want));
  }

  it('lets everyone who is not a node through', () => {
    for (const user of [
      { name: 'admin', groups: ['system:masters'] },
      { name: 'system:node:n1', groups: [] },
    ]) {
      assert.equal(
        admitNodeWrite({ ...write('delete', 'nodes', { old: node('n2') }), user }, lookups),
        undefined,
      );
    }
  });

  it('refuses a node identity without a name', () => {
    const user = { name: 'system:node:', groups: ['system:nodes'] };
    assert.deepEqual(
      admitNodeWrite({ ...write('create', 'leases', { object: lease('') }), user }, lookups),
      forbid('could not determine node from user "system:node:"'),
    );
  });

  it('answers a mirror pod of a node that is not registered with NotFound for the node', () => {
    const user = { name: 'system:node:n9', groups: ['system:nodes'] };
    const ownRef = [{ apiVersion: 'v1', kind: 'Node', name: 'n9', uid: 'u', controller: true }];
    assert.deepEqual(
      admitNodeWrite(
        { ...write('create', 'pods', { object: pod('n9', { ...MIRROR, ownerReferences: ownRef }) }), user },
        lookups,
      ),
      { kind: 'node-not-found', name: 'n9' },
    );
  });
});
