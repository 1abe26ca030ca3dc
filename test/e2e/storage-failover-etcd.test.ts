// An etcd failover under load: two `svcplane apiserver` processes share a 3-member etcd cluster on
// loopback. 3,000 Lease creates go through both while the etcd leader is killed and later restarted.
// No client sees an error (in particular no 409 for a create whose first attempt landed before etcd
// failed it), and every name exists exactly once: the API servers retried what etcd failed, as
// etcd_request_retries_total shows. (Names are explicit: generateName's 5 random characters would
// collide among 3,000 creates about one run in three, failover or not.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEtcdCluster, type EtcdCluster } from '../../src/storage/etcd/testing/etcd-server.js';
import { startApiServersOnEtcd } from './testing/etcd-apiservers.js';
import { call, type TestServer } from './testing/server.js';

const CREATES = 3000;
const WORKERS = 24;

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-failover-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Lease {
  metadata: { name: string; labels: Record<string, string> };
}

/** etcd_request_retries_total by its labels, from one server's /metrics. */
async function retriesOf(srv: TestServer): Promise<[string, number][]> {
  const text = (await call(srv, 'GET', '/metrics')).text;
  return [...text.matchAll(/^etcd_request_retries_total\{([^}]*)\} (\d+)$/gm)].map((m) => [
    m[1]!,
    Number(m[2]),
  ]);
}

describe('an etcd leader failover under a create load through two apiservers', () => {
  let etcd: EtcdCluster;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    etcd = await startEtcdCluster(3);
    [a, b] = await startApiServersOnEtcd({ work, etcdServers: etcd.members.map((m) => m.endpoint) });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it(`${CREATES} creates while the leader is killed and restarted: 0 errors, 0 duplicates`, async (t) => {
    const failures: string[] = [];
    let acked = 0;
    let next = 0;
    let killed: Promise<string> | undefined;
    let restarted: Promise<void> | undefined;
    const worker = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= CREATES) return;
        const r = await call(
          i % 2 === 0 ? a : b,
          'POST',
          '/apis/coordination.k8s.io/v1/namespaces/default/leases',
          {
            body: {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name: `l-${i}`, labels: { req: String(i) } },
              spec: { holderIdentity: `h${i}` },
            },
          },
        );
        if (r.status === 201) acked++;
        else failures.push(`req ${i}: ${r.status} ${r.text}`);
        // The failover happens under load: the leader dies after a fifth, and comes back after 3/5.
        if (killed === undefined && acked >= CREATES / 5) {
          killed = etcd.leader().then(async (m) => (await m.kill(), m.name));
        }
        if (killed !== undefined && restarted === undefined && acked >= (CREATES * 3) / 5) {
          restarted = killed.then(async (name) => etcd.members.find((m) => m.name === name)!.restart());
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    const killedName = await killed;
    await restarted;
    const byLabels = [...(await retriesOf(a)), ...(await retriesOf(b))];
    const retries = byLabels.reduce((sum, [, n]) => sum + n, 0);
    t.diagnostic(
      `creates ${CREATES}, errors ${failures.length}, leader killed ${killedName}, retries ${retries}`,
    );
    for (const [labels, n] of byLabels) t.diagnostic(`etcd_request_retries_total{${labels}} ${n}`);

    assert.deepEqual(failures, [], 'no client sees an error');
    assert.equal(acked, CREATES);
    assert.ok(retries > 0, 'the failover did fail requests that were retried');
    for (const srv of [a, b]) {
      const list = await call(srv, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases');
      const items = list
        .json<{ items: Lease[] }>()
        .items.filter((l) => l.metadata.labels?.['req'] !== undefined);
      assert.equal(items.length, CREATES, 'one object per request, none twice');
      const names = new Set(items.map((l) => l.metadata.name));
      assert.equal(names.size, CREATES, 'every name exists once');
      for (const l of items)
        assert.equal(l.metadata.name, `l-${l.metadata.labels['req']}`, 'as its request made it');
    }
  });
});
