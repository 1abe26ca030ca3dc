// The matrix's rows and columns for one (group key, namespace, name) query: nodes sorted by their group
// value (nodes without one last) then by name, so each group is one run of rows; Services sorted by
// namespace then name, after the namespace and name filter. Pure.
import { labelValue } from '../../api/label-match.js';
import { compareBytes } from '../endpoints/read.js';
import { ZONE_LABEL } from '../topology/rules.js';
import type { Labels } from '../topology/types.js';
import type { Layout, LayoutColumn, LayoutGroup, LayoutRow, NodeHealthState } from './types.js';

export interface LayoutQuery {
  /** undefined: the default key; '': no grouping. */
  readonly group?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

export interface LayoutNode {
  readonly labels: Labels;
  readonly ready: boolean;
}

export interface LayoutInput {
  readonly version: number;
  readonly nodes: ReadonlyMap<string, LayoutNode>;
  /** Every Service's column, in any order. */
  readonly columns: Iterable<LayoutColumn>;
  /** The grids' gridUniqKeys, ServiceGrids first, each kind by namespace and name. */
  readonly gridKeys: readonly string[];
  readonly health: ReadonlyMap<string, boolean> | undefined;
}

/** The group key a query means: its own, else the first grid's key, else the zone when a node has one. */
export function groupKeyOf(q: LayoutQuery, input: Pick<LayoutInput, 'nodes' | 'gridKeys'>): string {
  if (q.group !== undefined) return q.group;
  const grid = input.gridKeys.find((k) => k !== '');
  if (grid !== undefined) return grid;
  for (const n of input.nodes.values()) if (n.labels[ZONE_LABEL] !== undefined) return ZONE_LABEL;
  return '';
}

export const healthOf = (health: ReadonlyMap<string, boolean> | undefined, node: string): NodeHealthState =>
  health === undefined
    ? 'unconfigured'
    : health.get(node) === undefined
      ? 'unknown'
      : health.get(node)!
        ? 'healthy'
        : 'unhealthy';

/** A node's value for a group key ('' is no grouping). */
export const groupValue = (labels: Labels | undefined, key: string): string | null =>
  key === '' ? null : (labelValue(labels, key) ?? null);

/** Group values in row order: by value, the nodes without one last. */
export const compareGroups = (a: string | null, b: string | null): number =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : compareBytes(a, b);

export function computeLayout(input: LayoutInput, q: LayoutQuery): Layout {
  const groupKey = groupKeyOf(q, input);
  const rows: LayoutRow[] = [...input.nodes]
    .map(([node, n]) => ({
      node,
      group: groupValue(n.labels, groupKey),
      ready: n.ready,
      health: healthOf(input.health, node),
    }))
    .sort((a, b) => compareGroups(a.group, b.group) || compareBytes(a.node, b.node));
  const groups: LayoutGroup[] = [];
  rows.forEach((r, i) => {
    const last = groups.at(-1);
    if (last !== undefined && last.value === r.group)
      groups[groups.length - 1] = { ...last, count: last.count + 1 };
    else groups.push({ value: r.group, first: i, count: 1 });
  });
  const all = [...input.columns];
  const namespaces = [...new Set(all.map((c) => c.namespace))].sort(compareBytes);
  const columns = all
    .filter(
      (c) =>
        (q.namespace === undefined || q.namespace === '' || c.namespace === q.namespace) &&
        (q.name === undefined || c.name.includes(q.name)),
    )
    .sort((a, b) => compareBytes(a.namespace, b.namespace) || compareBytes(a.name, b.name));
  const nodeKeys = new Set<string>();
  for (const n of input.nodes.values()) for (const k of Object.keys(n.labels)) nodeKeys.add(k);
  const gridKeys = [...new Set(input.gridKeys.filter((k) => k !== ''))];
  const groupKeys = [...gridKeys, ...[...nodeKeys].filter((k) => !gridKeys.includes(k)).sort(compareBytes)];
  return {
    version: input.version,
    groupKey,
    groupKeys,
    namespaces,
    rows,
    groups,
    columns,
    totalColumns: all.length,
    healthConfigured: input.health !== undefined,
  };
}
