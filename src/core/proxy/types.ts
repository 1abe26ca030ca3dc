// The node proxy's vocabulary: what one node should do with traffic to each Service port. Plain data,
// computed by a pure function (state.ts) from Services and the topology engine's views, then turned into
// iptables rules (iptables.ts) or userspace listeners (src/proxy/userspace.ts). Kube-proxy's equivalent is
// its ServicePortMap + EndpointsMap after CategorizeEndpoints.

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

/** One backend of a Service port: a pod address and the port it listens on for this Service port. */
export interface ProxyEndpoint {
  readonly ip: string;
  readonly port: number;
  /** On this node (its nodeName is the proxy's node): a masquerade-free target for Local policies. */
  readonly local: boolean;
  /** Ready; false means serving-and-terminating (the topology engine's fallback when nothing is ready). */
  readonly ready: boolean;
}

/** Everything a data plane needs for one Service port, as seen from one node. */
export interface ServicePortState {
  /** kube-proxy's ServicePortName: `namespace/name:portName` (`namespace/name` when the port is unnamed). */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** The Service port's name ('' when unnamed). */
  readonly portName: string;
  readonly protocol: Protocol;
  /** spec.clusterIPs (IPv4 and/or IPv6), without "None". */
  readonly clusterIPs: readonly string[];
  readonly port: number;
  /** spec.ports[].nodePort, for NodePort and LoadBalancer Services. */
  readonly nodePort?: number;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  /**
   * spec.loadBalancerSourceRanges, as network CIDRs (both families): when present, only clients in them
   * reach the Service through its load-balancer IPs. Absent when the Service lists none.
   */
  readonly loadBalancerSourceRanges?: readonly string[];
  /**
   * The families (4, 6) in which a source range holds this node's address: traffic from the node to a
   * load-balancer IP it owns arrives from that IP, which is then allowed too (kube-proxy's allowFromNode).
   */
  readonly sourceRangesHoldNode?: readonly (4 | 6)[];
  /** spec.healthCheckNodePort of a LoadBalancer Service with externalTrafficPolicy Local. */
  readonly healthCheckNodePort?: number;
  /** ClientIP affinity: how long a client sticks to its endpoint. Absent for `None`. */
  readonly affinityTimeoutSeconds?: number;
  /** Backends for traffic to the cluster IP (internal traffic): the topology view's internal endpoints. */
  readonly internal: readonly ProxyEndpoint[];
  /**
   * Backends for NodePort / external IP / load-balancer traffic: the view's external endpoints (with
   * externalTrafficPolicy Local, this node's only). Equal to `internal` when the view does not separate
   * them.
   */
  readonly external: readonly ProxyEndpoint[];
  /**
   * Whether the port has a usable endpoint anywhere in the cluster, this node's or not (kube-proxy's
   * hasAnyEndpoints). A side without endpoints for this node is then dropped ("has no local endpoints")
   * rather than rejected ("has no endpoints"). Absent when the view does not say: the endpoints above
   * decide.
   */
  readonly hasEndpoints?: boolean;
  /** externalTrafficPolicy: Local (external traffic is not masqueraded, and goes to local endpoints). */
  readonly externalLocal: boolean;
  /** internalTrafficPolicy: Local. */
  readonly internalLocal: boolean;
}

/** The whole desired state of one node's proxy: service port key → state. */
export type ProxyState = ReadonlyMap<string, ServicePortState>;
