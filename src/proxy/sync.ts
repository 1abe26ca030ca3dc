// The proxy's one sync loop (kube-proxy's Proxier.syncProxyRules driven by its BoundedFrequencyRunner):
// informers on Services, EndpointSlices and Nodes feed the topology index (runtime/topology-feed.ts);
// every change marks the Services it touched; a sync recomputes those Services' desired state
// (core/proxy/state.ts, pure), works out which service ports differ from what was applied, and hands the
// backend either that set (a partial sync) or everything (a full sync: at start, every --sync-period,
// and after a failure).
//
// Syncs are batched: a change runs a sync at once when the last one started at least --min-sync-period
// ago, and otherwise when that period is up; changes that arrive during a sync are taken by the next.
//
// It works the same against a svcplane wrapper (views already filtered for this node: the engine keeps
// them as they are) and against an API server directly (the engine filters here).
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { servicePortStates } from '../core/proxy/state.js';
import type { ProxyState, ServicePortState } from '../core/proxy/types.js';
import type { Client } from '../runtime/client.js';
import { Informer, objectKeyOf } from '../runtime/informer.js';
import { TopologyFeed } from '../runtime/topology-feed.js';
import type { UpstreamMessages } from '../runtime/upstream-log.js';
import type { Logger } from '../runtime/logger.js';
import { errText } from '../api/err-text.js';
import { LAST_CHANGE_TRIGGER_TIME_ANNOTATION } from '../core/endpointslices/types.js';
import { proxyTransforms } from './proxy-objects.js';

const PROXY_UPSTREAM_MESSAGES: UpstreamMessages = {
  startDown: 'upstream unreachable: no rules until the first sync; retrying',
  down: 'upstream unreachable: keeping the rules of the last sync',
  back: 'upstream back: watching again; the changes made meanwhile are synced',
};

export const SERVICES = mustFindResource('', 'services');
export const ENDPOINTSLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
export const NODES = mustFindResource('', 'nodes');

/** kube-proxy's informer selector: Services (and their slices) that another proxy owns, or headless ones, are not ours. */
export const PROXY_SELECTOR = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';

export interface BackendResult {
  /** Whether the backend did a partial sync (false: it rewrote everything). */
  readonly partial: boolean;
  /** Backend-specific figures (rules written, listeners opened, ...), for the log. */
  readonly detail?: Record<string, number>;
}

/** A data plane: iptables or userspace. */
export interface ProxyBackend {
  readonly mode: string;
  /**
   * Makes the data plane match `state`. `changed` lists the service port keys that differ from the last
   * successful apply, or is 'full' when everything must be rewritten. A rejection means nothing is known
   * about what was applied: the next call is 'full'.
   */
  apply(
    state: ProxyState,
    changed: ReadonlySet<string> | 'full',
    signal?: AbortSignal,
  ): Promise<BackendResult>;
  close(): Promise<void>;
}

/** The sync's logger (the name bench/ imports). */
export type SyncLog = Logger;

export interface SyncMetrics {
  synced(kind: 'full' | 'partial', seconds: number, changedServices: number): void;
  failed(): void;
  /** Seconds from a change's trigger time (the slice's last-change-trigger-time) to the sync that applied it. */
  programmed(seconds: number): void;
  changes(kind: 'service' | 'endpoints'): void;
  pending(n: number): void;
}

export interface SyncOptions {
  readonly client: Client;
  readonly node: string;
  readonly backend: ProxyBackend;
  readonly log: SyncLog;
  readonly metrics?: SyncMetrics;
  /** Default 1000 ms (kube-proxy's --min-sync-period). */
  readonly minSyncPeriodMs?: number;
  /** Default 30 s (kube-proxy's --iptables-sync-period). */
  readonly syncPeriodMs?: number;
  /** Clock, for tests. */
  readonly now?: () => number;
  /** After each successful sync, with the state the backend now has (the health-check servers). */
  readonly onApplied?: (state: ProxyState) => void;
}

/**
 * A Node's primary address of each family: the first InternalIP of the family, else its first
 * ExternalIP (as kubelet's GetNodeHostIPs orders them).
 */
export function nodeHostIPs(n: KObject): string[] {
  const addresses = (n as { status?: { addresses?: Array<{ type?: string; address?: string }> } }).status
    ?.addresses;
  if (!Array.isArray(addresses)) return [];
  const ordered = ['InternalIP', 'ExternalIP'].flatMap((t) =>
    addresses.filter((a) => a?.type === t && typeof a.address === 'string').map((a) => a.address!),
  );
  const v4 = ordered.find((ip) => !ip.includes(':'));
  const v6 = ordered.find((ip) => ip.includes(':'));
  return [v4, v6].filter((ip) => ip !== undefined);
}

const sameState = (a: ServicePortState, b: ServicePortState): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

export class ProxySync {
  readonly services: Informer;
  readonly slices: Informer;
  readonly nodes: Informer;

  /** The desired state as of the last sync: service port key → state. */
  private readonly state = new Map<string, ServicePortState>();
  /** Service key → its service port keys in `state`. */
  private readonly portsOf = new Map<string, string[]>();
  /** Services whose state may have changed since the last sync. */
  private dirty = new Set<string>();
  /** Service port keys the backend has not yet applied (carried over a failed sync). */
  private unapplied = new Set<string>();
  /** Per Service, the earliest trigger time (ms) of its changes not yet applied (kube-proxy keeps the same). */
  private triggers = new Map<string, number>();
  /** Aborts the apply in flight when the proxy stops. */
  private readonly abort = new AbortController();
  /** When the oldest change still waiting was seen (ms), for /healthz. */
  private oldestPending: number | undefined;
  /** This node's primary address of each family (kube-proxy's node IPs), from its Node object. */
  private nodeIPs: readonly string[] = [];
  private needFull = true;
  private synced = false;
  private stopped = false;
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private periodic: NodeJS.Timeout | undefined;
  private lastStart = -Infinity;
  private failures = 0;
  /** When the last sync succeeded (ms since the epoch), undefined before the first. */
  lastSuccess: number | undefined;
  syncs = { full: 0, partial: 0, failed: 0 };

  private readonly minMs: number;
  private readonly periodMs: number;
  private readonly now: () => number;

  private readonly feed: TopologyFeed;

  constructor(private readonly o: SyncOptions) {
    this.minMs = o.minSyncPeriodMs ?? 1000;
    this.periodMs = o.syncPeriodMs ?? 30_000;
    this.now = o.now ?? Date.now;
    this.feed = new TopologyFeed({
      node: o.node,
      log: o.log,
      inSync: () => [this.services, this.slices, this.nodes].every((i) => i.reflector.state === 'Watching'),
      synced: () => this.synced,
      stopped: () => this.stopped,
      messages: PROXY_UPSTREAM_MESSAGES,
    });
    // One line when the upstream goes (before or after the first sync) and one when it is back.
    const reflector = this.feed.reflectorOptions;
    // Each informer keeps only what the proxy reads of its objects (proxy-objects.ts).
    const keep = proxyTransforms();
    const scoped = { labelSelector: PROXY_SELECTOR, reflector };
    this.services = new Informer(o.client, SERVICES, { ...scoped, transform: keep.services });
    this.slices = new Informer(o.client, ENDPOINTSLICES, { ...scoped, transform: keep.slices });
    this.nodes = new Informer(o.client, NODES, { transform: keep.nodes, reflector });

    this.services.addHandlers({
      onAdd: (s) => this.service(s),
      onUpdate: (_old, s) => this.service(s),
      onDelete: (s) => this.service(s, true),
    });
    this.slices.addHandlers({
      onAdd: (s) => this.slice(undefined, s),
      onUpdate: (old, s) => this.slice(old, s),
      onDelete: (s) => this.slice(s, undefined),
    });
    this.nodes.addHandlers({
      onAdd: (n) => this.node(n),
      onUpdate: (_old, n) => this.node(n),
      onDelete: (n) => this.node(n, true),
    });
  }

  /** Starts the informers; the first (full) sync runs once all three have listed. */
  start(): void {
    for (const i of [this.services, this.slices, this.nodes]) i.start();
    void Promise.all([this.services, this.slices, this.nodes].map((i) => i.waitForSync())).then(() => {
      if (this.stopped) return;
      this.synced = true;
      this.o.log.info('informers synced; first full sync', {
        services: this.services.indexer.list().length,
        endpointSlices: this.slices.indexer.list().length,
        nodes: this.nodes.indexer.list().length,
      });
      this.feed.initialSyncDone();
      this.request();
    });
  }

  /** The topology index the informers feed. */
  get index(): TopologyFeed['index'] {
    return this.feed.index;
  }

  /** Resolves after the first successful sync. */
  async waitForFirstSync(signal?: AbortSignal): Promise<void> {
    while (this.lastSuccess === undefined) {
      signal?.throwIfAborted();
      if (this.stopped) throw new Error('proxy stopped before its first sync');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves when no change is waiting and no sync runs (tests, benchmarks). */
  async idle(): Promise<void> {
    while (!this.stopped && (this.running !== undefined || this.dirty.size > 0 || this.needFull))
      await new Promise((r) => setTimeout(r, 5));
  }

  /** kube-proxy's healthz: unhealthy once a change has waited longer than twice the sync period. */
  health(): { healthy: boolean; lastUpdated: string | undefined; currentTime: string } {
    const now = this.now();
    const stale = this.oldestPending !== undefined && now - this.oldestPending > 2 * this.periodMs;
    return {
      healthy: this.lastSuccess !== undefined && !stale,
      lastUpdated: this.lastSuccess === undefined ? undefined : new Date(this.lastSuccess).toISOString(),
      currentTime: new Date(now).toISOString(),
    };
  }

  /** The desired state of the last sync (read-only). */
  current(): ProxyState {
    return this.state;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort(new Error('the proxy is stopping'));
    clearTimeout(this.timer);
    clearTimeout(this.periodic);
    await Promise.all([this.services, this.slices, this.nodes].map((i) => i.stop()));
    await this.running;
  }

  // ------------------------------------------------------------------------------------ changes

  private mark(keys: Iterable<string>): void {
    let any = false;
    for (const k of keys) {
      this.dirty.add(k);
      any = true;
    }
    if (!any) return;
    this.oldestPending ??= this.now();
    this.o.metrics?.pending(this.dirty.size);
    this.request();
  }

  private service(s: KObject, deleted = false): void {
    const key = objectKeyOf(s);
    this.o.metrics?.changes('service');
    const changed = this.feed.service(key, deleted ? undefined : s);
    this.mark([key, ...changed]);
  }

  private slice(old: KObject | undefined, s: KObject | undefined): void {
    this.o.metrics?.changes('endpoints');
    const obj = (s ?? old)!;
    // A slice relabelled to another Service (or deleted) leaves its old Service's view.
    const changed = this.feed.slice(objectKeyOf(obj), s);
    const t = Date.parse(obj.metadata.annotations?.[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] ?? '');
    if (changed.length > 0 && Number.isFinite(t))
      for (const key of changed) this.triggers.set(key, Math.min(t, this.triggers.get(key) ?? t));
    this.mark(changed);
  }

  private node(n: KObject, deleted = false): void {
    const name = n.metadata.name ?? '';
    const changed = this.feed.node(name, deleted ? undefined : n);
    if (name === this.o.node) {
      // This node's addresses decide whether a load-balancer source range holds it (state.ts); they
      // change rarely, so every Service is recomputed when they do.
      const ips = deleted ? [] : nodeHostIPs(n);
      if (ips.join() !== this.nodeIPs.join()) {
        this.nodeIPs = ips;
        this.mark(this.services.indexer.list().map((s) => objectKeyOf(s)));
      }
    }
    this.mark(changed);
  }

  /** A node's verdict from the health source (edge autonomy): false drops its endpoints; undefined: none. */
  setNodeHealth(node: string, healthy: boolean | undefined): void {
    this.mark(this.feed.health(node, healthy));
  }

  // --------------------------------------------------------------------------------------- loop

  /** Asks for a sync: now if the last one started at least --min-sync-period ago, else when it is up. */
  private request(): void {
    if (!this.synced || this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.lastStart + this.minMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sync().finally(() => {
        this.running = undefined;
        if (this.again || this.dirty.size > 0 || this.needFull) {
          this.again = false;
          this.request();
        }
      });
    }, wait);
  }

  private schedulePeriodic(): void {
    clearTimeout(this.periodic);
    this.periodic = setTimeout(() => {
      this.needFull = true;
      this.request();
    }, this.periodMs);
    this.periodic.unref();
  }

  /** Recomputes the dirty Services and returns the service port keys whose state changed. */
  private recompute(): Set<string> {
    const changed = new Set<string>();
    const dirty = this.dirty;
    this.dirty = new Set();
    for (const key of dirty) {
      const svc = this.services.indexer.get(key);
      const next =
        svc === undefined ? [] : servicePortStates(svc, this.index.view(key), this.o.node, this.nodeIPs);
      const before = new Set(this.portsOf.get(key) ?? []);
      for (const sp of next) {
        before.delete(sp.key);
        const old = this.state.get(sp.key);
        if (old === undefined || !sameState(old, sp)) {
          this.state.set(sp.key, sp);
          changed.add(sp.key);
        }
      }
      for (const gone of before) {
        this.state.delete(gone);
        changed.add(gone);
      }
      if (next.length === 0) this.portsOf.delete(key);
      else
        this.portsOf.set(
          key,
          next.map((sp) => sp.key),
        );
    }
    return changed;
  }

  private async sync(): Promise<void> {
    const start = this.now();
    this.lastStart = start;
    const full = this.needFull;
    this.needFull = false;
    const triggers = this.triggers;
    this.triggers = new Map();
    const changed = this.recompute();
    for (const k of this.unapplied) changed.add(k);
    this.o.metrics?.pending(0);
    if (!full && changed.size === 0) {
      if (this.dirty.size === 0) this.oldestPending = undefined;
      return;
    }
    const t0 = performance.now();
    try {
      const res = await this.o.backend.apply(this.state, full ? 'full' : changed, this.abort.signal);
      const seconds = (performance.now() - t0) / 1000;
      this.unapplied.clear();
      this.failures = 0;
      this.lastSuccess = this.now();
      // Healthy again only for what this sync applied: changes that came in meanwhile are still waiting.
      this.oldestPending = this.dirty.size === 0 ? undefined : start;
      const kind = res.partial ? 'partial' : 'full';
      this.syncs[kind]++;
      this.o.metrics?.synced(kind, seconds, changed.size);
      for (const t of triggers.values())
        this.o.metrics?.programmed(Math.max(0, (this.lastSuccess - t) / 1000));
      if (full) this.schedulePeriodic();
      try {
        this.o.onApplied?.(this.state);
      } catch (err) {
        this.o.log.error('after the sync', { error: errText(err) });
      }
      this.o.log.info(`${kind} sync`, {
        servicePorts: this.state.size,
        changed: changed.size,
        ms: Math.round(seconds * 1000 * 100) / 100,
        ...res.detail,
      });
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      this.syncs.failed++;
      this.o.metrics?.failed();
      for (const k of changed) this.unapplied.add(k);
      for (const [k, t] of triggers) this.triggers.set(k, Math.min(t, this.triggers.get(k) ?? t));
      this.oldestPending = Math.min(this.oldestPending ?? start, start);
      this.needFull = true;
      // Back off: the next sync waits min-sync-period × 2^failures (up to the sync period).
      this.lastStart = this.now() + Math.min(this.periodMs, this.minMs * 2 ** Math.min(this.failures, 10));
      this.o.log.error('sync failed; the next one is a full sync', {
        error: errText(err),
        failures: this.failures,
      });
    }
  }
}
