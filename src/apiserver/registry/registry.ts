// The generic registry: create, get, list, update, patch and delete of any served resource over the
// Store, with kube-apiserver's semantics (genericregistry.Store + the per-kind strategies):
// server-owned metadata, defaulting and validation, status/main-resource separation, generation,
// managedFields, finalizers, preconditions, dryRun and optimistic concurrency by compare-and-swap.
import { randomUUID } from 'node:crypto';
import { applyDefaults, prepareForUpdate } from '../../api/defaults/index.js';
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { mustFindResource, type ResourceInfo } from '../../api/resources.js';
import { isStatusError, statusErrors } from '../../api/status.js';
import {
  validateCreate,
  validateStatusUpdate,
  validateUpdate,
  type ValidationOptions,
} from '../../api/validation/index.js';
import { isStoreError, type Store } from '../../storage/store.js';
import { decodeObject, encodeObject, objectKey } from '../codec.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import { checkName, checkNamespace, checkPatchNamespace, decodeObjectBody, schemaOf } from './decode.js';
import {
  allowCreateOnUpdate,
  holdsDeletion,
  patchSetsResourceVersion,
  admitOnCreate,
  resetStatusOnCreate,
} from './kind-rules.js';
import { patchedObject, type PatchType } from './patch.js';
import { objectForUpdate } from './update-object.js';
import { IMMORTAL_NAMESPACES, planDelete } from './delete-plan.js';
import { guaranteedUpdate, storeWrite, type UpdateAttempt } from './guaranteed-update.js';
import { scaleOf, scaleRequest, scaleResource, withReplicas, type Scale } from './scale.js';
import { checkNamespaceAcceptsCreates } from './namespace-admission.js';
import { checkNodeRestriction } from './node-restriction.js';
import type { RequestAttributes } from '../auth/types.js';
import { checkCreateOnUpdate } from './create-on-update.js';
import {
  admitCsr,
  fillRequester,
  signerPermission,
  type SignerPermission,
} from './certificate-signing-request.js';
import type { CertificateRequestParser } from '../../api/certificate-request.js';
import { bindPod, type Binding } from './binding.js';
import { recordUpdate, serverSideApply } from './managed-fields.js';
import {
  atRevision,
  fillCreateMetadata,
  withGeneratedName,
  rfc3339,
  sameContent,
  specOf,
  tracksGeneration,
} from './object-meta.js';
import type { DeleteOptions, RegistryHooks, RegistryOptions, Subresource, WriteContext } from './types.js';

export type * from './types.js';

const NAMESPACES = mustFindResource('', 'namespaces');

export class Registry {
  readonly now: () => number;
  private readonly random: () => number;
  private readonly hooks: RegistryHooks;
  private readonly validation: ValidationOptions;
  private readonly signers: SignerPermission | undefined;
  private readonly authorize: ((attrs: RequestAttributes) => boolean) | undefined;

  constructor(
    readonly store: Store,
    readonly cache: WatchCache,
    opts: RegistryOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.hooks = opts.hooks ?? {};
    this.validation = opts.validation ?? {};
    this.signers = opts.authorize === undefined ? undefined : signerPermission(opts.authorize);
    this.authorize = opts.authorize;
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
    const obj = decodeObjectBody(r, body, ctx, 'body');
    checkNamespace(r, obj, namespace);
    if (obj.metadata.resourceVersion !== undefined && obj.metadata.resourceVersion !== '') {
      throw statusErrors.badRequest('resourceVersion should not be set on objects to be created');
    }
    return withGeneratedName(obj, this.random, (candidate) =>
      this.createPrepared(r, namespace, candidate, ctx, () =>
        recordUpdate(r, undefined, candidate, ctx, this.nowTime()),
      ),
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
    fillCreateMetadata(r, obj, namespace, randomUUID(), this.now());
    resetStatusOnCreate(r, obj);
    fillRequester(r, obj, ctx.user);
    applyDefaults(r, obj);
    admitOnCreate(r, obj);
    checkNodeRestriction(this.cache, ctx, { operation: 'create', r, subresource: '', object: obj });
    admitCsr(r, obj, undefined, ctx.user, this.csrAdmission());
    this.hooks.prepare?.(r, obj, undefined);
    const errs = validateCreate(r, obj, this.validation);
    if (errs.length > 0) throw statusErrors.invalid({ group: r.group, kind: r.kind }, meta.name ?? '', errs);
    if (r.namespaced)
      await checkNamespaceAcceptsCreates(this.store, this.cache, r, namespace, meta.name ?? '');
    const withManaged = managed();
    const name = meta.name!;
    const undo = await this.hooks.beforeCreate?.(r, withManaged, ctx);
    if (ctx.dryRun) {
      await undo?.();
      return withManaged;
    }
    try {
      const kv = await this.store.create(objectKey(r, namespace, name), encodeObject(withManaged));
      return atRevision(withManaged, kv.modRevision);
    } catch (err) {
      await undo?.();
      if (isStoreError(err, 'AlreadyExists')) throw statusErrors.alreadyExists(r, name);
      throw err;
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
    const incoming = decodeObjectBody(r, body, ctx, 'body');
    checkNamespace(r, incoming, namespace);
    checkName(incoming, name);
    const old = await this.getOrUndefined(r, namespace, name);
    if (old === undefined) {
      if (subresource === '' && allowCreateOnUpdate(r)) {
        checkCreateOnUpdate(this.authorize, r, namespace, name, ctx);
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
    const next = objectForUpdate(r, old, incoming, subresource);
    const meta = next.metadata;
    const om = old.metadata;
    // What a full update leaves out but the server owns (allocated IPs, namespace finalizers) is kept.
    if (subresource === '') prepareForUpdate(r, next, old);
    applyDefaults(r, next);
    checkNodeRestriction(this.cache, ctx, { operation: 'update', r, subresource, object: next, old });
    if (subresource === '') this.hooks.prepare?.(r, next, old);
    const errs =
      subresource === 'status' || subresource === 'approval'
        ? validateStatusUpdate(r, next, old)
        : validateUpdate(r, next, old, this.validation);
    if (errs.length > 0) throw statusErrors.invalid({ group: r.group, kind: r.kind }, om.name ?? '', errs);
    admitCsr(r, next, old, ctx.user, { ...this.csrAdmission(), subresource });
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
        return await this.removeAt(r, key, final, Number(om.resourceVersion));
      }
      const kv = await this.store.update(key, encodeObject(final), Number(om.resourceVersion));
      stored = atRevision(final, kv.modRevision);
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
    opts: { subresource: '' | 'status' | 'approval'; force: boolean },
  ): Promise<{ object: KObject; created: boolean }> {
    if (type === 'apply') return this.apply(r, namespace, name, patch, ctx, opts);
    // A patch without a resourceVersion precondition is re-applied to the newer object (kube does too).
    const pinned = patchSetsResourceVersion(patch);
    return guaranteedUpdate(
      () => this.get(r, namespace, name),
      (old) => {
        const incoming = decodeObjectBody(r, patchedObject(type, old, patch, schemaOf(r)), ctx);
        checkName(incoming, name);
        checkPatchNamespace(r, incoming, namespace);
        const wanted = incoming.metadata.resourceVersion;
        if (wanted !== undefined && wanted !== old.metadata.resourceVersion)
          throw statusErrors.conflict(r, name);
        return {
          write: async () => ({
            object: await this.writeUpdate(r, old, incoming, ctx, opts.subresource),
            created: false,
          }),
          pinned,
        };
      },
      (err) => isStatusError(err, 'Conflict'),
    );
  }

  private async apply(
    r: ResourceInfo,
    namespace: string,
    name: string,
    patch: unknown,
    ctx: WriteContext,
    opts: { subresource: '' | 'status' | 'approval'; force: boolean },
  ): Promise<{ object: KObject; created: boolean }> {
    if (!isPlainObject(patch)) throw statusErrors.badRequest('the apply configuration must be an object');
    const applied = decodeObjectBody(r, patch, ctx, 'apply');
    checkName(applied, name, true);
    checkPatchNamespace(r, applied, namespace);
    return guaranteedUpdate<KObject | undefined, { object: KObject; created: boolean }>(
      () => this.getOrUndefined(r, namespace, name),
      async (old) => {
        const now = this.nowTime();
        if (old === undefined) {
          if (opts.subresource !== '') throw statusErrors.notFound(r, name);
          checkCreateOnUpdate(this.authorize, r, namespace, name, ctx);
          const created = serverSideApply(r, undefined, applied, ctx.fieldManager, opts.force, now, '');
          const obj = await this.createPrepared(r, namespace, created, ctx, () => created);
          return { done: { object: obj, created: true } };
        }
        const merged = serverSideApply(r, old, applied, ctx.fieldManager, opts.force, now, opts.subresource);
        return {
          write: async () => {
            const object = await this.writeUpdate(r, old, merged, ctx, opts.subresource, (candidate) => ({
              ...candidate,
              metadata: { ...candidate.metadata, managedFields: merged.metadata.managedFields ?? [] },
            }));
            return { object, created: false };
          },
        };
      },
      // A conflict between field managers (it lists its causes) is the answer, not a lost race.
      (err) => isStatusError(err, 'Conflict') && err.status.details?.causes === undefined,
    );
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
    return guaranteedUpdate(
      () => this.getOrUndefined(r, namespace, name),
      (old) => {
        if (old === undefined) throw statusErrors.notFound(scaleResource(r), name);
        const { replicas, resourceVersion: rv } = scaleRequest(name, change(scaleOf(old)));
        if (rv !== '' && rv !== old.metadata.resourceVersion) throw statusErrors.conflict(r, name);
        return {
          write: async () => {
            const stored = await this.writeUpdate(r, old, withReplicas(old, replicas), ctx, '', (candidate) =>
              recordUpdate(r, old, candidate, ctx, this.nowTime(), 'scale'),
            );
            return scaleOf(stored);
          },
          pinned: rv !== '',
        };
      },
      (err) => isStatusError(err, 'Conflict'),
    );
  }

  // --------------------------------------------------------------------------------------- binding

  /** POST pods/{name}/binding (and the legacy bindings), straight to storage: see bindPod. */
  async bind(namespace: string, binding: Binding, ctx: WriteContext): Promise<KObject> {
    return bindPod(this.store, namespace, binding, ctx, () => this.nowTime());
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
    const key = objectKey(r, namespace, name);
    // With a resourceVersion precondition a lost race is the answer; without one the DELETE retries.
    const pinned = opts.preconditions?.resourceVersion !== undefined;
    return guaranteedUpdate(
      () => this.get(r, namespace, name),
      (old): UpdateAttempt<{ object: KObject; deleted: boolean }> => {
        checkNodeRestriction(this.cache, ctx, { operation: 'delete', r, subresource: '', old });
        const plan = planDelete(r, old, opts, this.now());
        switch (plan.kind) {
          case 'precondition-failed':
            throw statusErrors.conflict(r, name, plan.message);
          case 'unchanged':
            return { done: { object: old, deleted: false } };
          case 'update': {
            const next = plan.object;
            if (ctx.dryRun) return { done: { object: next, deleted: plan.thenRemove } };
            return {
              write: () =>
                storeWrite(r, name, async () => {
                  const kv = await this.store.update(
                    key,
                    encodeObject(next),
                    Number(old.metadata.resourceVersion),
                  );
                  const stored = atRevision(next, kv.modRevision);
                  if (!plan.thenRemove) return { object: stored, deleted: false };
                  return { object: await this.removeAt(r, key, stored, kv.modRevision), deleted: true };
                }),
              pinned,
            };
          }
          case 'remove':
            if (ctx.dryRun) return { done: { object: old, deleted: true } };
            return {
              write: () =>
                storeWrite(r, name, async () => ({
                  object: await this.removeAt(r, key, old, Number(old.metadata.resourceVersion)),
                  deleted: true,
                })),
              pinned,
            };
        }
      },
      (err) => isStatusError(err, 'Conflict'),
    );
  }

  // --------------------------------------------------------------------------------------- helpers

  /** Removes `obj`, stored at `key`, at `revision`; then the hooks let go of what it held. */
  private async removeAt(r: ResourceInfo, key: string, obj: KObject, revision: number): Promise<KObject> {
    const kv = await this.store.delete(key, revision);
    const gone = atRevision(obj, kv.modRevision);
    await this.hooks.afterDelete?.(r, gone);
    return gone;
  }

  private csrAdmission(): { may?: SignerPermission; parse?: CertificateRequestParser } {
    const parse = this.validation.parseCertificateRequest;
    return {
      ...(this.signers === undefined ? {} : { may: this.signers }),
      ...(parse === undefined ? {} : { parse }),
    };
  }

  nowTime(): string {
    return rfc3339(this.now());
  }
}
