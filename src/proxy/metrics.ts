// The proxy's Prometheus metrics, with kube-proxy's names (pkg/proxy/metrics), and its /metrics and
// /healthz endpoints (kube-proxy serves them on 10249 and 10256).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { servePaths } from '../runtime/http-endpoint.js';
import type { SyncMetrics } from './sync.js';

// kube-proxy's buckets: sync durations in exponential steps from 1 ms; network programming from 0.25 s
// to 115 s (its metrics.go), with finer steps below a second since this proxy usually lands there.
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
const PROGRAMMING_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
  20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
  47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 65, 70, 75, 80, 85, 90, 95, 100, 105, 110, 115,
];

export class ProxyMetrics implements SyncMetrics {
  readonly registry = new Registry();
  private readonly syncDuration = new Histogram({
    name: 'kubeproxy_sync_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds',
    buckets: SYNC_BUCKETS,
    registers: [this.registry],
  });
  private readonly fullDuration = new Histogram({
    name: 'kubeproxy_sync_full_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for full resyncs',
    buckets: SYNC_BUCKETS,
    registers: [this.registry],
  });
  private readonly partialDuration = new Histogram({
    name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for partial resyncs',
    buckets: SYNC_BUCKETS,
    registers: [this.registry],
  });
  private readonly lastTimestamp = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
    help: 'The last time proxy rules were successfully synced',
    registers: [this.registry],
  });
  private readonly programming = new Histogram({
    name: 'kubeproxy_network_programming_duration_seconds',
    help: 'In Cluster Network Programming Latency in seconds',
    buckets: PROGRAMMING_BUCKETS,
    registers: [this.registry],
  });
  readonly restoreFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    help: 'Cumulative proxy iptables restore failures',
    registers: [this.registry],
  });
  readonly nftablesFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
    help: 'Cumulative proxy nftables sync failures',
    registers: [this.registry],
  });
  /** Edge autonomy (--service-autonomy-enhancement): polls of edge-health without a usable answer. */
  readonly healthPollFailures = new Counter({
    name: 'svcplane_proxy_health_poll_failures_total',
    help: 'Polls of the health source (--service-autonomy-enhancement) that got no usable answer',
    registers: [this.registry],
  });
  /** Edge autonomy: how many nodes the health answer in force reports unhealthy (set by the command). */
  unhealthyNodes: () => number = () => 0;
  private readonly healthUnhealthyNodes: Gauge = new Gauge({
    name: 'svcplane_proxy_health_unhealthy_nodes',
    help: 'Nodes the health source (--service-autonomy-enhancement) reports unhealthy, in its answer in force',
    registers: [this.registry],
    collect: (): void => this.healthUnhealthyNodes.set(this.unhealthyNodes()),
  });
  private readonly syncFailures = new Counter({
    name: 'svcplane_proxy_sync_failures_total',
    help: 'Syncs whose apply failed (any mode; the next sync is a full one)',
    registers: [this.registry],
  });
  private readonly endpointChanges = new Counter({
    name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total',
    help: 'Cumulative proxy rules Endpoint changes',
    registers: [this.registry],
  });
  private readonly serviceChanges = new Counter({
    name: 'kubeproxy_sync_proxy_rules_service_changes_total',
    help: 'Cumulative proxy rules Service changes',
    registers: [this.registry],
  });
  private readonly pendingChanges = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_services_pending',
    help: 'Services with changes not yet synced',
    registers: [this.registry],
  });
  /** Rules written by the last iptables restore, per table (kube-proxy's kubeproxy_sync_proxy_rules_iptables_total). */
  readonly iptablesRules = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_iptables_total',
    help: 'Total number of iptables rules owned by kube-proxy',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  synced(kind: 'full' | 'partial', seconds: number): void {
    this.syncDuration.observe(seconds);
    (kind === 'full' ? this.fullDuration : this.partialDuration).observe(seconds);
    this.lastTimestamp.set(Date.now() / 1000);
  }
  failed(): void {
    this.syncFailures.inc();
  }
  programmed(seconds: number): void {
    this.programming.observe(seconds);
  }
  changes(kind: 'service' | 'endpoints'): void {
    (kind === 'service' ? this.serviceChanges : this.endpointChanges).inc();
  }
  pending(n: number): void {
    this.pendingChanges.set(n);
  }
}

export interface HealthSource {
  health(): { healthy: boolean; lastUpdated: string | undefined; currentTime: string };
}

/** One plain-HTTP server answering /metrics, /healthz and /livez (kube-proxy's bodies for the latter two). */
export async function serveOps(
  host: string,
  port: number,
  metrics: ProxyMetrics | undefined,
  health: HealthSource,
): Promise<{ server: Server; port: number }> {
  const server = await servePaths(host, port, (path, req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return true;
    }
    if (path === '/metrics' && metrics !== undefined) {
      void metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
      return true;
    }
    if (path === '/healthz' || path === '/livez') {
      const h = health.health();
      res.writeHead(h.healthy ? 200 : 503, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          lastUpdated: h.lastUpdated ?? '',
          currentTime: h.currentTime,
          nodeEligible: true,
        }),
      );
      return true;
    }
    return false;
  });
  return { server, port: (server.address() as AddressInfo).port };
}
