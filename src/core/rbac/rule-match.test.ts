// Rule matching, table-tested from upstream's RBAC authorizer semantics.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ruleAllows } from './rule-match.js';
import type { PolicyRule, RbacRequest } from './types.js';

const req = (over: Partial<RbacRequest>): RbacRequest => ({
  user: { name: 'u', groups: [] },
  verb: 'get',
  resourceRequest: true,
  apiGroup: '',
  namespace: 'ns',
  resource: 'pods',
  subresource: '',
  name: '',
  path: '/api/v1/namespaces/ns/pods',
  ...over,
});

const podsGet: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };

describe('ruleAllows', () => {
  const cases: [string, PolicyRule, Partial<RbacRequest>, boolean][] = [
    ['exact verb, group, resource', podsGet, {}, true],
    ['other verb', podsGet, { verb: 'list' }, false],
    ['verb *', { ...podsGet, verbs: ['*'] }, { verb: 'delete' }, true],
    ['other group', podsGet, { apiGroup: 'apps' }, false],
    ['group *', { ...podsGet, apiGroups: ['*'] }, { apiGroup: 'apps' }, true],
    ['no groups matches nothing', { verbs: ['get'], resources: ['pods'] }, {}, false],
    ['resource * ', { ...podsGet, resources: ['*'] }, { resource: 'services' }, true],
    ['resource does not cover its subresource', podsGet, { subresource: 'status' }, false],
    ['pods/status', { ...podsGet, resources: ['pods/status'] }, { subresource: 'status' }, true],
    ['pods/status is not pods', { ...podsGet, resources: ['pods/status'] }, {}, false],
    [
      '*/scale',
      { ...podsGet, resources: ['*/scale'] },
      { resource: 'deployments', subresource: 'scale' },
      true,
    ],
    ['*/scale is not */status', { ...podsGet, resources: ['*/scale'] }, { subresource: 'status' }, false],
    ['*/scale is not the resource', { ...podsGet, resources: ['*/scale'] }, { resource: 'scale' }, false],
    ['resource * covers subresources', { ...podsGet, resources: ['*'] }, { subresource: 'log' }, true],
    ['resourceNames empty: all', podsGet, { name: 'web' }, true],
    ['resourceNames lists it', { ...podsGet, resourceNames: ['web'] }, { name: 'web' }, true],
    ['resourceNames lists another', { ...podsGet, resourceNames: ['db'] }, { name: 'web' }, false],
    ['resourceNames and a list (no name)', { ...podsGet, resourceNames: ['web'] }, { verb: 'get' }, false],
    [
      'nonResourceURL exact',
      { verbs: ['get'], nonResourceURLs: ['/healthz'] },
      { resourceRequest: false, path: '/healthz' },
      true,
    ],
    [
      'nonResourceURL prefix',
      { verbs: ['get'], nonResourceURLs: ['/api/*'] },
      { resourceRequest: false, path: '/api/v1' },
      true,
    ],
    [
      'nonResourceURL prefix needs the prefix',
      { verbs: ['get'], nonResourceURLs: ['/api/*'] },
      { resourceRequest: false, path: '/apis' },
      false,
    ],
    [
      'nonResourceURL *',
      { verbs: ['get'], nonResourceURLs: ['*'] },
      { resourceRequest: false, path: '/anything' },
      true,
    ],
    [
      'a resource rule does not match a path',
      { ...podsGet, resources: ['*'], apiGroups: ['*'] },
      { resourceRequest: false, path: '/healthz' },
      false,
    ],
    ['a URL rule does not match a resource', { verbs: ['get'], nonResourceURLs: ['*'] }, {}, false],
  ];
  for (const [name, rule, over, want] of cases) {
    it(name, () => assert.equal(ruleAllows(rule, req(over)), want));
  }
});
