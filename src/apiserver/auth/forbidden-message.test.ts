// kube-apiserver's Forbidden messages, in every shape kubectl shows them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forbiddenMessage, forbiddenReasonText } from './forbidden-message.js';
import type { RequestAttributes } from './types.js';

const base: RequestAttributes = {
  user: { name: 'ro', uid: '', groups: ['system:authenticated'] },
  verb: 'create',
  resourceRequest: true,
  apiGroup: '',
  namespace: 'default',
  resource: 'services',
  subresource: '',
  name: '',
  path: '/api/v1/namespaces/default/services',
};

describe('forbiddenMessage', () => {
  const cases: [string, Partial<RequestAttributes>, string, string?][] = [
    [
      'namespaced create',
      {},
      'services is forbidden: User "ro" cannot create resource "services" in API group "" in the namespace "default"',
    ],
    [
      'with the ABAC reason',
      {},
      'services is forbidden: User "ro" cannot create resource "services" in API group "" in the namespace "default": No policy matched.',
      'No policy matched.',
    ],
    [
      'a named object and a subresource',
      { verb: 'update', name: 'web', subresource: 'status' },
      'services "web" is forbidden: User "ro" cannot update resource "services/status" in API group "" in the namespace "default"',
    ],
    [
      'cluster scope',
      { verb: 'list', resource: 'nodes', namespace: '' },
      'nodes is forbidden: User "ro" cannot list resource "nodes" in API group "" at the cluster scope',
    ],
    [
      'a named object at cluster scope',
      { verb: 'delete', resource: 'nodes', namespace: '', name: 'node-1' },
      'nodes "node-1" is forbidden: User "ro" cannot delete resource "nodes" in API group "" at the cluster scope',
    ],
    [
      'an API group',
      { verb: 'watch', apiGroup: 'discovery.k8s.io', resource: 'endpointslices' },
      'endpointslices.discovery.k8s.io is forbidden: User "ro" cannot watch resource "endpointslices" in API group "discovery.k8s.io" in the namespace "default"',
    ],
    [
      'a non-resource URL',
      { verb: 'get', resourceRequest: false, apiGroup: '', resource: '', namespace: '', path: '/metrics' },
      'forbidden: User "ro" cannot get path "/metrics"',
    ],
    [
      'anonymous',
      { user: { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }, verb: 'get' },
      'services is forbidden: User "system:anonymous" cannot get resource "services" in API group "" in the namespace "default"',
    ],
    [
      'HTML-ish characters and quotes',
      { verb: 'get', resourceRequest: false, path: '/<a href="x">&' },
      'forbidden: User "ro" cannot get path "/&lt;a href=\\"x\\"&gt;&amp;"',
    ],
  ];
  for (const [name, patch, expected, reason] of cases) {
    it(name, () => assert.equal(forbiddenMessage({ ...base, ...patch }, reason), expected));
  }

  it('exposes the part that goes after "is forbidden: "', () => {
    assert.equal(
      forbiddenReasonText(base),
      'User "ro" cannot create resource "services" in API group "" in the namespace "default"',
    );
  });
});
