// The in-process model: a TopologyIndex over the same upstream objects, for the served slices the wrapper
// must match and for the full rebuild the relabel is compared with.
import { performance } from 'node:perf_hooks';
import type { KObject } from '../../src/api/object.js';
import { TopologyIndex } from '../../src/core/topology/topology-index.js';
import { servedSlice } from '../../src/core/topology/served.js';
import type { Labels } from '../../src/core/topology/types.js';
import { SERVICE_NAME_LABEL } from './shape.js';
import { withoutPolicies } from './wrapper-process.js';

/**
 * The same upstream objects in a TopologyIndex of this process, for the wrapper's node: the expected
 * served slices (the correctness check and P5's expected events) and the full-rebuild model.
 */
export class Model {
  readonly index: TopologyIndex;
  /** "ns/slice" → its Service key and the slice. */
  readonly slices = new Map<string, { svc: string | undefined; obj: KObject }>();
  readonly slicesOf = new Map<string, string[]>();
  /** "ns/slice" → its served endpoints now (JSON). */
  readonly served = new Map<string, string>();

  constructor(client: string, nodes: KObject[], services: KObject[], slices: KObject[]) {
    this.index = new TopologyIndex(client);
    for (const n of nodes) this.index.setNode(n.metadata.name!, n.metadata.labels ?? {});
    for (const s of services)
      this.index.setService(`${s.metadata.namespace}/${s.metadata.name}`, withoutPolicies(s));
    for (const sl of slices) {
      const svcName = sl.metadata.labels?.[SERVICE_NAME_LABEL];
      const svc = svcName === undefined ? undefined : `${sl.metadata.namespace}/${svcName}`;
      const key = `${sl.metadata.namespace}/${sl.metadata.name}`;
      this.slices.set(key, { svc, obj: sl });
      if (svc !== undefined) {
        this.index.setSlice(svc, sl.metadata.name!, sl);
        const l = this.slicesOf.get(svc);
        if (l === undefined) this.slicesOf.set(svc, [key]);
        else l.push(key);
      }
    }
    for (const key of this.slices.keys()) this.served.set(key, this.servedNow(key));
  }

  servedNow(key: string): string {
    const s = this.slices.get(key)!;
    return JSON.stringify(
      servedSlice(s.obj, s.svc === undefined ? undefined : this.index.view(s.svc))['endpoints'] ?? [],
    );
  }

  /** Applies a node's new labels; returns the slices whose served form changed. */
  setNode(name: string, labels: Labels): string[] {
    const out: string[] = [];
    for (const svc of this.index.setNode(name, labels))
      for (const key of this.slicesOf.get(svc) ?? []) {
        const now = this.servedNow(key);
        if (now !== this.served.get(key)) {
          out.push(key);
          this.served.set(key, now);
        }
      }
    return out;
  }

  /** The full-rebuild model, timed: every view recomputed, then every slice re-served (and serialized). */
  rebuild(): { rebuildMs: number; serveMs: number; serializeMs: number } {
    const t0 = performance.now();
    const changed = this.index.rebuildAll();
    const t1 = performance.now();
    const out: KObject[] = [];
    for (const s of this.slices.values())
      out.push(servedSlice(s.obj, s.svc === undefined ? undefined : this.index.view(s.svc)));
    const t2 = performance.now();
    let bytes = 0;
    for (const o of out) bytes += JSON.stringify(o).length;
    const t3 = performance.now();
    if (changed.length > 0) throw new Error(`the model's rebuild changed ${changed.length} views`);
    if (bytes === 0) throw new Error('nothing served');
    return { rebuildMs: t1 - t0, serveMs: t2 - t1, serializeMs: t3 - t2 };
  }
}
