// What `kubectl auth can-i --list` is told: AlwaysAllow's everything, and ABAC's matching policy lines,
// one rule each, as kube's ABAC RulesFor lists them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAbacPolicy, policyLine } from './abac.js';
import { abacRules, allowAllRules, buildRules } from './rules.js';

const user = (name: string, ...groups: string[]) => ({
  name,
  uid: '',
  groups: [...groups, 'system:authenticated'],
});

describe('rule resolvers', () => {
  it('AlwaysAllow: everything, once', () => {
    assert.deepEqual(buildRules([allowAllRules])(user('anyone'), 'default'), {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
  });

  it('ABAC: the lines whose subject and namespace match, readonly ones with the read verbs only', () => {
    const policy = parseAbacPolicy(
      [
        policyLine({
          user: 'ro',
          readonly: true,
          apiGroup: '*',
          namespace: '*',
          resource: '*',
          nonResourcePath: '*',
        }),
        policyLine({ user: 'dev', apiGroup: 'apps', namespace: 'team', resource: 'deployments' }),
        policyLine({ group: 'ops', apiGroup: '', namespace: '*', resource: 'pods' }),
        policyLine({ user: '*', readonly: true, nonResourcePath: '/version' }),
      ].join('\n'),
    );
    const rules = buildRules([abacRules(policy)]);
    assert.deepEqual(rules(user('ro'), 'default'), {
      resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['*'] }],
      incomplete: false,
    });
    assert.deepEqual(rules(user('dev'), 'team').resourceRules, [
      { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments'] },
    ]);
    assert.deepEqual(rules(user('dev'), 'other').resourceRules, [], 'another namespace: not that line');
    assert.deepEqual(rules(user('eve', 'ops'), 'x').resourceRules, [
      { verbs: ['*'], apiGroups: [''], resources: ['pods'] },
    ]);
    // user "*" is every authenticated user; a line without a namespace matches only the cluster scope.
    assert.deepEqual(rules(user('eve'), '').nonResourceRules, [
      { verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/version'] },
    ]);
    assert.deepEqual(rules(user('eve'), 'default'), {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: false,
    });
  });
});
