// The Deployment controller's vocabulary: the shapes it reads, pod-template-hash and ReplicaSet naming,
// maxSurge/maxUnavailable resolution, revision and annotation bookkeeping, and the orderings it sorts
// ReplicaSets by. Behaves like kube's pkg/controller/deployment/util/deployment_util.go. Pure: nothing
// here changes an object it was given.
import type { KObject, OwnerReference } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { formatTimestamp, parseTimestamp } from '../../api/printers/time.js';

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** Upstream's default --deployment-controller revision-history length limit, in characters. */
export const REVISION_HISTORY_LIMIT_CHARS = 2000;
const MAX_INT32 = 2147483647;

/** Deployment annotations never copied to a ReplicaSet (kube's annotationsToSkip). */
export const ANNOTATIONS_TO_SKIP: ReadonlySet<string> = new Set([
  LAST_APPLIED_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  ROLLBACK_TO_ANNOTATION,
]);

export interface LabelSelectorRequirementSpec {
  key: string;
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector as JSON. */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementSpec[];
}

export interface PodTemplateSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  spec?: Record<string, unknown>;
}

export type IntOrString = number | string;

export interface DeploymentSpec {
  replicas?: number;
  selector?: LabelSelectorSpec;
  template?: PodTemplateSpec;
  strategy?: {
    type?: string;
    rollingUpdate?: { maxSurge?: IntOrString; maxUnavailable?: IntOrString };
  };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  paused?: boolean;
  progressDeadlineSeconds?: number;
}

export interface DeploymentCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export interface Deployment extends KObject {
  spec: DeploymentSpec;
  status?: DeploymentStatus;
}

export interface ReplicaSetCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSet extends KObject {
  spec: {
    replicas?: number;
    minReadySeconds?: number;
    selector?: LabelSelectorSpec;
    template?: PodTemplateSpec;
  };
  status?: {
    replicas?: number;
    fullyLabeledReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
    conditions?: ReplicaSetCondition[];
  };
}

// ---- label selectors (metav1.LabelSelector) --------------------------------------------------------

/** Whether a metav1.LabelSelector is empty (`{}`, selects everything). */
export const isEmptySelector = (s: LabelSelectorSpec | undefined): boolean =>
  s !== undefined && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

// ---- maxSurge / maxUnavailable ----------------------------------------------------------------------

export class InvalidIntOrPercentError extends Error {
  override readonly name = 'InvalidIntOrPercentError';
}

/**
 * intstr.GetScaledValueFromIntOrPercent: an int is itself; "N%" is N·total/100 rounded up or down.
 * A string without `%` (or a non-integer percent) is an error, as upstream's.
 */
export function scaledValue(v: IntOrString | undefined, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const m = /^(-?\d+)%$/.exec(v);
  if (m === null) throw new InvalidIntOrPercentError(`invalid value for IntOrString: invalid value "${v}"`);
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

export const isRollingUpdate = (d: Deployment): boolean =>
  (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

export const replicasOf = (d: Deployment): number => d.spec.replicas ?? 1;

/**
 * ResolveFenceposts: maxSurge rounded up, maxUnavailable rounded down, against `desired`; both 0 makes
 * maxUnavailable 1 so a rollout can always move. Missing values take the API defaults (25%).
 */
export function resolveFenceposts(
  maxSurge: IntOrString | undefined,
  maxUnavailable: IntOrString | undefined,
  desired: number,
): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge ?? '25%', desired, true);
  const unavailable = scaledValue(maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) return { surge, unavailable: 1 };
  return { surge, unavailable };
}

/** MaxSurge(): 0 for Recreate. */
export function maxSurgeOf(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicasOf(d)).surge;
}

/** MaxUnavailable(): 0 for Recreate or 0 replicas; never more than replicas. */
export function maxUnavailableOf(d: Deployment): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas);
  return Math.min(unavailable, replicas);
}

// ---- pod-template-hash ------------------------------------------------------------------------------

/** The alphabet kube's rand.SafeEncodeString maps each character through (by charCode mod 27). */
const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: every character replaced by SAFE_ALPHABET[code % 27]. */
export const safeEncode = (s: string): string =>
  [...s].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length]!).join('');

/** A copy with object keys sorted and undefined fields dropped, so equal objects serialize equally. */
export function canonicalJson(v: unknown): string {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (isPlainObject(x)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(x).sort()) if (x[k] !== undefined) out[k] = walk(x[k]);
      return out;
    }
    return x;
  };
  return JSON.stringify(walk(v)) ?? 'null';
}

/** FNV-1a, 32 bits, over bytes. */
export function fnv1a32(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/**
 * ComputeHash: FNV-1a-32 over the template's canonical JSON (upstream dumps the Go struct instead; no
 * client recomputes it, so only determinism matters), then, when collisionCount is set, its 4 bytes
 * little-endian and 4 zero bytes; the decimal uint32 is safe-encoded, so it uses only [4-9bcdf].
 */
export function podTemplateHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  let h = fnv1a32(new TextEncoder().encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined && collisionCount !== null) {
    const c = collisionCount >>> 0;
    h = fnv1a32(new Uint8Array([c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, c >>> 24, 0, 0, 0, 0]), h);
  }
  return safeEncode(String(h));
}

// ---- templates ----------------------------------------------------------------------------------------

/** The template without the pod-template-hash label (and without a labels map left empty by that). */
export function templateWithoutHash(t: PodTemplateSpec | undefined): PodTemplateSpec {
  const copy = structuredClone(t ?? {});
  const labels = copy.metadata?.labels;
  if (labels !== undefined && Object.hasOwn(labels, POD_TEMPLATE_HASH_LABEL)) {
    delete labels[POD_TEMPLATE_HASH_LABEL];
  }
  return copy;
}

/** EqualIgnoreHash: two templates equal once each loses its pod-template-hash label. */
export function equalIgnoreHash(a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean {
  const norm = (t: PodTemplateSpec | undefined): string => {
    const x = templateWithoutHash(t);
    if (x.metadata?.labels !== undefined && Object.keys(x.metadata.labels).length === 0)
      delete x.metadata.labels;
    return canonicalJson(x);
  };
  return norm(a) === norm(b);
}

// ---- ownership and ordering ---------------------------------------------------------------------------

export const controllerRefOf = (o: KObject): OwnerReference | undefined =>
  o.metadata.ownerReferences?.find((r) => r.controller === true);

export const deploymentControllerRef = (d: Deployment): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: d.metadata.name ?? '',
  uid: d.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

/** metav1.Time ↔ epoch milliseconds (RFC 3339, whole seconds); an absent time is 0. */
export const parseTime = (t: string | null | undefined): number => parseTimestamp(t) ?? 0;
export const formatTime = (ms: number): string => formatTimestamp(ms);

const timeOf = (o: KObject): number => parseTime(o.metadata.creationTimestamp);

/** ReplicaSetsByCreationTimestamp: oldest first, ties by name. */
export const byCreation = (a: KObject, b: KObject): number =>
  timeOf(a) - timeOf(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** ReplicaSetsByRevision: lowest revision first, ties by creation. */
export const byRevision = (a: ReplicaSet, b: ReplicaSet): number =>
  revisionOf(a) - revisionOf(b) || byCreation(a, b);

export const specReplicas = (rs: ReplicaSet): number => rs.spec.replicas ?? 1;
export const isActive = (rs: ReplicaSet): boolean => specReplicas(rs) > 0;

/**
 * FindNewReplicaSet: the oldest RS whose template equals the Deployment's ignoring the hash label
 * (the oldest, so that after a hash collision the same one keeps winning).
 */
export function findNewReplicaSet(d: Deployment, rss: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rss].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

// ---- revisions and annotations ------------------------------------------------------------------------

/** The revision annotation as a number; missing or unparsable counts as 0. */
export function revisionOf(o: KObject): number {
  const v = o.metadata.annotations?.[REVISION_ANNOTATION];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
}

export const maxRevision = (rss: readonly ReplicaSet[]): number =>
  rss.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);

/** The revision-history value with `old` appended, keeping it within `limit` characters. */
export function appendRevisionHistory(
  history: string | undefined,
  old: string,
  limit = REVISION_HISTORY_LIMIT_CHARS,
): string | undefined {
  if (history === undefined || history === '') return old;
  const entries = history.split(',');
  let total = history.length + old.length + 1;
  let start = 0;
  while (total > limit && start < entries.length) {
    total -= entries[start]!.length + 1;
    start++;
  }
  if (total > limit) return undefined; // the new entry alone is too long: leave the history as it is
  return [...entries.slice(start), old].join(',');
}

/**
 * SetNewReplicaSetAnnotations on a copy of the RS's annotations: Deployment annotations copied (except
 * the skip list), the revision raised to `newRevision` (never lowered; a raised revision that existed
 * goes to revision-history: this RS is being rolled back to), and for a new RS the replica counts.
 * Returns the annotations and whether they changed.
 */
export function newReplicaSetAnnotations(
  d: Deployment,
  current: Readonly<Record<string, string>> | undefined,
  newRevision: number,
  exists: boolean,
): { annotations: Record<string, string>; changed: boolean } {
  const a: Record<string, string> = { ...current };
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (ANNOTATIONS_TO_SKIP.has(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const oldRevision = a[REVISION_ANNOTATION];
  const had = oldRevision !== undefined;
  if (had && !/^\d+$/.test(oldRevision)) {
    // upstream leaves an RS with an unparsable revision alone
    return { annotations: a, changed };
  }
  const oldNumber = had ? Number(oldRevision) : 0;
  if (oldNumber < newRevision) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (had) {
      const history = appendRevisionHistory(a[REVISION_HISTORY_ANNOTATION], oldRevision);
      if (history !== undefined) a[REVISION_HISTORY_ANNOTATION] = history;
    }
  }
  if (!exists) {
    const replicas = replicasOf(d);
    a[DESIRED_REPLICAS_ANNOTATION] = String(replicas);
    a[MAX_REPLICAS_ANNOTATION] = String(replicas + maxSurgeOf(d));
    changed = true;
  }
  return { annotations: a, changed };
}

/** An integer annotation, or undefined when missing or unparsable. */
export function intAnnotation(o: KObject, key: string): number | undefined {
  const v = o.metadata.annotations?.[key];
  return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
}

export const hasProgressDeadline = (d: Deployment): boolean =>
  d.spec.progressDeadlineSeconds !== undefined &&
  d.spec.progressDeadlineSeconds !== null &&
  d.spec.progressDeadlineSeconds !== MAX_INT32;

export const hasRevisionHistoryLimit = (d: Deployment): boolean =>
  d.spec.revisionHistoryLimit !== undefined &&
  d.spec.revisionHistoryLimit !== null &&
  d.spec.revisionHistoryLimit !== MAX_INT32;

// ---- the new ReplicaSet -------------------------------------------------------------------------------

/** `<deployment>-<hash>`. */
export const replicaSetName = (d: Deployment, hash: string): string => `${d.metadata.name ?? ''}-${hash}`;

/** The Deployment's selector with `pod-template-hash=<hash>` added to matchLabels. */
export function selectorWithHash(s: LabelSelectorSpec | undefined, hash: string): LabelSelectorSpec {
  const out = structuredClone(s ?? {});
  out.matchLabels = { ...out.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash };
  return out;
}

/**
 * The ReplicaSet a Deployment's current template gets: named by hash, labelled and selected by it,
 * controlled by the Deployment, with `replicas` and the annotations for `revision`.
 */
export function buildNewReplicaSet(d: Deployment, replicas: number, revision: number): ReplicaSet {
  const hash = podTemplateHash(d.spec.template, d.status?.collisionCount);
  const template = structuredClone(d.spec.template ?? {});
  template.metadata = {
    ...template.metadata,
    labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash },
  };
  const { annotations } = newReplicaSetAnnotations(d, {}, revision, false);
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: replicaSetName(d, hash),
      namespace: d.metadata.namespace ?? 'default',
      labels: { ...template.metadata.labels },
      annotations,
      ownerReferences: [deploymentControllerRef(d)],
    },
    spec: {
      replicas,
      minReadySeconds: d.spec.minReadySeconds ?? 0,
      selector: selectorWithHash(d.spec.selector, hash),
      template,
    },
  };
}
