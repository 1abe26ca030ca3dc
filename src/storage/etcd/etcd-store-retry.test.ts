// EtcdStore over a fake etcd that fails on cue, before or after applying a request: safe requests are
// retried, an unknown outcome is resolved by reading back (no duplicate create, no false AlreadyExists or
// Conflict for our own write), a non-safe one is not sent again, and the budget ends it with Unavailable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStoreError } from '../store.js';
import { EtcdStore } from './etcd-store.js';

interface Kv {
  key: Buffer;
  value: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
}
type Req = Record<string, unknown> & { key: Buffer };
interface Compare {
  key: Buffer;
  target: 'Mod' | 'Version';
  mod_revision?: number;
  version?: number;
}
interface Op {
  request_put?: { key: Buffer; value: Buffer };
  request_delete_range?: { key: Buffer };
  request_range?: { key: Buffer };
}

const NO_LEADER = '14 UNAVAILABLE: etcdserver: no leader';
const RESET = '14 UNAVAILABLE: read ECONNRESET';
const TIMEOUT = '14 UNAVAILABLE: etcdserver: request timed out';

/** A one-key-space etcd with history; `fail` queues failures for the next txns, before or after applying. */
class FakeEtcd {
  rev = 1;
  txns = 0;
  puts = 0;
  private readonly history: { rev: number; key: string; kv: Kv | undefined }[] = [];
  readonly fail: { when: 'before' | 'after'; msg: string }[] = [];
  alwaysFail: string | undefined;

  private at(key: string, revision = 0): Kv | undefined {
    let kv: Kv | undefined;
    for (const h of this.history) if (h.key === key && (revision === 0 || h.rev <= revision)) kv = h.kv;
    return kv;
  }

  /** Another client's write. */
  put(key: string, value: string): void {
    this.apply({ request_put: { key: Buffer.from(key), value: Buffer.from(value) } });
  }

  private apply(op: Op): Record<string, unknown> {
    if (op.request_range)
      return { response_range: { kvs: [this.at(op.request_range.key.toString())].filter(Boolean) } };
    if (op.request_put) {
      const key = op.request_put.key.toString();
      const prev = this.at(key);
      this.rev++;
      this.puts++;
      const kv: Kv = {
        key: op.request_put.key,
        value: op.request_put.value,
        create_revision: prev?.create_revision ?? String(this.rev),
        mod_revision: String(this.rev),
        version: String(Number(prev?.version ?? 0) + 1),
      };
      this.history.push({ rev: this.rev, key, kv });
      return { response_put: { prev_kv: prev } };
    }
    const key = op.request_delete_range!.key.toString();
    const prev = this.at(key);
    if (prev !== undefined) this.history.push({ rev: ++this.rev, key, kv: undefined });
    return { response_delete_range: { prev_kvs: prev ? [prev] : [] } };
  }

  private failure(when: 'before' | 'after'): void {
    if (this.alwaysFail !== undefined) throw new Error(this.alwaysFail);
    if (this.fail[0]?.when === when) throw new Error(this.fail.shift()!.msg);
  }

  readonly kv = {
    range: async (req: Req) => {
      this.failure('before');
      const kv = this.at(req.key.toString(), Number(req['revision'] ?? 0));
      return { header: { revision: String(this.rev) }, kvs: kv ? [kv] : [], more: false };
    },
    txn: async (req: { compare: Compare[]; success: Op[]; failure: Op[] }) => {
      this.txns++;
      this.failure('before');
      const ok = req.compare.every((c) => {
        const cur = this.at(c.key.toString());
        return c.target === 'Mod'
          ? Number(cur?.mod_revision ?? 0) === c.mod_revision
          : Number(cur?.version ?? 0) > c.version!;
      });
      const responses = (ok ? req.success : req.failure).map((op) => this.apply(op));
      this.failure('after');
      return { header: { revision: String(this.rev) }, succeeded: ok, responses };
    },
  };

  close(): void {}
}

function storeOver(fake: FakeEtcd, retryBudgetMs = 5000): EtcdStore {
  return EtcdStore.overClient(fake as unknown as Parameters<typeof EtcdStore.overClient>[0], {
    prefix: '',
    retryBudgetMs,
  });
}

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (v: Uint8Array): string => new TextDecoder().decode(v);

describe('EtcdStore retries (a fake etcd failing on cue)', () => {
  it('a create that landed before the connection reset succeeds once: no duplicate, no 409', async () => {
    const fake = new FakeEtcd();
    fake.fail.push({ when: 'after', msg: RESET });
    const store = storeOver(fake);
    const kv = await store.create('/a', bytes('ours'));
    assert.equal(fake.puts, 1, 'written once');
    assert.equal(fake.txns, 2, 'sent twice');
    assert.deepEqual([kv.createRevision, kv.modRevision], [2, 2], 'the revision of our write');
    assert.deepEqual(store.retries(), [{ operation: 'create', reason: 'connection_reset', count: 1 }]);
  });

  it('a create that landed and was then changed by another is still ours (read at its create revision)', async () => {
    const fake = new FakeEtcd();
    fake.fail.push({ when: 'after', msg: TIMEOUT });
    const store = storeOver(fake);
    const sent = fake.kv.txn;
    let first = true;
    fake.kv.txn = async (req) => {
      const res = sent(req);
      if (first) {
        first = false;
        await res.catch(() => {});
        fake.put('/a', 'theirs, later');
        return res;
      }
      return res;
    };
    const kv = await store.create('/a', bytes('ours'));
    assert.deepEqual([kv.createRevision, kv.modRevision], [2, 2]);
    assert.equal(text(kv.value), 'ours');
  });

  it("another's object at the key is AlreadyExists even after an unknown outcome", async () => {
    const fake = new FakeEtcd();
    fake.put('/a', 'theirs');
    fake.fail.push({ when: 'before', msg: RESET });
    const store = storeOver(fake);
    await assert.rejects(store.create('/a', bytes('ours')), (err) => isStoreError(err, 'AlreadyExists'));
    assert.equal(fake.txns, 2);
  });

  it('a create refused for want of a leader is sent again and written once', async () => {
    const fake = new FakeEtcd();
    fake.fail.push({ when: 'before', msg: NO_LEADER }, { when: 'before', msg: NO_LEADER });
    const store = storeOver(fake);
    await store.create('/a', bytes('ours'));
    assert.equal(fake.puts, 1);
    assert.deepEqual(store.retries(), [{ operation: 'create', reason: 'leader_election', count: 2 }]);
  });

  it('a compare-and-swap update that landed before a timeout succeeds with its revision', async () => {
    const fake = new FakeEtcd();
    fake.put('/a', 'v1');
    fake.fail.push({ when: 'after', msg: TIMEOUT });
    const store = storeOver(fake);
    const kv = await store.update('/a', bytes('v2'), 2);
    assert.deepEqual([kv.createRevision, kv.modRevision, text(kv.value)], [2, 3, 'v2']);
    assert.equal(fake.puts, 2, 'one put of ours');
  });

  it('an update that did not land, while another changed the key, is a Conflict', async () => {
    const fake = new FakeEtcd();
    fake.put('/a', 'v1');
    const store = storeOver(fake);
    fake.fail.push({ when: 'before', msg: RESET });
    const sent = fake.kv.txn;
    fake.kv.txn = async (req) => {
      fake.kv.txn = sent;
      fake.put('/a', 'theirs');
      return sent(req);
    };
    await assert.rejects(store.update('/a', bytes('ours'), 2), (err) => isStoreError(err, 'Conflict'));
  });

  it('a compare-and-swap delete that landed before a reset returns the deleted value', async () => {
    const fake = new FakeEtcd();
    fake.put('/a', 'v1');
    fake.fail.push({ when: 'after', msg: RESET });
    const store = storeOver(fake);
    const kv = await store.delete('/a', 2);
    assert.equal(text(kv.value), 'v1');
    assert.ok(kv.modRevision >= 3);
  });

  it('a delete without a precondition is not sent again after an unknown outcome', async () => {
    const fake = new FakeEtcd();
    fake.put('/a', 'v1');
    fake.fail.push({ when: 'after', msg: RESET });
    const store = storeOver(fake);
    await assert.rejects(store.delete('/a'), (err) => isStoreError(err, 'Unavailable'));
    assert.equal(fake.txns, 1);
    assert.deepEqual(store.retries(), []);
  });

  it('reads are retried; when the budget is spent the failure is Unavailable', async () => {
    const fake = new FakeEtcd();
    fake.alwaysFail = NO_LEADER;
    const store = storeOver(fake, 300);
    await assert.rejects(store.get('/a'), (err) => isStoreError(err, 'Unavailable'));
    const [r] = store.retries();
    assert.equal(r?.operation, 'get');
    assert.ok(r.count >= 3, `${r.count} retries in 300 ms`);
    fake.alwaysFail = undefined;
    assert.equal(await store.get('/a'), undefined);
  });
});
