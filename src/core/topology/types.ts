// The topology engine's vocabulary: the endpoints it judges, the rules it applies, and the decision it
// returns. Everything here is plain data so that a decision can be printed (`svcplane explain -o json`),
// compared (the incremental index), and served (the wrapper, the proxy).

export type Labels = Readonly<Record<string, string>>;

/** Looks up a node's labels by name; undefined when the node is not known. */
export type NodeLabels = (name: string) => Labels | undefined;

/**
 * A per-node health verdict (edge autonomy): false drops the node's endpoints under every rule, true or
 * undefined keeps them. Undefined is "no opinion", so a health source that fails never empties a Service.
 */
export type NodeHealth = (name: string) => boolean | undefined;

/** One endpoint of a Service, merged from all of its EndpointSlices (or its Endpoints). */
export interface TopologyEndpoint {
  /** Unique within the Service: `<pool>/<first address>`. */
  readonly id: string;
  /** Endpoints are judged per pool: one address family and one port set (a slice's `ports`). */
  readonly pool: string;
  readonly addressType: string;
  readonly addresses: readonly string[];
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly nodeName?: string;
  readonly zone?: string;
  /** The v1beta1 per-endpoint `topology` map (v1 `deprecatedTopology`). */
  readonly deprecatedTopology?: Labels;
  /** `hints.forZones[].name`; undefined when the endpoint carries no zone hints. */
  readonly forZones?: readonly string[];
  /** `hints.forNodes[].name`; undefined when the endpoint carries no node hints. */
  readonly forNodes?: readonly string[];
  readonly targetRef?: { readonly kind?: string; readonly namespace?: string; readonly name?: string };
  /** Where it came from: the slice's name, or `endpoints`. */
  readonly source: string;
}

/** The Service fields the engine reads. */
export interface TopologyService {
  readonly namespace: string;
  readonly name: string;
  readonly annotations: Labels;
  readonly topologyKeys: readonly string[];
  readonly internalTrafficPolicy: string | undefined;
  readonly externalTrafficPolicy: string | undefined;
  readonly trafficDistribution: string | undefined;
  /** NodePort, LoadBalancer ingress or externalIPs: kube-proxy's ExternallyAccessible. */
  readonly externallyAccessible: boolean;
}

/** Where a rule was read from. */
export type RuleSource =
  | 'spec.topologyKeys'
  | 'annotation service.svcplane.io/topology-keys'
  | 'annotation topologyKeys'
  | 'annotation openyurt.io/topologyKeys'
  | 'spec.internalTrafficPolicy'
  | 'spec.externalTrafficPolicy'
  | 'endpoint hints'
  | 'none';

/**
 * The rule that decides one kind of traffic.
 * - `ordered-keys`: the ordered spec.topologyKeys (FilterTopologyEndpoint): the first key that matches wins.
 * - `superedge`: SuperEdge's `topologyKeys` annotation: any key matching (OR), strict.
 * - `openyurt`: OpenYurt's `openyurt.io/topologyKeys`: same node, or same node pool.
 * - `local`: a traffic policy of Local: node-local endpoints only.
 * - `hints`: kube-proxy's CategorizeEndpoints over the hints in the slices (trafficDistribution, topology-mode).
 * - `none`: every usable endpoint.
 */
export type RuleKind = 'ordered-keys' | 'superedge' | 'openyurt' | 'local' | 'hints' | 'none';

export interface Rule {
  readonly kind: RuleKind;
  readonly source: RuleSource;
  /** The keys (ordered-keys, superedge), the one value (openyurt), or the policy value (local). */
  readonly keys: readonly string[];
}

/** Why an endpoint was kept or dropped. */
export type Reason =
  // kept
  | 'no-rule' // no topology rule applies: every usable endpoint
  | 'key-match' // ordered keys: the endpoint has the client's value for the key that won
  | 'any' // ordered keys: "*" won
  | 'unit-match' // superedge: some key has the same value on both nodes
  | 'same-node' // openyurt hostname, or a Local policy
  | 'same-pool' // openyurt nodepool
  | 'hint-node' // kube-proxy PreferSameNode: hinted for this node
  | 'hint-zone' // kube-proxy PreferSameZone: hinted for this node's zone
  | 'cluster' // kube-proxy without topology: every ready endpoint
  | 'serving-terminating' // nothing ready: a serving, terminating endpoint is used
  // dropped
  | 'not-ready' // not ready (and not a usable serving-terminating fallback)
  | 'not-serving' // neither ready nor serving
  | 'terminating-unused' // serving and terminating, but ready endpoints exist
  | 'node-unhealthy' // the health source says the endpoint's node is not healthy
  | 'other-unit' // superedge/openyurt: a different unit or pool
  | 'no-topology' // the endpoint has no value for the key (no node, or the node lacks the label)
  | 'client-unknown' // the client's node is not known
  | 'client-no-label' // the client's node has none of the keys
  | 'lower-preference' // ordered keys: an earlier key matched other endpoints
  | 'no-key-matched' // ordered keys: no key matched any endpoint (connections are refused)
  | 'not-hinted' // kube-proxy topology: not hinted for this node or zone
  | 'remote'; // Local policy: on another node

export interface Verdict {
  readonly endpoint: TopologyEndpoint;
  readonly kept: boolean;
  readonly reason: Reason;
  /** The key and values behind the reason, e.g. `zone=z1` or `endpoint zone=z2`. */
  readonly detail?: string;
}

/** What happened in one pool (address family and port set). */
export interface PoolOutcome {
  readonly pool: string;
  /** ordered-keys: the key that won ("*" included) and the client's value for it. */
  readonly matchedKey?: string;
  readonly matchedValue?: string;
  /** hints: the topology mode kube-proxy chose ("" | PreferSameZone | PreferSameNode). */
  readonly mode?: '' | 'PreferSameZone' | 'PreferSameNode';
  /** Nothing was ready, so serving-terminating endpoints were used. */
  readonly servingTerminating: boolean;
  readonly kept: number;
}

/** The decision for one kind of traffic. */
export interface TrafficDecision {
  readonly rule: Rule;
  readonly pools: readonly PoolOutcome[];
  /** Every endpoint, in input order. */
  readonly verdicts: readonly Verdict[];
}

/** A problem with the Service's topology settings (reported as a Warning Event, never a rejection). */
export interface TopologyProblem {
  readonly reason: 'InvalidTopologyAnnotation' | 'TopologyRuleConflict';
  readonly message: string;
}

export interface TopologyDecision {
  readonly service: { readonly namespace: string; readonly name: string };
  readonly node: string;
  /** Traffic to the cluster IP from inside the cluster. */
  readonly internal: TrafficDecision;
  /** Traffic arriving at a node port, load-balancer IP or external IP; absent if not externally accessible. */
  readonly external?: TrafficDecision;
  /** The rules found on the Service that lost to a higher-precedence one, and malformed settings. */
  readonly problems: readonly TopologyProblem[];
}
