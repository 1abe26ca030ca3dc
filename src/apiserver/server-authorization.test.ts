// The server's authorization chain built from --authorization-mode once its cache has loaded: members of
// system:masters pass; anyone else gets kube-apiserver's 403 from an RBAC chain with no binding for them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import { Client, isApiError } from '../runtime/client.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { authenticate } from './auth/authenticator.js';
import { buildAuthorization } from './auth/modes.js';
import { formatTokenFileRecord, parseTokenFile } from './auth/token-file.js';
import type { NonResourceMount } from './http/types.js';

const SERVICES = mustFindResource('', 'services');
const ADMIN = 'admin-0123456789abcdef0123456789';
const ALICE = 'alice-0123456789abcdef0123456789';

/** A server with RBAC on, the admin (system:masters) and alice (no binding), and any mounts. */
async function startWithRbac(mounts?: NonResourceMount[]): Promise<InProcessApiServer> {
  const tokens = parseTokenFile(
    [
      formatTokenFileRecord(ADMIN, { name: 'admin', uid: 'admin', groups: ['system:masters'] }),
      formatTokenFileRecord(ALICE, { name: 'alice', uid: 'alice', groups: [] }),
    ].join('\n'),
  );
  return startInProcessApiServer({
    token: ADMIN,
    auth: {
      authenticate: (req) => authenticate(req, { tokens }),
      authorization: (cache) => buildAuthorization(['RBAC'], { cache, abacPolicy: undefined }),
    },
    ...(mounts === undefined ? {} : { mounts }),
  });
}

describe('startApiServer with an --authorization-mode chain', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startWithRbac();
  });
  after(async () => api.stop());

  it('allows system:masters and refuses another user with upstream 403', async () => {
    await api.client.list(SERVICES, { namespace: 'default' });
    const alice = new Client(api.transport(ALICE));
    await assert.rejects(alice.list(SERVICES, { namespace: 'default' }), (err: unknown) => {
      assert.ok(isApiError(err, 403));
      assert.equal(
        err.message,
        'services is forbidden: User "alice" cannot list resource "services" in API group "" in the namespace "default"',
      );
      return true;
    });
  });

  it('authorizes a PUT or an apply that creates as a create too, as upstream does', async () => {
    const LEASES = mustFindResource('coordination.k8s.io', 'leases');
    const RBAC = 'rbac.authorization.k8s.io';
    const ROLES = mustFindResource(RBAC, 'roles');
    const BINDINGS = mustFindResource(RBAC, 'rolebindings');
    const grant = async (verbs: string[]): Promise<void> => {
      const role = {
        apiVersion: `${RBAC}/v1`,
        kind: 'Role',
        metadata: { name: 'lease-writer', namespace: 'default' },
        rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs }],
      };
      await api.client.delete(ROLES, 'default', 'lease-writer').catch(() => undefined);
      await api.client.create(ROLES, 'default', role);
    };
    await grant(['get', 'update', 'patch']);
    await api.client.create(BINDINGS, 'default', {
      apiVersion: `${RBAC}/v1`,
      kind: 'RoleBinding',
      metadata: { name: 'alice-leases', namespace: 'default' },
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'lease-writer' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    });
    const alice = new Client(api.transport(ALICE));
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l1', namespace: 'default' },
      spec: {},
    };
    const refused = (err: unknown): boolean => {
      assert.ok(isApiError(err, 403), String(err));
      assert.equal(
        err.message,
        'leases.coordination.k8s.io "l1" is forbidden: User "alice" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "default"',
      );
      return true;
    };
    await assert.rejects(alice.update(LEASES, lease), refused);
    await assert.rejects(
      alice.patch(LEASES, 'default', 'l1', 'apply', lease, { fieldManager: 'alice' }),
      refused,
    );
    await assert.rejects(api.client.get(LEASES, 'default', 'l1'), (e: unknown) => isApiError(e, 404));
    await grant(['get', 'update', 'patch', 'create']);
    const made = await alice.update(LEASES, lease);
    assert.equal(made.metadata.name, 'l1');
  });
});

describe('startApiServer with a non-resource mount (svcplane up: /dashboard)', () => {
  let api: InProcessApiServer;
  const seen: string[] = [];
  before(async () => {
    api = await startWithRbac([
      {
        prefix: '/dashboard',
        handler: (req, res) => {
          seen.push(req.url ?? '');
          res.end('mounted');
        },
      },
    ]);
  });
  after(async () => api.stop());

  const get = async (token: string | null, path: string) => {
    const res = await api.transport(token).send({ method: 'GET', path });
    let body = '';
    for await (const chunk of res.body) body += String(chunk);
    return { status: res.status, body };
  };

  it('answers 401 to anonymous, 403 to a user without the role, and hands the rest to the handler', async () => {
    assert.equal((await get(null, '/dashboard/')).status, 401);
    const refused = await get(ALICE, '/dashboard/api/layout');
    assert.equal(refused.status, 403);
    assert.match(refused.body, /cannot get path \\"\/dashboard\/api\/layout\\"/);
    assert.deepEqual(seen, []);
    assert.deepEqual(await get(ADMIN, '/dashboard/api/layout?x=1'), { status: 200, body: 'mounted' });
    assert.deepEqual(await get(ADMIN, '/dashboard'), { status: 200, body: 'mounted' });
    assert.deepEqual(seen, ['/dashboard/api/layout?x=1', '/dashboard']);
    // Only the prefix and below: a path that merely starts with its letters is not the mount's.
    assert.equal((await get(ADMIN, '/dashboards')).status, 404);
  });

  it('lets a user bound to svcplane:dashboard-viewer in, and no further', async () => {
    const RBAC = 'rbac.authorization.k8s.io';
    await api.client.create(mustFindResource(RBAC, 'clusterrolebindings'), '', {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-dashboard' },
      roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'svcplane:dashboard-viewer' },
      subjects: [{ apiGroup: RBAC, kind: 'User', name: 'alice' }],
    });
    // The authorizer reads the binding from the watch cache, a moment after the create.
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await get(ALICE, '/dashboard/')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 200);
    assert.equal((await get(ALICE, '/dashboard')).status, 200);
    assert.equal((await get(ALICE, '/metrics')).status, 403);
  });
});
