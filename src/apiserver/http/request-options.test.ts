// The write options carry who asks, so that the registry's write checks (RBAC's escalation check) see
// the requester after impersonation; a request nobody recorded (the server's own) carries no user.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { setRequestUser, writeContext } from './request-options.js';

const req = (): IncomingMessage => ({ headers: { 'user-agent': 'kubectl/v1.33.0' } }) as IncomingMessage;

describe('writeContext', () => {
  it('carries the user recorded for the request', () => {
    const r = req();
    const alice = { name: 'alice', uid: '', groups: ['system:authenticated'] };
    setRequestUser(r, alice);
    const ctx = writeContext(r, new URLSearchParams(), 'CreateOptions');
    assert.equal(ctx.user, alice);
    assert.equal(ctx.fieldManager, 'kubectl');
    assert.equal('user' in writeContext(req(), new URLSearchParams(), 'UpdateOptions'), false);
  });
});
