// The health-check node ports (kube-proxy's ServiceHealthServer, by behaviour): a LoadBalancer Service
// with externalTrafficPolicy Local gets spec.healthCheckNodePort, and every node's proxy answers HTTP on
// it with how many ready endpoints of the Service run on that node. A cloud load balancer probes it and
// sends traffic only to nodes that answer 200, so Local traffic never lands on a node that would drop it.
// Pure: which Services get a server, and what it answers. The servers are src/proxy/service-health.ts.
import type { ProxyState } from './types.js';

export interface HealthCheckService {
  readonly namespace: string;
  readonly name: string;
  /** spec.healthCheckNodePort. */
  readonly port: number;
  /**
   * Ready endpoints on this node, counted by address: a pod serving two of the Service's ports counts
   * once (kube-proxy's LocalReadyEndpoints). A terminating endpoint does not count, even while it still
   * serves, so the load balancer stops choosing the node before its last pod goes.
   */
  readonly localEndpoints: number;
}

/** Service key (`namespace/name`) → its health check, for every Service of `state` that has one. */
export function healthCheckServices(state: ProxyState): Map<string, HealthCheckService> {
  const out = new Map<string, { namespace: string; name: string; port: number; ips: Set<string> }>();
  for (const s of state.values()) {
    if (s.healthCheckNodePort === undefined) continue;
    const key = `${s.namespace}/${s.name}`;
    let hc = out.get(key);
    if (hc === undefined) {
      hc = { namespace: s.namespace, name: s.name, port: s.healthCheckNodePort, ips: new Set() };
      out.set(key, hc);
    }
    for (const e of [...s.internal, ...s.external]) if (e.local && e.ready) hc.ips.add(e.ip);
  }
  return new Map(
    [...out].map(([k, hc]) => [
      k,
      { namespace: hc.namespace, name: hc.name, port: hc.port, localEndpoints: hc.ips.size },
    ]),
  );
}

export interface HealthCheckAnswer {
  readonly status: 200 | 503;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * What a health-check node port answers, to any path and method: 200 when the node has a ready endpoint
 * of the Service and the proxy itself is healthy (its /healthz), else 503. The body is kube-proxy's JSON,
 * tab-indented as kube-proxy writes it.
 */
export function healthCheckAnswer(
  svc: Pick<HealthCheckService, 'namespace' | 'name' | 'localEndpoints'>,
  proxyHealthy: boolean,
): HealthCheckAnswer {
  const body = JSON.stringify(
    {
      service: { namespace: svc.namespace, name: svc.name },
      localEndpoints: svc.localEndpoints,
      serviceProxyHealthy: proxyHealthy,
    },
    null,
    '\t',
  );
  return {
    status: svc.localEndpoints > 0 && proxyHealthy ? 200 : 503,
    headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' },
    body,
  };
}
