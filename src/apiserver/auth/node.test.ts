// The Node mode and NodeRestriction inside the API server: pods looked up in the watch cache, field
// selectors and metadata.name taken from the request, admission's 403s on writes, and kube's messages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { authenticate } from './authenticator.js';
import { buildAuthorization } from './modes.js';
import { nodeRules } from './node.js';
import { formatTokenFileRecord, parseTokenFile } from './token-file.js';
import { SYSTEM_MASTERS } from './types.js';

const TOKENS = { admin: 'admin-token', n1: 'n1-token', carol: 'carol-token' };

describe('nodeRules', () => {
  it('lists the static rules for a node, incomplete; nothing for others', () => {
    const forNode = nodeRules({ name: 'system:node:n1', uid: '', groups: ['system:nodes'] }, 'default');
    assert.equal(forNode.incomplete, true);
    assert.ok(
      forNode.resourceRules.some((r) => r.resources.includes('endpointslices') && r.verbs.includes('watch')),
    );
    assert.deepEqual(nodeRules({ name: 'carol', uid: '', groups: [] }, 'default'), {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: false,
    });
  });
});

describe('the Node mode in the API server', () => {
  let api: InProcessApiServer;

  before(async () => {
    const table = parseTokenFile(
      [
        formatTokenFileRecord(TOKENS.admin, { name: 'admin', uid: 'a', groups: [SYSTEM_MASTERS] }),
        formatTokenFileRecord(TOKENS.n1, { name: 'system:node:n1', uid: 'n', groups: ['system:nodes'] }),
        formatTokenFileRecord(TOKENS.carol, { name: 'carol', uid: 'c', groups: [] }),
      ].join('\n'),
    );
    api = await startInProcessApiServer({
      token: TOKENS.admin,
      auth: {
        authenticate: (req) => authenticate(req, { tokens: table }),
        authorization: (cache) => buildAuthorization(['Node'], { cache, abacPolicy: undefined }),
      },
    });
    for (const name of ['n1', 'n2']) {
      await call(TOKENS.admin, 'POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name },
      });
    }
    for (const [name, nodeName] of [
      ['web-a', 'n1'],
      ['web-b', 'n2'],
      ['web-c', 'n1'],
    ]) {
      const r = await call(TOKENS.admin, 'POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'web' } },
        spec: { nodeName, containers: [{ name: 'c', image: 'i' }] },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    // The watch cache has them all before the node asks.
    await api.server.cache.waitFresh();
  });
  after(() => api.stop());

  async function call(
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const r = await api.transport(token).send({
      method,
      path,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    });
    let text = '';
    for await (const c of r.body) text += String(c);
    return { status: r.status, json: JSON.parse(text) as Record<string, unknown> };
  }
  const forbidden = (r: { status: number; json: Record<string, unknown> }, message: string): void => {
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(r.json.message, message);
  };
  const names = (list: Record<string, unknown>): string[] =>
    (list.items as { metadata: { name: string } }[]).map((o) => o.metadata.name);

  it("lets a node get its own pod and refuses another node's, with upstream's reason", async () => {
    assert.equal((await call(TOKENS.n1, 'GET', '/api/v1/namespaces/default/pods/web-a')).status, 200);
    forbidden(
      await call(TOKENS.n1, 'GET', '/api/v1/namespaces/default/pods/web-b'),
      'pods "web-b" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the ' +
        'namespace "default": no relationship found between node \'n1\' and this object',
    );
  });

  it('lists pods only with its spec.nodeName field selector', async () => {
    const mine = await call(TOKENS.n1, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1');
    assert.equal(mine.status, 200, JSON.stringify(mine.json));
    assert.deepEqual(names(mine.json), ['web-a', 'web-c']);
    const all = await call(TOKENS.n1, 'GET', '/api/v1/pods');
    assert.equal(all.status, 403);
    assert.match(String(all.json.message), /: can only list\/watch pods with spec.nodeName field selector$/);
    assert.equal((await call(TOKENS.n1, 'GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn2')).status, 403);
  });

  it('reads its own Node, by name or by a metadata.name selector, and no other', async () => {
    assert.equal((await call(TOKENS.n1, 'GET', '/api/v1/nodes/n1')).status, 200);
    const byName = await call(TOKENS.n1, 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dn1');
    assert.equal(byName.status, 200);
    assert.deepEqual(names(byName.json), ['n1']);
    forbidden(
      await call(TOKENS.n1, 'GET', '/api/v1/nodes?fieldSelector=metadata.name%3Dn2'),
      'nodes "n2" is forbidden: User "system:node:n1" cannot list resource "nodes" in API group "" at the ' +
        "cluster scope: node 'n1' cannot read 'n2', only its own Node object",
    );
  });

  it("admits status patches of its own Node and refuses another's (NodeRestriction)", async () => {
    const status = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.equal((await call(TOKENS.n1, 'PATCH', '/api/v1/nodes/n1/status', status)).status, 200);
    const other = await call(TOKENS.n1, 'PATCH', '/api/v1/nodes/n2/status', status);
    assert.equal(other.status, 403);
    assert.equal(other.json.reason, 'Forbidden');
    assert.equal(other.json.message, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
  });

  it('refuses node-restriction labels and taints on its own Node', async () => {
    forbidden(
      await call(TOKENS.n1, 'PATCH', '/api/v1/nodes/n1', {
        metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'a' } },
      }),
      'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool',
    );
    forbidden(
      await call(TOKENS.n1, 'PATCH', '/api/v1/nodes/n1', {
        spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
      }),
      'nodes "n1" is forbidden: node "n1" is not allowed to modify taints',
    );
    // An admin may, and the node's next status write leaves them be.
    assert.equal(
      (
        await call(TOKENS.admin, 'PATCH', '/api/v1/nodes/n1', {
          spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
        })
      ).status,
      200,
    );
    assert.equal(
      (await call(TOKENS.n1, 'PATCH', '/api/v1/nodes/n1/status', { status: { phase: 'Running' } })).status,
      200,
    );
  });

  it('updates the status of its pods only, and deletes only those', async () => {
    const phase = { status: { phase: 'Running' } };
    assert.equal(
      (await call(TOKENS.n1, 'PATCH', '/api/v1/namespaces/default/pods/web-a/status', phase)).status,
      200,
    );
    forbidden(
      await call(TOKENS.n1, 'PATCH', '/api/v1/namespaces/default/pods/web-b/status', phase),
      'pods "web-b" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    );
    forbidden(
      await call(TOKENS.n1, 'DELETE', '/api/v1/namespaces/default/pods/web-b'),
      'pods "web-b" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
    );
    assert.equal((await call(TOKENS.admin, 'GET', '/api/v1/namespaces/default/pods/web-b')).status, 200);
    assert.equal((await call(TOKENS.n1, 'DELETE', '/api/v1/namespaces/default/pods/web-c')).status, 200);
  });

  it('creates and renews its own Lease in kube-node-lease only', async () => {
    const lease = (name: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 40 },
    });
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    assert.equal((await call(TOKENS.n1, 'POST', path, lease('n1'))).status, 201);
    assert.equal(
      (await call(TOKENS.n1, 'PATCH', `${path}/n1`, { spec: { leaseDurationSeconds: 41 } })).status,
      200,
    );
    forbidden(
      await call(TOKENS.n1, 'POST', path, lease('n2')),
      'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
    );
  });

  it('leaves everyone else to the other modes', async () => {
    forbidden(
      await call(TOKENS.carol, 'GET', '/api/v1/namespaces/default/services'),
      'services is forbidden: User "carol" cannot list resource "services" in API group "" in the namespace "default"',
    );
  });
});
