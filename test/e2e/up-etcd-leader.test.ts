// Two `svcplane up` on one etcd: one runs the controllers, the other stands by (the Lease
// kube-system/svcplane-controller-manager), so a Deployment's pods are made once, not once per server.
// Both answer /readyz. When the leader stops, the other takes the Lease and the controllers go on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEtcd, type EtcdServer } from '../../src/storage/etcd/testing/etcd-server.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-up-etcd-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface List {
  items: { metadata: { name: string }; reason?: string; involvedObject?: { kind?: string } }[];
}

const deployment = (replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

describe('svcplane up: two on one etcd', () => {
  let etcd: EtcdServer;
  const servers: TestServer[] = [];

  before(async () => {
    etcd = await startEtcd();
    for (const address of ['127.0.0.2', '127.0.0.3'])
      servers.push(
        await startUp({
          dataDir: mkdtempSync(path.join(work, 'dir-')),
          args: ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoint, '--bind-address', address],
        }),
      );
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await etcd?.stop();
  });

  const leading = (s: TestServer): boolean =>
    s.stderr().includes('became the leader; starting the controllers');

  it('one leads the controllers, the other stands by; both are ready', async () => {
    await until('a leader', 20_000, () => Promise.resolve(servers.some(leading)));
    assert.equal(servers.filter(leading).length, 1);
    const standby = servers.find((s) => !leading(s))!;
    await until('the standby to see the leader', 20_000, () =>
      Promise.resolve(standby.stderr().includes('another instance leads the controllers; standing by')),
    );
    for (const s of servers) assert.equal((await call(s, 'GET', '/readyz', { token: null })).status, 200);
    const lease = await call(
      servers[0]!,
      'GET',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/svcplane-controller-manager',
    );
    assert.equal(lease.status, 200, lease.text);
    assert.match(lease.json<{ spec: { holderIdentity: string } }>().spec.holderIdentity, /_[0-9a-f-]{36}$/);
  });

  it("a Deployment's pods are made once", async () => {
    const [a] = servers;
    const made = await call(a!, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: deployment(3),
    });
    assert.equal(made.status, 201, made.text);
    const pods = async () => (await call(a!, 'GET', '/api/v1/namespaces/default/pods')).json<List>().items;
    const events = async () =>
      (await call(a!, 'GET', '/api/v1/namespaces/default/events')).json<List>().items;
    const reasons = (all: List['items'], r: string) =>
      all.filter((e) => e.reason === r && e.involvedObject?.kind === 'ReplicaSet');
    await until('3 pods', 20_000, async () => (await pods()).length === 3);
    // A controller records its events after it has made the pods, and on a loaded machine later still.
    await until('3 SuccessfulCreate events', 20_000, async () =>
      reasons(await events(), 'SuccessfulCreate').length >= 3 ? true : undefined,
    );
    // Two sets of controllers would each create 3, then delete the surplus: give them the time to.
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal((await pods()).length, 3);
    const all = await events();
    assert.equal(reasons(all, 'SuccessfulCreate').length, 3, JSON.stringify(all.map((e) => e.reason)));
    assert.equal(reasons(all, 'SuccessfulDelete').length, 0);
  });

  it('when the leader stops, the other takes over', async () => {
    const leader = servers.find(leading)!;
    const other = servers.find((s) => s !== leader)!;
    await leader.stop(); // a clean stop releases the Lease
    const stoppedAt = Date.now();
    await until('the other to lead', 20_000, () => Promise.resolve(leading(other)));
    // Released, not expired: the Lease lasts 15 s; the standby retries every 2 s.
    assert.ok(Date.now() - stoppedAt < 10_000, `took over after ${Date.now() - stoppedAt} ms`);
    const scaled = await call(other, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/web', {
      body: { spec: { replicas: 4 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(scaled.status, 200, scaled.text);
    await until('4 pods', 20_000, async () => {
      return (await call(other, 'GET', '/api/v1/namespaces/default/pods')).json<List>().items.length === 4;
    });
  });
});
