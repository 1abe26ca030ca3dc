// etcd-specific behaviour beyond the conformance suite: the key layout in etcd, several apiservers
// sharing one etcd, and clear failures when etcd is unreachable or goes away.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isStoreError, type WatchEvent } from '../store.js';
import { EtcdStore } from './etcd-store.js';
import { findEtcdctl, freePort, startEtcd, type EtcdServer } from './testing/etcd-server.js';
import path from 'node:path';

const enc = (s: string): Buffer => Buffer.from(s);
const dec = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

function etcdctl(endpoint: string, ...args: string[]): string {
  const r = spawnSync(findEtcdctl(), [`--endpoints=${endpoint}`, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ETCDCTL_API: '3' },
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

describe('etcd store', () => {
  let etcd: EtcdServer;
  const stores: EtcdStore[] = [];
  const open = async (prefix?: string): Promise<EtcdStore> => {
    const s = await EtcdStore.open({ endpoints: [etcd.endpoint], ...(prefix ? { prefix } : {}) });
    stores.push(s);
    return s;
  };
  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await etcd.stop();
  });

  it('keeps keys under /registry by default, where kube-apiserver keeps them', async () => {
    const s = await open();
    await s.create('/services/specs/default/web', enc('{"kind":"Service"}'));
    const out = etcdctl(etcd.endpoint, 'get', '--prefix', '/registry/services/');
    assert.deepEqual(out.trim().split('\n'), ['/registry/services/specs/default/web', '{"kind":"Service"}']);
    const other = await open('/elsewhere/');
    assert.equal(await other.get('/services/specs/default/web'), undefined);
  });

  it('several apiservers on one etcd share revisions, CAS and watches', async () => {
    const a = await open('/shared');
    const b = await open('/shared');
    const start = await a.create('/cnt', enc('0'));
    const watched: WatchEvent[] = [];
    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), 60_000); // a lost event fails the count below, fast
    const watching = (async () => {
      for await (const batch of b.watch('/', start.modRevision, ac.signal)) {
        watched.push(...batch);
        if (watched.length >= 400) return;
      }
    })();
    const increment = async (s: EtcdStore): Promise<void> => {
      for (;;) {
        const cur = (await s.get('/cnt'))!;
        try {
          await s.update('/cnt', enc(String(Number(dec(cur.value)) + 1)), cur.modRevision);
          return;
        } catch (err) {
          if (!isStoreError(err, 'Conflict')) throw err;
        }
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 50; i++) await increment(w % 2 === 0 ? a : b);
      }),
    );
    await watching;
    clearTimeout(deadline);
    ac.abort();
    assert.equal(dec((await b.get('/cnt'))!.value), '400');
    assert.equal(await a.currentRevision(), await b.currentRevision());
    assert.deepEqual(
      watched.map((e) => dec(e.value)),
      Array.from({ length: 400 }, (_, i) => String(i + 1)),
    );
  });

  it('local watchers share one etcd watch: 50 watchers, one upstream watch, each sees every event', async () => {
    const s = await open('/fanout');
    const from = await s.currentRevision();
    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), 30_000);
    const got = Array.from({ length: 50 }, () => [] as string[]);
    const watchers = got.map(async (out, i) => {
      for await (const batch of s.watch(i % 2 === 0 ? '/' : '/a/', from, ac.signal)) {
        out.push(...batch.map((e) => e.key));
        if (out.length >= (i % 2 === 0 ? 20 : 10)) return;
      }
    });
    for (let i = 0; i < 10; i++) {
      await s.create(`/a/${i}`, enc('x'));
      await s.create(`/b/${i}`, enc('y'));
    }
    await Promise.all(watchers);
    clearTimeout(deadline);
    ac.abort();
    assert.equal(s.sharedWatchesOpened, 1);
    got.forEach((keys, i) => assert.equal(keys.length, i % 2 === 0 ? 20 : 10));
    assert.deepEqual(
      got[1],
      Array.from({ length: 10 }, (_, i) => `/a/${i}`),
    );
  });

  it('several changes at one revision (a delete-range by another client) reach every watcher', async () => {
    const s = await open('/multi');
    for (const k of ['a', 'b', 'c']) await s.create(`/ev/${k}`, enc(k));
    const from = await s.currentRevision();
    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), 30_000);
    const shared = (async () => {
      const out: WatchEvent[] = [];
      for await (const batch of s.watch('/ev/', from, ac.signal)) {
        out.push(...batch);
        if (out.length >= 4) return out;
      }
      return out;
    })();
    // etcdctl deletes the three keys in one request: one revision, three DELETE events.
    assert.equal(etcdctl(etcd.endpoint, 'del', '--prefix', '/multi/ev/').trim(), '3');
    await s.create('/ev/d', enc('d'));
    const got = await shared;
    clearTimeout(deadline);
    ac.abort();
    assert.deepEqual(
      got.map((e) => [e.type, e.key]),
      [
        ['DELETE', '/ev/a'],
        ['DELETE', '/ev/b'],
        ['DELETE', '/ev/c'],
        ['PUT', '/ev/d'],
      ],
    );
    assert.equal(got[0]!.revision, got[2]!.revision);
    assert.equal(dec(got[1]!.value), 'b', 'a DELETE carries the last value');
  });

  it('a watch from a compacted revision fails with Compacted even while the shared ring holds it', async () => {
    const s = await open('/hubcompact');
    const start = await s.create('/k', enc('0'));
    const ac = new AbortController();
    const first = s.watch('/', start.modRevision, ac.signal)[Symbol.asyncIterator]();
    const next = first.next(); // starts the shared watch at start.modRevision
    let kv = start;
    for (let i = 1; i <= 3; i++) kv = await s.update('/k', enc(String(i)), kv.modRevision);
    await next;
    await s.compact(kv.modRevision);
    await assert.rejects(
      (async () => {
        for await (const _ of s.watch('/', start.modRevision, ac.signal)) return;
      })(),
      (e: unknown) => isStoreError(e, 'Compacted'),
    );
    ac.abort();
    await first.return?.();
  });

  it('records compaction in compact_rev_key, where kube-apiserver records it', async () => {
    const s = await open('/compaction');
    const kv = await s.create('/k', enc('1'));
    await s.compact(kv.modRevision);
    assert.equal(
      etcdctl(etcd.endpoint, 'get', 'compact_rev_key', '--print-value-only').trim(),
      String(kv.modRevision),
    );
    await s.compact(kv.modRevision - 1); // never lowers it
    assert.equal(await s.compactRevision(), kv.modRevision);
  });

  it('refuses a value that etcd would refuse, before sending it', async () => {
    const s = await open('/big');
    await assert.rejects(s.create('/k', Buffer.alloc(2 * 1024 * 1024)), (e: unknown) =>
      isStoreError(e, 'TooLarge'),
    );
  });
});

describe('etcd store failures', () => {
  it('open() of a closed port fails quickly with one clear line', async () => {
    const port = await freePort();
    const t0 = Date.now();
    await assert.rejects(
      EtcdStore.open({ endpoints: [`http://127.0.0.1:${port}`], timeoutMs: 3000 }),
      (e: unknown) => {
        assert.ok(isStoreError(e, 'Unavailable'), String(e));
        assert.match(e.message, new RegExp(`^etcd at http://127\\.0\\.0\\.1:${port} is unreachable: `));
        assert.ok(!e.message.includes('\n'));
        return true;
      },
    );
    assert.ok(Date.now() - t0 < 10_000);
  });

  it('open() of a server that never answers times out', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((sock) => sockets.push(sock)); // accepts, never speaks
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const t0 = Date.now();
    try {
      await assert.rejects(
        EtcdStore.open({ endpoints: [`http://127.0.0.1:${port}`], timeoutMs: 1500 }),
        (e: unknown) => isStoreError(e, 'Unavailable') && /is unreachable/.test(e.message),
      );
      const took = Date.now() - t0;
      assert.ok(took >= 1000 && took < 10_000, `gave up after ${took} ms`);
    } finally {
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  });

  it('with several endpoints, a dead one is skipped: every write lands on the live one', async () => {
    const etcd = await startEtcd();
    const dead = `http://127.0.0.1:${await freePort()}`;
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const s = await EtcdStore.open({ endpoints: [dead, etcd.endpoint], timeoutMs: 2000 });
        for (let i = 0; i < 20; i++) await s.create(`/fo/${attempt}/${i}`, enc('x'));
        assert.equal((await s.list(`/fo/${attempt}/`)).items.length, 20);
        await s.close();
      }
    } finally {
      await etcd.stop();
    }
  });

  it('when etcd stops answering, an aborted watch ends and close() returns promptly', async () => {
    const etcd = await startEtcd();
    const timeoutMs = 2000;
    // A request gives up once its retry budget is spent (the last attempt may take one timeout more).
    const s = await EtcdStore.open({ endpoints: [etcd.endpoint], timeoutMs, retryBudgetMs: timeoutMs });
    try {
      const kv = await s.create('/fz/a', enc('a'));
      const ac = new AbortController();
      let seen = 0;
      let outcome: unknown = 'running';
      const watching = (async () => {
        for await (const batch of s.watch('/fz/', kv.modRevision - 1, ac.signal)) seen += batch.length;
      })().then(
        () => (outcome = 'ended'),
        (e: unknown) => (outcome = e),
      );
      const t = Date.now();
      while (seen === 0 && outcome === 'running' && Date.now() - t < 20_000)
        await new Promise((r) => setTimeout(r, 10));
      assert.equal(seen, 1, `the watch delivered nothing before the freeze (outcome: ${String(outcome)})`);
      await etcd.pause();
      const t0 = Date.now();
      ac.abort();
      await watching;
      assert.equal(outcome, 'ended');
      // A new watch needs etcd: it must give up within the timeout instead of hanging.
      const stuck = (async () => {
        for await (const _ of s.watch('/fz/', kv.modRevision, new AbortController().signal)) return;
      })().then(
        () => 'ended',
        (e: unknown) => (isStoreError(e) ? e.code : String(e)),
      );
      assert.equal(await stuck, 'Unavailable');
      await s.close();
      assert.ok(Date.now() - t0 < 4 * timeoutMs, `took ${Date.now() - t0} ms`);
    } finally {
      etcd.resume();
      await s.close();
      await etcd.stop();
    }
  });

  it('a store closed while its shared watch is starting leaves nothing running (the process exits)', () => {
    const script = `
      import { EtcdStore } from ${JSON.stringify(path.resolve('src/storage/etcd/etcd-store.ts'))};
      import { startEtcd } from ${JSON.stringify(path.resolve('src/storage/etcd/testing/etcd-server.ts'))};
      const etcd = await startEtcd();
      for (let i = 0; i < 5; i++) {
        const s = await EtcdStore.open({ endpoints: [etcd.endpoint] });
        const it = s.watch('/', 0, new AbortController().signal)[Symbol.asyncIterator]();
        const first = it.next().catch(() => undefined);
        await new Promise((r) => setTimeout(r, i * 3));
        await s.close();
        await first;
      }
      await etcd.stop();
      console.log('done');`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.signal, null, 'the process had to be killed: something kept it alive');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'done');
  });

  it('rejects endpoints that are not URLs', async () => {
    await assert.rejects(EtcdStore.open({ endpoints: ['127.0.0.1:2379'] }), (e: unknown) =>
      isStoreError(e, 'InvalidArgument'),
    );
    await assert.rejects(EtcdStore.open({ endpoints: [] }), (e: unknown) =>
      isStoreError(e, 'InvalidArgument'),
    );
  });

  it('a watch ends with Unavailable when etcd goes away, instead of hanging or skipping events', async () => {
    const etcd = await startEtcd();
    const s = await EtcdStore.open({ endpoints: [etcd.endpoint], timeoutMs: 2000 });
    try {
      const kv = await s.create('/w/a', enc('a'));
      const ac = new AbortController();
      const seen: WatchEvent[] = [];
      const watching = (async () => {
        for await (const batch of s.watch('/w/', kv.modRevision - 1, ac.signal)) seen.push(...batch);
      })();
      const outcome = watching.then(
        () => 'ended without an error',
        (e: unknown) => e,
      );
      const t = Date.now();
      while (seen.length === 0 && Date.now() - t < 20_000) await new Promise((r) => setTimeout(r, 10));
      assert.equal(seen.length, 1, 'the watch delivered its first event');
      await etcd.stop();
      const timer = setTimeout(() => ac.abort(), 30_000);
      const err = await outcome;
      assert.ok(isStoreError(err, 'Unavailable'), String(err));
      clearTimeout(timer);
      assert.equal(seen.length, 1);
      await assert.rejects(s.get('/w/a'), (e: unknown) => isStoreError(e, 'Unavailable'));
    } finally {
      await s.close();
      await etcd.stop();
    }
  });
});
