// Server-side apply and field ownership, as kube-apiserver does them (structured-merge-diff behind
// its field manager), seen from the client:
//
// apply: the configuration's fields become the applier's (operation Apply). Its values are merged
//   into the live object. Fields the applier set last time and no longer sets are removed, unless
//   another manager owns them too. Setting a field another manager owns to a different value is a
//   conflict (409) unless forced, which takes the field away from that manager; setting it to the
//   value it has shares it.
// updateManagedFields: for every other write (create, update, patch), whoever changed or added a
//   field owns it from then on (operation Update), taking it from everyone else; removed fields are
//   owned by no one.
import type { KObject } from '../../api/object.js';
import type { Schema } from '../../api/schema/schema.js';
import { StatusError, type StatusCause } from '../../api/status.js';
import type { Json } from '../patch/merge-patch.js';
import { ApplyError } from './errors.js';
import { FieldSet, field, pathToString, type FieldPath } from './fieldset.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  decodeManagedFieldsOrEmpty,
  encodeManagedFields,
  identityKey,
  isResetManagedFields,
  ManagedFieldsError,
  type Managed,
  type ManagedFields,
  type ManagerIdentity,
  type Operation,
} from './managed-fields.js';
import {
  clone,
  collectFields,
  compare,
  deepEqual,
  dropAppliedNulls,
  isObj,
  mergeObjects,
  removePaths,
  setOwn,
  withNamedFieldsAsMembers,
  type JsonObject,
} from './typed.js';

/**
 * Fields neither tracked nor changed by a write: each entry is a top-level field name or a path of
 * field names (`['metadata', 'labels']`); everything below it is ignored too. kube-apiserver's
 * "reset fields": `status` for the main resource of a kind with a status subresource, `spec` for
 * the status subresource.
 */
export type IgnoreSpec = ReadonlyArray<string | readonly string[]>;

/**
 * The default when the caller gives none: `status` for the main resource, `spec` for the status
 * subresource, nothing for other subresources. A kind without a status subresource (a custom
 * resource that does not declare one) must pass `[]`, or a `status` it sends is dropped.
 */
export function defaultIgnore(subresource: string | undefined): IgnoreSpec {
  if (subresource === undefined || subresource === '') return ['status'];
  if (subresource === 'status') return ['spec'];
  return [];
}

const toIgnoreSet = (spec: IgnoreSpec): FieldSet =>
  FieldSet.fromPaths(spec.map((p) => (typeof p === 'string' ? [p] : p).map((name) => field(name))));

const path = (...names: string[]): FieldPath => names.map((n) => field(n));

/** Paths kube-apiserver never records as owned (exact paths: `metadata.labels` is still tracked). */
const STRIPPED = FieldSet.fromPaths([
  path('apiVersion'),
  path('kind'),
  path('metadata'),
  path('metadata', 'name'),
  path('metadata', 'namespace'),
  path('metadata', 'creationTimestamp'),
  path('metadata', 'selfLink'),
  path('metadata', 'uid'),
  path('metadata', 'clusterName'),
  path('metadata', 'generation'),
  path('metadata', 'managedFields'),
  path('metadata', 'resourceVersion'),
]);
const STRIPPED_SUBTREES = FieldSet.fromPaths([path('metadata', 'managedFields')]);

/** Never removed by pruning, whatever the applier stopped setting. */
const PROTECTED = STRIPPED;

/** Metadata only the server writes: an applied configuration never changes these. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
] as const;

/** The manager kube-apiserver records an object's fields under when it is first applied to without any. */
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';

/** A set as stored: without the stripped paths and without anything ignored. */
const clean = (set: FieldSet, ignored: FieldSet): FieldSet =>
  set.difference(STRIPPED).recursiveDifference(STRIPPED_SUBTREES.union(ignored));

/** A JSON copy of the object without metadata.managedFields. */
function body(obj: KObject): JsonObject {
  const out = clone(obj as unknown as JsonObject);
  const meta = out['metadata'];
  if (isObj(meta)) delete meta['managedFields'];
  return out;
}

/** The object with managedFields set last in its metadata (or removed when there are none). */
function withManagedFields(obj: JsonObject, entries: ReturnType<typeof encodeManagedFields>): KObject {
  const meta: JsonObject = isObj(obj['metadata']) ? obj['metadata'] : {};
  delete meta['managedFields'];
  if (entries !== undefined) setOwn(meta, 'managedFields', entries as unknown as Json);
  setOwn(obj, 'metadata', meta);
  return obj as unknown as KObject;
}

// ---------------------------------------------------------------------------------------------------
// Conflicts.

export interface Conflict {
  /** The manager name, as in its managedFields entry. */
  readonly manager: string;
  readonly operation: Operation;
  readonly apiVersion: string;
  readonly subresource?: string;
  /** `.spec.ports[port=80,protocol="TCP"].targetPort` */
  readonly field: string;
  readonly path: FieldPath;
  /** `conflict with "kube-controller-manager" using v1`: the StatusCause message. */
  readonly message: string;
}

/** `"m"`, `"m" using v1` for an Update manager, `"m" with subresource "status" using v1`. */
export function describeManager(id: ManagerIdentity): string {
  let out = JSON.stringify(id.manager);
  if (id.subresource !== undefined && id.subresource !== '')
    out += ` with subresource ${JSON.stringify(id.subresource)}`;
  if (id.operation === 'Update') out += ` using ${id.apiVersion}`;
  return out;
}

function conflictsWith(m: Managed, set: FieldSet): Conflict[] {
  const who = describeManager(m);
  return set.paths().map((p) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.subresource === undefined ? {} : { subresource: m.subresource }),
    field: pathToString(p),
    path: p,
    message: `conflict with ${who}`,
  }));
}

/**
 * kube-apiserver's 409 message: `Apply failed with 1 conflict: conflict with "m" using v1: .spec.x`,
 * or for more, grouped by manager (sorted):
 * `Apply failed with 2 conflicts: conflicts with "a":\n- .spec.x\nconflicts with "b" using v1:\n- .spec.y`.
 */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  const [only] = conflicts;
  if (conflicts.length === 1 && only !== undefined)
    return `Apply failed with 1 conflict: ${only.message}: ${only.field}`;
  const groups = new Map<string, { who: string; fields: string[] }>();
  for (const c of conflicts) {
    const k = identityKey(c);
    let g = groups.get(k);
    if (g === undefined) {
      g = { who: describeManager(c), fields: [] };
      groups.set(k, g);
    }
    g.fields.push(c.field);
  }
  const lines: string[] = [];
  for (const k of [...groups.keys()].sort()) {
    const g = groups.get(k) as { who: string; fields: string[] };
    lines.push(`conflicts with ${g.who}:`, ...g.fields.map((f) => `- ${f}`));
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** The Status causes kube-apiserver lists, one per conflict. */
export function conflictCauses(conflicts: readonly Conflict[]): StatusCause[] {
  return conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: c.message, field: c.field }));
}

/** The 409 Conflict kube-apiserver answers an apply with conflicts with. */
export function applyConflictError(conflicts: readonly Conflict[]): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: conflictMessage(conflicts),
    reason: 'Conflict',
    details: { causes: conflictCauses(conflicts) },
    code: 409,
  });
}

// ---------------------------------------------------------------------------------------------------
// fieldsOf.

export interface FieldsOfOptions {
  /** Top-level fields (or field paths) to leave out; none by default. */
  readonly ignore?: IgnoreSpec;
  /**
   * Leave out what kube-apiserver never tracks: apiVersion, kind, metadata.name, namespace, uid,
   * resourceVersion, generation, creationTimestamp, selfLink, managedFields. Default true.
   */
  readonly stripSystemFields?: boolean;
}

/**
 * The fields an object sets, as ownership records them: every leaf value, list item and map key,
 * and each struct field set to null or `{}`.
 */
export function fieldsOf(
  obj: KObject | JsonObject,
  schema: Schema | undefined,
  options: FieldsOfOptions = {},
): FieldSet {
  const all = collectFields(clone(obj as unknown as JsonObject), schema, false);
  const ignored = toIgnoreSet(options.ignore ?? []);
  return options.stripSystemFields === false ? all.recursiveDifference(ignored) : clean(all, ignored);
}

// ---------------------------------------------------------------------------------------------------
// apply.

export interface ApplyOptions {
  /** The stored object, or undefined when the apply creates it. */
  readonly live: KObject | undefined;
  /** The configuration sent (application/apply-patch+yaml), as JSON. */
  readonly applied: KObject;
  /** fieldManager; required by kube-apiserver for apply. */
  readonly manager: string;
  /** ?force=true (kubectl --force-conflicts). */
  readonly force: boolean;
  /** The version the request is made in: `v1`, `apps/v1`; recorded in the applier's entry. */
  readonly apiVersion: string;
  /** RFC 3339 time for the entries this write touches. */
  readonly now: string;
  readonly schema: Schema;
  readonly subresource?: string;
  /** See IgnoreSpec; defaultIgnore(subresource) when not given. */
  readonly ignore?: IgnoreSpec;
}

export type ApplyResult =
  { readonly ok: true; readonly object: KObject } | { readonly ok: false; readonly conflicts: Conflict[] };

/**
 * Applies a configuration. Returns the new object with metadata.managedFields updated, or the
 * conflicts. Throws ApplyError for a configuration kube-apiserver refuses outright.
 *
 * Server-written metadata (uid, resourceVersion, generation, creationTimestamp, deletion fields) is
 * carried over from the live object, never taken from the configuration; the caller sets those and
 * checks any resourceVersion precondition. Defaulting and validation of the result are the caller's.
 */
export function apply(opts: ApplyOptions): ApplyResult {
  const { live, applied, manager, force, apiVersion, now, schema } = opts;
  const subresource = opts.subresource === '' ? undefined : opts.subresource;
  const appliedMeta = (applied as { metadata?: unknown }).metadata;
  if (
    isObj(appliedMeta) &&
    appliedMeta['managedFields'] !== undefined &&
    appliedMeta['managedFields'] !== null
  )
    throw new ApplyError('metadata.managedFields must be nil', 'BadRequest');
  if (typeof applied.apiVersion === 'string' && applied.apiVersion !== apiVersion)
    throw new ApplyError(
      `Incorrect version specified in apply patch. Specified patch version: ${applied.apiVersion}, expected: ${apiVersion}`,
      'BadRequest',
    );
  const ignored = toIgnoreSet(opts.ignore ?? defaultIgnore(subresource));

  const applier: ManagerIdentity = {
    manager,
    operation: 'Apply',
    apiVersion,
    ...(subresource === undefined ? {} : { subresource }),
  };
  const applierKey = identityKey(applier);

  const managed: ManagedFields =
    live === undefined ? new Map() : decodeManagedFieldsOrEmpty(live.metadata?.managedFields);
  const liveBody = live === undefined ? undefined : body(live);

  // An object nobody owns anything of yet: what it holds is recorded as one Update first, so that an
  // apply that changes it conflicts.
  if (liveBody !== undefined && managed.size === 0) {
    const c = compare(undefined, liveBody, schema);
    const fields = clean(c.added.union(c.modified), ignored);
    const id: ManagerIdentity = {
      manager: BEFORE_FIRST_APPLY_MANAGER,
      operation: 'Update',
      apiVersion,
      ...(subresource === undefined ? {} : { subresource }),
    };
    if (!fields.isEmpty()) managed.set(identityKey(id), { ...id, time: now, fields });
  }

  const config = removePaths(body(applied), ignored, schema);
  const configFields = collectFields(config, schema, true);
  const applierFields = clean(configFields, ignored);
  const previous = managed.get(applierKey);
  const lastFields = previous?.fields.recursiveDifference(ignored) ?? FieldSet.empty();

  let merged = mergeObjects(liveBody ?? {}, config, schema);

  // Prune: what the applier owned and neither it nor anyone else owns any more goes, and with it any
  // struct that held only such fields.
  if (!lastFields.isEmpty()) {
    let keep = configFields.union(PROTECTED);
    for (const [k, m] of managed) if (k !== applierKey) keep = keep.union(m.fields);
    const keepNamed = withNamedFieldsAsMembers(keep, schema);
    const toRemove = withNamedFieldsAsMembers(lastFields, schema).difference(keepNamed);
    merged = removePaths(merged, toRemove, schema, keepNamed);
  }

  const diff = compare(liveBody, merged, schema);
  const changed = diff.modified.union(diff.added).recursiveDifference(ignored);
  const removed = diff.removed.recursiveDifference(ignored);

  const next: ManagedFields = new Map();
  const conflicts: Conflict[] = [];
  for (const k of [...managed.keys()].sort()) {
    const m = managed.get(k) as Managed;
    if (k === applierKey) continue;
    const clash = m.fields.intersection(changed);
    if (!clash.isEmpty()) conflicts.push(...conflictsWith(m, clash));
    next.set(k, { ...m, fields: m.fields.difference(clash).difference(removed) });
  }
  if (conflicts.length > 0 && !force) return { ok: false, conflicts };

  merged = dropAppliedNulls(merged, config, schema);
  restoreServerMetadata(merged, liveBody);

  const objectChanged = liveBody === undefined || !deepEqual(liveBody, merged);
  const time = objectChanged || previous === undefined ? now : previous.time;
  next.set(applierKey, { ...applier, fields: applierFields, ...(time === undefined ? {} : { time }) });

  return { ok: true, object: withManagedFields(merged, encodeManagedFields(capUpdateManagers(next))) };
}

function restoreServerMetadata(merged: JsonObject, liveBody: JsonObject | undefined): void {
  let meta = merged['metadata'];
  if (!isObj(meta)) {
    meta = {};
    setOwn(merged, 'metadata', meta);
  }
  const liveMeta = liveBody === undefined ? undefined : liveBody['metadata'];
  for (const k of SERVER_METADATA) {
    const v = isObj(liveMeta) && Object.prototype.hasOwnProperty.call(liveMeta, k) ? liveMeta[k] : undefined;
    if (v === undefined) delete meta[k];
    else setOwn(meta, k, clone(v));
  }
}

// ---------------------------------------------------------------------------------------------------
// Every other write.

export interface UpdateOptions {
  /** The stored object, or undefined for a create. */
  readonly old: KObject | undefined;
  /** The object about to be stored, as the request (after patching, if a patch) made it. */
  readonly updated: KObject;
  /**
   * fieldManager, or when the client sent none, what kube-apiserver derives from its user agent
   * (`kubectl-client-side-apply`, `kubectl-edit`, `Go-http-client`…).
   */
  readonly manager: string;
  readonly now: string;
  readonly schema: Schema;
  /** Default: updated.apiVersion. */
  readonly apiVersion?: string;
  readonly subresource?: string;
  /** See IgnoreSpec; defaultIgnore(subresource) when not given. */
  readonly ignore?: IgnoreSpec;
}

/**
 * Records a non-apply write in metadata.managedFields and returns the object to store (`updated` is
 * not modified). The managers start from the request's own managedFields when it carries a valid,
 * non-empty list (a client may rewrite them), from nothing when it asks for a reset (`[]` or
 * `[{}]`), and from the stored object's otherwise, and always from the stored object's through a
 * subresource.
 */
export function updateManagedFields(opts: UpdateOptions): KObject {
  const { old, updated, manager, now, schema } = opts;
  const subresource = opts.subresource === '' ? undefined : opts.subresource;
  const apiVersion = opts.apiVersion ?? updated.apiVersion ?? old?.apiVersion ?? '';
  const ignored = toIgnoreSet(opts.ignore ?? defaultIgnore(subresource));

  const requested = (updated.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  const stored = (): ManagedFields => decodeManagedFieldsOrEmpty(old?.metadata?.managedFields);
  let managed: ManagedFields;
  if (subresource !== undefined) managed = stored();
  else if (isResetManagedFields(requested)) managed = new Map();
  else {
    let fromRequest: ManagedFields | undefined;
    try {
      fromRequest = decodeManagedFields(requested);
    } catch (err) {
      if (!(err instanceof ManagedFieldsError)) throw err;
    }
    managed = fromRequest !== undefined && fromRequest.size > 0 ? fromRequest : stored();
  }

  const newBody = body(updated);
  const diff = compare(old === undefined ? undefined : body(old), newBody, schema);
  const changed = clean(diff.modified.union(diff.added), ignored);
  const removed = diff.removed.recursiveDifference(ignored);

  const updater: ManagerIdentity = {
    manager,
    operation: 'Update',
    apiVersion,
    ...(subresource === undefined ? {} : { subresource }),
  };
  const updaterKey = identityKey(updater);
  const next: ManagedFields = new Map();
  for (const [k, m] of managed) {
    const fields = m.fields.difference(removed);
    next.set(k, { ...m, fields: k === updaterKey ? fields : fields.difference(changed) });
  }
  // The entry changes (and its time) only when this write changed something.
  if (!changed.isEmpty()) {
    const prev = next.get(updaterKey);
    next.set(updaterKey, {
      ...updater,
      time: now,
      fields: prev === undefined ? changed : prev.fields.union(changed),
    });
  }
  return withManagedFields(newBody, encodeManagedFields(capUpdateManagers(next)));
}
