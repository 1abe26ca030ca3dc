// `svcplane proxy`: flags → client, backend (iptables, nftables or userspace), sync loop, /metrics and /healthz.
import { parseAutonomyFlag, type AutonomyConfig } from '../core/topology/health-report.js';
import { HealthPoller } from '../runtime/health-poller.js';
import { isIP } from 'node:net';
import { jsonLogger } from '../runtime/logger.js';
import { parseCidrRange } from '../core/allocator/cidr.js';
import type { ProxyState } from '../core/proxy/types.js';
import { healthCheckServices } from '../core/proxy/health-check.js';
import { Client } from '../runtime/client.js';
import { ClientEventRecorder } from '../runtime/events.js';
import { iptablesBackends, nftablesBackend, removeProxyRules } from './proxy-backends.js';
import { ProxyMetrics, serveOps } from '../proxy/metrics.js';
import { ServiceHealthServers, healthCheckHosts } from '../proxy/service-health.js';
import { ProxySync, type ProxyBackend, type SyncLog } from '../proxy/sync.js';
import { UserspaceBackend } from '../proxy/userspace-backend.js';
import { UserspaceProxy } from '../proxy/userspace.js';
import { UsageError, durationFlag, hostPort, intFlag, oneOf, commandFlags, noExtraArgs } from './flags.js';
import { transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { favourMemory } from './favour-memory.js';
import { signalled } from './signals.js';

export const PROXY_HELP = `Usage: svcplane proxy --hostname-override NODE [flags]

The node data plane (kube-proxy's job). It lists and watches Services, EndpointSlices and Nodes through
--kubeconfig, decides with the topology engine which endpoints NODE may use (docs/topology.md), and makes
traffic to each Service go there. Point it at a svcplane wrapper on the node (the SuperEdge layout: the
views arrive already filtered) or straight at an API server (the engine filters here); the result is the
same. One sync loop: changes are batched (--min-sync-period), a partial sync rewrites only the changed
Services, and a full sync runs at start and every --sync-period.

Modes:
  iptables   kube-proxy's rules (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-*, KUBE-NODEPORTS, ...) written with
             iptables-restore --noflush in the network namespace the proxy runs in. Needs root (CAP_NET_ADMIN)
             and the iptables package. A Service without usable endpoints is REJECTed (connection refused).
  nftables   kube-proxy's nftables mode: one table of its own per family (ip svcplane, ip6 svcplane), verdict
             maps from address, protocol and port to per-Service chains, written with nft -f as one
             transaction per sync; a partial sync touches only the changed Services. Needs root and the
             nftables package. On start it removes what the iptables mode left.
  userspace  TCP and UDP forwarding in this process, no root: each Service port is listened on at its
             cluster IP, or with --userspace-cidr at the address in that range with the cluster IP's host bits
             (10.96.3.7 with 127.1.0.0/16 listens on 127.1.3.7). Round robin, ClientIP affinity, retry of the
             next endpoint when one refuses, and draining of removed endpoints.

Examples:
  svcplane proxy --kubeconfig .svcplane-wrapper/kubeconfig --hostname-override edge-0
  svcplane proxy --kubeconfig .svcplane/kubeconfig --hostname-override node0 --proxy-mode userspace \\
      --userspace-cidr 127.1.0.0/16 --metrics-bind-address 127.0.0.1:0 --healthz-bind-address 127.0.0.1:0
  svcplane proxy --kubeconfig .svcplane-wrapper/kubeconfig --hostname-override edge-0 --proxy-mode nftables
  svcplane proxy --cleanup          remove every rule, chain and table the iptables and nftables modes wrote

Flags:
  --hostname-override NODE        the node this proxy serves (required)
  --proxy-mode MODE               iptables, nftables or userspace (default iptables)
${kubeconfigFlagsHelp(32)}
  --min-sync-period DURATION      least time between two syncs (default 1s)
  --sync-period DURATION          a full sync at least this often (default 30s)
  --cluster-cidr CIDR             iptables, nftables: masquerade traffic to cluster IPs from outside this range
  --masquerade-all                iptables, nftables: masquerade all traffic to cluster IPs
  --nodeport-addresses LIST       iptables, nftables: CIDRs whose local addresses accept NodePorts (default: every
                                  local address); userspace: the IPs to listen on for NodePorts (default: none).
                                  Health-check node ports (LoadBalancer, externalTrafficPolicy Local) are
                                  served on the same addresses
  --userspace-cidr CIDR           userspace: where cluster IPs are listened on (see above)
  --userspace-port-offset N       userspace: listen on Service port + N for cluster and external IPs, for a
                                  process that may not bind ports below 1024 (80 → 10080 with 10000)
  --metrics-bind-address H:P      /metrics (default 127.0.0.1:10249; port 0 picks a free one)
  --healthz-bind-address H:P      /healthz (default 127.0.0.1:10256; port 0 picks a free one)
  --service-autonomy-enhancement enabled=true[,interval=30][,address=http://localhost:51005/localinfo]
                                  SuperEdge's edge autonomy, as in svcplane wrapper: endpoints on nodes that
                                  edge-health reports not Normal are not used (for a proxy pointed straight
                                  at an API server; a wrapper with the flag has already left them out)
  --cleanup                       remove the iptables mode's jumps and KUBE-* chains and the nftables mode's
                                  tables, then exit
`;

const FLAGS = {
  'hostname-override': { type: 'string' },
  'service-autonomy-enhancement': { type: 'string' },
  'proxy-mode': { type: 'string' },
  ...KUBECONFIG_FLAGS,
  'min-sync-period': { type: 'string' },
  'sync-period': { type: 'string' },
  'cluster-cidr': { type: 'string' },
  'masquerade-all': { type: 'boolean' },
  'nodeport-addresses': { type: 'string' },
  'userspace-cidr': { type: 'string' },
  'userspace-port-offset': { type: 'string' },
  'metrics-bind-address': { type: 'string' },
  'healthz-bind-address': { type: 'string' },
  cleanup: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const cidrFlag = (flag: string, raw: string): string => {
  if (parseCidrRange(raw) === undefined)
    throw new UsageError(`--${flag}: ${JSON.stringify(raw)} is not a CIDR`);
  return raw;
};

export async function proxyCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, PROXY_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  favourMemory();
  const mode = oneOf(
    'proxy-mode',
    values['proxy-mode'],
    ['iptables', 'nftables', 'userspace'] as const,
    'iptables',
  );
  const log = jsonLogger(undefined, 'proxy');
  const render = {
    family: 4 as const,
    ...(typeof values['cluster-cidr'] === 'string'
      ? { clusterCIDR: cidrFlag('cluster-cidr', values['cluster-cidr']) }
      : {}),
    ...(values['masquerade-all'] === true ? { masqueradeAll: true } : {}),
  };
  const nodePortList =
    typeof values['nodeport-addresses'] === 'string'
      ? values['nodeport-addresses'].split(',').map((s) => s.trim())
      : [];

  if (values['cleanup'] === true) {
    if (values['proxy-mode'] !== undefined && mode === 'userspace')
      throw new UsageError(
        "--cleanup removes the iptables and nftables modes' rules; it takes no --proxy-mode userspace",
      );
    const r = await removeProxyRules(log);
    out(
      `svcplane: proxy cleanup removed ${r.chains} iptables chains and the jumps to them, and ${r.tables} nftables tables`,
    );
    return 0;
  }

  const node = values['hostname-override'];
  if (typeof node !== 'string' || node === '') throw new UsageError('--hostname-override is required');
  const autonomy = autonomyFlag(values['service-autonomy-enhancement']);
  const minMs = durationFlag('min-sync-period', values['min-sync-period'], 0) ?? 1000;
  const periodMs = durationFlag('sync-period', values['sync-period'], 1000) ?? 30_000;
  const metricsAt = hostPort(
    'metrics-bind-address',
    (values['metrics-bind-address'] as string) ?? '127.0.0.1:10249',
  );
  const healthAt = hostPort(
    'healthz-bind-address',
    (values['healthz-bind-address'] as string) ?? '127.0.0.1:10256',
  );
  for (const [flag, at] of [
    ['metrics-bind-address', metricsAt],
    ['healthz-bind-address', healthAt],
  ] as const)
    if (isIP(at.host) === 0)
      throw new UsageError(`--${flag}: ${JSON.stringify(at.host)} is not an IP address`);
  const metrics = new ProxyMetrics();

  let backend: ProxyBackend;
  if (mode === 'iptables' || mode === 'nftables') {
    if (typeof values['userspace-cidr'] === 'string' || values['userspace-port-offset'] !== undefined)
      throw new UsageError('--userspace-cidr and --userspace-port-offset are for --proxy-mode userspace');
    for (const c of nodePortList) cidrFlag('nodeport-addresses', c);
    backend =
      mode === 'iptables'
        ? await iptablesBackends(render, nodePortList, log, metrics)
        : await nftablesBackend(render, nodePortList, log, metrics);
  } else {
    if (render.clusterCIDR !== undefined || render.masqueradeAll === true)
      throw new UsageError('--cluster-cidr and --masquerade-all are for --proxy-mode iptables or nftables');
    for (const a of nodePortList)
      if (isIP(a) === 0)
        throw new UsageError(`--nodeport-addresses: ${JSON.stringify(a)} is not an IP address`);
    const cidr = values['userspace-cidr'];
    if (typeof cidr === 'string') cidrFlag('userspace-cidr', cidr);
    const portOffset = intFlag('userspace-port-offset', values['userspace-port-offset'], 0) ?? 0;
    if (portOffset > 64511)
      throw new UsageError('--userspace-port-offset: at most 64511 (port 1 + offset must fit 65535)');
    backend = new UserspaceBackend(
      new UserspaceProxy({
        ...(typeof cidr === 'string' ? { cidr } : {}),
        nodePortAddresses: nodePortList,
        portOffset,
        log,
      }),
    );
  }

  const transport = transportFromFlags(values, (message) => new UsageError(message));
  const client = new Client(transport);
  const healthChecks = serviceHealthChecks(
    client,
    node,
    healthCheckHosts(mode, nodePortList),
    nodePortList.length === 0 ? 'none' : 'unmatched',
    log,
    () => sync.health().healthy,
  );
  const sync: ProxySync = new ProxySync({
    client,
    node,
    backend,
    log,
    metrics,
    minSyncPeriodMs: minMs,
    syncPeriodMs: periodMs,
    onApplied: healthChecks.onApplied,
  });
  const ops = await serveOps(metricsAt.host, metricsAt.port, metrics, sync);
  const health =
    healthAt.host === metricsAt.host && healthAt.port === metricsAt.port && metricsAt.port !== 0
      ? ops
      : await serveOps(healthAt.host, healthAt.port, undefined, sync);
  const stop = signalled(log);
  const edgeHealth =
    autonomy?.enabled === true
      ? new HealthPoller({
          address: autonomy.address,
          intervalMs: autonomy.intervalSeconds * 1000,
          apply: (n, healthy) => sync.setNodeHealth(n, healthy),
          onFailure: () => metrics.healthPollFailures.inc(),
          log,
        })
      : undefined;
  if (edgeHealth !== undefined) {
    metrics.unhealthyNodes = () => edgeHealth.unhealthy();
    edgeHealth.start();
  }
  sync.start();
  const first = await Promise.race([sync.waitForFirstSync().then(() => true), stop.then(() => false)]);
  if (first)
    out(
      `svcplane: proxy for ${node} (${mode}) in sync: ${sync.current().size} service ports; ` +
        `metrics on http://${metricsAt.host}:${ops.port}/metrics, healthz on http://${healthAt.host}:${health.port}/healthz`,
    );
  await stop;
  edgeHealth?.stop();
  await sync.stop();
  await healthChecks.servers.close();
  await backend.close();
  ops.server.close();
  health.server.close();
  transport.close();
  return 0;
}

/** --service-autonomy-enhancement, checked (exit 2 on a bad value). */
function autonomyFlag(raw: unknown): AutonomyConfig | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    return parseAutonomyFlag(raw);
  } catch (err) {
    throw new UsageError(`--service-autonomy-enhancement: ${(err as Error).message}`);
  }
}

/**
 * The health-check node ports (LoadBalancer Services with externalTrafficPolicy Local), kept in step
 * with each applied sync. A port that cannot be opened is logged and written as a Warning Event on the
 * Service (kube-proxy's FailedToStartServiceHealthcheck); with nowhere to listen (userspace mode without
 * --nodeport-addresses), one warning says so.
 */
function serviceHealthChecks(
  client: Client,
  node: string,
  hosts: (string | undefined)[],
  /** Why `hosts` may be empty: no --nodeport-addresses, or none of them is local. */
  emptyHostsReason: 'none' | 'unmatched',
  log: SyncLog,
  proxyHealthy: () => boolean,
): { servers: ServiceHealthServers; onApplied: (state: ProxyState) => void } {
  const events = new ClientEventRecorder(client, {
    component: 'kube-proxy',
    instance: node,
    onError: (err) => log.warn('writing an event failed', { error: String(err) }),
  });
  const servers = new ServiceHealthServers({
    addresses: hosts,
    proxyHealthy,
    log,
    onListenError: (svc, err) => {
      const message = `node ${node} failed to start healthcheck "${svc.namespace}/${svc.name}" on port ${svc.port}: ${err.message}`;
      log.error('failed to start a health check', {
        service: `${svc.namespace}/${svc.name}`,
        port: svc.port,
        error: err.message,
      });
      void events.record(
        { kind: 'Service', apiVersion: 'v1', namespace: svc.namespace, name: svc.name },
        'Warning',
        'FailedToStartServiceHealthcheck',
        message,
      );
    },
  });
  let warned = false;
  return {
    servers,
    onApplied: (state) => {
      const want = healthCheckServices(state);
      if (hosts.length === 0) {
        if (want.size > 0 && !warned)
          log.warn(
            emptyHostsReason === 'none'
              ? 'health-check node ports are not served: no --nodeport-addresses to listen on'
              : 'health-check node ports are not served: no local address is in --nodeport-addresses',
            { services: want.size },
          );
        warned ||= want.size > 0;
        return;
      }
      void servers.sync(want).catch((err: unknown) => log.error('health checks', { error: String(err) }));
    },
  };
}
