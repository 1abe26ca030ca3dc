// An etcd failover under load: two `svcplane apiserver` processes share a 3-member etcd cluster on
// loopback. 3,000 Lease creates (generateName, so a create sent twice would make two objects) go through
// both while the etcd leader is killed and later restarted. No client sees an error, and every request
// made exactly one object: the API servers retried what etcd failed, as etcd_request_retries_total shows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startEtcdCluster, type EtcdCluster } from '../../src/storage/etcd/testing/etcd-server.js';
import { call, startUp, type TestServer } from './testing/server.js';

const TOKEN = 'failover-admin-token';
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
    const tokenFile = path.join(work, 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},admin,admin-uid,"system:masters"\n`);
    const port = await freePort();
    const start = async (address: string): Promise<TestServer> => {
      const srv = await startUp({
        command: 'apiserver',
        dataDir: mkdtempSync(path.join(work, 'dir-')),
        args: [
          '--storage-backend',
          'etcd3',
          '--etcd-servers',
          etcd.members.map((m) => m.endpoint).join(','),
          '--token-auth-file',
          tokenFile,
          '--bind-address',
          address,
          '--secure-port',
          String(port),
        ],
      });
      return { ...srv, token: TOKEN };
    };
    [a, b] = await Promise.all([start('127.0.0.2'), start('127.0.0.3')]);
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
              metadata: { generateName: 'l-', labels: { req: String(i) } },
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
      const reqs = list
        .json<{ items: Lease[] }>()
        .items.map((l) => l.metadata.labels?.['req'])
        .filter((r) => r !== undefined);
      assert.equal(reqs.length, CREATES, 'one object per request, none twice');
      assert.equal(new Set(reqs).size, CREATES, 'every request made exactly one object');
    }
  });
});
