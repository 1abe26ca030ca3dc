// The ClusterRole aggregation controller over a cache filled by hand and a client that records PUTs:
// it writes the union only when it differs, with the cached resourceVersion as the precondition, and
// a change to a picked role queues the aggregating one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { CLUSTER_ROLES, type PolicyRule } from '../../api/rbac.js';
import type { ResourceInfo } from '../../api/resources.js';
import { ApiError, type Client } from '../../runtime/client.js';
import { SharedInformerFactory } from '../../runtime/informer.js';
import { ClusterRoleAggregationController } from './clusterrole-aggregation-controller.js';

const LABEL = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };
const rule = (resource: string): PolicyRule => ({ verbs: ['get'], apiGroups: [''], resources: [resource] });

function setup(fail?: unknown) {
  const factory = new SharedInformerFactory({} as Client); // never started: the test fills the cache
  const puts: KObject[] = [];
  const client = {
    update: (r: ResourceInfo, obj: KObject): Promise<KObject> => {
      assert.equal(r, CLUSTER_ROLES);
      puts.push(obj);
      return fail === undefined ? Promise.resolve(obj) : Promise.reject(fail);
    },
  };
  const c = new ClusterRoleAggregationController(client, factory, {});
  const cache = factory.informer(CLUSTER_ROLES).indexer;
  let rv = 0;
  const put = (name: string, body: Record<string, unknown>, labels: Record<string, string> = {}): void =>
    cache.apply('MODIFIED', {
      metadata: { name, labels, resourceVersion: String(++rv) },
      ...body,
    } as KObject);
  const aggregating = (rules: PolicyRule[] = []): void =>
    put('view', { rules, aggregationRule: { clusterRoleSelectors: [{ matchLabels: LABEL }] } });
  return { c, puts, put, aggregating, cache };
}

describe('ClusterRoleAggregationController', () => {
  it('writes the union with the cached resourceVersion, then nothing once the rules match', async () => {
    const { c, puts, put, aggregating, cache } = setup();
    put('pods-reader', { rules: [rule('pods')] }, LABEL);
    put('svc-reader', { rules: [rule('services'), rule('pods')] }, LABEL);
    put('secrets', { rules: [rule('secrets')] });
    aggregating();
    await c.sync('view');
    assert.equal(puts.length, 1);
    assert.equal(puts[0]!.metadata.resourceVersion, '4');
    assert.deepEqual(puts[0]!['rules'], [rule('pods'), rule('services')]);
    assert.deepEqual(puts[0]!['aggregationRule'], { clusterRoleSelectors: [{ matchLabels: LABEL }] });
    assert.deepEqual(cache.get('view')!['rules'], [], 'the cached object is not changed');

    aggregating([rule('pods'), rule('services')]);
    await c.sync('view');
    assert.equal(puts.length, 1, 'already aggregated: no write');
  });

  it('shrinks the rules when a picked role goes away, and ignores roles without an aggregationRule', async () => {
    const { c, puts, put, aggregating, cache } = setup();
    put('pods-reader', { rules: [rule('pods')] }, LABEL);
    aggregating([rule('pods'), rule('gone')]);
    await c.sync('view');
    assert.deepEqual(puts[0]!['rules'], [rule('pods')]);
    await c.sync('pods-reader');
    await c.sync('missing');
    assert.equal(puts.length, 1);
    cache.apply('DELETED', { metadata: { name: 'pods-reader' } } as KObject);
    aggregating([rule('pods')]);
    await c.sync('view');
    assert.deepEqual(puts[1]!['rules'], []);
  });

  it('a change to any ClusterRole queues every aggregating one', async () => {
    const { c, put, aggregating } = setup();
    const queued = async (): Promise<string | undefined> => {
      const deadline = Date.now() + 5_000;
      while (c.controller.queue.length === 0 && Date.now() < deadline)
        await new Promise((r) => setImmediate(r));
      assert.equal(c.controller.queue.length, 1);
      const key = await c.controller.queue.get();
      c.controller.queue.done(key!);
      return key;
    };
    aggregating();
    assert.equal(await queued(), 'view');
    put('other', { rules: [] });
    assert.equal(await queued(), 'view', 'queued again for a role it may pick');
  });

  it('a conflict is thrown for a retry; a role deleted meanwhile is not an error', async () => {
    const conflict = new ApiError(409, 'Conflict', 'x');
    const s1 = setup(conflict);
    s1.put('a', { rules: [rule('pods')] }, LABEL);
    s1.aggregating();
    await assert.rejects(s1.c.sync('view'), (e) => e === conflict);
    const s2 = setup(new ApiError(404, 'NotFound', 'x'));
    s2.put('a', { rules: [rule('pods')] }, LABEL);
    s2.aggregating();
    await s2.c.sync('view');
    assert.equal(s2.puts.length, 1);
  });
});
