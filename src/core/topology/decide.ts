// The topology engine: for a client on node X, which endpoints of Service Y may it use, per kind of
// traffic, and why. One pure function over all of the Service's endpoints at once (every slice merged),
// which is what lets ordered keys fall back correctly: a per-slice filter cannot know whether another
// slice holds a better endpoint (openyurt#1020).
//
// Readiness, for every rule: an endpoint is usable if it is ready; only when no endpoint the rule allows
// is ready are serving-terminating ones used (kube-proxy's ProxyTerminatingEndpoints fallback). For
// ordered keys the whole walk is done over ready endpoints first, and repeated over serving-terminating
// ones only when it found nothing ready; so `[..., "*"]` never yields nothing while a ready endpoint exists.
//
// An endpoint's topology is the labels of the node it runs on. When its node is not known (no nodeName,
// or a node missing from the cache), it is what the endpoint says of itself: its v1beta1 `topology` map,
// `zone` as topology.kubernetes.io/zone, and `nodeName` as kubernetes.io/hostname. An endpoint with no
// value for a key never matches that key.
import { labelValue } from '../../api/label-match.js';
import { categorizeEndpoints } from './categorize.js';
import { HOSTNAME_LABEL, OPENYURT_NODEPOOL_LABEL, ZONE_LABEL, chooseRules, serviceRules } from './rules.js';
import type {
  Labels,
  NodeHealth,
  NodeLabels,
  PoolOutcome,
  Reason,
  Rule,
  TopologyDecision,
  TopologyEndpoint,
  TopologyService,
  TrafficDecision,
  Verdict,
} from './types.js';

export interface DecideInput {
  readonly service: TopologyService;
  /** All of the Service's endpoints (endpointsFromSlices or endpointsFromEndpoints). */
  readonly endpoints: readonly TopologyEndpoint[];
  readonly nodeLabels: NodeLabels;
  /** The client's node name. */
  readonly node: string;
  readonly health?: NodeHealth;
}

/** The value an endpoint has for a topology key (see the file comment), or undefined. */
export function endpointLabel(ep: TopologyEndpoint, key: string, nodeLabels: NodeLabels): string | undefined {
  if (ep.nodeName !== undefined) {
    const labels = nodeLabels(ep.nodeName);
    if (labels !== undefined) return labelValue(labels, key);
  }
  const own = labelValue(ep.deprecatedTopology, key);
  if (own !== undefined) return own;
  if (key === ZONE_LABEL) return ep.zone;
  if (key === HOSTNAME_LABEL) return ep.nodeName;
  return undefined;
}

/** Why a not-ready endpoint was dropped, given whether ready ones were used. */
const unusedReason = (ep: TopologyEndpoint, readyUsed: boolean): Reason =>
  ep.serving && ep.terminating
    ? readyUsed
      ? 'terminating-unused'
      : 'not-ready'
    : ep.serving
      ? 'not-ready'
      : 'not-serving';

const groupByPool = (eps: readonly TopologyEndpoint[]): Map<string, TopologyEndpoint[]> => {
  const m = new Map<string, TopologyEndpoint[]>();
  for (const e of eps) {
    const g = m.get(e.pool);
    if (g === undefined) m.set(e.pool, [e]);
    else g.push(e);
  }
  return m;
};

interface PoolResult {
  readonly outcome: PoolOutcome;
  readonly verdicts: Map<string, Verdict>;
}

type Judge = (ep: TopologyEndpoint) => { ok: boolean; reason: Reason; detail?: string };

/**
 * A strict membership rule (SuperEdge, OpenYurt, Local): members that are ready, else members that are
 * serving and terminating. Nothing outside the membership is ever kept.
 */
function strict(pool: string, eps: readonly TopologyEndpoint[], judge: Judge): PoolResult {
  const verdicts = new Map<string, Verdict>();
  const members: TopologyEndpoint[] = [];
  const judged = new Map<string, ReturnType<Judge>>();
  for (const ep of eps) {
    const j = judge(ep);
    judged.set(ep.id, j);
    if (j.ok) members.push(ep);
    else
      verdicts.set(ep.id, {
        endpoint: ep,
        kept: false,
        reason: j.reason,
        ...(j.detail !== undefined ? { detail: j.detail } : {}),
      });
  }
  const ready = members.filter((e) => e.ready);
  const used = ready.length > 0 ? ready : members.filter((e) => e.serving && e.terminating);
  const usedIds = new Set(used.map((e) => e.id));
  for (const ep of members) {
    const j = judged.get(ep.id)!;
    if (usedIds.has(ep.id)) {
      const reason = ep.ready ? j.reason : 'serving-terminating';
      verdicts.set(ep.id, {
        endpoint: ep,
        kept: true,
        reason,
        ...(j.detail !== undefined ? { detail: j.detail } : {}),
      });
    } else {
      verdicts.set(ep.id, { endpoint: ep, kept: false, reason: unusedReason(ep, ready.length > 0) });
    }
  }
  return {
    outcome: { pool, servingTerminating: ready.length === 0 && used.length > 0, kept: used.length },
    verdicts,
  };
}

/** A filter by node-label keys (SuperEdge's or kube-proxy's topologyKeys): the client node's labels against each endpoint's node. */
type KeyedFilter = (
  pool: string,
  eps: readonly TopologyEndpoint[],
  keys: readonly string[],
  client: Labels | undefined,
  nodeLabels: NodeLabels,
) => PoolResult;

const superedge: KeyedFilter = (pool, eps, keys, client, nodeLabels) => {
  // behaves like SuperEdge's filterConcernedAddresses/hasIntersectionLabel: a key counts when both nodes
  // have it with the same value (OR over the keys); a client node that is not known keeps nothing.
  const clientKeys = client === undefined ? [] : keys.filter((k) => labelValue(client, k) !== undefined);
  return strict(pool, eps, (ep) => {
    if (client === undefined) return { ok: false, reason: 'client-unknown' };
    if (clientKeys.length === 0) return { ok: false, reason: 'client-no-label', detail: keys.join(', ') };
    const seen: string[] = [];
    for (const k of clientKeys) {
      const v = endpointLabel(ep, k, nodeLabels);
      if (v !== undefined && v === labelValue(client, k))
        return { ok: true, reason: 'unit-match', detail: `${k}=${v}` };
      if (v !== undefined) seen.push(`${k}=${v}`);
    }
    return seen.length > 0
      ? { ok: false, reason: 'other-unit', detail: seen.join(', ') }
      : { ok: false, reason: 'no-topology', detail: `no ${clientKeys.join(', ')}` };
  });
};

function openyurt(
  pool: string,
  eps: readonly TopologyEndpoint[],
  value: string,
  node: string,
  client: Labels | undefined,
  nodeLabels: NodeLabels,
): PoolResult {
  // behaves like yurthub's servicetopology filter: kubernetes.io/hostname keeps this node's endpoints;
  // openyurt.io/nodepool and kubernetes.io/zone keep the endpoints of this node's pool, and a node in no
  // pool falls back to node topology.
  const clientPool = client?.[OPENYURT_NODEPOOL_LABEL];
  if (value === HOSTNAME_LABEL || clientPool === undefined) {
    // v1 compares nodeName; an endpoint without one is judged by its v1beta1 topology's hostname.
    return strict(pool, eps, (ep) => {
      const host = ep.nodeName ?? ep.deprecatedTopology?.[HOSTNAME_LABEL];
      if (host === undefined) return { ok: false, reason: 'no-topology', detail: 'no nodeName' };
      return host === node
        ? { ok: true, reason: 'same-node', detail: `nodeName=${node}` }
        : { ok: false, reason: 'other-unit', detail: `nodeName=${host}` };
    });
  }
  return strict(pool, eps, (ep) => {
    const p = endpointLabel(ep, OPENYURT_NODEPOOL_LABEL, nodeLabels);
    if (p === undefined) return { ok: false, reason: 'no-topology', detail: `no ${OPENYURT_NODEPOOL_LABEL}` };
    return p === clientPool
      ? { ok: true, reason: 'same-pool', detail: `${OPENYURT_NODEPOOL_LABEL}=${p}` }
      : { ok: false, reason: 'other-unit', detail: `${OPENYURT_NODEPOOL_LABEL}=${p}` };
  });
}

function local(pool: string, eps: readonly TopologyEndpoint[], node: string): PoolResult {
  return strict(pool, eps, (ep) =>
    ep.nodeName === node
      ? { ok: true, reason: 'same-node' }
      : {
          ok: false,
          reason: 'remote',
          ...(ep.nodeName !== undefined ? { detail: `nodeName=${ep.nodeName}` } : {}),
        },
  );
}

/** One walk of the ordered keys over `candidates`; the key that won and its matches, or undefined. */
function walkKeys(
  keys: readonly string[],
  candidates: readonly TopologyEndpoint[],
  client: Labels,
  nodeLabels: NodeLabels,
) {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key === '*') return { index: i, key, matches: candidates };
    const v = labelValue(client, key);
    if (v === undefined) continue;
    const matches = candidates.filter((e) => endpointLabel(e, key, nodeLabels) === v);
    if (matches.length > 0) return { index: i, key, value: v, matches };
  }
  return undefined;
}

const orderedKeys: KeyedFilter = (pool, eps, keys, client, nodeLabels) => {
  // behaves like kube-proxy 1.17–1.21 FilterTopologyEndpoint: no labels on the client's node means every
  // endpoint if the last key is "*", else none; otherwise the first key (in order) that the node has and
  // that matches at least one endpoint wins, "*" matching all; no match means no endpoints.
  const verdicts = new Map<string, Verdict>();
  const ready = eps.filter((e) => e.ready);
  const st = eps.filter((e) => !e.ready && e.serving && e.terminating);
  const noLabels = client === undefined || Object.keys(client).length === 0;
  let won: { index: number; key: string; value?: string; matches: readonly TopologyEndpoint[] } | undefined;
  let fallback = false;
  if (noLabels) {
    if (keys[keys.length - 1] === '*') {
      won = { index: keys.length - 1, key: '*', matches: ready.length > 0 ? ready : st };
      fallback = ready.length === 0 && st.length > 0;
    }
  } else {
    won = walkKeys(keys, ready, client, nodeLabels);
    if (won === undefined || won.matches.length === 0) {
      const w = walkKeys(keys, st, client, nodeLabels);
      if (w !== undefined && w.matches.length > 0) {
        won = w;
        fallback = true;
      } else if (won !== undefined && won.matches.length === 0) won = undefined;
    }
  }
  const kept = new Set((won?.matches ?? []).map((e) => e.id));
  // Judged by topology (not readiness): ready endpoints always, serving-terminating ones in a fallback.
  const usable = new Set((fallback ? [...ready, ...st] : ready).map((e) => e.id));
  for (const ep of eps) {
    if (kept.has(ep.id)) {
      const reason: Reason = fallback ? 'serving-terminating' : won!.key === '*' ? 'any' : 'key-match';
      verdicts.set(ep.id, {
        endpoint: ep,
        kept: true,
        reason,
        detail: won!.key === '*' ? '*' : `${won!.key}=${won!.value ?? ''}`,
      });
      continue;
    }
    if (!usable.has(ep.id)) {
      verdicts.set(ep.id, { endpoint: ep, kept: false, reason: unusedReason(ep, !fallback) });
      continue;
    }
    if (won === undefined) {
      const clientHasAny = !noLabels && keys.some((k) => k !== '*' && labelValue(client, k) !== undefined);
      verdicts.set(
        ep.id,
        clientHasAny || keys.includes('*')
          ? {
              endpoint: ep,
              kept: false,
              reason: 'no-key-matched',
              detail:
                keys
                  .filter((k) => k !== '*' && client?.[k] !== undefined)
                  .map((k) => `${k}=${endpointLabel(ep, k, nodeLabels) ?? '(none)'}`)
                  .join(', ') || keys.join(', '),
            }
          : {
              endpoint: ep,
              kept: false,
              reason: client === undefined ? 'client-unknown' : 'client-no-label',
              detail: keys.join(', '),
            },
      );
      continue;
    }
    // A usable endpoint the winning key did not match: did a later key match it, or is it elsewhere?
    const later = keys
      .slice(won.index + 1)
      .find(
        (k) =>
          k === '*' ||
          (labelValue(client, k) !== undefined && endpointLabel(ep, k, nodeLabels) === labelValue(client, k)),
      );
    if (later !== undefined) {
      verdicts.set(ep.id, {
        endpoint: ep,
        kept: false,
        reason: 'lower-preference',
        detail: `${won.key}=${won.value ?? ''} matched first; this endpoint matches ${later}`,
      });
      continue;
    }
    const v = endpointLabel(ep, won.key, nodeLabels);
    verdicts.set(
      ep.id,
      v === undefined
        ? { endpoint: ep, kept: false, reason: 'no-topology', detail: `no ${won.key}` }
        : { endpoint: ep, kept: false, reason: 'other-unit', detail: `${won.key}=${v}` },
    );
  }
  const outcome: PoolOutcome = {
    pool,
    ...(won !== undefined ? { matchedKey: won.key } : {}),
    ...(won?.value !== undefined ? { matchedValue: won.value } : {}),
    servingTerminating: fallback,
    kept: kept.size,
  };
  return { outcome, verdicts };
};

function hints(
  pool: string,
  eps: readonly TopologyEndpoint[],
  node: string,
  client: Labels | undefined,
  ruleKind: 'hints' | 'none',
): PoolResult {
  const zone = client?.[ZONE_LABEL] ?? '';
  const c = categorizeEndpoints(eps, { usesCluster: true, usesLocal: false }, node, zone);
  const kept = new Set((c.cluster ?? []).map((e) => e.id));
  const verdicts = new Map<string, Verdict>();
  for (const ep of eps) {
    if (kept.has(ep.id)) {
      const reason: Reason = !ep.ready
        ? 'serving-terminating'
        : c.mode === 'PreferSameNode'
          ? 'hint-node'
          : c.mode === 'PreferSameZone'
            ? 'hint-zone'
            : ruleKind === 'none'
              ? 'no-rule'
              : 'cluster';
      const detail =
        reason === 'hint-node'
          ? `forNodes has ${node}`
          : reason === 'hint-zone'
            ? `forZones has ${zone}`
            : undefined;
      verdicts.set(ep.id, { endpoint: ep, kept: true, reason, ...(detail !== undefined ? { detail } : {}) });
    } else if (ep.ready) {
      const detail =
        c.mode === 'PreferSameNode'
          ? `forNodes ${(ep.forNodes ?? []).join(',')}`
          : `forZones ${(ep.forZones ?? []).join(',')}`;
      verdicts.set(ep.id, { endpoint: ep, kept: false, reason: 'not-hinted', detail });
    } else {
      verdicts.set(ep.id, {
        endpoint: ep,
        kept: false,
        reason: unusedReason(ep, c.servingTerminating === false),
      });
    }
  }
  return {
    outcome: { pool, mode: c.mode, servingTerminating: c.servingTerminating, kept: kept.size },
    verdicts,
  };
}

function evaluate(
  rule: Rule,
  eps: readonly TopologyEndpoint[],
  input: DecideInput,
  client: Labels | undefined,
): TrafficDecision {
  const unhealthy = new Map<string, Verdict>();
  const healthy: TopologyEndpoint[] = [];
  for (const ep of eps) {
    if (ep.nodeName !== undefined && input.health?.(ep.nodeName) === false)
      unhealthy.set(ep.id, {
        endpoint: ep,
        kept: false,
        reason: 'node-unhealthy',
        detail: `node ${ep.nodeName}`,
      });
    else healthy.push(ep);
  }
  const pools: PoolOutcome[] = [];
  const verdicts = new Map<string, Verdict>(unhealthy);
  for (const [pool, group] of [...groupByPool(healthy)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let r: PoolResult;
    switch (rule.kind) {
      case 'ordered-keys':
        r = orderedKeys(pool, group, rule.keys, client, input.nodeLabels);
        break;
      case 'superedge':
        r = superedge(pool, group, rule.keys, client, input.nodeLabels);
        break;
      case 'openyurt':
        r = openyurt(pool, group, rule.keys[0] ?? '', input.node, client, input.nodeLabels);
        break;
      case 'local':
        r = local(pool, group, input.node);
        break;
      case 'hints':
      case 'none':
        r = hints(pool, group, input.node, client, rule.kind);
        break;
    }
    pools.push(r.outcome);
    for (const [id, v] of r.verdicts) verdicts.set(id, v);
  }
  return { rule, pools, verdicts: eps.map((e) => verdicts.get(e.id)!) };
}

/** Decides, for a client on `input.node`, which endpoints of the Service it may use, and why. Pure. */
export function decide(input: DecideInput): TopologyDecision {
  const rules = serviceRules(input.service);
  const hinted = input.endpoints.some(
    (e) => e.ready && ((e.forZones?.length ?? 0) > 0 || (e.forNodes?.length ?? 0) > 0),
  );
  const chosen = chooseRules(input.service, rules, hinted);
  const client = input.nodeLabels(input.node);
  const internal = evaluate(chosen.internal, input.endpoints, input, client);
  const external =
    chosen.external === undefined
      ? undefined
      : chosen.external === chosen.internal
        ? internal
        : evaluate(chosen.external, input.endpoints, input, client);
  return {
    service: { namespace: input.service.namespace, name: input.service.name },
    node: input.node,
    internal,
    ...(external !== undefined ? { external } : {}),
    problems: chosen.problems,
  };
}

/** The addresses a decision keeps for one kind of traffic. */
export const keptEndpoints = (d: TrafficDecision): TopologyEndpoint[] =>
  d.verdicts.filter((v) => v.kept).map((v) => v.endpoint);
