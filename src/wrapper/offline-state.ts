// What the wrapper's sync keeps for the offline rewrite (core/offline): the kubelet's pods while it
// rewrites, and the few sets that tell which served objects a change of those pods may touch. Small: it
// names only the Services with an endpoint on this node or selecting one of its pods, and the objects
// rewritten (docs/wrapper.md, "Offline: the node's own pods").
import type { Pod } from '../core/endpoints/types.js';
import { OFFLINE_ANNOTATION, OFFLINE_MANAGED_BY } from '../core/offline/mark.js';
import type { OfflineContext } from '../core/offline/slices.js';
import type { Dirty } from './served-keys.js';

/** The mark's key as it appears in a served form's JSON. */
const MARK_TEXT = `"${OFFLINE_ANNOTATION}":`;
const CREATED_TEXT = `"endpointslice.kubernetes.io/managed-by":"${OFFLINE_MANAGED_BY}"`;
const SERVICE_NAME = /"kubernetes\.io\/service-name":"([^"]*)"/;

export class OfflineState {
  /** The kubelet's pods of this node while rewriting; undefined: not rewriting. */
  pods: Map<string, Pod> | undefined;
  /** When the rewriting began (RFC 3339). */
  since = '';
  /** Services (`ns/name`) whose served objects have had an endpoint on this node: a superset. */
  private readonly local = new Set<string>();
  /** Services selecting one of the pods, and the pods' names and labels they were found for. */
  selecting = new Set<string>();
  selectingFor: string | undefined;
  /** Slices the rewrite created (`ns/name`) → their Service. */
  readonly created = new Map<string, string>();
  /** Served objects whose held form carries the mark, by store key. */
  readonly marked = new Map<string, Dirty>();
  /** Until the first sync, from the store: each Service's served slices (names). */
  storedSlices: Map<string, Set<string>> | undefined = new Map();

  constructor(private readonly node: string) {}

  context(): OfflineContext {
    return { node: this.node, pods: this.pods ?? new Map(), since: this.since };
  }

  /** Whether a rewrite may change this Service's served objects. */
  touches(service: string): boolean {
    return (
      this.local.has(service) || this.selecting.has(service) || [...this.created.values()].includes(service)
    );
  }

  /** Every Service touches() holds for. */
  services(): string[] {
    return [...new Set([...this.local, ...this.selecting, ...this.created.values()])];
  }

  /** A served form of the Service's (as the upstream or the store has it): notes an endpoint on this node. */
  sawForm(service: string | undefined, form: string): void {
    if (service !== undefined && form.includes(`"nodeName":${JSON.stringify(this.node)}`))
      this.local.add(service);
  }

  /** A form the store holds at the start (`ns/name`; slices: the Service is read from its label). */
  sawStored(key: string, d: Dirty, form: string, slice: boolean): void {
    if (form.includes(MARK_TEXT)) this.marked.set(key, d);
    const id = `${d.namespace}/${d.name}`;
    if (!slice) {
      this.sawForm(id, form);
      return;
    }
    const owner = SERVICE_NAME.exec(form)?.[1];
    if (owner === undefined) return;
    const service = `${d.namespace}/${owner}`;
    this.sawForm(service, form);
    if (form.includes(CREATED_TEXT)) this.created.set(id, service);
    const names = this.storedSlices?.get(service) ?? new Set<string>();
    names.add(d.name);
    this.storedSlices?.set(service, names);
  }

  /** A form was written (or deleted: null). */
  wrote(key: string, d: Dirty, form: string | null): void {
    if (form !== null && form.includes(MARK_TEXT)) this.marked.set(key, d);
    else this.marked.delete(key);
    if (form === null) this.created.delete(`${d.namespace}/${d.name}`);
  }
}
