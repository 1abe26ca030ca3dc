// One cell of the dashboard's matrix: what a node's internal traffic to a Service may use, counted over
// the internal decision's verdicts (every endpoint, as `svcplane explain` lists them), and the signature
// that lets nodes share one decision: two nodes with the same signature for a Service get the same kept
// endpoints from decide(), so a column over 1,000 nodes needs only as many decide() calls as it has
// distinct signatures (the property test in world.test.ts holds this against decide() itself).
import { HOSTNAME_LABEL, OPENYURT_NODEPOOL_LABEL, ZONE_LABEL } from '../topology/rules.js';
import { labelValue } from '../../api/label-match.js';
import { usableAnywhere } from '../topology/view.js';
import type { Labels, NodeHealth, Rule, TopologyDecision } from '../topology/types.js';
import type { Cell } from './types.js';

/**
 * The cell for a node's decision: how many of the Service's endpoints its internal traffic may use, and
 * when none, what the node proxy does with a connection to the cluster IP, as kube-proxy decides it
 * (hasEndpoints, then hasInternalEndpoints; this project's proxy in core/proxy/iptables-service.ts
 * writeDispatch): `dropped` when the Service still has a usable endpoint for it, `refused` (REJECT) when
 * it has none. "Usable" is over all the Service's endpoints under a Local traffic policy (internal or
 * external), and over what the node's internal or external traffic keeps otherwise. The proxy decides per
 * Service port; a cell, per Service.
 */
export function cellOf(d: TopologyDecision, health: NodeHealth = () => undefined): Cell {
  const t = d.internal;
  let kept = 0;
  for (const v of t.verdicts) if (v.kept) kept++;
  const total = t.verdicts.length;
  if (kept > 0) return { kept, total, state: kept === total ? 'all' : 'some' };
  const policy = t.rule.kind === 'local' || d.external?.rule.kind === 'local';
  const usable = policy
    ? t.verdicts.some((v) => usableAnywhere(v.endpoint, health))
    : (d.external?.verdicts.some((v) => v.kept && usableAnywhere(v.endpoint, health)) ?? false);
  return { kept, total, state: usable ? 'dropped' : 'refused' };
}

/** What of a Service's endpoints a signature reads: the nodes they name, and the nodes their hints name. */
export interface EndpointNodes {
  /** Each endpoint's nodeName and v1beta1 hostname. */
  readonly hosts: ReadonlySet<string>;
  /** Every name in some endpoint's hints.forNodes. */
  readonly hinted: ReadonlySet<string>;
}

/**
 * What decide() reads of the client node under `rule` (the Service's internal rule), as a string: the
 * values of the rule's keys (ordered keys also whether the node has any label), its pool (OpenYurt), its
 * zone (hints), and its name only where an endpoint names the node. Same signature, same kept endpoints.
 */
export function clientSignature(
  rule: Rule,
  node: string,
  client: Labels | undefined,
  eps: EndpointNodes,
): string {
  if (client === undefined) return `?${node}`;
  const own = (names: ReadonlySet<string>) => (names.has(node) ? `n:${node}` : 'n');
  switch (rule.kind) {
    case 'ordered-keys':
      return JSON.stringify([
        Object.keys(client).length > 0,
        ...rule.keys.map((k) => labelValue(client, k) ?? null),
      ]);
    case 'superedge':
      return JSON.stringify(rule.keys.map((k) => labelValue(client, k) ?? null));
    case 'openyurt': {
      const pool = client[OPENYURT_NODEPOOL_LABEL];
      return rule.keys[0] === HOSTNAME_LABEL || pool === undefined ? own(eps.hosts) : `p:${pool}`;
    }
    case 'local':
      return own(eps.hosts);
    case 'hints':
    case 'none':
      return `${own(eps.hinted)}|${client[ZONE_LABEL] ?? ''}`;
  }
}
