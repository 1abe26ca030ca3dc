// The kubelet read API over real HTTPS: authentication by client certificate or reviewed token,
// authorization by access review (with the kubelet's caches), and what it answers offline.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { OfflineDecisions } from '../core/nodes/kubelet-auth.js';
import { silentLogger } from '../runtime/logger.js';
import { testPki } from '../../test/support/test-pki.js';
import {
  ReviewUnavailable,
  startKubeletServer,
  type KubeletReviews,
  type KubeletServer,
  type ReviewedUser,
} from './kubelet-server.js';

const pki = testPki(['127.0.0.1']);
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { nodeName: 'edge-0' },
  status: { phase: 'Running', podIP: '127.10.0.7', podIPs: [{ ip: '127.10.0.7' }] },
} as unknown as KObject;

/** A fake API server: who a token is, who may get nodes/proxy, and whether it can be reached. */
const api = {
  reachable: true,
  tokens: new Map<string, ReviewedUser>([
    ['good-token', { name: 'carol', groups: ['system:authenticated'] }],
  ]),
  allowed: new Set(['admin', 'carol']),
  tokenReviews: 0,
  accessReviews: 0,
};
const reviews: KubeletReviews = {
  async tokenReview(token) {
    if (!api.reachable) throw new ReviewUnavailable('connect ECONNREFUSED');
    api.tokenReviews++;
    return api.tokens.get(token);
  },
  async accessReview(a) {
    if (!api.reachable) throw new ReviewUnavailable('connect ECONNREFUSED');
    api.accessReviews++;
    assert.equal(a.resource, 'nodes');
    assert.equal(a.name, 'edge-0');
    return { allowed: api.allowed.has(a.user.name), reason: '' };
  },
};

let server: KubeletServer;
let now = 1_000_000;
const decisions = new OfflineDecisions();
let saves = 0;

interface Reply {
  status: number;
  text: string;
}

function get(
  path: string,
  opts: { cert?: { certPem: string; keyPem: string }; token?: string; method?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: opts.method ?? 'GET',
        ca: pki.ca.certPem,
        ...(opts.cert === undefined ? {} : { cert: opts.cert.certPem, key: opts.cert.keyPem }),
        headers: opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const admin = pki.client('admin', ['system:masters']);
const bob = pki.client('bob');
const stranger = testPki(['127.0.0.1']).client('admin', ['system:masters']);

before(async () => {
  server = await startKubeletServer({
    node: 'edge-0',
    host: '127.0.0.1',
    port: 0,
    certPem: pki.serving.certPem,
    keyPem: pki.serving.keyPem,
    clientCAPem: pki.ca.certPem,
    authorization: 'Webhook',
    reviews,
    pods: () => [pod],
    decisions,
    saveDecisions: () => saves++,
    log: silentLogger,
    now: () => now,
  });
});
after(() => server.close());

describe('kubelet API', () => {
  it('GET /pods with an authorized client certificate: 200 and a v1 PodList', async () => {
    const r = await get('/pods', { cert: admin });
    assert.equal(r.status, 200);
    const list = JSON.parse(r.text) as { kind: string; apiVersion: string; items: KObject[] };
    assert.equal(list.kind, 'PodList');
    assert.equal(list.apiVersion, 'v1');
    assert.deepEqual(list.items, [pod]);
    assert.equal(saves, 1); // the allowed decision is kept for offline use
  });

  it('GET /healthz: 200 ok', async () => {
    assert.deepEqual(await get('/healthz', { cert: admin }), { status: 200, text: 'ok' });
  });

  it('no credentials: 401 Status Unauthorized', async () => {
    const r = await get('/pods');
    assert.equal(r.status, 401);
    assert.deepEqual(JSON.parse(r.text), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Unauthorized',
      reason: 'Unauthorized',
      code: 401,
    });
  });

  it('a certificate of another CA does not authenticate: 401', async () => {
    assert.equal((await get('/pods', { cert: stranger })).status, 401);
  });

  it('an authenticated user the review denies: 403 naming user, verb, resource and subresource', async () => {
    const r = await get('/pods', { cert: bob });
    assert.equal(r.status, 403);
    const s = JSON.parse(r.text) as { reason: string; message: string; code: number };
    assert.equal(s.reason, 'Forbidden');
    assert.match(s.message, /Forbidden \(user=bob, verb=get, resource=nodes, subresource=proxy\)/);
  });

  it('a bearer token is reviewed once and cached; an unknown one is 401', async () => {
    const before = api.tokenReviews;
    assert.equal((await get('/pods', { token: 'good-token' })).status, 200);
    assert.equal((await get('/pods', { token: 'good-token' })).status, 200);
    assert.equal(api.tokenReviews, before + 1);
    assert.equal((await get('/pods', { token: 'bad-token' })).status, 401);
  });

  it('access decisions are cached: allowed for 5 min, denied for 30 s', async () => {
    const start = api.accessReviews;
    await get('/pods', { cert: admin });
    assert.equal(api.accessReviews, start); // allowed above, still cached
    now += 5 * 60_000;
    await get('/pods', { cert: admin });
    assert.equal(api.accessReviews, start + 1);
    await get('/pods', { cert: bob });
    await get('/pods', { cert: bob }); // the denial is cached
    assert.equal(api.accessReviews, start + 2);
    now += 30_000;
    await get('/pods', { cert: bob });
    assert.equal(api.accessReviews, start + 3);
  });

  it('other methods are 405 and unknown paths 404, before authentication', async () => {
    assert.equal((await get('/pods', { method: 'POST' })).status, 405);
    assert.equal((await get('/pods', { method: 'DELETE', cert: admin })).status, 405);
    assert.equal((await get('/exec/default/web/c')).status, 404);
    assert.equal((await get('/')).status, 404);
  });

  describe('offline (the reviews cannot be sent)', () => {
    before(() => {
      api.reachable = false;
      now += 60 * 60_000; // every cached review has expired
    });
    after(() => (api.reachable = true));

    it('a certificate whose allowed decision is kept still gets the pods', async () => {
      const r = await get('/pods', { cert: admin });
      assert.equal(r.status, 200);
      assert.equal((JSON.parse(r.text) as { items: unknown[] }).items.length, 1);
    });

    it('a user without a kept allowed decision: 403 saying why', async () => {
      const r = await get('/pods', { cert: bob });
      assert.equal(r.status, 403);
      assert.match(r.text, /cannot be reached to review access/);
    });

    it('a token whose review is not cached: 401 saying why', async () => {
      const r = await get('/pods', { token: 'good-token' });
      assert.equal(r.status, 401);
      assert.match(r.text, /cannot be reached to review the bearer token/);
    });

    it('a kept decision older than 24 h no longer answers', async () => {
      now += 25 * 60 * 60_000;
      assert.equal((await get('/pods', { cert: admin })).status, 403);
    });
  });
});
