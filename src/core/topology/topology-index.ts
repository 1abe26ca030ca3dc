// The incremental topology index that a node-local consumer (the wrapper, the proxy) holds for its own
// node. It keeps every Service's view (the endpoints this node may use) and, when an input changes,
// recomputes only the views that input can change:
//   - a Service, its slices or its Endpoints: that Service;
//   - another node's labels: the Services with endpoints on that node whose rule reads a changed key, and
//     of those only the ones where the change flips whether the node matches this node's value;
//   - this node's labels: the Services whose rule reads a changed key and that have an endpoint on a node
//     holding the key's old or new value (nodes by label key and value), or an endpoint whose node is not
//     known (its own fields are its topology); and, for the zone, the Services whose slices carry hints;
//   - a node appearing or disappearing: the Services with endpoints on it (all of them, if it is this node).
// SuperEdge's wrapper instead rebuilds every object on every node event (resync() in its storage cache).
// Each call returns the keys of the Services whose view changed, exactly: a consumer emits MODIFIED for
// those and for nothing else.
import { labelValue } from '../../api/label-match.js';
import { decide, keptEndpoints } from './decide.js';
import { hash53 } from '../hash.js';
import {
  endpointsFromEndpoints,
  mergeSliceEndpoints,
  packedSliceOf,
  unpackSlice,
  type PackedSlice,
  type ParseOptions,
} from './endpoints.js';
import { NodeRefs } from './node-refs.js';
import { KeptView, unhealthyOf, usablePoolsOf, type TopologyView, type ViewSource } from './view.js';
import { OPENYURT_NODEPOOL_LABEL, ZONE_LABEL, chooseRules, serviceRules, topologyService } from './rules.js';
import type {
  Labels,
  NodeHealth,
  Rule,
  TopologyDecision,
  TopologyEndpoint,
  TopologyService,
} from './types.js';

interface Entry {
  /** The Service's key ("namespace/name"), held once. */
  readonly key: string;
  svc?: TopologyService;
  /** Each slice's endpoints, packed; an array replaced on change, which views share (not a Map each). */
  slices: readonly PackedSlice[];
  legacy?: TopologyEndpoint[];
  /** How many endpoints the Service has (after merging its slices). */
  count: number;
  /** The merged endpoints reindexing just built, for the recompute that follows (then dropped). */
  fresh?: TopologyEndpoint[] | undefined;
  /** Label keys the Service's rules read, on any node. */
  keys: ReadonlySet<string>;
  /** The Service `keys` were computed from (they depend on nothing else). */
  keysFor?: TopologyService | undefined;
  view: TopologyView | undefined;
  fingerprint: number;
}

export interface TopologyIndexOptions {
  /** Keep each endpoint's targetRef (only explain prints it). Default true. */
  readonly targetRefs?: boolean;
}

/**
 * The node label keys a Service's rules read. Every rule it carries, not just the winners: cheap, and
 * always a superset.
 */
function keysOf(svc: TopologyService | undefined): Set<string> {
  const keys = new Set<string>();
  if (svc === undefined) return keys;
  const rules = serviceRules(svc);
  for (const r of [rules.ordered, rules.superedge, rules.openyurt]) ruleKeys(r, keys);
  const chosen = chooseRules(svc, rules);
  ruleKeys(chosen.internal, keys);
  ruleKeys(chosen.external, keys);
  return keys;
}

/** Strings shared between endpoints are kept once; past this many distinct ones the table starts over. */
const INTERN_LIMIT = 50_000;

/** The node label keys a rule reads (on the client's node, and for strict rules on endpoint nodes). */
function ruleKeys(r: Rule | undefined, out: Set<string>): void {
  if (r === undefined) return;
  if (r.kind === 'ordered-keys' || r.kind === 'superedge') for (const k of r.keys) if (k !== '*') out.add(k);
  if (r.kind === 'openyurt') out.add(OPENYURT_NODEPOOL_LABEL);
}

/** The label keys whose values differ between two label sets. */
function changedKeys(a: Labels, b: Labels): Set<string> {
  const out = new Set<string>();
  for (const k of Object.keys(a)) if (a[k] !== b[k]) out.add(k);
  for (const k of Object.keys(b)) if (!(k in a)) out.add(k);
  return out;
}

/** The node of each endpoint that names one. */
function* nodesOf(endpoints: readonly TopologyEndpoint[]): Generator<string> {
  for (const ep of endpoints) if (ep.nodeName !== undefined) yield ep.nodeName;
}

const isEmpty = (l: Labels | undefined): boolean => l === undefined || Object.keys(l).length === 0;

export class TopologyIndex {
  private readonly nodes = new Map<string, Labels>();
  private readonly entries = new Map<string, Entry>();
  private readonly byKey = new Map<string, Set<string>>();
  private readonly byNode = new NodeRefs<Entry>();
  private readonly health = new Map<string, boolean>();
  /** label key → value → the nodes with that label. */
  private readonly nodesByLabel = new Map<string, Map<string, Set<string>>>();
  /** Services with an endpoint that names no node. */
  private readonly nodeless = new Set<string>();
  /** Services whose endpoints carry hints (their view follows this node's zone). */
  private readonly hinted = new Set<string>();
  /** Views recomputed since construction (for benchmarks and tests). */
  recomputed = 0;

  private readonly strings = new Map<string, string>();
  private readonly parse: ParseOptions;

  constructor(
    readonly node: string,
    opts: TopologyIndexOptions = {},
  ) {
    this.parse = {
      intern: (v) => {
        const known = this.strings.get(v);
        if (known !== undefined) return known;
        if (this.strings.size >= INTERN_LIMIT) this.strings.clear();
        this.strings.set(v, v);
        return v;
      },
      targetRefs: opts.targetRefs ?? true,
    };
  }

  /** The view for `namespace/name`, or undefined when the Service is not known. */
  view(key: string): TopologyView | undefined {
    return this.entries.get(key)?.view;
  }

  /** Every known view. */
  *views(): IterableIterator<TopologyView> {
    for (const e of this.entries.values()) if (e.view !== undefined) yield e.view;
  }

  /** The full decision for one Service (what `explain` prints), computed now. */
  decision(key: string): TopologyDecision | undefined {
    const e = this.entries.get(key);
    return e?.svc === undefined ? undefined : this.decideEntry(e);
  }

  /** Sets or (with undefined) removes a node. Returns the Services whose view changed. */
  setNode(name: string, labels: Labels | undefined): string[] {
    const old = this.nodes.get(name);
    if (old === undefined && labels === undefined) return [];
    if (old !== undefined) this.indexLabels(name, old, -1);
    if (labels === undefined) this.nodes.delete(name);
    else {
      this.nodes.set(name, { ...labels });
      this.indexLabels(name, labels, +1);
    }
    const exists = (x: Labels | undefined) => x !== undefined;
    if (name === this.node) {
      if (exists(old) !== exists(labels) || isEmpty(old) !== isEmpty(labels))
        return this.recompute(this.entries.keys());
      return this.recompute(this.affectedByClientChange(old!, labels!));
    }
    if (!this.byNode.has(name)) return [];
    if (exists(old) !== exists(labels)) return this.recompute(this.byNode.keysOn(name));
    const changed = changedKeys(old!, labels!);
    if (changed.size === 0) return [];
    const onNode = this.byNode.keysOn(name);
    const client = this.nodes.get(this.node);
    const affected: string[] = [];
    for (const s of onNode) {
      const e = this.entries.get(s);
      if (e === undefined) continue;
      for (const k of e.keys) {
        if (!changed.has(k)) continue;
        // Only equality with this node's value matters to every rule; a change between two values that
        // both differ from it (or when this node lacks the key) leaves the view as it was.
        const cv = labelValue(client, k);
        if (cv !== undefined && (labelValue(old, k) === cv) !== (labelValue(labels, k) === cv)) {
          affected.push(s);
          break;
        }
      }
    }
    return this.recompute(affected);
  }

  /** Sets or removes a Service (as JSON). */
  setService(key: string, svc: unknown): string[] {
    const e = this.entry(key);
    if (svc === undefined) delete e.svc;
    else e.svc = topologyService(svc as { metadata?: unknown });
    return this.recompute([key]);
  }

  /** The names of the EndpointSlices the index holds for a Service (none when it holds no entry). */
  sliceNames(serviceKey: string): Iterable<string> {
    return this.entries.get(serviceKey)?.slices.map((p) => p.name) ?? [];
  }

  /** Sets or removes one EndpointSlice of a Service. */
  setSlice(serviceKey: string, sliceName: string, slice: unknown): string[] {
    const e = this.entry(serviceKey);
    this.unindexEndpoints(e);
    const others = e.slices.filter((p) => p.name !== sliceName);
    if (slice === undefined) e.slices = others;
    else {
      const packed = packedSliceOf(slice, this.parse);
      // Held under the name it was set with (a slice's own metadata.name, from every caller today).
      e.slices = [...others, packed.name === sliceName ? packed : { ...packed, name: sliceName }];
    }
    this.reindexEndpoints(serviceKey, e);
    return this.recompute([serviceKey]);
  }

  /** Sets or removes a Service's legacy Endpoints; used only while the Service has no slices. */
  setEndpoints(serviceKey: string, endpoints: unknown): string[] {
    const e = this.entry(serviceKey);
    this.unindexEndpoints(e);
    if (endpoints === undefined) delete e.legacy;
    else e.legacy = endpointsFromEndpoints(endpoints, this.parse);
    this.reindexEndpoints(serviceKey, e);
    return this.recompute([serviceKey]);
  }

  /** Sets a node's health (false drops its endpoints; undefined is no opinion). */
  setHealth(name: string, healthy: boolean | undefined): string[] {
    const old = this.health.get(name);
    if (healthy === undefined) this.health.delete(name);
    else this.health.set(name, healthy);
    if ((old === false) === (healthy === false)) return [];
    return this.recompute(this.byNode.keysOn(name));
  }

  /**
   * The Services this node's own relabel can change. A rule compares this node's value for a key with the
   * endpoints' values, so a Service none of whose endpoints has the old or the new value (on a known node,
   * or through its own fields when its node is not known) keeps its view.
   */
  private affectedByClientChange(old: Labels, now: Labels): Set<string> {
    const affected = new Set<string>();
    const unknownNodes = [...this.byNode.nodes()].filter((n) => !this.nodes.has(n));
    for (const k of changedKeys(old, now)) {
      if (k === ZONE_LABEL) for (const s of this.hinted) affected.add(s);
      const users = this.byKey.get(k);
      if (users === undefined) continue;
      const byValue = this.nodesByLabel.get(k);
      const nodes = [
        ...(old[k] === undefined ? [] : (byValue?.get(old[k]) ?? [])),
        ...(now[k] === undefined ? [] : (byValue?.get(now[k]) ?? [])),
        ...unknownNodes,
        this.node, // its own endpoints changed value too (it has already left the old value's set)
      ];
      for (const n of nodes) for (const e of this.byNode.on(n)) if (users.has(e.key)) affected.add(e.key);
      for (const s of this.nodeless) if (users.has(s)) affected.add(s);
    }
    return affected;
  }

  private indexLabels(name: string, labels: Labels, d: number): void {
    for (const [k, v] of Object.entries(labels)) {
      let byValue = this.nodesByLabel.get(k);
      if (byValue === undefined) this.nodesByLabel.set(k, (byValue = new Map()));
      let set = byValue.get(v);
      if (set === undefined) byValue.set(v, (set = new Set()));
      if (d > 0) set.add(name);
      else {
        set.delete(name);
        if (set.size === 0) byValue.delete(v);
        if (byValue.size === 0) this.nodesByLabel.delete(k);
      }
    }
  }

  /** Recomputes every view from scratch; what SuperEdge's resync does (for comparison). */
  rebuildAll(): string[] {
    return this.recompute(this.entries.keys());
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (e === undefined) {
      e = { key, slices: [], count: 0, keys: new Set(), view: undefined, fingerprint: 0 };
      this.entries.set(key, e);
    }
    return e;
  }

  /** A Service's endpoints: its slices merged (or its legacy Endpoints), as objects, built when needed. */
  private endpointsOf(e: Entry): TopologyEndpoint[] {
    if (e.slices.length === 0) return e.legacy ?? [];
    return mergeSliceEndpoints(e.slices.map(unpackSlice));
  }

  /** Takes a Service's endpoints out of the node index, before its slices change. */
  private unindexEndpoints(e: Entry): void {
    this.byNode.remove(e, nodesOf(this.endpointsOf(e)));
  }

  private reindexEndpoints(key: string, e: Entry): void {
    const endpoints = this.endpointsOf(e);
    e.fresh = endpoints;
    e.count = endpoints.length;
    this.byNode.add(e, nodesOf(endpoints));
    const mark = (set: Set<string>, on: boolean) => (on ? set.add(key) : set.delete(key));
    mark(
      this.nodeless,
      endpoints.some((ep) => ep.nodeName === undefined),
    );
    mark(
      this.hinted,
      endpoints.some((ep) => (ep.forZones?.length ?? 0) > 0 || (ep.forNodes?.length ?? 0) > 0),
    );
  }

  private readonly healthOf: NodeHealth = (n) => this.health.get(n);
  private readonly labelsOf = (n: string): Labels | undefined => this.nodes.get(n);

  private decideEntry(e: Entry, endpoints = e.fresh ?? this.endpointsOf(e)): TopologyDecision {
    e.fresh = undefined;
    return decide({
      service: e.svc!,
      endpoints,
      nodeLabels: this.labelsOf,
      node: this.node,
      health: this.healthOf,
    });
  }

  private recompute(keys: Iterable<string>): string[] {
    const changed: string[] = [];
    for (const key of [...keys]) {
      const e = this.entries.get(key);
      if (e === undefined) continue;
      this.recomputed++;
      let view: TopologyView | undefined;
      // A view's identity: a hash of its rules and of everything about its kept endpoints (any change is a
      // changed view). A hash, not the JSON itself, so the index does not hold a second copy of every view.
      let fp = 0;
      if (e.svc !== undefined) {
        const all = e.fresh ?? this.endpointsOf(e);
        const d = this.decideEntry(e, all);
        const internal = keptEndpoints(d.internal);
        const external = d.external === undefined ? undefined : keptEndpoints(d.external);
        const source: ViewSource = e.slices.length === 0 ? { list: e.legacy ?? [] } : { packed: e.slices };
        // kube-proxy's hasAnyEndpoints is over the cluster's endpoints when a traffic policy narrows them
        // to this node's; a topology rule's choice is the Service's endpoints as far as this node goes.
        const policy = d.internal.rule.kind === 'local' || d.external?.rule.kind === 'local';
        const usable = this.sharedPools(
          usablePoolsOf(policy ? all : [...internal, ...(external ?? [])], this.healthOf),
        );
        const unhealthy = this.health.size === 0 ? undefined : unhealthyOf(all, this.healthOf);
        view = new KeptView(
          key,
          source,
          all,
          internal,
          d.internal.rule,
          external,
          d.external?.rule,
          usable,
          unhealthy,
        );
        fp = hash53(
          JSON.stringify([
            d.internal.rule,
            internal,
            d.external?.rule ?? null,
            external ?? null,
            usable,
            // A set: the order its endpoints came in (slice order) is not part of the view.
            unhealthy === undefined ? null : [...unhealthy.ids].sort(),
          ]),
        );
      }
      if (e.keysFor !== e.svc || e.svc === undefined) {
        const keys = this.sharedKeys(keysOf(e.svc));
        this.rekey(key, e.keys, keys);
        e.keys = keys;
        e.keysFor = e.svc;
      }
      e.view = view;
      if (fp !== e.fingerprint) {
        e.fingerprint = fp;
        changed.push(key);
      }
      e.fresh = undefined;
      if (e.svc === undefined && e.slices.length === 0 && e.legacy === undefined) this.entries.delete(key);
    }
    return changed;
  }

  /** Pool lists by content: most views have the same one or two, so each is kept once. */
  private readonly poolLists = new Map<string, readonly string[]>();

  private sharedPools(pools: readonly string[]): readonly string[] {
    const id = pools.join('\n');
    const known = this.poolLists.get(id);
    if (known !== undefined) return known;
    if (this.poolLists.size >= INTERN_LIMIT) this.poolLists.clear();
    this.poolLists.set(id, pools);
    return pools;
  }

  /** Key sets by content: most Services read the same few key sets, so each is kept once. */
  private readonly keySets = new Map<string, ReadonlySet<string>>();

  private sharedKeys(keys: ReadonlySet<string>): ReadonlySet<string> {
    const id = [...keys].sort().join('\n');
    const known = this.keySets.get(id);
    if (known !== undefined) return known;
    if (this.keySets.size >= INTERN_LIMIT) this.keySets.clear();
    this.keySets.set(id, keys);
    return keys;
  }

  private rekey(key: string, before: ReadonlySet<string>, after: ReadonlySet<string>): void {
    if (before === after) return;
    for (const k of before)
      if (!after.has(k)) {
        const s = this.byKey.get(k);
        s?.delete(key);
        if (s?.size === 0) this.byKey.delete(k);
      }
    for (const k of after)
      if (!before.has(k)) {
        let s = this.byKey.get(k);
        if (s === undefined) this.byKey.set(k, (s = new Set()));
        s.add(key);
      }
  }

  /** Sizes, for metrics, the benchmark and tests (nodeRefs: the node index's endpoint references). */
  stats(): { services: number; nodes: number; endpoints: number; keys: number; nodeRefs: number } {
    let endpoints = 0;
    for (const e of this.entries.values()) endpoints += e.count;
    const nodeRefs = this.byNode.size();
    return {
      services: this.entries.size,
      nodes: this.nodes.size,
      endpoints,
      keys: this.byKey.size,
      nodeRefs,
    };
  }
}
