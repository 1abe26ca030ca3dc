// The RBAC authorizer fed from a watch cache: it sees the server's writes as the cache applies them.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { encodeObject, objectKey } from '../../api/codec.js';
import type { KObject } from '../../api/object.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { WatchCache } from '../watch-cache/watch-cache.js';
import { followRbacPolicy, rbacAuthorizer } from './rbac-authorizer.js';
import { rbacRules } from './rules.js';
import { RBAC_ROWS, rbacRows } from './testing/rbac-rows.js';
import type { RequestAttributes } from './types.js';

const store = new MemoryStore();
const cache = new WatchCache(store, {}, Object.values(RBAC_ROWS));
after(async () => {
  await cache.stop();
  await store.close();
});

const put = async (r: keyof typeof RBAC_ROWS, obj: KObject): Promise<void> => {
  const key = objectKey(RBAC_ROWS[r], obj.metadata.namespace ?? '', obj.metadata.name ?? '');
  const cur = await store.get(key);
  if (cur === undefined) await store.create(key, encodeObject(obj));
  else await store.update(key, encodeObject(obj), cur.modRevision);
  if (cache.isHealthy) await cache.waitFresh();
};
const del = async (r: keyof typeof RBAC_ROWS, namespace: string, name: string): Promise<void> => {
  await store.delete(objectKey(RBAC_ROWS[r], namespace, name));
  await cache.waitFresh();
};

const alice = { name: 'alice', uid: '', groups: ['system:authenticated'] };
const listPods = (namespace: string): RequestAttributes => ({
  user: alice,
  verb: 'list',
  resourceRequest: true,
  apiGroup: '',
  namespace,
  resource: 'pods',
  subresource: '',
  name: '',
  path: `/api/v1/namespaces/${namespace}/pods`,
});

describe('followRbacPolicy', () => {
  it('follows roles and bindings in the cache: objects there at the start, then each write', async () => {
    await put('clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'pod-reader' },
      rules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
    } as KObject);
    cache.start();
    await cache.ready;
    const index = followRbacPolicy(cache, rbacRows);
    const authz = rbacAuthorizer(index);
    assert.deepEqual(authz(listPods('dev')), { decision: 'no-opinion', reason: '' });

    await put('rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-reads', namespace: 'dev' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pod-reader' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    } as KObject);
    assert.equal(authz(listPods('dev')).decision, 'allow');
    assert.equal(authz(listPods('prod')).decision, 'no-opinion');
    assert.deepEqual(rbacRules(index)(alice, 'dev'), {
      resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [],
      incomplete: false,
    });

    await del('clusterroles', '', 'pod-reader');
    assert.deepEqual(authz(listPods('dev')), {
      decision: 'no-opinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "pod-reader" not found',
    });
    assert.deepEqual(rbacRules(index)(alice, 'dev'), {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      evaluationError: 'clusterrole.rbac.authorization.k8s.io "pod-reader" not found',
    });

    await del('rolebindings', 'dev', 'alice-reads');
    assert.deepEqual(authz(listPods('dev')), { decision: 'no-opinion', reason: '' });
  });

  it('follows nothing for kinds that are not served', () => {
    const index = followRbacPolicy(cache, () => undefined);
    assert.equal(rbacAuthorizer(index)(listPods('dev')).decision, 'no-opinion');
  });
});
