// What the dashboard's server sends its page: the JSON of each route under the mount point (`/dashboard/`
// in `svcplane up`, `/` in `svcplane dashboard`). The page imports these types only; every topology
// decision is made on the server by the engine `svcplane explain` uses (core/topology/decide.ts).
import type { RuleKind } from '../topology/types.js';

/**
 * A node's health as edge-health reports it (`--edge-health URL`): `healthy` and `unhealthy` from its
 * /localinfo, `unknown` when it names the node not at all, `unconfigured` when no edge-health is set.
 */
export type NodeHealthState = 'healthy' | 'unhealthy' | 'unknown' | 'unconfigured';

/** One row of the matrix: a node. */
export interface LayoutRow {
  readonly node: string;
  /** The node's value for the layout's group key; null when it has none (or no key is chosen). */
  readonly group: string | null;
  /** The Node's Ready condition is True. */
  readonly ready: boolean;
  readonly health: NodeHealthState;
}

/** A run of rows sharing a group value; rows are sorted so each group is contiguous. */
export interface LayoutGroup {
  readonly value: string | null;
  /** Index of its first row in `rows`. */
  readonly first: number;
  readonly count: number;
}

/** One column of the matrix: a Service. */
export interface LayoutColumn {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** The rule that decides its internal traffic (as `explain` names it). */
  readonly rule: RuleKind;
  /** The ServiceGrid that owns it, when one does. */
  readonly grid?: string;
}

/**
 * `GET api/layout?group=KEY&namespace=NS&name=TEXT`: the rows and columns the matrix shows.
 * `name` keeps Services whose name contains TEXT; `namespace` keeps one namespace ('' or absent: all).
 * `group` absent: the server's default (the first ServiceGrid's or DeploymentGrid's gridUniqKey, else
 * topology.kubernetes.io/zone when a node carries it, else none); `group=` (empty): no grouping.
 */
export interface Layout {
  /** Changes whenever rows, columns or groups change; `api/cells` answers a stale one with `stale`. */
  readonly version: number;
  readonly groupKey: string;
  /** Label keys for the picker: the grids' keys first, then every key some node carries, sorted. */
  readonly groupKeys: readonly string[];
  readonly namespaces: readonly string[];
  readonly rows: readonly LayoutRow[];
  readonly groups: readonly LayoutGroup[];
  readonly columns: readonly LayoutColumn[];
  /** The total before the namespace/name filter. */
  readonly totalColumns: number;
  readonly healthConfigured: boolean;
}

/**
 * How a node's internal traffic to a Service fares:
 * - `all`: every endpoint of the Service is usable from the node;
 * - `some`: some are;
 * - `refused`: none is, and the node proxy rejects the connection: the Service has no usable endpoint
 *   (none ready, all on unhealthy nodes), or its topology rule kept none for this node;
 * - `dropped`: none is, and the node proxy drops the packets: a Local traffic policy (internal or external)
 *   with usable endpoints on other nodes only (kube-proxy's "has no local endpoints").
 */
export type CellState = 'all' | 'some' | 'refused' | 'dropped';

/** One cell: `kept` of `total` endpoints usable, and the state derived from the decision. */
export interface Cell {
  readonly kept: number;
  readonly total: number;
  readonly state: CellState;
}

/** Per visible column, how many nodes of a group are in each state (a group's header row). */
export interface GroupSummary {
  readonly all: number;
  readonly some: number;
  readonly refused: number;
  readonly dropped: number;
}

/**
 * `GET api/cells?version=V&group=..&namespace=..&name=..&rows=A-B&cols=C-D` (inclusive row and column
 * index ranges into that layout). `cells[r][c]` is row A+r, column C+c. `groups[g][c]` summarises, for
 * each group overlapping rows A..B, every node of that group (not only the visible ones).
 * When V is no longer the layout's version the answer is `{ stale: true, version }`, and the page reloads
 * the layout.
 * A range of more than 1,000 rows, 1,000 columns or 250,000 cells is refused (400 BadRequest).
 */
export type CellsAnswer =
  | {
      readonly stale: false;
      readonly version: number;
      readonly rows: readonly [number, number];
      readonly cols: readonly [number, number];
      readonly cells: readonly (readonly Cell[])[];
      readonly groups: readonly {
        readonly value: string | null;
        readonly summary: readonly GroupSummary[];
      }[];
    }
  | { readonly stale: true; readonly version: number };

/**
 * `GET api/explain?node=N&service=NS/NAME`: `json` is exactly what `svcplane explain -o json` prints
 * for the pair, `text` what it prints without `-o`.
 */
export interface ExplainAnswer {
  readonly json: unknown;
  readonly text: string;
  readonly cell: Cell;
}

/** An endpoint as the Service view draws it. */
export interface ServiceEndpoint {
  readonly address: string;
  readonly pod: string | null;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/**
 * `GET api/service?service=NS/NAME&group=KEY`: the Service's endpoints by unit (group value) and node,
 * and the flows: for each unit holding nodes, which units its nodes' internal traffic may reach.
 */
export interface ServiceAnswer {
  readonly key: string;
  /** `explain`'s one-line rule text for internal traffic. */
  readonly rule: string;
  readonly groupKey: string;
  readonly units: readonly {
    readonly value: string | null;
    readonly nodes: readonly { readonly node: string; readonly endpoints: readonly ServiceEndpoint[] }[];
  }[];
  /** Endpoints on no known node (no nodeName, or a node that is gone). */
  readonly unplaced: readonly ServiceEndpoint[];
  readonly flows: readonly {
    readonly from: string | null;
    /** How many of the unit's nodes there are, and how many of them may use no endpoint at all. */
    readonly nodes: number;
    readonly none: number;
    /** Per destination unit: how many of `from`'s nodes may use at least one endpoint there. */
    readonly to: readonly { readonly value: string | null; readonly nodes: number }[];
  }[];
}

/**
 * `GET api/events`: server-sent events. Each `change` event's data is a `ChangeEvent`, sent at most every
 * 100 ms after the watches deliver something; a comment line keeps the stream open every 15 s.
 */
export interface ChangeEvent {
  /** The model's generation: it grows with every change the watches deliver. */
  readonly generation: number;
  /** Nodes whose labels, readiness or health changed, or that came or went. */
  readonly nodes: readonly string[];
  /** Services (`namespace/name`) whose Service, slices or Endpoints changed, or that came or went. */
  readonly services: readonly string[];
}
