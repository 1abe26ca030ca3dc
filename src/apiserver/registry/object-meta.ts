// Server-owned metadata: what kube-apiserver's generic registry fills in or carries over on every
// write (rest.FillObjectMetaSystemFields, BeforeCreate/BeforeUpdate), independent of the kind.
import type { KObject } from '../../api/object.js';
import { isStatusError } from '../../api/status.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';

/** RFC 3339 with second precision, as metav1.Time serializes. */
export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** kube's utilrand.String alphabet: no vowels and no confusable digits. */
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export const MAX_GENERATED_NAME_LENGTH = 63 - 5;

export function generateName(prefix: string, random: () => number): string {
  const base =
    prefix.length > MAX_GENERATED_NAME_LENGTH ? prefix.slice(0, MAX_GENERATED_NAME_LENGTH) : prefix;
  let s = base;
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}

const isEndpointSlices = (r: ResourceInfo): boolean =>
  r.group === 'discovery.k8s.io' && r.resource === 'endpointslices';

/**
 * Kinds whose objects carry metadata.generation: those whose kube strategy sets it (deployments, pods,
 * custom resources, and EndpointSlices, which have no status but count changes of their content and
 * labels; the EndpointSlice controller uses it to tell a stale cache from its own write). The core
 * Service, Namespace and Node strategies never do, so those have none.
 */
/** Names generated from metadata.generateName before a create gives up on AlreadyExists (upstream's 8). */
const GENERATE_NAME_ATTEMPTS = 8;

/**
 * Creates `obj` as named, or, without a name but with metadata.generateName, under a generated name; a
 * generated name that is taken is generated again, up to 8 tries, as kube-apiserver does since KEP-4420
 * (Retry Generate Name): five random characters collide often enough at thousands of objects.
 */
export async function withGeneratedName(
  obj: KObject,
  random: () => number,
  create: (candidate: KObject) => Promise<KObject>,
): Promise<KObject> {
  const named = obj.metadata.name !== undefined && obj.metadata.name !== '';
  const prefix = obj.metadata.generateName;
  if (named || typeof prefix !== 'string' || prefix === '') return create(obj);
  for (let attempt = 1; ; attempt++) {
    const candidate = structuredClone(obj);
    candidate.metadata.name = generateName(prefix, random);
    try {
      return await create(candidate);
    } catch (err) {
      if (attempt >= GENERATE_NAME_ATTEMPTS || !isStatusError(err, 'AlreadyExists')) throw err;
    }
  }
}

export const tracksGeneration = (r: ResourceInfo): boolean =>
  (r.hasStatus && !(r.group === '' && ['services', 'namespaces', 'nodes'].includes(r.resource))) ||
  isEndpointSlices(r);

/**
 * Everything a generation counts: the object without metadata and status; for Deployments also the
 * annotations (kube's deployment strategy bumps on them: they are copied to the ReplicaSets); for
 * EndpointSlices also the labels.
 */
export function specOf(obj: KObject, r?: ResourceInfo): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  if (r?.group === 'apps' && r.resource === 'deployments') {
    return stableStringify({ ...rest, annotations: obj.metadata.annotations ?? {} });
  }
  if (r !== undefined && isEndpointSlices(r))
    return stableStringify({ ...rest, labels: obj.metadata.labels ?? {} });
  return stableStringify(rest);
}

export function stableStringify(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableStringify).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Whether two versions differ in anything but resourceVersion and managedFields timestamps. */
export function sameContent(a: KObject, b: KObject): boolean {
  const strip = (o: KObject): unknown => ({
    ...o,
    metadata: {
      ...o.metadata,
      resourceVersion: undefined,
      managedFields: (o.metadata.managedFields ?? []).map((m) => ({ ...m, time: undefined })),
    },
  });
  return stableStringify(strip(a)) === stableStringify(strip(b));
}

/** `obj` as the store holds it after a write at `revision`: a copy with that resourceVersion. */
export const atRevision = (obj: KObject, revision: number): KObject => ({
  ...obj,
  metadata: { ...obj.metadata, resourceVersion: String(revision) },
});

/** The server-owned fields of `obj`, about to be created in `namespace` at `nowMs` (BeforeCreate). */
export function fillCreateMetadata(
  r: ResourceInfo,
  obj: KObject,
  namespace: string,
  uid: string,
  nowMs: number,
): void {
  const meta = obj.metadata;
  if (r.namespaced) meta.namespace = namespace;
  else delete meta.namespace;
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  meta.uid = uid;
  meta.creationTimestamp = rfc3339(nowMs);
  if (tracksGeneration(r)) meta.generation = 1;
  else delete meta.generation;
  obj.apiVersion = groupVersion(r);
  obj.kind = r.kind;
}

/** The server-owned fields of `old` carried over to `next`, an update of it (BeforeUpdate). */
export function carryOverMetadata(r: ResourceInfo, next: KObject, old: KObject): void {
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
}
