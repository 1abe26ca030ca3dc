// What each node of the demo should see, worked out from the live objects with the rules' own words
// (not with the topology engine, which is what the demo checks):
// - SuperEdge's service-group example, a ServiceGrid (`topologyKeys: ["zone1"]`, SuperEdge): a node reaches the pods on the
//   nodes of its own unit, and nothing when it has no unit;
// - the ordered `spec.topologyKeys` example: the first key the node has a label for that matches some
//   endpoint's node wins; `"*"` means any endpoint; no match (or no label) and no `"*"`: refused.
// Pure: the caller passes the slices' ready endpoints (address → node) and the nodes' labels.
import type { NodeRules } from '../core/demo/node-rules.js';

export interface ReadyEndpoint {
  readonly ip: string;
  readonly node: string;
}

export type NodeLabels = ReadonlyMap<string, Readonly<Record<string, string>>>;

/** The node names whose pods may answer `client` under a SuperEdge unit key; empty means refused. */
export function expectedForUnitKey(
  client: string,
  key: string,
  endpoints: readonly ReadyEndpoint[],
  labels: NodeLabels,
): Set<string> {
  const unit = labels.get(client)?.[key];
  if (unit === undefined) return new Set();
  return new Set(endpoints.filter((e) => labels.get(e.node)?.[key] === unit).map((e) => e.node));
}

/** The node names whose pods may answer `client` under ordered topology keys (kube-proxy 1.17–1.21). */
export function expectedForOrderedKeys(
  client: string,
  keys: readonly string[],
  endpoints: readonly ReadyEndpoint[],
  labels: NodeLabels,
): Set<string> {
  const mine = labels.get(client) ?? {};
  for (const key of keys) {
    if (key === '*') return new Set(endpoints.map((e) => e.node));
    const value = mine[key];
    if (value === undefined) continue;
    const hit = endpoints.filter((e) => labels.get(e.node)?.[key] === value);
    if (hit.length > 0) return new Set(hit.map((e) => e.node));
  }
  return new Set();
}

/**
 * Whether sampled answers fit an expectation: every answer from an expected node, and every expected node
 * answering at least once (a proxy that never uses one of the endpoints does not fit); or, when nothing
 * is expected, every request refused.
 */
export function answersFit(answers: readonly string[], expected: ReadonlySet<string>): boolean {
  if (answers.length === 0) return false;
  if (expected.size === 0) return answers.every((a) => a === 'refused');
  return answers.every((a) => expected.has(a)) && [...expected].every((n) => answers.includes(n));
}

/** `node1 ×7, node2 ×5`: answers counted, in name order. */
export function tally(answers: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([a, n]) => `${a} ×${n}`)
    .join(', ');
}

/** A fixed-width text table. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/**
 * A node's rules for a Service, as the demo's table shows them: `dnat node1,node2` (the nodes of the
 * endpoints its rules DNAT to; an address of no ready endpoint as itself; `dnat nowhere`), `reject`,
 * `drop` or `none` (the rules do not know the destination).
 */
export function rulesCell(rules: NodeRules, endpoints: readonly ReadyEndpoint[]): string {
  if (rules.kind !== 'dnat') return rules.kind;
  if (rules.targets.length === 0) return 'dnat nowhere';
  const nodes = rules.targets.map((t) => {
    const ip = t.slice(0, t.lastIndexOf(':'));
    return endpoints.find((e) => e.ip === ip)?.node ?? t;
  });
  return `dnat ${[...new Set(nodes)].sort().join(',')}`;
}

/**
 * Whether a node's rules fit an expectation: DNAT to exactly the ready endpoints of the expected nodes,
 * or, when nothing is expected, a refusal.
 */
export function rulesFit(
  rules: NodeRules,
  endpoints: readonly ReadyEndpoint[],
  expected: ReadonlySet<string>,
): boolean {
  if (expected.size === 0) return rules.kind === 'reject';
  if (rules.kind !== 'dnat') return false;
  const want = endpoints.filter((e) => expected.has(e.node)).map((e) => e.ip);
  const got = rules.targets.map((t) => t.slice(0, t.lastIndexOf(':')));
  return got.length === new Set(want).size && got.every((ip) => want.includes(ip));
}
