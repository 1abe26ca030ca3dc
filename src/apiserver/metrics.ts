// Prometheus metrics with kube-apiserver's names, on a registry of our own (one per server).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Store } from '../storage/store.js';

export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, group, version, resource, subresource and HTTP response code.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'code'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, group, version, resource and subresource.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope'] as const,
    buckets: [
      0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
    ],
    registers: [this.registry],
  });
  readonly storageObjects = new Gauge({
    name: 'apiserver_storage_objects',
    help: 'Number of stored objects at the time of last check split by kind.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly registeredWatchers = new Gauge({
    name: 'apiserver_registered_watchers',
    help: 'Number of currently registered watchers for a given resources',
    labelNames: ['group', 'version', 'kind'] as const,
    registers: [this.registry],
  });
  readonly watchEvents = new Counter({
    name: 'apiserver_watch_events_total',
    help: 'Number of events sent in watch clients',
    labelNames: ['group', 'version', 'kind'] as const,
    registers: [this.registry],
  });
  readonly terminatedWatchers = new Counter({
    name: 'apiserver_terminated_watchers_total',
    help: 'Counter of watchers closed due to unresponsiveness broken by resource type.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.',
    labelNames: ['verb', 'group', 'version', 'resource', 'scope'] as const,
    registers: [this.registry],
  });
  /** Requests being served, watches aside (they are long-running): kube's max-in-flight gauge. */
  readonly inflight = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'Requests being served now, watches aside, per request kind (readOnly or mutating).',
    labelNames: ['request_kind'] as const,
    registers: [this.registry],
  });
  readonly cacheRevision = new Gauge({
    name: 'apiserver_watch_cache_resource_version',
    help: 'Current resource version of the watch cache.',
    registers: [this.registry],
  });
  /** Read from the store when scraped: requests it retried while etcd failed over. */
  countStoreRetries(store: Store): void {
    new Counter({
      name: 'etcd_request_retries_total',
      help: 'Etcd requests retried while etcd failed over, by operation and reason.',
      labelNames: ['operation', 'reason'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const r of store.retries?.() ?? [])
          this.inc({ operation: r.operation, reason: r.reason }, r.count);
      },
    });
  }
}
