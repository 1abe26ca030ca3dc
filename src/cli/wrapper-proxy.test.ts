// What --proxy-upstream sends upstream: the client's identity as impersonation headers, never its own
// credentials or impersonation headers, nothing hop-by-hop; and who is never forwarded.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { StreamRequest, StreamResponse, Transport } from '../runtime/transport.js';
import {
  clientResponseHeaders,
  impersonationFor,
  upstreamDiscovery,
  upstreamRequestHeaders,
} from './wrapper-proxy.js';

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

/** A transport whose stream() answers as `upstream` says, recording what it was sent. */
function fakeUpstream(upstream: (req: StreamRequest) => Promise<StreamResponse>) {
  const sent: StreamRequest[] = [];
  const transport: Transport = {
    server: 'https://upstream.invalid',
    send: () => Promise.reject(new Error('not used')),
    stream: (req) => {
      sent.push(req);
      return upstream(req);
    },
    close: () => undefined,
  };
  return { sent, transport };
}

const answer = (status: number, body: string): Promise<StreamResponse> =>
  Promise.resolve({ status, headers: { 'content-type': 'application/json' }, body: Readable.from([body]) });

/** A server that asks the discovery hook first and answers "local" when it declines. */
async function withDiscoveryServer(
  transport: Transport,
  waitMs: number,
  f: (get: () => Promise<{ status: number; body: string }>) => Promise<void>,
  warnings: string[] = [],
): Promise<void> {
  const log = { info: () => {}, warn: (m: string) => warnings.push(m), error: () => {} };
  const hook = upstreamDiscovery(transport, log, waitMs);
  const server: Server = createServer((req, res) => {
    void hook(req, res, { name: 'alice', uid: 'a', groups: ['dev', 'system:authenticated'] }).then((done) => {
      if (!done) res.end('local');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const get = () =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      request(
        { host: '127.0.0.1', port, path: '/apis', headers: { Authorization: 'Bearer secret' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      )
        .on('error', reject)
        .end();
    });
  try {
    await f(get);
  } finally {
    server.close();
  }
}

describe('wrapper --proxy-upstream discovery', () => {
  it("passes the upstream's discovery back, asked as the client", async () => {
    const { sent, transport } = fakeUpstream(() => answer(200, '{"kind":"APIGroupList"}'));
    await withDiscoveryServer(transport, 1000, async (get) => {
      assert.deepEqual(await get(), { status: 200, body: '{"kind":"APIGroupList"}' });
    });
    assert.equal(sent[0]!.path, '/apis');
    assert.equal(sent[0]!.headers['impersonate-user'], 'alice');
    assert.equal(sent[0]!.headers['authorization'], undefined);
  });

  it('serves its own when the upstream is away, refuses, fails or is slow', async () => {
    const cases: [string, () => Promise<StreamResponse>][] = [
      ['unreachable', () => Promise.reject(new Error('connect ECONNREFUSED'))],
      ['refuses the client', () => answer(403, '{"kind":"Status","code":403}')],
      ['lacks the group', () => answer(404, '{"kind":"Status","code":404}')],
      ['fails', () => answer(503, '{"kind":"Status","code":503}')],
    ];
    for (const [what, upstream] of cases) {
      const { transport } = fakeUpstream(upstream);
      await withDiscoveryServer(transport, 1000, async (get) => {
        assert.deepEqual(await get(), { status: 200, body: 'local' }, what);
      });
    }
    // Slow: nothing within the wait; the request upstream is aborted.
    let abortedUpstream = false;
    const { transport } = fakeUpstream(
      (req) =>
        new Promise((_resolve, reject) =>
          req.signal?.addEventListener('abort', () => {
            abortedUpstream = true;
            reject(new Error('aborted'));
          }),
        ),
    );
    await withDiscoveryServer(transport, 50, async (get) => {
      assert.deepEqual(await get(), { status: 200, body: 'local' });
    });
    assert.ok(abortedUpstream);
  });

  it('says once per run of fallbacks why it serves its own', async () => {
    let status = 503;
    const { transport } = fakeUpstream(() => answer(status, '{"kind":"APIGroupList"}'));
    const warnings: string[] = [];
    await withDiscoveryServer(
      transport,
      1000,
      async (get) => {
        await get();
        await get();
        assert.equal(warnings.length, 1);
        status = 200;
        assert.equal((await get()).body, '{"kind":"APIGroupList"}');
        status = 403;
        await get();
        assert.equal(warnings.length, 2, 'a new run after an answer');
      },
      warnings,
    );
    assert.match(warnings[0]!, /discovery from the upstream failed/);
  });
});
