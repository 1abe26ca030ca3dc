// The dashboard's model of a cluster: the Nodes, Services, EndpointSlices, Endpoints and grids its
// watches deliver, and edge-health's answer; and what the page asks of it, every topology decision made
// by decide() (core/topology/decide.ts), the engine `svcplane explain`, the wrapper and the proxy use.
//
// Cost, at 1,000 nodes × 10,000 Services: a layout is computed once per (group, namespace, name) and kept
// until an input that shapes it changes; a cell is kept per Service and client signature (cell.ts) until
// the Service, its endpoints, a node's labels or the health change; a group's summary for a column is kept
// alongside. A viewport then costs a few decide() calls per column, not one per node. Pure: no clock, no
// I/O; the caller feeds it objects and drains what changed.
import { sameStringMap } from '../../api/json.js';
import { isNodeReady } from '../nodes/node-object.js';
import type { KObject } from '../../api/object.js';
import { compareBytes } from '../endpoints/read.js';
import { LABEL_SERVICE_NAME } from '../endpointslices/types.js';
import { GRID_SELECTOR_LABEL, controllerOf, gridKeyOf, type Grid } from '../grids/objects.js';
import { SERVICE_GRID_KIND } from '../grids/service-grid.js';
import { decide } from '../topology/decide.js';
import { endpointsFromEndpoints, endpointsFromSlices } from '../topology/endpoints.js';
import { explainReport, type EndpointsRead } from '../topology/explain-report.js';
import { ruleText } from '../topology/explain.js';
import { HOSTNAME_LABEL, chooseRules, serviceRules, topologyService } from '../topology/rules.js';
import type { Labels, Rule, TopologyEndpoint, TopologyService } from '../topology/types.js';
import { cellOf, clientSignature, type EndpointNodes } from './cell.js';
import { serviceView } from './service-view.js';
import { computeLayout, groupKeyOf, groupValue, type LayoutNode, type LayoutQuery } from './layout.js';
import type {
  Cell,
  CellsAnswer,
  ChangeEvent,
  ExplainAnswer,
  GroupSummary,
  Layout,
  LayoutColumn,
  ServiceAnswer,
} from './types.js';

/** The kinds of object the world is fed. */
export type WorldKind = 'node' | 'service' | 'slice' | 'endpoints' | 'servicegrid' | 'deploymentgrid';

interface Derived {
  readonly endpoints: readonly TopologyEndpoint[];
  readonly read: EndpointsRead;
  readonly rule: Rule;
  readonly nodes: EndpointNodes;
}

interface Entry {
  readonly key: string;
  object?: KObject;
  svc?: TopologyService;
  grid?: string;
  readonly slices: Map<string, KObject>;
  endpointsObject?: KObject;
  derived?: Derived | undefined;
  /** Per client signature: the cell and the kept endpoints' indices; valid for `epoch`. */
  memo: Map<string, { readonly cell: Cell; readonly kept: readonly number[] }>;
  /** Per group key and value: the group's summary; valid for `epoch`. */
  summaries: Map<string, GroupSummary>;
  epoch: number;
}

/** How many layouts (one per group, namespace and name filter) are kept, least recently used first out. */
const LAYOUT_CACHE = 8;

/** An inclusive index range. */
export type Range = readonly [number, number];

const nsName = (o: KObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** The ServiceGrid that owns a Service: its controller reference, else SuperEdge's grid-selector label. */
function gridOf(svc: KObject): string | undefined {
  const ref = controllerOf(svc.metadata);
  if (ref !== undefined && ref.kind === SERVICE_GRID_KIND && ref.apiVersion.startsWith('superedge.io/'))
    return ref.name;
  return svc.metadata.labels?.[GRID_SELECTOR_LABEL];
}

export class DashboardWorld {
  /** Grows with every change that was delivered. */
  generation = 0;
  private layoutVersion = 1;
  /** Grows when a node's labels or the health change: every cached cell is then stale. */
  private epoch = 0;
  private readonly nodes = new Map<string, LayoutNode>();
  private readonly services = new Map<string, Entry>();
  /** A slice's Service, by the slice's namespace/name. */
  private readonly sliceOwner = new Map<string, string>();
  /** `kind/namespace/name` → gridUniqKey. */
  private readonly grids = new Map<string, string>();
  private health: ReadonlyMap<string, boolean> | undefined;
  private readonly layouts = new Map<string, Layout>();
  private changedNodes = new Set<string>();
  private changedServices = new Set<string>();

  // ------------------------------------------------------------------------------------------ inputs

  /** An object added or updated (`upsert`) or deleted. Returns whether anything the page shows changed. */
  apply(kind: WorldKind, type: 'upsert' | 'delete', obj: KObject): boolean {
    switch (kind) {
      case 'node':
        return this.node(type, obj);
      case 'service':
        return this.serviceInput(type, obj);
      case 'slice':
        return this.slice(type, obj);
      case 'endpoints':
        return this.endpoints(type, obj);
      case 'servicegrid':
      case 'deploymentgrid':
        return this.grid(kind, type, obj as Grid);
    }
  }

  /** edge-health's answer (node → Normal), or undefined when none is configured or in force. */
  setHealth(health: ReadonlyMap<string, boolean> | undefined): boolean {
    const before = this.health;
    const same =
      before === health ||
      (before !== undefined &&
        health !== undefined &&
        before.size === health.size &&
        [...health].every(([n, ok]) => before.get(n) === ok));
    if (same) return false;
    const names = new Set([...(before?.keys() ?? []), ...(health?.keys() ?? [])]);
    this.health = health;
    for (const n of names) if (this.nodes.has(n)) this.changedNodes.add(n);
    this.epoch++;
    this.layoutChanged();
    return true;
  }

  /** What changed since the last drain, or undefined when nothing did. */
  drain(): ChangeEvent | undefined {
    if (this.changedNodes.size === 0 && this.changedServices.size === 0) return undefined;
    const e: ChangeEvent = {
      generation: this.generation,
      nodes: [...this.changedNodes].sort(compareBytes),
      services: [...this.changedServices].sort(compareBytes),
    };
    this.changedNodes = new Set();
    this.changedServices = new Set();
    return e;
  }

  private layoutChanged(): void {
    this.layoutVersion++;
    this.layouts.clear();
  }

  private node(type: 'upsert' | 'delete', obj: KObject): boolean {
    const name = obj.metadata.name ?? '';
    const before = this.nodes.get(name);
    if (type === 'delete') {
      if (before === undefined) return false;
      this.nodes.delete(name);
    } else {
      const n = { labels: { ...(obj.metadata.labels ?? {}) }, ready: isNodeReady(obj) };
      if (before !== undefined && before.ready === n.ready && sameStringMap(before.labels, n.labels))
        return false;
      this.nodes.set(name, n);
      // readiness alone changes no decision
      if (before !== undefined && sameStringMap(before.labels, n.labels))
        return this.changed([name], [], false);
    }
    return this.changed([name], [], true);
  }

  private changed(nodes: readonly string[], services: readonly string[], decisions: boolean): true {
    this.generation++;
    for (const n of nodes) this.changedNodes.add(n);
    for (const s of services) this.changedServices.add(s);
    if (nodes.length > 0) {
      if (decisions) this.epoch++;
      this.layoutChanged();
    }
    return true;
  }

  private entry(key: string): Entry {
    let e = this.services.get(key);
    if (e === undefined) {
      e = { key, slices: new Map(), memo: new Map(), summaries: new Map(), epoch: this.epoch };
      this.services.set(key, e);
    }
    return e;
  }

  /** An entry's inputs changed: its derived data and cells go, and the layout if its column changed. */
  private touched(e: Entry): true {
    const column = (x: Entry) =>
      x.object === undefined ? '' : JSON.stringify([x.grid ?? null, this.derived(x).rule.kind]);
    const before = column(e);
    e.derived = undefined;
    e.memo = new Map();
    e.summaries = new Map();
    if (e.object === undefined && e.slices.size === 0 && e.endpointsObject === undefined)
      this.services.delete(e.key);
    if (column(e) !== before) this.layoutChanged();
    return this.changed([], [e.key], false);
  }

  private serviceInput(type: 'upsert' | 'delete', obj: KObject): boolean {
    const key = nsName(obj);
    const e = this.entry(key);
    if (type === 'delete') {
      if (e.object === undefined) return false;
      delete e.object;
      delete e.svc;
      delete e.grid;
      return this.touched(e);
    }
    const svc = topologyService(obj);
    const grid = gridOf(obj);
    if (e.object !== undefined && e.grid === grid && JSON.stringify(e.svc) === JSON.stringify(svc)) {
      e.object = obj;
      return false;
    }
    e.object = obj;
    e.svc = svc;
    if (grid === undefined) delete e.grid;
    else e.grid = grid;
    return this.touched(e);
  }

  private slice(type: 'upsert' | 'delete', obj: KObject): boolean {
    const id = nsName(obj);
    const owner = this.sliceOwner.get(id);
    const service = obj.metadata.labels?.[LABEL_SERVICE_NAME];
    const key =
      type === 'delete' || service === undefined ? undefined : `${obj.metadata.namespace ?? ''}/${service}`;
    const touched: Entry[] = [];
    if (owner !== undefined && owner !== key) {
      const e = this.entry(owner);
      e.slices.delete(obj.metadata.name ?? '');
      this.sliceOwner.delete(id);
      touched.push(e);
    }
    if (key !== undefined) {
      const e = this.entry(key);
      e.slices.set(obj.metadata.name ?? '', obj);
      this.sliceOwner.set(id, key);
      touched.push(e);
    }
    for (const e of touched) this.touched(e);
    return touched.length > 0;
  }

  private endpoints(type: 'upsert' | 'delete', obj: KObject): boolean {
    const e = this.entry(nsName(obj));
    if (type === 'delete') {
      if (e.endpointsObject === undefined) return false;
      delete e.endpointsObject;
    } else e.endpointsObject = obj;
    return this.touched(e);
  }

  private grid(kind: 'servicegrid' | 'deploymentgrid', type: 'upsert' | 'delete', obj: Grid): boolean {
    const id = `${kind === 'servicegrid' ? 0 : 1}/${nsName(obj)}`;
    const before = this.grids.get(id);
    const key = type === 'delete' ? undefined : gridKeyOf(obj);
    if (before === key) return false;
    if (key === undefined) this.grids.delete(id);
    else this.grids.set(id, key);
    this.generation++;
    this.layoutChanged();
    return true;
  }

  // ------------------------------------------------------------------------------------------ derived

  private derived(e: Entry): Derived {
    if (e.derived !== undefined) return e.derived;
    // The same precedence as `svcplane explain`: the slices when there are any, else the Endpoints.
    // Slices in name order, as a list answers them, so verdicts come in explain's order.
    const slices = [...e.slices].sort(([a], [b]) => compareBytes(a, b)).map(([, s]) => s);
    const read: EndpointsRead =
      slices.length > 0
        ? { kind: 'slices', objects: slices }
        : e.endpointsObject !== undefined
          ? { kind: 'endpoints', object: e.endpointsObject }
          : { kind: 'none' };
    const endpoints =
      read.kind === 'slices'
        ? endpointsFromSlices(slices)
        : read.kind === 'endpoints'
          ? endpointsFromEndpoints(read.object)
          : [];
    const hosts = new Set<string>();
    const hinted = new Set<string>();
    for (const ep of endpoints) {
      if (ep.nodeName !== undefined) hosts.add(ep.nodeName);
      const h = ep.deprecatedTopology?.[HOSTNAME_LABEL];
      if (h !== undefined) hosts.add(h);
      for (const n of ep.forNodes ?? []) hinted.add(n);
    }
    const svc = e.svc ?? topologyService({ metadata: { namespace: '', name: '' } });
    const isHinted = endpoints.some(
      (x) => x.ready && ((x.forZones?.length ?? 0) > 0 || (x.forNodes?.length ?? 0) > 0),
    );
    const rule = chooseRules(svc, serviceRules(svc), isHinted).internal;
    e.derived = { endpoints, read, rule, nodes: { hosts, hinted } };
    return e.derived;
  }

  private nodeLabels = (n: string): Labels | undefined => this.nodes.get(n)?.labels;

  private healthOf = (n: string): boolean | undefined => this.health?.get(n);

  private healthFn() {
    return this.health === undefined ? {} : { health: this.healthOf };
  }

  /** Drops an entry's cells and summaries once a node's labels or the health changed. */
  private fresh(e: Entry): void {
    if (e.epoch === this.epoch) return;
    e.memo = new Map();
    e.summaries = new Map();
    e.epoch = this.epoch;
  }

  /** The grids' keys, ServiceGrids first, each kind by namespace and name. */
  private gridKeys(): string[] {
    return [...this.grids].sort(([a], [b]) => compareBytes(a, b)).map(([, k]) => k);
  }

  /** The cell of `node` for a Service (and which endpoints it keeps), through the entry's memo. */
  private cellFor(e: Entry, node: string): { readonly cell: Cell; readonly kept: readonly number[] } {
    this.fresh(e);
    const d = this.derived(e);
    // The internal rule's signature decides the cell: with no endpoint kept, a cell is dropped or refused
    // by what the whole Service has under a Local policy (either side), and refused otherwise, since
    // without a Local policy both sides follow the same rule (cell.ts, rules.ts chooseRules).
    const sig = clientSignature(d.rule, node, this.nodeLabels(node), d.nodes);
    let hit = e.memo.get(sig);
    if (hit === undefined) {
      const decision = decide({
        service: e.svc!,
        endpoints: d.endpoints,
        nodeLabels: this.nodeLabels,
        node,
        ...this.healthFn(),
      });
      const kept: number[] = [];
      decision.internal.verdicts.forEach((v, i) => {
        if (v.kept) kept.push(i);
      });
      hit = { cell: cellOf(decision, this.healthOf), kept };
      e.memo.set(sig, hit);
    }
    return hit;
  }

  private column(e: Entry): LayoutColumn {
    return {
      key: e.key,
      namespace: e.svc!.namespace,
      name: e.svc!.name,
      rule: this.derived(e).rule.kind,
      ...(e.grid === undefined ? {} : { grid: e.grid }),
    };
  }

  private *columns(): Generator<LayoutColumn> {
    for (const e of this.services.values()) if (e.object !== undefined) yield this.column(e);
  }

  // ------------------------------------------------------------------------------------------ answers

  /** The layout for a query, computed once per query until an input that shapes it changes. */
  layout(q: LayoutQuery): Layout {
    const id = JSON.stringify([q.group ?? null, q.namespace ?? '', q.name ?? '']);
    let l = this.layouts.get(id);
    if (l !== undefined) {
      // Most recently used last: the Map's order is the eviction order.
      this.layouts.delete(id);
      this.layouts.set(id, l);
    } else {
      l = computeLayout(
        {
          version: this.layoutVersion,
          nodes: this.nodes,
          columns: this.columns(),
          gridKeys: this.gridKeys(),
          health: this.health,
        },
        q,
      );
      this.layouts.set(id, l);
      // A layout of 10,000 columns is about 1.5 MB: keep the few queries in use, not every filter typed.
      if (this.layouts.size > LAYOUT_CACHE) this.layouts.delete(this.layouts.keys().next().value!);
    }
    return l;
  }

  /**
   * The cells of rows × cols (inclusive, clipped to the layout) of the layout `version` for `q`, and for
   * every group overlapping those rows its summary over all of its nodes for those columns.
   */
  cells(q: LayoutQuery, version: number, rows: Range, cols: Range): CellsAnswer {
    const l = this.layout(q);
    if (version !== l.version) return { stale: true, version: l.version };
    const r: Range = [rows[0], Math.min(rows[1], l.rows.length - 1)];
    const c: Range = [cols[0], Math.min(cols[1], l.columns.length - 1)];
    const entries = l.columns.slice(c[0], c[1] + 1).map((col) => this.services.get(col.key)!);
    const cells = l.rows
      .slice(r[0], r[1] + 1)
      .map((row) => entries.map((e) => this.cellFor(e, row.node).cell));
    const groups = l.groups
      .filter((g) => g.first <= r[1] && g.first + g.count - 1 >= r[0])
      .map((g) => ({
        value: g.value,
        summary: entries.map((e) => {
          const id = JSON.stringify([l.groupKey, g.value]);
          this.fresh(e);
          let s = e.summaries.get(id);
          if (s === undefined) {
            const n = { all: 0, some: 0, refused: 0, dropped: 0 };
            for (let i = g.first; i < g.first + g.count; i++)
              n[this.cellFor(e, l.rows[i]!.node).cell.state]++;
            s = n;
            e.summaries.set(id, s);
          }
          return s;
        }),
      }));
    return { stale: false, version: l.version, rows: r, cols: c, cells, groups };
  }

  /** What `svcplane explain` answers for the pair; undefined when the Service or the node is not known. */
  explain(node: string, service: string): ExplainAnswer | undefined {
    const e = this.services.get(service);
    const labels = this.nodes.get(node)?.labels;
    if (e?.svc === undefined || labels === undefined) return undefined;
    const d = this.derived(e);
    const decision = decide({
      service: e.svc,
      endpoints: d.endpoints,
      nodeLabels: this.nodeLabels,
      node,
      ...this.healthFn(),
    });
    const report = explainReport({
      decision,
      nodeLabels: labels,
      read: d.read,
      ...(this.health === undefined ? {} : { health: this.health }),
      nodes: this.nodes.size,
    });
    return { json: report.json, text: report.text, cell: cellOf(decision, this.healthOf) };
  }

  /** The Service view: its endpoints by unit and node, and the flows between units; undefined when unknown. */
  service(key: string, group: string | undefined): ServiceAnswer | undefined {
    const e = this.services.get(key);
    if (e?.svc === undefined) return undefined;
    const d = this.derived(e);
    const groupKey = groupKeyOf({ group }, { nodes: this.nodes, gridKeys: this.gridKeys() });
    return serviceView({
      key,
      rule: ruleText(d.rule),
      groupKey,
      endpoints: d.endpoints,
      nodes: this.nodes.keys(),
      unitOf: (node) =>
        this.nodes.has(node) ? groupValue(this.nodes.get(node)?.labels, groupKey) : undefined,
      keptOf: (node) => this.cellFor(e, node).kept,
    });
  }

  /** Whether a node is known (for the server's 404). */
  hasNode(name: string): boolean {
    return this.nodes.has(name);
  }
}
