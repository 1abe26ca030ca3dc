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

const SERVICES = mustFindResource('', 'services');
const ADMIN = 'admin-0123456789abcdef0123456789';
const ALICE = 'alice-0123456789abcdef0123456789';

describe('startApiServer with an --authorization-mode chain', () => {
  let api: InProcessApiServer;
  before(async () => {
    const tokens = parseTokenFile(
      [
        formatTokenFileRecord(ADMIN, { name: 'admin', uid: 'admin', groups: ['system:masters'] }),
        formatTokenFileRecord(ALICE, { name: 'alice', uid: 'alice', groups: [] }),
      ].join('\n'),
    );
    api = await startInProcessApiServer({
      token: ADMIN,
      auth: {
        authenticate: (req) => authenticate(req, { tokens }),
        authorization: (cache) => buildAuthorization(['RBAC'], { cache, abacPolicy: undefined }),
      },
    });
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
});
