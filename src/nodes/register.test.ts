// registerNodes against the real API server in-process (memory store): two registrations made to
// race — each one's Node lists wait for the other's, so both plan from the same list — end with
// disjoint pod CIDRs, or with the later one refused, and leave nothing of a loser behind. A client
// wrapper sets the Nodes' creationTimestamps as the tests need (the server's are whole seconds, so who
// is "earlier" would otherwise depend on the clock).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import type { ResourceInfo } from '../api/resources.js';
import { parseCidrList } from '../core/nodes/pod-cidrs.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { Client, type ListOptions, type ObjectList } from '../runtime/client.js';
import {
  LEASES,
  listAll,
  MAX_ATTEMPTS,
  NODES,
  registerNodes,
  RegistrationError,
  type CidrSource,
  type RegisteredNode,
} from './register.js';

/** Pairs the k-th Node list of party 0 with the k-th of party 1: neither goes on alone. */
class Rendezvous {
  private readonly calls = [0, 0];
  private readonly waiting = new Map<number, () => void>();
  private open = false;

  constructor(private readonly pairs: number) {}

  meet(party: 0 | 1): Promise<void> {
    const k = this.calls[party]!++;
    if (this.open || k >= this.pairs) return Promise.resolve();
    if (this.calls[1 - party]! > k) {
      this.waiting.get(k)?.();
      this.waiting.delete(k);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.set(k, resolve));
  }

  /** One party is done: the other no longer waits. */
  release(): void {
    this.open = true;
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
  }
}

const T_EARLY = '2026-01-01T00:00:00Z';
const T_LATE = '2026-01-01T00:00:01Z';

/** A client whose Node lists meet at a rendezvous and whose Nodes carry `stamp(name)` as created. */
class RacingClient extends Client {
  constructor(
    base: Client,
    private readonly rendezvous: Rendezvous,
    private readonly party: 0 | 1,
    private readonly stamp: (name: string) => string,
  ) {
    super(base.transport);
  }

  private restamp(o: KObject): KObject {
    return { ...o, metadata: { ...o.metadata, creationTimestamp: this.stamp(o.metadata.name ?? '') } };
  }

  override async list(r: ResourceInfo, opts?: ListOptions, signal?: AbortSignal): Promise<ObjectList> {
    if (r !== NODES) return super.list(r, opts, signal);
    await this.rendezvous.meet(this.party);
    const page = await super.list(r, opts, signal);
    return { ...page, items: page.items.map((o) => this.restamp(o)) };
  }

  override async create(r: ResourceInfo, namespace: string, obj: object): Promise<KObject> {
    const o = await super.create(r, namespace, obj);
    return r === NODES ? this.restamp(o) : o;
  }
}

const source = (kind: CidrSource['kind'], text: string): CidrSource => {
  const cidrs = parseCidrList(text);
  assert.ok(Array.isArray(cidrs));
  return { kind, cidrs };
};

interface Racer {
  readonly names: string[];
  readonly cidrs: CidrSource;
  readonly retryDelayMs?: number;
}

describe('registerNodes: two registrations at the same moment', () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer();
  });
  after(() => api.stop());
  beforeEach(async () => {
    for (const n of await listAll(api.client, NODES)) await api.client.delete(NODES, '', n.metadata.name!);
    for (const l of await listAll(api.client, LEASES, 'kube-node-lease')) {
      await api.client.delete(LEASES, 'kube-node-lease', l.metadata.name!);
    }
  });

  /** Runs both registrations, their Node lists paired `pairs` times; settles both. */
  const race = (
    racers: [Racer, Racer],
    stamp: (name: string) => string,
    pairs = Infinity,
  ): Promise<PromiseSettledResult<RegisteredNode[]>[]> => {
    const rendezvous = new Rendezvous(pairs);
    return Promise.allSettled(
      racers.map((r, party) =>
        registerNodes({
          client: new RacingClient(api.client, rendezvous, party as 0 | 1, stamp),
          names: r.names,
          labels: {},
          cidrs: r.cidrs,
          internalIP: (i) => `127.0.1.${party * 10 + i + 1}`,
          version: 'v1.33.0-svcplane.test',
          nowMs: Date.now,
          process: `test/${party}`,
          retryDelayMs: () => r.retryDelayMs ?? 0,
        }).finally(() => rendezvous.release()),
      ),
    );
  };

  const stored = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await listAll(api.client, NODES)).map((n) => [
        n.metadata.name!,
        ((n as { spec?: { podCIDRs?: string[] } }).spec?.podCIDRs ?? []).join(','),
      ]),
    );
  const leaseNames = async (): Promise<string[]> =>
    (await listAll(api.client, LEASES, 'kube-node-lease')).map((l) => l.metadata.name!).sort();
  const cidrsOf = (r: PromiseSettledResult<RegisteredNode[]>): string[] => {
    assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    return r.value.map((n) => n.podCIDRs.join(','));
  };

  it('--cluster-cidr, the same second: both yield, then plan again one after the other', async () => {
    const cluster = source('cluster-cidr', '10.244.0.0/16');
    const [a, b] = await race(
      [
        { names: ['a-0', 'a-1'], cidrs: cluster },
        { names: ['b-0', 'b-1'], cidrs: cluster, retryDelayMs: 50 },
      ],
      () => T_EARLY,
      1,
    );
    const all = [...cidrsOf(a!), ...cidrsOf(b!)];
    assert.equal(new Set(all).size, 4, `disjoint: ${all.join(' ')}`);
    const s = await stored();
    assert.deepEqual(Object.keys(s).sort(), ['a-0', 'a-1', 'b-0', 'b-1']);
    assert.deepEqual(await leaseNames(), ['a-0', 'a-1', 'b-0', 'b-1']);
  });

  it('--cluster-cidr, one created earlier: it keeps its ranges, the other takes the next ones', async () => {
    const cluster = source('cluster-cidr', '10.244.0.0/16');
    const [early, late] = await race(
      [
        { names: ['early-0'], cidrs: cluster },
        { names: ['late-0'], cidrs: cluster },
      ],
      (name) => (name.startsWith('early') ? T_EARLY : T_LATE),
    );
    assert.deepEqual(cidrsOf(early!), ['10.244.0.0/24']);
    assert.deepEqual(cidrsOf(late!), ['10.244.1.0/24']);
  });

  it('--cluster-cidr: a node taken over in a lost attempt is taken over again, not refused as live', async () => {
    await api.client.create(NODES, '', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'late-0' },
      spec: { podCIDR: '10.244.9.0/24', podCIDRs: ['10.244.9.0/24'] },
    });
    const cluster = source('cluster-cidr', '10.244.0.0/16');
    const [early, late] = await race(
      [
        { names: ['early-0'], cidrs: cluster },
        { names: ['late-0', 'late-1'], cidrs: cluster },
      ],
      (name) => (name.startsWith('early') ? T_EARLY : T_LATE),
    );
    assert.deepEqual(cidrsOf(early!), ['10.244.0.0/24']);
    assert.deepEqual(cidrsOf(late!), ['10.244.9.0/24', '10.244.1.0/24']);
  });

  it('--pod-cidr: the later of two overlapping ranges is refused with the overlap, and leaves nothing', async () => {
    const [early, late] = await race(
      [
        { names: ['early'], cidrs: source('pod-cidr', '10.10.0.0/24') },
        { names: ['late'], cidrs: source('pod-cidr', '10.10.0.0/25') },
      ],
      (name) => (name.startsWith('early') ? T_EARLY : T_LATE),
    );
    assert.deepEqual(cidrsOf(early!), ['10.10.0.0/24']);
    assert.ok(late?.status === 'rejected');
    assert.ok(late.reason instanceof RegistrationError);
    assert.equal(
      late.reason.message,
      'pod CIDR 10.10.0.0/25 of node "late" overlaps 10.10.0.0/24 of node "early"',
    );
    assert.deepEqual(await stored(), { early: '10.10.0.0/24' });
    assert.deepEqual(await leaseNames(), ['early']);
  });

  it('--pod-cidr, the same second: both yield, then exactly one gets its range', async () => {
    const results = await race(
      [
        { names: ['p'], cidrs: source('pod-cidr', '10.10.0.0/24') },
        { names: ['q'], cidrs: source('pod-cidr', '10.10.0.0/25'), retryDelayMs: 50 },
      ],
      () => T_EARLY,
      1,
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    assert.equal(won.length, 1);
    assert.equal(lost.length, 1);
    assert.ok(lost[0] instanceof RegistrationError);
    assert.match(lost[0].message, /^pod CIDR 10\.10\.0\.0\/2[45] of node "[pq]" overlaps /);
    assert.equal(Object.keys(await stored()).length, 1);
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts that all tie, with one line, and leaves nothing`, async () => {
    const cluster = source('cluster-cidr', '10.244.0.0/16');
    const results = await race(
      [
        { names: ['a-0'], cidrs: cluster },
        { names: ['b-0'], cidrs: cluster },
      ],
      () => T_EARLY,
    );
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.ok(r.reason instanceof RegistrationError);
      assert.match(
        r.reason.message,
        /^--cluster-cidr: gave up after 5 attempts: another registration took the same pod CIDRs at the same time each time \(last: 10\.244\.0\.0\/24 of node "[ab]-0" and 10\.244\.0\.0\/24 of node "[ab]-0"\); try again$/,
      );
    }
    assert.deepEqual(await stored(), {});
    assert.deepEqual(await leaseNames(), []);
  });
});
