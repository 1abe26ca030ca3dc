// What --proxy-upstream sends upstream: the client's identity as impersonation headers, never its own
// credentials or impersonation headers, nothing hop-by-hop; and who is never forwarded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientResponseHeaders, impersonationFor, upstreamRequestHeaders } from './wrapper-proxy.js';

describe('wrapper --proxy-upstream headers', () => {
  it('impersonates the client: its name and groups, without system:authenticated', () => {
    assert.deepEqual(
      impersonationFor({ name: 'alice', uid: 'a', groups: ['dev', 'ops', 'system:authenticated'] }),
      {
        'impersonate-user': 'alice',
        'impersonate-group': ['dev', 'ops'],
      },
    );
    assert.deepEqual(impersonationFor({ name: 'bob', uid: '', groups: ['system:authenticated'] }), {
      'impersonate-user': 'bob',
    });
  });

  it('never forwards anonymous clients, nor names that cannot be a header', () => {
    assert.equal(
      impersonationFor({ name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] }),
      undefined,
    );
    // The plain-HTTP port's reader identity.
    assert.equal(
      impersonationFor({
        name: 'x',
        uid: '',
        groups: ['system:unauthenticated', 'svcplane:wrapper-readers'],
      }),
      undefined,
    );
    assert.equal(impersonationFor({ name: 'a\nb', uid: '', groups: [] }), undefined);
    // Header parsers trim: " " would arrive as no impersonation (the wrapper itself), " admin " as admin.
    for (const name of [' ', '\t', ' admin '])
      assert.equal(impersonationFor({ name, uid: '', groups: ['system:authenticated'] }), undefined);
    assert.equal(impersonationFor({ name: 'alice', uid: '', groups: [' system:masters'] }), undefined);
  });

  it('drops front-proxy identity headers (X-Remote-*) a client sends', () => {
    const out = upstreamRequestHeaders(
      { 'x-remote-user': ['admin'], 'x-remote-group': ['system:masters'], accept: ['application/json'] },
      { 'impersonate-user': 'alice' },
    );
    assert.deepEqual(out, { accept: 'application/json', 'impersonate-user': 'alice' });
  });

  it("drops the client's Authorization, Impersonate-* and hop-by-hop headers", () => {
    const out = upstreamRequestHeaders(
      {
        authorization: ['Bearer client'],
        'impersonate-user': ['admin'],
        'impersonate-group': ['system:masters'],
        'impersonate-uid': ['u'],
        'impersonate-extra-scopes': ['all'],
        host: ['127.0.0.1:51006'],
        connection: ['keep-alive, x-secret'],
        'x-secret': ['1'],
        'transfer-encoding': ['chunked'],
        'content-type': ['application/json'],
        accept: ['application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json'],
        'user-agent': ['kubectl/v1.33.0'],
      },
      { 'impersonate-user': 'alice', 'impersonate-group': ['dev'] },
    );
    assert.deepEqual(out, {
      'content-type': 'application/json',
      accept: ['application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json'],
      'user-agent': 'kubectl/v1.33.0',
      'impersonate-user': 'alice',
      'impersonate-group': ['dev'],
    });
  });

  it('passes the response headers back without the hop-by-hop ones', () => {
    assert.deepEqual(
      clientResponseHeaders({
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'cache-control': 'no-cache, private',
        warning: ['299 - "a"', '299 - "b"'],
      }),
      {
        'content-type': 'application/json',
        'cache-control': 'no-cache, private',
        warning: ['299 - "a"', '299 - "b"'],
      },
    );
  });
});
