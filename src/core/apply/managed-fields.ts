// metadata.managedFields: decoding the entries into field sets per manager, and encoding them back
// the way kube-apiserver writes them (sorted, empty sets dropped, old Update entries capped).
//
// A manager is identified by its name, operation and subresource, and for Update also by its
// apiVersion: the same client applying and updating owns two entries, and an applier keeps one
// entry across versions.
import type { ManagedFieldsEntry } from '../../api/object.js';
import { FieldSet, FieldsV1Error } from './fieldset.js';
import { isObj } from './typed.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerIdentity {
  readonly manager: string;
  readonly operation: Operation;
  /** Part of an Update manager's identity only. */
  readonly apiVersion: string;
  readonly subresource?: string;
}

/** One decoded entry. */
export interface Managed extends ManagerIdentity {
  readonly time?: string;
  readonly fields: FieldSet;
}

/**
 * The identity as one string; it sorts the way kube-apiserver orders managers in conflict messages
 * (it is the JSON encoding of the identifying fields, in ManagedFieldsEntry's field order).
 */
export function identityKey(id: ManagerIdentity): string {
  const o: Record<string, string> = { manager: id.manager, operation: id.operation };
  if (id.operation === 'Update' && id.apiVersion !== '') o['apiVersion'] = id.apiVersion;
  if (id.subresource !== undefined && id.subresource !== '') o['subresource'] = id.subresource;
  return JSON.stringify(o);
}

/** The managers of an object, keyed by identityKey. */
export type ManagedFields = Map<string, Managed>;

export class ManagedFieldsError extends Error {
  override readonly name = 'ManagedFieldsError';
}

/**
 * Decodes metadata.managedFields. Throws ManagedFieldsError for an entry kube-apiserver would not
 * decode: an operation other than Apply or Update, no apiVersion, a fieldsType other than FieldsV1,
 * or fieldsV1 that is not a field set. A later entry with the same identity replaces an earlier one.
 */
export function decodeManagedFields(entries: unknown): ManagedFields {
  const out: ManagedFields = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((e: unknown, i) => {
    if (!isObj(e)) throw new ManagedFieldsError(`managed fields entry ${i} is not an object`);
    const operation = e['operation'];
    if (operation !== 'Apply' && operation !== 'Update')
      throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    const apiVersion = e['apiVersion'];
    if (typeof apiVersion !== 'string' || apiVersion === '')
      throw new ManagedFieldsError('apiVersion must not be empty');
    const fieldsType = e['fieldsType'];
    if (fieldsType === undefined || fieldsType === null || fieldsType === '')
      throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1')
      throw new ManagedFieldsError(
        `invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`,
      );
    const str = (k: string): string | undefined => {
      const v = e[k];
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    let fields = FieldSet.empty();
    const raw = e['fieldsV1'];
    if (raw !== undefined && raw !== null) {
      try {
        fields = FieldSet.fromFieldsV1(raw);
      } catch (err) {
        if (err instanceof FieldsV1Error)
          throw new ManagedFieldsError(`managed fields entry ${i}: ${err.message}`);
        throw err;
      }
    }
    const time = str('time');
    const subresource = str('subresource');
    const m: Managed = {
      manager: str('manager') ?? '',
      operation,
      apiVersion,
      fields,
      ...(time === undefined ? {} : { time }),
      ...(subresource === undefined ? {} : { subresource }),
    };
    out.set(identityKey(m), m);
  });
  return out;
}

/** Decodes, treating anything undecodable as no managers (what kube-apiserver does with a live object). */
export function decodeManagedFieldsOrEmpty(entries: unknown): ManagedFields {
  try {
    return decodeManagedFields(entries);
  } catch (err) {
    if (err instanceof ManagedFieldsError) return new Map();
    throw err;
  }
}

/**
 * Whether a request's managedFields asks for a reset: an empty list, or a list of one empty entry.
 * (Absent or null means "keep what the object has".)
 */
export function isResetManagedFields(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  if (entries.length !== 1) return false;
  const e: unknown = entries[0];
  if (!isObj(e)) return false;
  return Object.values(e).every(
    (v) =>
      v === null ||
      v === '' ||
      (isObj(v) && Object.keys(v).length === 0) ||
      (Array.isArray(v) && v.length === 0),
  );
}

/** Seconds precision, the way kube-apiserver compares entry times. */
const seconds = (t: string | undefined): string => (t ?? '').slice(0, 19);

const cmp = (a: string, b: string): number => (a === b ? 0 : a < b ? -1 : 1);

/** Apply entries first, then oldest first, then by manager, apiVersion and subresource. */
function compareEntries(p: Managed, q: Managed): number {
  return (
    cmp(p.operation, q.operation) ||
    cmp(seconds(p.time), seconds(q.time)) ||
    cmp(p.manager, q.manager) ||
    cmp(p.apiVersion, q.apiVersion) ||
    cmp(p.subresource ?? '', q.subresource ?? '')
  );
}

/** Encodes the managers as metadata.managedFields, or undefined when none owns anything. */
export function encodeManagedFields(managed: ManagedFields): ManagedFieldsEntry[] | undefined {
  const entries = [...managed.values()].filter((m) => !m.fields.isEmpty()).sort(compareEntries);
  if (entries.length === 0) return undefined;
  return entries.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time === undefined ? {} : { time: m.time }),
    fieldsType: 'FieldsV1',
    fieldsV1: m.fields.toFieldsV1(),
    ...(m.subresource === undefined ? {} : { subresource: m.subresource }),
  }));
}

/** kube-apiserver keeps at most this many Update entries… */
export const MAX_UPDATE_MANAGERS = 10;
/** …merging the oldest ones, per apiVersion, into an entry of this name. */
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Caps the Update entries at MAX_UPDATE_MANAGERS. Oldest first, the second and later entries of an
 * apiVersion are folded into that version's "ancient-changes" entry (the first one of the version
 * becoming that entry if it does not exist yet), until few enough remain.
 */
export function capUpdateManagers(managed: ManagedFields, max = MAX_UPDATE_MANAGERS): ManagedFields {
  const updaters = [...managed.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= max) return managed;
  const out: ManagedFields = new Map(managed);
  updaters.sort(([ka, a], [kb, b]) => cmp(seconds(a.time), seconds(b.time)) || cmp(ka, kb));
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (const [k, m] of updaters) {
    if (count <= max) break;
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, k);
      continue;
    }
    const bucketId: ManagerIdentity = {
      manager: ANCIENT_CHANGES_MANAGER,
      operation: 'Update',
      apiVersion: m.apiVersion,
    };
    const bucketKey = identityKey(bucketId);
    let bucket = out.get(bucketKey);
    if (bucket === undefined) {
      const firstEntry = out.get(first);
      out.delete(first);
      bucket = { ...bucketId, fields: firstEntry?.fields ?? FieldSet.empty() };
    }
    out.set(bucketKey, {
      ...bucketId,
      fields: bucket.fields.union(m.fields),
      ...(m.time === undefined ? {} : { time: m.time }),
    });
    out.delete(k);
    count--;
  }
  return out;
}
