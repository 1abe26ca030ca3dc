import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { ApiError } from './client.js';
import { LeaderElector, type LeaseClient } from './leader-election.js';

/** An in-memory Lease API with resourceVersion compare-and-swap; `down` makes every call fail. */
class FakeLeases implements LeaseClient {
  private obj: KObject | undefined;
  private rv = 0;
  down = new Set<string>();
  as(who: string): LeaseClient {
    return {
      get: (ns, n) => this.call(who, () => this.get(ns, n)),
      create: (ns, o) => this.call(who, () => this.create(ns, o)),
      update: (o) => this.call(who, () => this.update(o)),
    };
  }
  private async call<T>(who: string, fn: () => Promise<T>): Promise<T> {
    if (this.down.has(who)) throw new Error('connection refused');
    return fn();
  }
  async get(_ns: string, name: string): Promise<KObject> {
    if (this.obj === undefined)
      throw new ApiError(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
    return structuredClone(this.obj);
  }
  async create(_ns: string, o: KObject): Promise<KObject> {
    if (this.obj !== undefined) throw new ApiError(409, 'AlreadyExists', 'exists');
    this.obj = { ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.obj);
  }
  async update(o: KObject): Promise<KObject> {
    if (o.metadata.resourceVersion !== this.obj?.metadata.resourceVersion)
      throw new ApiError(409, 'Conflict', 'conflict');
    this.obj = { ...o, metadata: { ...o.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.obj);
  }
  get spec(): { holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number } {
    return (this.obj as unknown as { spec: object } | undefined)?.spec ?? {};
  }
}

const elector = (api: FakeLeases, id: string, now: () => number, extra: object = {}): LeaderElector =>
  new LeaderElector(api.as(id), {
    namespace: 'kube-system',
    name: 'svcplane-controller-manager',
    identity: id,
    now,
    onStartedLeading: () => {},
    ...extra,
  });

describe('LeaderElector', () => {
  it('one holder at a time; another takes over only once the lease has expired as it observed it', async () => {
    const api = new FakeLeases();
    let t = 0;
    const a = elector(api, 'a', () => t);
    const b = elector(api, 'b', () => t);
    assert.equal(await a.tryAcquireOrRenew(), true);
    assert.equal(await b.tryAcquireOrRenew(), false);
    assert.equal(api.spec.holderIdentity, 'a');
    assert.equal(api.spec.leaseDurationSeconds, 15);
    t = 10_000;
    assert.equal(await a.tryAcquireOrRenew(), true, 'renewal');
    t = 24_000;
    assert.equal(await b.tryAcquireOrRenew(), false, 'b saw the renewal at 24 s, not at 10 s');
    t = 39_001;
    assert.equal(await b.tryAcquireOrRenew(), true);
    assert.equal(api.spec.holderIdentity, 'b');
    assert.equal(api.spec.leaseTransitions, 1);
    assert.equal(await a.tryAcquireOrRenew(), false, 'a lost it');
  });

  it('a concurrent write (409) means not acquired', async () => {
    const api = new FakeLeases();
    const a = elector(api, 'a', () => 0);
    const b = elector(api, 'b', () => 0);
    const [ra, rb] = await Promise.all([a.tryAcquireOrRenew(), b.tryAcquireOrRenew()]);
    assert.equal(Number(ra) + Number(rb), 1);
  });

  it('a partitioned leader steps down after the renew deadline; the other takes over; stop() releases', async () => {
    const api = new FakeLeases();
    const events: string[] = [];
    const opts = (id: string) => ({
      leaseDurationMs: 1000,
      renewDeadlineMs: 600,
      retryPeriodMs: 100,
      onStartedLeading: (signal: AbortSignal) => {
        events.push(`${id} leads`);
        signal.addEventListener('abort', () => events.push(`${id} cancelled`));
      },
      onStoppedLeading: () => events.push(`${id} stops`),
    });
    const a = elector(api, 'a', Date.now, opts('a'));
    a.start();
    for (let i = 0; i < 100 && !a.isLeader; i++) await new Promise((r) => setTimeout(r, 10));
    const b = elector(api, 'b', Date.now, opts('b'));
    b.start();
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(b.isLeader, false);
    api.down.add('a');
    for (let i = 0; i < 500 && !b.isLeader; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(b.isLeader);
    assert.equal(a.isLeader, false);
    assert.deepEqual(events.slice(0, 3), ['a leads', 'a cancelled', 'a stops']);
    await b.stop();
    assert.equal(api.spec.holderIdentity, '', 'released on stop');
    api.down.delete('a');
    await a.stop();
  });

  it('stopped while an attempt to acquire is in flight and wins: the Lease is given back', async () => {
    const api = new FakeLeases();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The candidate's first read waits at the gate; stop() comes meanwhile; then the attempt wins.
    const slow: LeaseClient = {
      get: async (ns, n) => {
        await gate;
        return api.get(ns, n);
      },
      create: (ns, o) => api.create(ns, o),
      update: (o) => api.update(o),
    };
    let led = false;
    const a = new LeaderElector(slow, {
      namespace: 'kube-system',
      name: 'svcplane-controller-manager',
      identity: 'a',
      onStartedLeading: () => (led = true),
    });
    a.start();
    const stopped = a.stop();
    release();
    await stopped;
    assert.equal(led, false, 'never started leading');
    assert.equal(api.spec.holderIdentity, '', 'released, not held until it expires');
  });
});
