// What the two grid controllers share: SuperEdge's labels and annotation, the controller
// ownerReference, conditions, and the comparison that decides whether a produced object departs from
// what its grid wants. Pure: the caller passes `now`, and nothing here touches an object it was given.
import type { KObject, ObjectMeta, OwnerReference } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import type { Schema } from '../../api/schema/schema.js';
import { isValidLabelValue } from '../../api/validation/names.js';

export const SUPEREDGE_API_VERSION = 'superedge.io/v1';
/** The ownership selector SuperEdge puts on every object a grid makes: the grid's name. */
export const GRID_SELECTOR_LABEL = 'superedge.io/grid-selector';
/** The grid's `gridUniqKey`, on every object it makes (when the key is a valid label value). */
export const GRID_UNIQ_KEY_LABEL = 'superedge.io/grid-uniq-key';
/** svcplane's addition: the unit value a DeploymentGrid's Deployment serves, never parsed from a name. */
export const GRID_UNIT_LABEL = 'superedge.io/grid-unit';
/** On a Deployment's pod template: a hash of the grid template it came from, replicas left out. */
export const TEMPLATE_HASH_LABEL = 'superedge.io/template-hash-key';
/** On a ServiceGrid's Service: `["<gridUniqKey>"]`, the unit key topology-aware proxies read. */
export const TOPOLOGY_KEYS_ANNOTATION = 'topologyKeys';

/** A ServiceGrid or DeploymentGrid as stored (plain JSON). */
export interface Grid extends KObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export type Obj = Record<string, unknown>;

export const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export const gridKeyOf = (grid: Grid): string => {
  const key = grid.spec?.['gridUniqKey'];
  return typeof key === 'string' ? key : '';
};

/**
 * The labels every object a grid makes carries: the grid's own labels, then `grid-selector=<grid>` and
 * `grid-uniq-key=<key>`. A key that is not a valid label value (a prefixed key such as
 * `topology.kubernetes.io/zone` has a `/`) is left out of the label; the key itself travels in the
 * Service's `topologyKeys` annotation and the Deployment's nodeSelector.
 */
export function gridLabels(grid: Grid): Record<string, string> {
  const labels: Record<string, string> = { ...(grid.metadata.labels ?? {}) };
  labels[GRID_SELECTOR_LABEL] = grid.metadata.name ?? '';
  const key = gridKeyOf(grid);
  if (isValidLabelValue(key).length === 0) labels[GRID_UNIQ_KEY_LABEL] = key;
  else delete labels[GRID_UNIQ_KEY_LABEL];
  return labels;
}

export const controllerRefTo = (grid: Grid, kind: string): OwnerReference => ({
  apiVersion: SUPEREDGE_API_VERSION,
  kind,
  name: grid.metadata.name ?? '',
  uid: grid.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

export const controllerOf = (meta: ObjectMeta): OwnerReference | undefined =>
  meta.ownerReferences?.find((r) => r.controller === true);

/** Who controls a produced object, as the grid sees it. */
export type Ownership = 'ours' | 'orphan' | 'other';

export function ownershipOf(obj: KObject, grid: Grid): Ownership {
  const ref = controllerOf(obj.metadata);
  if (ref === undefined) return 'orphan';
  return ref.uid === grid.metadata.uid ? 'ours' : 'other';
}

/** The grid's labels are on the object, and no grid-uniq-key label the grid no longer gives. */
export const labelsInSync = (
  have: Readonly<Record<string, string>> | undefined,
  want: Record<string, string>,
): boolean =>
  containsAll(have, want) &&
  (want[GRID_UNIQ_KEY_LABEL] !== undefined || have?.[GRID_UNIQ_KEY_LABEL] === undefined);

/** `want` ⊆ `have`: every entry of `want` is in `have` with the same value. */
export function containsAll(
  have: Readonly<Record<string, string>> | undefined,
  want: Record<string, string>,
) {
  for (const [k, v] of Object.entries(want)) if (have?.[k] !== v) return false;
  return true;
}

/**
 * The metadata a produced object gets on create, or on an update that puts its grid's labels and
 * annotations back: the live object's own labels and annotations stay (other tools add theirs), the
 * grid's win, and the grid becomes the controller (adoption adds the reference; ours is kept).
 */
export function mergedMeta(
  live: ObjectMeta | undefined,
  want: { labels: Record<string, string>; annotations: Record<string, string>; ref: OwnerReference },
): Partial<ObjectMeta> {
  const refs = (live?.ownerReferences ?? []).filter((r) => r.uid !== want.ref.uid);
  const labels = { ...(live?.labels ?? {}), ...want.labels };
  // The key label is the grid's own: a key that can no longer be a label value takes it away.
  if (want.labels[GRID_UNIQ_KEY_LABEL] === undefined) delete labels[GRID_UNIQ_KEY_LABEL];
  const out: Partial<ObjectMeta> = {
    labels,
    ownerReferences: [...refs.map((r) => ({ ...r })), { ...want.ref }],
  };
  const annotations = { ...(live?.annotations ?? {}), ...want.annotations };
  if (Object.keys(annotations).length > 0) out.annotations = annotations;
  return out;
}

const isEmpty = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  (Array.isArray(v) && v.length === 0) ||
  (isPlainObject(v) && Object.keys(v).length === 0);

/**
 * Whether `live` holds exactly what `want` says, as far as svcplane knows the type: a field that only
 * `live` has departs unless the schema does not know it (a newer API server's default, which the
 * controller must not fight). Empty lists, empty maps, null and absence are the same (Go's omitempty).
 * Lists compare element by element; maps (additionalProperties) key by key.
 */
export function sameUnderSchema(want: unknown, live: unknown, schema: Schema | undefined): boolean {
  if (isEmpty(want) && isEmpty(live)) return true;
  if (Array.isArray(want)) {
    if (!Array.isArray(live) || live.length !== want.length) return false;
    return want.every((w, i) => sameUnderSchema(w, live[i], schema?.items));
  }
  if (isPlainObject(want)) {
    if (!isPlainObject(live)) return false;
    if (schema?.['x-kubernetes-preserve-unknown-fields'] === true && schema.properties === undefined)
      return JSON.stringify(canonical(want)) === JSON.stringify(canonical(live));
    for (const key of new Set([...Object.keys(want), ...Object.keys(live)])) {
      const sub = schema?.properties?.[key] ?? schema?.additionalProperties;
      if (!Object.hasOwn(want, key)) {
        const known = schema === undefined || sub !== undefined;
        if (known && !isEmpty(live[key])) return false;
        continue;
      }
      if (!sameUnderSchema(want[key], live[key], sub)) return false;
    }
    return true;
  }
  return want === live || (isEmpty(want) && isEmpty(live));
}

/** A copy with object keys sorted, so equal objects stringify equally. */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isPlainObject(v)) {
    const out: Obj = {};
    for (const k of Object.keys(v).sort()) out[k] = canonical(v[k]);
    return out;
  }
  return v;
}

/** 32-bit FNV-1a of a string, as 8 hex digits. */
export function fnv1aHex(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * Conditions with `c` set: a condition whose status does not change keeps its lastTransitionTime
 * (metav1's SetStatusCondition). Sorted by type, so the same state always writes the same list.
 */
export function withCondition(
  conditions: readonly Condition[],
  c: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition[] {
  const old = conditions.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.observedGeneration === undefined ? {} : { observedGeneration: c.observedGeneration }),
    lastTransitionTime: old !== undefined && old.status === c.status ? old.lastTransitionTime : now,
    reason: c.reason,
    message: c.message,
  };
  return [...conditions.filter((x) => x.type !== c.type), next].sort((a, b) => a.type.localeCompare(b.type));
}

export const withoutCondition = (conditions: readonly Condition[], type: string): Condition[] =>
  conditions.filter((c) => c.type !== type);

export function conditionsOf(status: Record<string, unknown> | undefined): Condition[] {
  const list = status?.['conditions'];
  return Array.isArray(list) ? (list.filter(isPlainObject) as unknown as Condition[]) : [];
}

/** The failures a write can have, each reported as a condition of that type (SuperEdge's names). */
export const WRITE_ERROR_TYPES = ['CreateError', 'UpdateError', 'DeleteError'] as const;
export type WriteErrorType = (typeof WRITE_ERROR_TYPES)[number];

/** Conditions with one True condition per kind of write that failed, and none for the others. */
export function withWriteErrors(
  conditions: readonly Condition[],
  failures: ReadonlyArray<{ readonly type: WriteErrorType; readonly message: string }>,
  generation: number,
  now: string,
): Condition[] {
  let out = [...conditions];
  for (const type of WRITE_ERROR_TYPES) {
    const failed = failures.filter((f) => f.type === type);
    out =
      failed.length === 0
        ? withoutCondition(out, type)
        : withCondition(
            out,
            {
              type,
              status: 'True',
              observedGeneration: generation,
              reason: type,
              message: failed.map((f) => f.message).join('; '),
            },
            now,
          );
  }
  return out;
}
