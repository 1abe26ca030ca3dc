// What `svcplane explain` prints: the rule that decided, the key that matched, every endpoint kept or
// dropped and why, and one sentence answering "why does this node get these endpoints (or none)?", the
// question SuperEdge and OpenYurt users keep asking ("the annotation doesn't work"). Pure text.
import { labelValue } from '../../api/label-match.js';
import { HOSTNAME_LABEL, OPENYURT_NODEPOOL_LABEL } from './rules.js';
import type { Labels, Reason, Rule, TopologyDecision, TrafficDecision, Verdict } from './types.js';

const REASON_TEXT: Record<Reason, string> = {
  'no-rule': 'no topology rule',
  'key-match': 'first key that matches',
  any: '"*": any endpoint',
  'unit-match': 'same unit',
  'same-node': 'on this node',
  'same-pool': 'same node pool',
  'hint-node': 'hinted for this node',
  'hint-zone': "hinted for this node's zone",
  cluster: 'hints do not apply to this node: every ready endpoint',
  'serving-terminating': 'terminating but serving, and nothing ready',
  'not-ready': 'not ready',
  'not-serving': 'not serving',
  'terminating-unused': 'terminating; ready endpoints exist',
  'node-unhealthy': 'its node is reported unhealthy',
  'other-unit': 'elsewhere',
  'no-topology': 'no topology for the key',
  'client-unknown': 'this node is not a known Node',
  'client-no-label': 'this node has none of the keys',
  'lower-preference': 'an earlier key matched',
  'no-key-matched': 'no key matched any endpoint; this one has',
  'not-hinted': 'hinted for elsewhere',
  remote: 'on another node',
};

export const reasonText = (v: Verdict): string =>
  v.detail === undefined || v.reason === 'any' || v.reason === 'client-unknown'
    ? REASON_TEXT[v.reason]
    : `${REASON_TEXT[v.reason]} (${v.detail})`;

/** The client-node label keys a rule reads (OpenYurt reads the pool label whatever its value names). */
export function labelKeys(r: Rule): string[] {
  if (r.kind === 'ordered-keys' || r.kind === 'superedge') return r.keys.filter((k) => k !== '*');
  if (r.kind === 'openyurt' && r.keys[0] !== HOSTNAME_LABEL) return [OPENYURT_NODEPOOL_LABEL];
  return [];
}

/** One line naming a rule and what it means (for this node, when its labels change the meaning). */
export function ruleText(r: Rule, nodeLabels?: Labels): string {
  if (
    r.kind === 'openyurt' &&
    r.keys[0] !== HOSTNAME_LABEL &&
    nodeLabels?.[OPENYURT_NODEPOOL_LABEL] === undefined
  )
    return (
      `OpenYurt ${r.source}=${r.keys[0] ?? ''}: this node is in no pool (no ${OPENYURT_NODEPOOL_LABEL} label), ` +
      "so, as OpenYurt does, only this node's own endpoints; strict, no fallback"
    );
  const keys = JSON.stringify(r.keys);
  switch (r.kind) {
    case 'ordered-keys':
      return `ordered topology keys ${keys} from ${r.source}: the first key with an endpoint in this node's topology wins${r.keys.at(-1) === '*' ? ', "*" is the fallback' : '; no match means no endpoints'}`;
    case 'superedge':
      return `SuperEdge ${r.source} ${keys}: endpoints whose node shares a value with this node for any key; strict, no fallback`;
    case 'openyurt':
      return `OpenYurt ${r.source}=${r.keys[0] ?? ''}: ${r.keys[0] === HOSTNAME_LABEL ? 'this node' : `this node's pool (${OPENYURT_NODEPOOL_LABEL})`} only; strict, no fallback`;
    case 'local':
      return `${r.source}=Local: endpoints on this node only; strict`;
    case 'hints':
      return "kube-proxy's hints (trafficDistribution or topology-mode): this node's hinted endpoints, else every ready one";
    case 'none':
      return 'no topology rule: every ready endpoint';
  }
}

/** Why a traffic kind got what it got, in one sentence. */
export function summary(t: TrafficDecision, node: string, nodeLabels: Labels | undefined): string {
  const kept = t.verdicts.filter((v) => v.kept).length;
  const total = t.verdicts.length;
  if (total === 0)
    return 'the Service has no endpoints: no EndpointSlices or Endpoints, or its selector matches no pods';
  const reasons = new Set(t.verdicts.map((v) => v.reason));
  const st = t.pools.some((p) => p.servingTerminating)
    ? ' (serving-terminating endpoints: no ready one is usable)'
    : '';
  if (kept > 0) {
    const matched = t.pools.find((p) => p.matchedKey !== undefined);
    const how =
      matched === undefined
        ? ''
        : matched.matchedKey === '*'
          ? ' through "*"'
          : ` through ${matched.matchedKey}=${matched.matchedValue ?? ''}`;
    return `${kept} of ${total} endpoint${total === 1 ? '' : 's'}${how}${st}`;
  }
  const keys = labelKeys(t.rule);
  if (t.rule.kind === 'superedge' && keys.length === 0)
    return 'nothing: SuperEdge keeps endpoints whose node has the same value for a key, and "*" is not a label (use service.svcplane.io/topology-keys for a "*" fallback)';
  if (reasons.has('client-unknown'))
    return `nothing: node ${node} is not a known Node, so it has no labels to match${t.rule.kind === 'ordered-keys' ? ' and the keys do not end in "*"' : ''} (check --node, or that the node is registered)`;
  if (reasons.has('client-no-label'))
    return `nothing: node ${node} has no label ${keys.join(' or ')}; label it (kubectl label node ${node} ${keys[0] ?? 'KEY'}=VALUE)`;
  if (t.verdicts.every((v) => v.reason === 'node-unhealthy'))
    return 'nothing: every endpoint runs on a node reported unhealthy';
  if (t.verdicts.every((v) => v.reason === 'not-ready' || v.reason === 'not-serving'))
    return 'nothing: no endpoint is ready';
  if (reasons.has('no-key-matched'))
    return `nothing: no key of ${JSON.stringify(t.rule.keys)} matched a ready endpoint, so connections are refused`;
  if (t.rule.kind === 'local') return 'nothing: no ready endpoint runs on this node (traffic is dropped)';
  if (reasons.has('no-topology') && !reasons.has('other-unit'))
    return "nothing: the endpoints' nodes are unknown or lack the key (pods without a node, or nodes without the label)";
  const value = keys.map((k) => `${k}=${labelValue(nodeLabels, k) ?? '(none)'}`).join(', ');
  return `nothing: no ready endpoint runs in this node's unit (${value}); the rule is strict, so there is no fallback`;
}

const pad = (rows: string[][]): string[] => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('   ')
      .trimEnd(),
  );
};

function table(t: TrafficDecision): string[] {
  if (t.verdicts.length === 0) return [];
  const rows = [['ENDPOINT', 'POD', 'NODE', 'RESULT', 'WHY']];
  for (const v of t.verdicts) {
    const e = v.endpoint;
    rows.push([
      e.addresses.join(','),
      e.targetRef?.name ?? '<none>',
      e.nodeName ?? '<none>',
      v.kept ? 'kept' : 'dropped',
      reasonText(v),
    ]);
  }
  return pad(rows).map((l) => `  ${l}`);
}

export interface ExplainContext {
  /** The client node's labels, or undefined when the node is not known. */
  readonly nodeLabels: Labels | undefined;
}

/** The text `svcplane explain` prints. */
export function renderExplanation(d: TopologyDecision, ctx: ExplainContext): string {
  const lines: string[] = [];
  const keys = new Set([
    ...labelKeys(d.internal.rule),
    ...(d.external === undefined ? [] : labelKeys(d.external.rule)),
  ]);
  const labels =
    ctx.nodeLabels === undefined
      ? 'not a known Node'
      : [...keys].map((k) => `${k}=${labelValue(ctx.nodeLabels, k) ?? '(none)'}`).join(', ') || 'known';
  lines.push(`Service ${d.service.namespace}/${d.service.name}, seen from node ${d.node} (${labels})`);
  const section = (title: string, t: TrafficDecision) => {
    lines.push(
      '',
      `${title}: ${summary(t, d.node, ctx.nodeLabels)}`,
      `  Rule: ${ruleText(t.rule, ctx.nodeLabels)}`,
    );
    lines.push(...table(t));
  };
  section('Internal traffic (cluster IP)', d.internal);
  if (d.external === undefined)
    lines.push('', 'External traffic: none (no node port, load balancer or external IP)');
  else if (d.external === d.internal)
    lines.push('', 'External traffic (node port, load balancer, external IPs): the same endpoints');
  else section('External traffic (node port, load balancer, external IPs)', d.external);
  if (d.problems.length > 0) {
    lines.push('', 'Problems (also reported as Warning Events on the Service):');
    for (const p of d.problems) lines.push(`  ${p.reason}: ${p.message}`);
  }
  return `${lines.join('\n')}\n`;
}
