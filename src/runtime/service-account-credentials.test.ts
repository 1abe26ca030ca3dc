import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type Client } from './client.js';
import { ServiceAccountCredentials } from './service-account-credentials.js';

/** A client that knows some ServiceAccounts and answers TokenRequests with numbered tokens. */
function fakeClient(opts: {
  accounts?: string[];
  lifeMs?: number;
  now: () => number;
  failTokens?: () => boolean;
}) {
  const accounts = new Set(opts.accounts ?? []);
  const calls: string[] = [];
  let issued = 0;
  const client = {
    get: async (_r: unknown, ns: string, name: string) => {
      calls.push(`get ${ns}/${name}`);
      if (!accounts.has(`${ns}/${name}`)) throw new ApiError(404, 'NotFound', 'not found');
      return { metadata: { name, namespace: ns } };
    },
    create: async (_r: unknown, ns: string, obj: { metadata: { name: string } }) => {
      calls.push(`create ${ns}/${obj.metadata.name}`);
      accounts.add(`${ns}/${obj.metadata.name}`);
      return obj;
    },
    createSubresource: async (_r: unknown, ns: string, name: string, sub: string, body: { spec: object }) => {
      calls.push(`${sub} ${ns}/${name} ${JSON.stringify(body.spec)}`);
      if (opts.failTokens?.() === true) throw new ApiError(503, 'ServiceUnavailable', 'down');
      issued++;
      return {
        status: {
          token: `t${issued}`,
          expirationTimestamp: new Date(opts.now() + (opts.lifeMs ?? 3_600_000)).toISOString(),
        },
      };
    },
  };
  return { client: client as unknown as Client, calls };
}

describe('ServiceAccountCredentials', () => {
  it('creates a missing ServiceAccount, then asks for an hour-long token once', async () => {
    let now = 1_000_000;
    const { client, calls } = fakeClient({ now: () => now });
    const creds = new ServiceAccountCredentials(client, 'kube-system', 'endpoint-controller', {
      now: () => now,
    });
    const [a, b] = await Promise.all([creds.token(), creds.token()]);
    assert.equal(a, 't1');
    assert.equal(b, 't1');
    assert.deepEqual(calls, [
      'get kube-system/endpoint-controller',
      'create kube-system/endpoint-controller',
      'token kube-system/endpoint-controller {"expirationSeconds":3600}',
    ]);
    now += 60_000;
    assert.equal(await creds.token(), 't1');
    assert.equal(calls.length, 3);
  });

  it('asks again once 80% of the token’s life has passed', async () => {
    let now = 0;
    const { client, calls } = fakeClient({ accounts: ['kube-system/sa'], now: () => now, lifeMs: 1000 });
    const creds = new ServiceAccountCredentials(client, 'kube-system', 'sa', { now: () => now });
    assert.equal(await creds.token(), 't1');
    now = 799;
    assert.equal(await creds.token(), 't1');
    now = 800;
    assert.equal(await creds.token(), 't2');
    assert.equal(calls.filter((c) => c.startsWith('create')).length, 0);
  });

  it('keeps an unexpired token while a renewal fails, and fails once it has expired', async () => {
    let now = 0;
    let failing = false;
    const { client } = fakeClient({
      accounts: ['kube-system/sa'],
      now: () => now,
      lifeMs: 1000,
      failTokens: () => failing,
    });
    const creds = new ServiceAccountCredentials(client, 'kube-system', 'sa', { now: () => now });
    assert.equal(await creds.token(), 't1');
    failing = true;
    now = 900;
    assert.equal(await creds.token(), 't1');
    now = 1000;
    await assert.rejects(creds.token(), /down/);
    failing = false;
    assert.equal(await creds.token(), 't2');
  });

  it('refuses an answer without a token', async () => {
    const client = {
      get: async () => ({}),
      createSubresource: async () => ({ status: {} }),
    } as unknown as Client;
    await assert.rejects(new ServiceAccountCredentials(client, 'kube-system', 'sa').token(), /has no token/);
  });
});
