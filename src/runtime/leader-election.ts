// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it with
// kube-controller-manager's defaults: a 15 s lease, a 10 s renew deadline, a 2 s retry period.
// Candidates try to acquire every retry period; the holder renews every retry period and gives up
// leadership when it could not renew within the renew deadline (its work is cancelled through the
// AbortSignal it was given). Every write is a compare-and-swap on the Lease's resourceVersion, so two
// candidates can never both believe they hold it. On a clean stop the holder releases the Lease.
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { isApiError, type Client } from './client.js';
import { sleep } from './sleep.js';

export interface LeaseClient {
  get(namespace: string, name: string): Promise<KObject>;
  create(namespace: string, obj: KObject): Promise<KObject>;
  update(obj: KObject): Promise<KObject>;
}

const LEASES = mustFindResource('coordination.k8s.io', 'leases');

/** The Lease calls a LeaderElector makes, over an API client. */
export const leaseClient = (client: Client): LeaseClient => ({
  get: (ns, n) => client.get(LEASES, ns, n),
  create: (ns, obj) => client.create(LEASES, ns, obj),
  update: (obj) => client.update(LEASES, obj),
});

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Called when this candidate becomes the leader; `signal` aborts when it stops being one. */
  readonly onStartedLeading: (signal: AbortSignal) => void;
  readonly onStoppedLeading?: () => void;
  readonly onNewLeader?: (identity: string) => void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private leading: AbortController | undefined;
  private observed: { spec: LeaseSpec; at: number; rv: string } | undefined;
  private readonly now: () => number;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;

  constructor(
    private readonly client: LeaseClient,
    private readonly o: LeaderElectionOptions,
  ) {
    this.now = o.now ?? Date.now;
    this.leaseMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryMs = o.retryPeriodMs ?? 2_000;
  }

  get isLeader(): boolean {
    return this.leading !== undefined && !this.leading.signal.aborted;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Stops campaigning; a leader releases the Lease so another can take over at once. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private sleep(ms: number): Promise<void> {
    return (this.o.sleep ?? sleep)(ms, this.abort.signal);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      // Acquire.
      let acquired = false;
      while (!signal.aborted && !(acquired = await this.tryAcquireOrRenew())) {
        await this.sleep(this.retryMs * (1 + Math.random() * 0.2));
      }
      if (signal.aborted) {
        // Stopped while an attempt won: give the Lease back rather than hold it until it expires.
        if (acquired) await this.release();
        break;
      }
      this.leading = new AbortController();
      this.o.onStartedLeading(this.leading.signal);
      // Renew until a renewal does not succeed within the deadline.
      let lastRenew = this.now();
      while (!signal.aborted) {
        await this.sleep(this.retryMs);
        if (signal.aborted) break;
        if (await this.tryAcquireOrRenew()) lastRenew = this.now();
        else if (this.now() - lastRenew >= this.renewDeadlineMs) break;
      }
      this.leading.abort();
      this.leading = undefined;
      this.o.onStoppedLeading?.();
      if (signal.aborted) await this.release();
    }
  }

  /** One attempt; true when this candidate holds the Lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const id = this.o.identity;
    let lease: KObject;
    try {
      lease = await this.client.get(this.o.namespace, this.o.name);
    } catch (err) {
      if (!isApiError(err, 404)) return false;
      try {
        const spec: LeaseSpec = {
          holderIdentity: id,
          leaseDurationSeconds: Math.round(this.leaseMs / 1000),
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        };
        const created = await this.client.create(this.o.namespace, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec,
        } as KObject);
        this.observe(created, now);
        return true;
      } catch {
        return false;
      }
    }
    const spec = ((lease as { spec?: LeaseSpec }).spec ?? {}) as LeaseSpec;
    // Expiry is judged by when *we* saw the record change, not by the holder's clock (client-go too).
    if (this.observed?.rv !== lease.metadata.resourceVersion) this.observe(lease, now);
    const holder = spec.holderIdentity ?? '';
    const held = holder !== '' && holder !== id;
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (held && this.observed!.at + durationMs > now) return false;
    const next: LeaseSpec = {
      ...spec,
      holderIdentity: id,
      leaseDurationSeconds: Math.round(this.leaseMs / 1000),
      renewTime: microTime(now),
    };
    if (holder !== id) {
      next.acquireTime = microTime(now);
      next.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
    }
    try {
      const updated = await this.client.update({ ...lease, spec: next } as KObject);
      this.observe(updated, now);
      return true;
    } catch {
      return false; // somebody else wrote first (409) or the server is away
    }
  }

  private observe(lease: KObject, at: number): void {
    const spec = ((lease as { spec?: LeaseSpec }).spec ?? {}) as LeaseSpec;
    const before = this.observed?.spec.holderIdentity;
    this.observed = { spec, at, rv: lease.metadata.resourceVersion ?? '' };
    if (spec.holderIdentity !== undefined && spec.holderIdentity !== before)
      this.o.onNewLeader?.(spec.holderIdentity);
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.client.get(this.o.namespace, this.o.name);
      const spec = ((lease as { spec?: LeaseSpec }).spec ?? {}) as LeaseSpec;
      if (spec.holderIdentity !== this.o.identity) return;
      const now = this.now();
      await this.client.update({
        ...lease,
        spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now) },
      } as KObject);
    } catch {
      /* best effort: the lease expires on its own */
    }
  }
}
