// The generic registry: create, get, list, update, patch and delete of any served resource over the
// Store, with kube-apiserver's semantics (genericregistry.Store + the per-kind strategies):
// server-owned metadata, defaulting and validation, status/main-resource separation, generation,
// managedFields, finalizers, preconditions, dryRun and optimistic concurrency by compare-and-swap.
import { randomUUID } from 'node:crypto';
import { applyDefaults, prepareForUpdate } from '../../api/defaults/index.js';
import { type KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { groupVersion, mustFindResource, type ResourceInfo } from '../../api/resources.js';
import { isStatusError, statusErrors, StatusError, type Status } from '../../api/status.js';
import {
  validateCreate,
  validateStatusUpdate,
  validateUpdate,
  type ValidationOptions,
} from '../../api/validation/index.js';
import { isStoreError, type Store } from '../../storage/store.js';
import { decodeObject, encodeObject, objectKey } from '../codec.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import { checkName, checkNamespace, decodeObjectBody, schemaOf } from './decode.js';
import {
  allowCreateOnUpdate,
  holdsDeletion,
  patchSetsResourceVersion,
  namespaceTerminating,
  admitOnCreate,
  resetStatusOnCreate,
  sameList,
  statusSubresourceMetadata,
} from './kind-rules.js';
import { applyPatch, type PatchType } from './patch.js';
import { planPodDeletion, type PodDeletionPlan } from './pod-deletion.js';
import { scaleOf, withReplicas, type Scale } from './scale.js';
import { bindingRefusal, boundPod, type Binding } from './binding.js';
import { validateScale } from '../../api/validation/replicaset.js';
import { recordUpdate, serverSideApply } from './managed-fields.js';
import { generateName, rfc3339, sameContent, specOf, tracksGeneration } from './object-meta.js';
import type { DeleteOptions, RegistryHooks, RegistryOptions, Subresource, WriteContext } from './types.js';

export type * from './types.js';

const NAMESPACES = mustFindResource('', 'namespaces');
const PODS = mustFindResource('', 'pods');
const IMMEDIATE: PodDeletionPlan = { kind: 'immediate' };
/** kube's NotFound for a scale of a missing object names `deployments/scale` (or replicasets). */
const scaleResource = (r: ResourceInfo): { group: string; resource: string } => ({
  group: r.group,
  resource: `${r.resource}/scale`,
});
/** Namespaces kube-apiserver refuses to delete. */
export const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
/**
 * How often a write without a resourceVersion precondition (a PATCH, a scale, a binding) is re-applied to a
 * fresh read after losing a race to another writer. kube-apiserver's GuaranteedUpdate retries such
 * conflicts until it wins; a bound this high is only a guard against a livelock.
 */
const MAX_PATCH_RETRIES = 100;

export class Registry {
  readonly now: () => number;
  private readonly random: () => number;
  private readonly hooks: RegistryHooks;
  private readonly validation: ValidationOptions;

  constructor(
    readonly store: Store,
    readonly cache: WatchCache,
    opts: RegistryOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.hooks = opts.hooks ?? {};
    this.validation = opts.validation ?? {};
  }

  async get(r: ResourceInfo, namespace: string, name: string): Promise<KObject> {
    const kv = await this.store.get(objectKey(r, namespace, name));
    if (kv === undefined) throw statusErrors.notFound(r, name);
    return decodeObject(kv.value, kv.modRevision);
  }

  private async getOrUndefined(
    r: ResourceInfo,
    namespace: string,
    name: string,
  ): Promise<KObject | undefined> {
    const kv = await this.store.get(objectKey(r, namespace, name));
    return kv === undefined ? undefined : decodeObject(kv.value, kv.modRevision);
  }

  // ---------------------------------------------------------------------------------------- create

  async create(r: ResourceInfo, namespace: string, body: unknown, ctx: WriteContext): Promise<KObject> {
    const obj = decodeObjectBody(r, body, ctx, true);
    checkNamespace(r, obj, namespace);
    if (obj.metadata.resourceVersion !== undefined && obj.metadata.resourceVersion !== '') {
      throw statusErrors.badRequest('resourceVersion should not be set on objects to be created');
    }
    const named = obj.metadata.name !== undefined && obj.metadata.name !== '';
    if (!named && typeof obj.metadata.generateName === 'string' && obj.metadata.generateName !== '') {
      obj.metadata.name = generateName(obj.metadata.generateName, this.random);
    }
    return this.createPrepared(r, namespace, obj, ctx, () =>
      recordUpdate(r, undefined, obj, ctx, this.nowTime()),
    );
  }

  /** Create from an already decoded object (used by create and by apply/update-creates). */
  private async createPrepared(
    r: ResourceInfo,
    namespace: string,
    obj: KObject,
    ctx: WriteContext,
    managed: () => KObject,
  ): Promise<KObject> {
    const meta = obj.metadata;
    if (r.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    if (tracksGeneration(r)) meta.generation = 1;
    else delete meta.generation;
    obj.apiVersion = groupVersion(r);
    obj.kind = r.kind;
    resetStatusOnCreate(r, obj);
    applyDefaults(r, obj);
    admitOnCreate(r, obj);
    this.hooks.prepare?.(r, obj, undefined);
    const errs = validateCreate(r, obj, this.validation);
    if (errs.length > 0) throw statusErrors.invalid({ group: r.group, kind: r.kind }, meta.name ?? '', errs);
    if (r.namespaced) await this.checkNamespaceAcceptsCreates(r, namespace, meta.name ?? '');
    const withManaged = managed();
    const name = meta.name!;
    const undo = await this.hooks.beforeCreate?.(r, withManaged, ctx);
    if (ctx.dryRun) {
      await undo?.();
      return withManaged;
    }
    try {
      const kv = await this.store.create(objectKey(r, namespace, name), encodeObject(withManaged));
      return {
        ...withManaged,
        metadata: { ...withManaged.metadata, resourceVersion: String(kv.modRevision) },
      };
    } catch (err) {
      await undo?.();
      if (isStoreError(err, 'AlreadyExists')) throw statusErrors.alreadyExists(r, name);
      throw err;
    }
  }

  private async checkNamespaceAcceptsCreates(
    r: ResourceInfo,
    namespace: string,
    name: string,
  ): Promise<void> {
    const key = objectKey(NAMESPACES, '', namespace);
    const cached = this.cache.get(NAMESPACES, key);
    if (cached !== undefined && !cached.json.includes('"deletionTimestamp"')) return;
    // The cache may lag a namespace created a moment ago; the store has the last word.
    const kv = await this.store.get(key);
    if (kv === undefined) throw statusErrors.notFound(NAMESPACES, namespace);
    if (decodeObject(kv.value, kv.modRevision).metadata.deletionTimestamp !== undefined) {
      throw namespaceTerminating(r, namespace, name);
    }
  }

  // ---------------------------------------------------------------------------------------- update

  /** PUT. Creates when the object is absent only for kinds that allow it (kube: AllowCreateOnUpdate). */
  async update(
    r: ResourceInfo,
    namespace: string,
    name: string,
    body: unknown,
    ctx: WriteContext,
    subresource: Subresource = '',
  ): Promise<{ object: KObject; created: boolean }> {
    const incoming = decodeObjectBody(r, body, ctx, true);
    checkNamespace(r, incoming, namespace);
    checkName(incoming, name);
    const old = await this.getOrUndefined(r, namespace, name);
    if (old === undefined) {
      if (subresource === '' && allowCreateOnUpdate(r)) {
        incoming.metadata.name = name;
        delete incoming.metadata.resourceVersion;
        const obj = await this.createPrepared(r, namespace, incoming, ctx, () =>
          recordUpdate(r, undefined, incoming, ctx, this.nowTime()),
        );
        return { object: obj, created: true };
      }
      throw statusErrors.notFound(r, name);
    }
    const wanted = incoming.metadata.resourceVersion;
    if (wanted !== undefined && wanted !== '' && wanted !== old.metadata.resourceVersion) {
      throw statusErrors.conflict(r, name);
    }
    const object = await this.writeUpdate(r, old, incoming, ctx, subresource);
    return { object, created: false };
  }

  /**
   * The shared tail of PUT and PATCH: carry over server-owned fields, default, validate, bump
   * generation, record managedFields, and CAS-write against `old`'s revision.
   */
  private async writeUpdate(
    r: ResourceInfo,
    old: KObject,
    incoming: KObject,
    ctx: WriteContext,
    subresource: Subresource,
    managed?: (candidate: KObject) => KObject,
  ): Promise<KObject> {
    let next: KObject;
    if (subresource === 'finalize') {
      // namespaces/{name}/finalize takes only spec.finalizers.
      next = structuredClone(old);
      const want = (incoming.spec as { finalizers?: unknown } | undefined)?.finalizers;
      next.spec = {
        ...((old.spec as object | undefined) ?? {}),
        finalizers: Array.isArray(want) ? want : [],
      };
    } else if (subresource === 'status') {
      // The status subresource takes only status; spec and metadata stay as they are.
      next = { ...structuredClone(old), status: structuredClone(incoming.status) };
      if (incoming.status === undefined) delete next.status;
      statusSubresourceMetadata(r, next, incoming);
    } else {
      next = structuredClone(incoming);
      if (r.hasStatus) {
        if (old.status === undefined) delete next.status;
        else next.status = structuredClone(old.status);
      }
    }
    const meta = next.metadata;
    const om = old.metadata;
    meta.name = om.name!;
    if (r.namespaced) meta.namespace = om.namespace!;
    meta.uid = om.uid!;
    meta.creationTimestamp = om.creationTimestamp ?? null;
    if (om.deletionTimestamp !== undefined) meta.deletionTimestamp = om.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (om.deletionGracePeriodSeconds !== undefined)
      meta.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    if (om.generation !== undefined) meta.generation = om.generation;
    else delete meta.generation;
    meta.resourceVersion = om.resourceVersion!;
    next.apiVersion = groupVersion(r);
    next.kind = r.kind;
    // What a full update leaves out but the server owns (allocated IPs, namespace finalizers) is kept.
    if (subresource === '') prepareForUpdate(r, next, old);
    applyDefaults(r, next);
    if (subresource === '') this.hooks.prepare?.(r, next, old);
    const errs =
      subresource === 'status'
        ? validateStatusUpdate(r, next, old)
        : validateUpdate(r, next, old, this.validation);
    if (errs.length > 0) throw statusErrors.invalid({ group: r.group, kind: r.kind }, om.name ?? '', errs);
    if (tracksGeneration(r) && subresource === '' && specOf(next, r) !== specOf(old, r)) {
      meta.generation = (om.generation ?? 0) + 1;
    }
    const final =
      managed !== undefined
        ? managed(next)
        : recordUpdate(r, old, next, ctx, this.nowTime(), subresource === 'finalize' ? '' : subresource);
    if (sameContent(final, old)) return old;
    const undo = await this.hooks.beforeUpdate?.(r, final, old, ctx);
    const key = objectKey(r, om.namespace ?? '', om.name!);
    if (ctx.dryRun) {
      await undo?.();
      return final;
    }
    let stored: KObject;
    try {
      if (
        final.metadata.deletionTimestamp !== undefined &&
        !holdsDeletion(r, final) &&
        (final.metadata.deletionGracePeriodSeconds ?? 0) === 0
      ) {
        // The last finalizer is gone from an object being deleted: now it really goes. A pod still in
        // its grace period waits for its kubelet's DELETE with grace 0 (kube's shouldDeleteDuringUpdate).
        const kv = await this.store.delete(key, Number(om.resourceVersion));
        const gone = { ...final, metadata: { ...final.metadata, resourceVersion: String(kv.modRevision) } };
        await this.hooks.afterDelete?.(r, gone);
        return gone;
      }
      const kv = await this.store.update(key, encodeObject(final), Number(om.resourceVersion));
      stored = { ...final, metadata: { ...final.metadata, resourceVersion: String(kv.modRevision) } };
    } catch (err) {
      await undo?.();
      if (isStoreError(err, 'Conflict')) throw statusErrors.conflict(r, om.name!);
      if (isStoreError(err, 'NotFound')) throw statusErrors.notFound(r, om.name!);
      throw err;
    }
    // Only once the update is stored does the old object let go of what the new one no longer holds.
    await this.hooks.afterUpdate?.(r, stored, old);
    return stored;
  }

  // ----------------------------------------------------------------------------------------- patch

  async patch(
    r: ResourceInfo,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    ctx: WriteContext,
    opts: { subresource: '' | 'status'; force: boolean },
  ): Promise<{ object: KObject; created: boolean }> {
    if (type === 'apply') return this.apply(r, namespace, name, patch, ctx, opts);
    for (let attempt = 0; ; attempt++) {
      const old = await this.get(r, namespace, name);
      const patched = applyPatch(type, old, patch, schemaOf(r));
      if (!isPlainObject(patched)) throw statusErrors.badRequest('the patch did not produce an object');
      const obj = patched as unknown as KObject;
      if (!isPlainObject(obj.metadata)) obj.metadata = {};
      const incoming = decodeObjectBody(r, obj, ctx);
      checkName(incoming, name);
      if (
        r.namespaced &&
        incoming.metadata.namespace !== undefined &&
        incoming.metadata.namespace !== namespace
      ) {
        throw statusErrors.badRequest(
          'the namespace of the object does not match the namespace on the request',
        );
      }
      const wanted = incoming.metadata.resourceVersion;
      const pinned = wanted !== undefined && wanted !== old.metadata.resourceVersion;
      if (pinned) throw statusErrors.conflict(r, name);
      try {
        return { object: await this.writeUpdate(r, old, incoming, ctx, opts.subresource), created: false };
      } catch (err) {
        // A patch without a resourceVersion precondition is re-applied to the newer object (kube does too).
        const precondition = patchSetsResourceVersion(patch);
        if (
          err instanceof StatusError &&
          err.reason === 'Conflict' &&
          !precondition &&
          attempt < MAX_PATCH_RETRIES
        ) {
          continue;
        }
        throw err;
      }
    }
  }

  private async apply(
    r: ResourceInfo,
    namespace: string,
    name: string,
    patch: unknown,
    ctx: WriteContext,
    opts: { subresource: '' | 'status'; force: boolean },
  ): Promise<{ object: KObject; created: boolean }> {
    if (!isPlainObject(patch)) throw statusErrors.badRequest('the apply configuration must be an object');
    const applied = decodeObjectBody(r, patch, ctx);
    checkName(applied, name, true);
    if (
      r.namespaced &&
      applied.metadata.namespace !== undefined &&
      applied.metadata.namespace !== namespace
    ) {
      throw statusErrors.badRequest(
        'the namespace of the object does not match the namespace on the request',
      );
    }
    for (let attempt = 0; ; attempt++) {
      const old = await this.getOrUndefined(r, namespace, name);
      const now = this.nowTime();
      if (old === undefined) {
        if (opts.subresource !== '') throw statusErrors.notFound(r, name);
        const created = serverSideApply(r, undefined, applied, ctx.fieldManager, opts.force, now, '');
        const obj = await this.createPrepared(r, namespace, created, ctx, () => created);
        return { object: obj, created: true };
      }
      const merged = serverSideApply(r, old, applied, ctx.fieldManager, opts.force, now, opts.subresource);
      try {
        const object = await this.writeUpdate(r, old, merged, ctx, opts.subresource, (candidate) => ({
          ...candidate,
          metadata: { ...candidate.metadata, managedFields: merged.metadata.managedFields ?? [] },
        }));
        return { object, created: false };
      } catch (err) {
        if (
          err instanceof StatusError &&
          err.reason === 'Conflict' &&
          err.status.details?.causes === undefined
        ) {
          if (attempt < MAX_PATCH_RETRIES) continue;
        }
        throw err;
      }
    }
  }

  // ----------------------------------------------------------------------------------------- scale

  /** GET .../{deployments|replicasets}/{name}/scale. */
  async getScale(r: ResourceInfo, namespace: string, name: string): Promise<Scale> {
    const obj = await this.getOrUndefined(r, namespace, name);
    if (obj === undefined) throw statusErrors.notFound(scaleResource(r), name);
    return scaleOf(obj);
  }

  /**
   * PUT or PATCH of /scale: `change` turns the current Scale into the wanted one (a decoded body, or
   * the current Scale patched). Only spec.replicas is taken; a resourceVersion in it is a precondition.
   * The object is then updated as through the main resource (validation, generation, managedFields
   * with subresource `scale`), retrying on a conflict when no resourceVersion was given.
   */
  async updateScale(
    r: ResourceInfo,
    namespace: string,
    name: string,
    ctx: WriteContext,
    change: (current: Scale) => unknown,
  ): Promise<Scale> {
    for (let attempt = 0; ; attempt++) {
      const old = await this.getOrUndefined(r, namespace, name);
      if (old === undefined) throw statusErrors.notFound(scaleResource(r), name);
      const wanted = change(scaleOf(old));
      const errs = validateScale(wanted);
      const meta = (isPlainObject(wanted) && isPlainObject(wanted['metadata']) ? wanted['metadata'] : {}) as {
        name?: unknown;
        resourceVersion?: unknown;
      };
      if (typeof meta.name === 'string' && meta.name !== '' && meta.name !== name) {
        throw statusErrors.badRequest('the name of the object does not match the name on the request');
      }
      if (errs.length > 0) throw statusErrors.invalid({ group: 'autoscaling', kind: 'Scale' }, name, errs);
      const rv = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : '';
      if (rv !== '' && rv !== old.metadata.resourceVersion) throw statusErrors.conflict(r, name);
      const spec = (isPlainObject(wanted) && isPlainObject(wanted['spec']) ? wanted['spec'] : {}) as {
        replicas?: unknown;
      };
      const replicas = typeof spec.replicas === 'number' ? spec.replicas : 0;
      try {
        const stored = await this.writeUpdate(r, old, withReplicas(old, replicas), ctx, '', (candidate) =>
          recordUpdate(r, old, candidate, ctx, this.nowTime(), 'scale'),
        );
        return scaleOf(stored);
      } catch (err) {
        if (isStatusError(err, 'Conflict') && rv === '' && attempt < MAX_PATCH_RETRIES) continue;
        throw err;
      }
    }
  }

  // --------------------------------------------------------------------------------------- binding

  /**
   * POST pods/{name}/binding (and the legacy bindings): sets spec.nodeName once, merges the binding's
   * annotations and sets PodScheduled, written straight to storage as kube's setPodHostAndAnnotations
   * does (no pod strategy: nodeName is otherwise immutable).
   */
  async bind(namespace: string, binding: Binding, ctx: WriteContext): Promise<KObject> {
    for (let attempt = 0; ; attempt++) {
      const old = await this.getOrUndefined(PODS, namespace, binding.name);
      if (old === undefined) throw statusErrors.notFound(PODS, binding.name);
      const refusal = bindingRefusal(old, binding);
      if (refusal !== undefined) throw refusal;
      const next = boundPod(old, binding, this.nowTime());
      if (ctx.dryRun) return next;
      try {
        const kv = await this.store.update(
          objectKey(PODS, namespace, binding.name),
          encodeObject(next),
          Number(old.metadata.resourceVersion),
        );
        return { ...next, metadata: { ...next.metadata, resourceVersion: String(kv.modRevision) } };
      } catch (err) {
        if (isStoreError(err, 'Conflict') && attempt < MAX_PATCH_RETRIES) continue;
        if (isStoreError(err, 'Conflict')) throw statusErrors.conflict(PODS, binding.name);
        if (isStoreError(err, 'NotFound')) throw statusErrors.notFound(PODS, binding.name);
        throw err;
      }
    }
  }

  // ---------------------------------------------------------------------------------------- delete

  async delete(
    r: ResourceInfo,
    namespace: string,
    name: string,
    opts: DeleteOptions,
    ctx: WriteContext,
  ): Promise<{ object: KObject; deleted: boolean }> {
    if (r === NAMESPACES && IMMORTAL_NAMESPACES.has(name)) {
      throw statusErrors.forbidden(r, name, 'this namespace may not be deleted');
    }
    for (let attempt = 0; ; attempt++) {
      const old = await this.get(r, namespace, name);
      const pre = opts.preconditions;
      if (pre?.uid !== undefined && pre.uid !== old.metadata.uid) {
        throw statusErrors.conflict(
          r,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid ?? ''}`,
        );
      }
      if (pre?.resourceVersion !== undefined && pre.resourceVersion !== old.metadata.resourceVersion) {
        throw statusErrors.conflict(
          r,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion ?? ''}`,
        );
      }
      // kube's deletionFinalizersForGarbageCollection: an explicit policy replaces the GC finalizers the
      // object carries (kubectl always sends one); without a policy they stay as they are.
      const policy = opts.propagationPolicy;
      const finalizers = (old.metadata.finalizers ?? []).filter(
        (f) => policy === undefined || (f !== 'orphan' && f !== 'foregroundDeletion'),
      );
      if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion'))
        finalizers.push('foregroundDeletion');
      if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
      const nsFinalizers =
        r === NAMESPACES
          ? (((old.spec as { finalizers?: unknown[] } | undefined)?.finalizers ?? []) as string[])
          : [];
      const graceful = finalizers.length > 0 || nsFinalizers.length > 0;
      const key = objectKey(r, namespace, name);
      const plan = r === PODS ? planPodDeletion(old, opts.gracePeriodSeconds, this.now()) : IMMEDIATE;
      try {
        if (plan.kind === 'pending') {
          // Already terminating with this grace or a shorter one: only a new propagationPolicy changes
          // anything (kube's deletionFinalizersForGarbageCollection runs on every DELETE).
          if (sameList(finalizers, old.metadata.finalizers)) return { object: old, deleted: false };
          const next = structuredClone(old);
          next.metadata.finalizers = finalizers;
          if (finalizers.length === 0) delete next.metadata.finalizers;
          if (ctx.dryRun) return { object: next, deleted: false };
          const kv = await this.store.update(key, encodeObject(next), Number(old.metadata.resourceVersion));
          return {
            object: { ...next, metadata: { ...next.metadata, resourceVersion: String(kv.modRevision) } },
            deleted: false,
          };
        }
        if (plan.kind === 'graceful') {
          // A pod on a node: mark it and let the node's kubelet confirm with grace 0 (rest.BeforeDelete).
          const next = structuredClone(old);
          const gen = next.metadata.generation;
          if (next.metadata.deletionTimestamp === undefined && gen !== undefined && gen > 0) {
            next.metadata.generation = gen + 1;
          }
          next.metadata.deletionTimestamp = plan.deletionTimestamp;
          next.metadata.deletionGracePeriodSeconds = plan.grace;
          next.metadata.finalizers = finalizers;
          if (finalizers.length === 0) delete next.metadata.finalizers;
          const goes = plan.grace === 0 && finalizers.length === 0;
          if (ctx.dryRun) return { object: next, deleted: goes };
          const kv = await this.store.update(key, encodeObject(next), Number(old.metadata.resourceVersion));
          const stored = {
            ...next,
            metadata: { ...next.metadata, resourceVersion: String(kv.modRevision) },
          };
          if (!goes) return { object: stored, deleted: false };
          // Grace 0: the update above, then the removal (watchers see MODIFIED, then DELETED). Should
          // the removal lose a race, the retry finds a pod terminating with grace 0 and removes it.
          const gone = await this.store.delete(key, kv.modRevision);
          const object = {
            ...stored,
            metadata: { ...stored.metadata, resourceVersion: String(gone.modRevision) },
          };
          await this.hooks.afterDelete?.(r, object);
          return { object, deleted: true };
        }
        if (graceful) {
          // Finalizers hold the object: mark it for deletion and let their owners let go.
          if (old.metadata.deletionTimestamp !== undefined && sameList(finalizers, old.metadata.finalizers)) {
            return { object: old, deleted: false };
          }
          const next = structuredClone(old);
          // kube's markAsDeleting: the first deletion bumps a tracked generation.
          const gen = next.metadata.generation;
          if (next.metadata.deletionTimestamp === undefined && gen !== undefined && gen > 0) {
            next.metadata.generation = gen + 1;
          }
          next.metadata.deletionTimestamp ??= rfc3339(this.now());
          next.metadata.deletionGracePeriodSeconds ??= 0;
          next.metadata.finalizers = finalizers;
          if (r === NAMESPACES)
            next.status = { ...((next.status as object | undefined) ?? {}), phase: 'Terminating' };
          if (ctx.dryRun) return { object: next, deleted: false };
          const kv = await this.store.update(key, encodeObject(next), Number(old.metadata.resourceVersion));
          return {
            object: { ...next, metadata: { ...next.metadata, resourceVersion: String(kv.modRevision) } },
            deleted: false,
          };
        }
        if (ctx.dryRun) return { object: old, deleted: true };
        const kv = await this.store.delete(key, Number(old.metadata.resourceVersion));
        const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(kv.modRevision) } };
        await this.hooks.afterDelete?.(r, gone);
        return { object: gone, deleted: true };
      } catch (err) {
        if (
          isStoreError(err, 'Conflict') &&
          pre?.resourceVersion === undefined &&
          attempt < MAX_PATCH_RETRIES
        )
          continue;
        if (isStoreError(err, 'Conflict')) throw statusErrors.conflict(r, name);
        if (isStoreError(err, 'NotFound')) throw statusErrors.notFound(r, name);
        throw err;
      }
    }
  }

  // --------------------------------------------------------------------------------------- helpers

  nowTime(): string {
    return rfc3339(this.now());
  }
}

export type { Status };
