// The garbage collector (kube's pkg/controller/garbagecollector): deletes objects whose owners are gone,
// and carries out Foreground and Orphan deletion. The decisions are core/gc's; this file resolves the facts
// and applies the decisions. Wiring:
//   - one shared informer per resource the server serves (events are ignored, as kube ignores them), each
//     indexed by uid and by owner uid, which together are the dependency graph;
//   - an object that appears with owners, or whose owners change, is checked; an object that goes has its
//     dependents checked (they may now dangle) and its owners re-checked when they wait in the foreground;
//     an object that starts being deleted with the orphan or foregroundDeletion finalizer is processed as
//     an owner, and its dependents are checked.
// Queue keys are uids. An object whose owners are all in the cache (and not deleting in the foreground)
// is left alone without a request, as kube's graph does. Before acting, the object is read from the API server (the cache may be behind), an
// owner missing from the cache is looked up there too, and every delete carries the uid as a precondition,
// so a namesake created since is never touched. Writes to ownerReferences and finalizers are
// compare-and-swap updates, retried on conflict.
import type { KObject, OwnerReference } from '../../api/object.js';
import { RESOURCES, groupVersion, type ResourceInfo } from '../../api/resources.js';
import {
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  decideItem,
  decideOwner,
  deletingDependents,
  unblocked,
  withoutOwners,
  type OwnerState,
} from '../../core/gc/gc.js';
import type { Projection } from '../../core/projection/projection.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import { sleep } from '../../runtime/sleep.js';
import type { IndexFunc, Informer, SharedInformerFactory } from '../../runtime/informer.js';
import { keyedController, type KeyedControllerOptions } from '../controller-wiring.js';

/** What the collector reads of any object from its caches: the metadata (kube's GC uses metadata-only informers). */
export const GC_VIEW: Projection = { apiVersion: true, kind: true, metadata: true };

/** kube-controller-manager's default ignored resources. */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);

const byUID: IndexFunc = (o) => (o.metadata.uid === undefined ? [] : [o.metadata.uid]);
const byOwnerUID: IndexFunc = (o) => (o.metadata.ownerReferences ?? []).map((r) => r.uid);

const ownersChanged = (a: KObject, b: KObject): boolean =>
  JSON.stringify(a.metadata.ownerReferences ?? []) !== JSON.stringify(b.metadata.ownerReferences ?? []);
const beingDeleted = (o: KObject): boolean =>
  o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;
const hasGCFinalizer = (o: KObject): boolean =>
  (o.metadata.finalizers ?? []).some((f) => f === FINALIZER_ORPHAN || f === FINALIZER_FOREGROUND);

export interface GarbageCollectorOptions extends KeyedControllerOptions {
  readonly log?: (msg: string, fields: Record<string, unknown>) => void;
}

interface Located {
  readonly resource: ResourceInfo;
  readonly informer: Informer;
  readonly object: KObject;
}

const MAX_CAS_ATTEMPTS = 5;

export class GarbageCollector {
  readonly controller: Controller;
  private readonly informers = new Map<ResourceInfo, Informer>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly factory: SharedInformerFactory,
    private readonly opts: GarbageCollectorOptions = {},
  ) {
    this.controller = keyedController(
      {
        name: 'garbage_collector_attempt_to_delete',
        workers: 20,
        maxRetries: 15,
        reconcile: (uid) => this.sync(uid),
      },
      opts,
    );
  }

  /** Finds the resources the server serves, starts watching them, and starts the workers once synced. */
  async start(): Promise<void> {
    const served = await this.discover();
    if (served === undefined) return; // stopped while the server was unreachable
    for (const r of served) {
      const inf = this.factory.informer(r, { indexers: { uid: byUID, owner: byOwnerUID } });
      this.informers.set(r, inf);
      inf.addHandlers({
        onAdd: (o) => this.added(r, o),
        onUpdate: (old, o) => this.updated(old, o),
        onDelete: (o) => this.deleted(o),
      });
    }
    // The manager has started the factory already, so the informers asked for above start at once.
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
    if (!this.stopping.signal.aborted) this.controller.start();
  }

  /** The resources to watch: every deletable, watchable one the server serves, but events. Retried until it works. */
  private async discover(): Promise<ResourceInfo[] | undefined> {
    const candidates = RESOURCES.filter(
      (r) =>
        !IGNORED.has(`${r.group}/${r.resource}`) && r.verbs.includes('delete') && r.verbs.includes('watch'),
    );
    for (let delay = 500; !this.stopping.signal.aborted; delay = Math.min(delay * 2, 30_000)) {
      try {
        const served: ResourceInfo[] = [];
        for (const r of candidates) {
          if (await this.client.serves(r)) served.push(r);
          else
            this.opts.log?.('garbage collector: resource not served; not watched', {
              resource: r.resource,
              group: r.group,
            });
        }
        return served;
      } catch (err) {
        this.opts.onError?.('discovery', err);
        await sleep(delay, this.stopping.signal);
      }
    }
    return undefined;
  }

  stop(): Promise<void> {
    this.stopping.abort();
    return this.controller.stop();
  }

  // ------------------------------------------------------------------------------------ the graph

  private enqueue(uid: string | undefined): void {
    if (uid !== undefined && uid !== '') this.controller.enqueue(uid);
  }

  private added(r: ResourceInfo, o: KObject): void {
    // Nothing to check while every owner is in the cache (sync would find the same and return).
    const owned = (o.metadata.ownerReferences ?? []).length > 0;
    if (owned && (beingDeleted(o) || !this.ownersSolidInCache(r, o))) this.enqueue(o.metadata.uid);
    if (beingDeleted(o) && hasGCFinalizer(o)) this.ownerDeleting(o);
  }

  private updated(old: KObject, o: KObject): void {
    if (ownersChanged(old, o)) {
      this.enqueue(o.metadata.uid);
      this.wakeWaitingOwners(old); // a removed or unblocked reference may release a waiting owner
    }
    if (!beingDeleted(o) || !hasGCFinalizer(o)) return;
    if (!beingDeleted(old) || !hasGCFinalizer(old)) this.ownerDeleting(o);
    else this.enqueue(o.metadata.uid);
  }

  private deleted(o: KObject): void {
    for (const dep of this.dependentsOf(o.metadata.uid ?? '')) this.enqueue(dep.object.metadata.uid);
    this.wakeWaitingOwners(o);
  }

  private ownerDeleting(o: KObject): void {
    this.enqueue(o.metadata.uid);
    for (const dep of this.dependentsOf(o.metadata.uid ?? '')) this.enqueue(dep.object.metadata.uid);
  }

  private wakeWaitingOwners(o: KObject): void {
    for (const ref of o.metadata.ownerReferences ?? []) {
      const owner = this.byUID(ref.uid);
      if (owner !== undefined && deletingDependents(owner.object.metadata)) this.enqueue(ref.uid);
    }
  }

  private byUID(uid: string): Located | undefined {
    for (const [resource, informer] of this.informers) {
      const [object] = informer.indexer.byIndex('uid', uid);
      if (object !== undefined) return { resource, informer, object };
    }
    return undefined;
  }

  private dependentsOf(uid: string): Located[] {
    const out: Located[] = [];
    for (const [resource, informer] of this.informers) {
      for (const object of informer.indexer.byIndex('owner', uid)) out.push({ resource, informer, object });
    }
    return out;
  }

  // ---------------------------------------------------------------------------------- reconcile

  private async sync(uid: string): Promise<void> {
    const cached = this.byUID(uid);
    if (cached === undefined) return; // gone; its dependents were enqueued when it went
    // Like kube's graph, which only looks at dependents of owners it does not know, an object whose
    // owners are all present in the cache, and not waiting on their dependents, needs nothing: no read
    // of it from the server. Without this, every create of an owned object cost the server a GET.
    if (!beingDeleted(cached.object) && this.ownersSolidInCache(cached.resource, cached.object)) return;
    const item = await this.live(cached.resource, cached.object);
    if (item === undefined) return;
    if (beingDeleted(item)) {
      await this.processOwner(cached.resource, item);
      return;
    }
    const refs = item.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const owners = new Map<string, OwnerState>();
    for (const ref of refs) owners.set(ref.uid, await this.ownerState(cached.resource, item, ref));
    const dependents = this.dependentsOf(uid);
    const decision = decideItem(
      {
        ownerReferences: refs,
        finalizers: item.metadata.finalizers ?? [],
        beingDeleted: false,
        dependents: dependents.length,
        dependentDeletingDependents: dependents.some((d) => deletingDependents(d.object.metadata)),
      },
      owners,
    );
    if (decision.action === 'none') return;
    if (decision.action === 'removeOwnerReferences') {
      await this.mutate(cached.resource, item, (o) => {
        o.metadata.ownerReferences = withoutOwners(o.metadata.ownerReferences ?? [], decision.uids);
        if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
      });
      return;
    }
    if (decision.unblock.length > 0) {
      await this.mutate(cached.resource, item, (o) => {
        o.metadata.ownerReferences = unblocked(o.metadata.ownerReferences ?? [], decision.unblock);
      });
    }
    this.opts.log?.('garbage collector: deleting', {
      resource: cached.resource.resource,
      namespace: item.metadata.namespace,
      name: item.metadata.name,
      propagationPolicy: decision.policy,
    });
    try {
      await this.client.delete(cached.resource, item.metadata.namespace ?? '', item.metadata.name ?? '', {
        propagationPolicy: decision.policy,
        preconditions: { uid },
      });
    } catch (err) {
      if (isApiError(err, 404) || isApiError(err, 409)) return; // gone already, or a namesake now
      throw err;
    }
  }

  /** An owner being deleted with the orphan or foregroundDeletion finalizer. */
  private async processOwner(resource: ResourceInfo, owner: KObject): Promise<void> {
    const uid = owner.metadata.uid ?? '';
    const dependents = this.dependentsOf(uid);
    const decision = decideOwner(
      { finalizers: owner.metadata.finalizers ?? [], beingDeleted: true },
      dependents.map((d) => ({
        reference: (d.object.metadata.ownerReferences ?? []).find((r) => r.uid === uid)!,
        beingDeleted: beingDeleted(d.object),
      })),
    );
    if (decision.action === 'none') return;
    if (decision.action === 'waitForDependents') {
      for (const i of decision.check) this.enqueue(dependents[i]!.object.metadata.uid);
      return; // their deletions (or changed references) enqueue this owner again
    }
    if (decision.action === 'orphan') {
      for (const i of decision.dependents) {
        const dep = dependents[i]!;
        const live = await this.live(dep.resource, dep.object);
        if (live === undefined) continue;
        await this.mutate(dep.resource, live, (o) => {
          o.metadata.ownerReferences = withoutOwners(o.metadata.ownerReferences ?? [], [uid]);
          if (o.metadata.ownerReferences.length === 0) delete o.metadata.ownerReferences;
        });
      }
    }
    const finalizer = decision.action === 'orphan' ? FINALIZER_ORPHAN : FINALIZER_FOREGROUND;
    this.opts.log?.('garbage collector: removing finalizer', {
      resource: resource.resource,
      namespace: owner.metadata.namespace,
      name: owner.metadata.name,
      finalizer,
      resourceVersion: owner.metadata.resourceVersion,
    });
    await this.mutate(resource, owner, (o) => {
      o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    });
  }

  // ------------------------------------------------------------------------------------- facts

  /** The object as the server has it now, or undefined when it is gone or is another object by now. */
  private async live(r: ResourceInfo, o: KObject): Promise<KObject | undefined> {
    try {
      const got = await this.client.get(r, o.metadata.namespace ?? '', o.metadata.name ?? '');
      return got.metadata.uid === o.metadata.uid ? got : undefined;
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  }

  /** Every owner is solid in the cache (same uid, not waiting on dependents), or of a kind this collector cannot see. */
  private ownersSolidInCache(dependentResource: ResourceInfo, dependent: KObject): boolean {
    return (dependent.metadata.ownerReferences ?? []).every((ref) => {
      const state = this.cachedOwnerState(dependentResource, dependent, ref)?.state;
      return state === 'solid' || state === 'unknown';
    });
  }

  private ownerResource(ref: OwnerReference): ResourceInfo | undefined {
    for (const r of this.informers.keys())
      if (groupVersion(r) === ref.apiVersion && r.kind === ref.kind) return r;
    return undefined;
  }

  /**
   * What the cache alone says of an owner; `state` is undefined when it cannot tell (the owner is not
   * there, or a namesake is), and the caller must ask the server about `resource` in `namespace`.
   */
  private cachedOwnerState(
    dependentResource: ResourceInfo,
    dependent: KObject,
    ref: OwnerReference,
  ): { state: OwnerState | undefined; resource?: ResourceInfo; namespace?: string } {
    const resource = this.ownerResource(ref);
    if (resource === undefined) return { state: 'unknown' };
    // A cluster-scoped object cannot be owned by a namespaced one: the reference can never resolve.
    if (resource.namespaced && !dependentResource.namespaced) return { state: 'dangling' };
    const namespace = resource.namespaced ? (dependent.metadata.namespace ?? '') : '';
    const owner = this.informers
      .get(resource)!
      .indexer.get(namespace === '' ? ref.name : `${namespace}/${ref.name}`);
    if (owner?.metadata.uid !== ref.uid) return { state: undefined, resource, namespace };
    return { state: deletingDependents(owner.metadata) ? 'waiting' : 'solid' };
  }

  private async ownerState(
    dependentResource: ResourceInfo,
    dependent: KObject,
    ref: OwnerReference,
  ): Promise<OwnerState> {
    const cached = this.cachedOwnerState(dependentResource, dependent, ref);
    if (cached.state !== undefined) return cached.state;
    // Not in the cache (or a namesake there): the cache may be behind, so ask the server.
    let owner: KObject;
    try {
      owner = await this.client.get(cached.resource!, cached.namespace!, ref.name);
    } catch (err) {
      if (isApiError(err, 404)) return 'dangling';
      throw err;
    }
    if (owner.metadata.uid !== ref.uid) return 'dangling';
    return deletingDependents(owner.metadata) ? 'waiting' : 'solid';
  }

  /** A compare-and-swap update of `o` by `change`, re-read and retried on conflict. */
  private async mutate(r: ResourceInfo, o: KObject, change: (copy: KObject) => void): Promise<void> {
    let current: KObject | undefined = o;
    for (let attempt = 0; current !== undefined; attempt++) {
      const next = structuredClone(current);
      change(next);
      if (JSON.stringify(next.metadata) === JSON.stringify(current.metadata)) return;
      try {
        await this.client.update(r, next);
        return;
      } catch (err) {
        if (isApiError(err, 404)) return;
        if (!isApiError(err, 409) || attempt + 1 >= MAX_CAS_ATTEMPTS) throw err;
      }
      current = await this.live(r, current);
    }
  }
}
